"""The paged host on the reference machine: the chapter's checks (3) to (6).

(3) exact page counts at every step, from the window rule alone; (4) the paged host and a
plain-list host give the chip identical integers; (5) the chip follows the windowed float
reference; (6) the structured model follows its rule under every window. Also: one program
per context size, flat cycles once the window is full, and the step-by-step interface a
testbench drives.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from model.chip import machine
from model.compiler.cache import ProgramCache
from model.compiler.inputs import run_reference
from model.compiler.quantize import calibrate
from model.host.decode import (
    Decode,
    ListCache,
    PagedHost,
    StepRecord,
    decode,
    paged_cache,
)
from model.kv.step_rule import plan_step
from model.lm.tiny_lm import (
    DIM,
    TinyLM,
    float_generate,
    float_logits,
    random_model,
    structured_model,
)

STEPS = 24
WINDOW_PAGE_PAIRS = [(None, 4), (8, 4), (6, 2), (4, 4), (3, 1)]
RANDOM_SEED = 2  # the chapter's random model for check (5)
# The chapter's tolerance. Measured on seed 2: at most 7.1% (W = None) and 3.7% (W = 4) per
# step; other seeds reach 12%, so a tighter bound would be tuned to this seed. A window one
# token too wide is caught exactly, by the float recomputation in test_tiny_lm.py.
CHIP_RELATIVE_RMS = 0.15


def rule_tokens(start: int, n: int) -> list[int]:
    """f(t) = (5t + 3) mod 16, written out independently of the model."""
    tokens = [start]
    for _ in range(n):
        tokens.append((5 * tokens[-1] + 3) % 16)
    return tokens


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def expected_pages(step: int, window: int | None, page: int) -> int:
    """Pages in use at the start of step L: rows 0..L-2 stored, pages below L - W released."""
    released = 0 if window is None else max(0, step - window) // page
    return ceil_div(step - 1, page) - released


def integers(records: list[StepRecord]) -> list[tuple]:
    """Every integer of a decode: gathered inputs, outputs and counters."""
    return [(r.step, r.context, r.request.token, r.request.x.tolist(), r.request.kc.tolist(),
             r.request.vc.tolist(), r.logits_int.tolist(), r.token, r.result.k_new.tolist(),
             r.result.v_new.tolist(), r.result.counters.as_dict()) for r in records]


@pytest.fixture(scope="module")
def structured() -> TinyLM:
    return structured_model()


@pytest.fixture(scope="module")
def random_lm() -> TinyLM:
    return random_model(RANDOM_SEED)


# ---- (4) paged == plain, (3) exact page counts, (6) the rule -------------------------------


@pytest.mark.parametrize(("window", "page"), WINDOW_PAGE_PAIRS)
def test_paged_host_equals_plain_host_in_every_integer(structured, random_lm, window, page):
    for model, start in ((structured, 0), (random_lm, 3)):
        paged = decode(model, STEPS, start, window, page_size=page, paged=True)
        plain = decode(model, STEPS, start, window, page_size=page, paged=False)
        assert paged.tokens == plain.tokens
        assert integers(paged.records) == integers(plain.records)


@pytest.mark.parametrize(("window", "page"), WINDOW_PAGE_PAIRS)
def test_pages_in_use_follow_the_window_rule_exactly(structured, window, page):
    run = decode(structured, STEPS, 0, window, page_size=page)
    assert [r.pages for r in run.records] == [
        expected_pages(step, window, page) for step in range(1, STEPS + 1)]
    after_each_step = [expected_pages(step + 1, window, page) for step in range(1, STEPS + 1)]
    assert [run.pages_after(step) for step in range(1, STEPS + 1)] == after_each_step
    assert run.peak_pages == max(after_each_step)
    if window is None:
        assert run.peak_pages == ceil_div(STEPS, page)  # every page stays
    else:
        assert run.peak_pages <= ceil_div(window - 1, page) + 1  # the chapter's bound


@pytest.mark.parametrize(("window", "page"), WINDOW_PAGE_PAIRS)
def test_structured_model_follows_the_rule_on_the_chip(structured, window, page):
    assert decode(structured, STEPS, 0, window, page_size=page).tokens == rule_tokens(0, STEPS)


def test_pages_in_use_count_the_whole_pool(structured):
    """The chapter counts the pool's pages: with a neighbour request, its pages count too."""
    window, page, neighbour_rows = 4, 2, 5
    programs = ProgramCache(structured, calibrate(structured, 8, window))
    cache = paged_cache(DIM, page, 16)
    cache.table.new("neighbour")
    for _ in range(neighbour_rows):
        cache.table.append("neighbour", np.zeros((2, DIM), dtype=np.int8))
    host = PagedHost(programs, cache, 0, window)
    pages = [host.step().pages for _ in range(8)]
    assert pages == [ceil_div(neighbour_rows, page) + expected_pages(step, window, page)
                     for step in range(1, 9)]


def test_plain_host_reports_no_pages(structured):
    run = decode(structured, 5, 0, 4, paged=False)
    assert run.peak_pages is None and {r.pages for r in run.records} == {None}


# ---- the gather, the programs, the cycles --------------------------------------------------


@pytest.mark.parametrize(("window", "page"), WINDOW_PAGE_PAIRS)
def test_each_step_gathers_exactly_the_window_rows(random_lm, window, page):
    run = decode(random_lm, STEPS, 3, window, page_size=page)
    keys = [r.result.k_new.tolist() for r in run.records]
    values = [r.result.v_new.tolist() for r in run.records]
    for r in run.records:
        lo = r.step - (r.step if window is None else min(r.step, window))
        assert r.request.plan.lo == lo and r.context == r.step - lo
        assert r.request.kc.tolist() == keys[lo : r.step - 1]
        assert r.request.vc.tolist() == values[lo : r.step - 1]


@pytest.mark.parametrize("window", [None, 8, 4, 1])
def test_one_program_per_context_size(structured, window):
    run = decode(structured, STEPS, 0, window)
    assert run.programs_compiled == (STEPS if window is None else window)
    contexts = [r.context for r in run.records]
    assert contexts == [step if window is None else min(step, window)
                        for step in range(1, STEPS + 1)]


@pytest.mark.parametrize("window", [8, 4])
def test_cycles_stop_growing_once_the_window_is_full(structured, window):
    totals = [r.cycles[0] for r in decode(structured, STEPS, 0, window).records]
    assert all(a < b for a, b in itertools.pairwise(totals[:window]))
    assert set(totals[window - 1 :]) == {totals[window - 1]}
    full = [r.cycles[0] for r in decode(structured, STEPS, 0, None).records]
    assert totals[: window] == full[: window] and full[-1] > totals[-1]


# ---- (5) the chip follows the windowed float reference ---------------------------------------


@pytest.mark.parametrize("window", [None, 4])
def test_chip_follows_the_windowed_float_reference(random_lm, window):
    forced = float_generate(random_lm, 3, 16, window)
    run = decode(random_lm, 16, 3, window, force=forced)
    assert run.tokens == forced  # teacher forcing: the inputs are the float tokens
    chip = np.array([r.logits for r in run.records])
    reference = float_logits(random_lm, forced[:16], window)
    error = np.linalg.norm(chip - reference, axis=1) / np.linalg.norm(reference, axis=1)
    assert error.max() <= CHIP_RELATIVE_RMS, f"per-step relative RMS {np.round(error, 3)}"
    agree = (chip.argmax(axis=1) == reference.argmax(axis=1)).mean()
    assert agree >= 0.75  # close logits may swap, most decisions must not


# ---- the step-by-step interface a testbench drives -------------------------------------------


def test_prepare_and_finish_drive_the_same_decode_as_step(random_lm):
    window, page, n = 4, 2, 10
    expected = decode(random_lm, n, 5, window, page_size=page)
    programs = ProgramCache(random_lm, calibrate(random_lm, n, window))
    host = PagedHost(programs, paged_cache(DIM, page, 16), 5, window)
    tokens = [5]
    for _ in range(n):
        inputs = host.prepare_step()
        ran = machine.run(inputs.image(), inputs.program.cfg)  # stands in for the RTL
        host.finish_step(inputs, inputs.read_results(ran.ext, ran.counters))
        tokens.append(host.token)
    assert tokens == expected.tokens
    assert len(programs) == expected.programs_compiled == window


def test_finish_step_refuses_a_step_out_of_order(random_lm):
    host = PagedHost(ProgramCache(random_lm, calibrate(random_lm, 3, None)), ListCache(DIM), 0)
    first = host.prepare_step()
    host.finish_step(first, run_reference(first).results)
    later = replace(first, requests=(replace(first.requests[0], plan=plan_step(3, None),
                                             kc=np.zeros((2, DIM)), vc=np.zeros((2, DIM))),))
    with pytest.raises(ValueError, match="step 2 is in progress"):
        host.finish_step(later, run_reference(first).results)


def test_a_record_reproduces_its_step(random_lm):
    run: Decode = decode(random_lm, 6, 3, 4)
    for r in run.records:
        again = machine.run(r.inputs.image(), r.inputs.program.cfg, raise_on_error=True)
        (replay,) = r.inputs.read_results(again.ext, again.counters)
        assert replay.logits_int.tolist() == r.logits_int.tolist()
        assert replay.cycles == r.cycles
