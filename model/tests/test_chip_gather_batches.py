"""Steps of B requests in chip gather (model.compiler.gather.ChipGather) on the reference machine.

For random batches of requests at random steps over one shared pool (stale rows in its free
pages, windows releasing pages, new rows opening pages or filling them), the chip-gather
program, reading every request's rows through its own block table, must give the integers of
the host-gather program and of each request's solo step (logits, token, new K/V rows), and
leave the pools equal to the page table's once the new rows are appended, word for word.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.chip.geometry import opens_page, page_of, pages_for, slot_of
from model.chip.isa import ChipConfig, Op
from model.compiler.cache import ProgramCache
from model.compiler.gather import KEY, VALUE, ChipGather, pool_differences, pool_words
from model.compiler.inputs import StepInputs, run_reference
from model.compiler.layout import BATCH_MAX, Layout, Pool, max_context
from model.compiler.quantize import calibrate, shared_context_scales
from model.host.serving import RequestStep, planned_table
from model.kv.paged import CachingPageTable, InvariantError
from model.kv.step_rule import plan_step
from model.lm.tiny_lm import random_model
from model.tests.host_gather import host_gather_inputs

CFG = ChipConfig()
LONGEST = max_context(CFG)


@pytest.fixture(scope="module", params=["per-context scales", "shared scales"])
def calibration(request):
    calibration = calibrate(random_model(2), LONGEST, None, starts=[0])
    if request.param == "shared scales":
        calibration = shared_context_scales(calibration)
    return calibration


def host_programs(calibration) -> ProgramCache:
    return ProgramCache(random_model(2), calibration, CFG, max_batch=BATCH_MAX)


def chip_programs(calibration, page_size: int, n_pages: int) -> ProgramCache:
    return ProgramCache(random_model(2), calibration, CFG, ChipGather(), BATCH_MAX,
                        Pool(page_size, n_pages, random_model(2).dim))


def pool_of(programs: ProgramCache, steps: list[int], window: int | None, page_size: int,
            rng: np.random.Generator) -> tuple[CachingPageTable, list[RequestStep]]:
    """A pool holding one request per entry of ``steps``, each about to run that step: its
    earlier rows random, those below its window released; a released request's stale rows
    first, so that reused pages hold old words. The steps are planned as the scheduler plans
    them (model.host.serving: slots of new pages in allocation order), with their rows gathered."""
    dim, size = programs.model.dim, page_size
    n_pages = sum(pages_for(step, size) for step in steps) + 3
    table = CachingPageTable(n_pages, size, row_shape=(2, dim), dtype=np.int8)

    def fill(rid, rows: int) -> None:
        table.new(rid)
        for _ in range(rows):
            table.append(rid, rng.integers(-128, 128, (2, dim)))

    fill("stale", 3 * size)
    table.release("stale")
    for i, step in enumerate(steps):
        fill(i, step - 1)
        table.trim(i, plan_step(step, window).lo)
    new_pages = iter(table.allocation_order())
    planned = []
    for i, step in enumerate(steps):
        plan, length = plan_step(step, window), step - 1
        pages = table.block_table(i)
        slot = ((next(new_pages), 0) if opens_page(length, size)
                else (pages[-1], slot_of(length, size)))
        rows = table.rows(i, plan.lo, plan.hi)
        token = int(rng.integers(programs.model.vocab))
        planned.append(RequestStep(rid=i, plan=plan, token=token, x=programs.x_table[token],
                                   kc=rows[:, KEY], vc=rows[:, VALUE],
                                   first_page=page_of(table.first_row(i), size),
                                   block_table=tuple(pages), slot=slot))
    return table, planned


def outputs(result) -> tuple:
    return (result.logits_int.tolist(), result.token, result.k_new.tolist(),
            result.v_new.tolist())


@settings(max_examples=25, deadline=None)
@given(steps=st.lists(st.integers(1, 40), min_size=1, max_size=BATCH_MAX),
       window=st.sampled_from([None, 3, 8, 16]), page_size=st.sampled_from([1, 2, 4, 8]),
       seed=st.integers(0, 2**16))
def test_chip_gather_batches_equal_host_gather_and_solo_and_keep_the_pool(
        calibration, steps, window, page_size, seed):
    rng = np.random.default_rng(seed)
    host = host_programs(calibration)
    table, planned = pool_of(host, steps, window, page_size, rng)
    contexts = [step.plan.context for step in planned]
    chip = chip_programs(calibration, page_size, table.n_pages)
    chip_inputs = StepInputs(
        program=chip.get(contexts), pool_words=pool_words(table),
        requests=tuple(replace(s, kc=None, vc=None, table=planned_table(table, s))
                       for s in planned))
    chip_run = run_reference(chip_inputs)
    host_run = run_reference(StepInputs(program=host.get(contexts), requests=tuple(planned)))
    solo = ProgramCache(random_model(2), calibration, CFG)
    for i, step in enumerate(planned):
        alone = run_reference(host_gather_inputs(solo.get(step.plan.context), [step.x],
                                                 [step.kc], [step.vc])).results[0]
        assert (outputs(chip_run.results[i]) == outputs(host_run.results[i])
                == outputs(alone)), f"request {i} of {steps}"
    for step, result in zip(planned, chip_run.results, strict=True):  # the commit: appends
        table.append(step.rid, np.stack([result.k_new, result.v_new]))
    start, end = chip.layout.pools
    assert pool_differences(chip.layout, chip_run.ext[start:end], table) == []


def test_the_program_reads_and_writes_every_request_through_its_own_table(calibration):
    contexts = (1, 5, 8, 3)
    programs = chip_programs(calibration, 4, 16)
    program = programs.get(contexts)
    instrs, layout = program.instructions(), program.layout
    loads = [i.a for i in instrs if i.op == Op.LOAD]
    assert loads == [layout.weights, layout.x]  # no cached rows come from the kc/vc slots
    ploads = [(i.a, i.length) for i in instrs if i.op == Op.PLOAD]
    assert ploads == [(layout.table(i), n - 1) for i, n in enumerate(contexts) if n > 1
                      for _ in range(2)]
    pstores = [(i.a, i.row) for i in instrs if i.op == Op.PSTORE]
    assert pstores == [(layout.table(i), n - 1) for i, n in enumerate(contexts) for _ in range(2)]
    first_pstore = next(k for k, i in enumerate(instrs) if i.op == Op.PSTORE)
    # in the new rows' STOREs' place (host gather's), right after the projections
    assert instrs[first_pstore - 1].op == Op.MATMUL
    assert programs.get(list(contexts)) is program  # cached by the tuple of contexts


def test_the_tables_and_pools_lie_after_the_batch_layout():
    model = random_model(2)
    layout = Layout.for_model(model, CFG, BATCH_MAX, Pool(4, 16, model.dim))
    tables = [layout.table(i) for i in range(BATCH_MAX)]
    assert tables[0] == layout.outputs[1]
    assert all(b - a == layout.table_words for a, b in pairwise(tables))
    assert layout.pair == tables[-1] + layout.table_words and layout.k_pool == layout.pair + 2
    assert layout.end <= CFG.ext_words
    with pytest.raises(ValueError, match="outside"):
        layout.table(BATCH_MAX)


def test_a_pool_the_chip_cannot_hold_is_refused(calibration):
    with pytest.raises(ValueError, match="external words"):
        chip_programs(calibration, 4, 1024)


def test_a_table_that_misses_the_planned_slot_is_refused(calibration):
    rng = np.random.default_rng(0)
    table, (step,) = pool_of(host_programs(calibration), [6], None, 4, rng)
    wrong = replace(step, slot=(step.slot[0], step.slot[1] + 1))
    with pytest.raises(InvariantError, match="planned slot"):
        planned_table(table, wrong)
