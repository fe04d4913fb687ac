"""Decodes of the tiny model on the RTL, in the pyuvm environment, on Icarus and Verilator.

Each (simulator, window) pair is its own pytest test, with its own run folder
(out/runs/<sim>/<node>/seed<seed>: result.json, the coverage database; the first test of a
simulator process also sim.log and, with WAVES=1, the waveform): the tests of one file and
simulator share one simulator process (verif/runs/batching.py). On Icarus `make test` runs the
decodes for 12 steps instead of 32 and the random models for half their steps (sim.lengths:
FULL_LENGTH=1, as SUITE=full sets, runs them all at full length; `make run` the chapter's decodes).
The checks run inside the simulation, once each: the scoreboard compares every step with its one
prediction, the test's check_phase checks every decode as a whole
(verif/scoreboard/decode_checks.py). Here pytest reads the run's verdict and what only this test
promises (how many steps, the forced tokens, the copy-on-write). The negative tests build
deliberately broken copies of the RTL (Icarus only: one build each, a few steps) and check that the
environment fails them with the documented exception and a clear report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, replace
from itertools import pairwise

import numpy as np
import pytest

from model.chip import arith, isa, machine
from model.chip.isa import WORDS_PER_INSTR, ChipConfig
from model.host import decode as paged_host
from model.kv.step_rule import pages_held
from sim.lengths import CHAPTER_FLOW, run_length, runs_full
from sim.toolchain import SIMULATORS
from verif.agents.chip.config import DEFAULT_WATCHDOG_MARGIN
from verif.kit.failure_point import read_point
from verif.runs.launch import chip_build, decode_job, run_decode
from verif.runs.plans import (
    CHAPTER_STEPS,
    CHAPTER_WINDOWS,
    FORK_PLAN,
    PAGE_SIZES,
    RANDOM_PLAN,
    SHORT_PLAN,
    SHORT_STEPS,
    TABLE_STEPS,
    chapter_spec,
    fork_plan,
    fork_steps,
    page_size_spec,
    short_plan,
    sinks_spec,
)
from verif.runs.record import FAILING_IMAGE
from verif.runs.spec import DecodeSpec, reference_decode
from verif.tests.broken_chips import RTL_MUTANTS, make_broken_chip


def steps_on(sim: str, flow: str = "") -> int:
    return run_length(sim, CHAPTER_STEPS, SHORT_STEPS, flow)


def random_plan(sim: str) -> list[DecodeSpec]:
    """The random-model decodes; on Icarus in make test, each for half its steps."""
    return RANDOM_PLAN if runs_full(sim) else short_plan(RANDOM_PLAN)


def print_timing(sim: str, what: str, result: dict) -> None:
    timing = result.get("timing", {})
    steps = max(result["steps_checked"], 1)
    print(f"\n[{sim}] {what}: {result['steps_checked']} steps, "
          f"{1000 * timing.get('decode_s', 0) / steps:.1f} ms/step in the simulator process, "
          f"Python {timing.get('python_total_s', 0):.2f} s")


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job("PlanDecodeTest",
                              lambda sim, window: [chapter_spec(window,
                                                                steps_on(sim, CHAPTER_FLOW))]))
@pytest.mark.parametrize("window", CHAPTER_WINDOWS, ids=lambda w: f"W{w}")
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chapter_decode(sim, window, seed, sim_run):
    """The structured model (32 steps; 12 on Icarus in make test): the rule holds, every step
    matches, cycles go flat, and the chapter's table (tokens, pages after each step, cycles per
    step) is the reference host's on the reference machine (model.host.decode.decode), step for
    step."""
    spec = chapter_spec(window, steps_on(sim, CHAPTER_FLOW))
    result = sim_run.raise_if_failed()
    assert result["steps_checked"] == spec.steps
    assert result["reference_runs"] == spec.steps, "one prediction per chip run, no other"
    totals = [step["counters"]["total"] for step in result["steps"]]
    host = reference_decode(spec)
    (chip,) = result["decodes"]
    assert chip["tokens"] == host.tokens
    assert chip["pages_after"] == [host.pages_after(s) for s in range(1, spec.steps + 1)]
    assert chip["programs_compiled"] == host.programs_compiled
    assert totals == [record.cycles[0] for record in host.records]
    print_timing(sim, spec.label(), result)
    print("  cycles at steps " + ", ".join(f"{s}: {totals[s - 1]}" for s in TABLE_STEPS
                                            if s <= spec.steps) + f"; total {sum(totals)}")


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job("PlanDecodeTest",
                              lambda sim, page_size: [page_size_spec(page_size, steps_on(sim))]))
@pytest.mark.parametrize("page_size", PAGE_SIZES, ids=lambda p: f"P{p}")
@pytest.mark.parametrize("sim", SIMULATORS)
def test_page_size_decode(sim, page_size, seed, sim_run):
    """Exercise 1: the W = 8 decode with pages of 1 to 16 rows; the same tokens and cycles as
    the chapter's decode with pages of 4 (a page size changes only the pages held)."""
    spec = page_size_spec(page_size, steps_on(sim))
    result = sim_run.raise_if_failed()
    assert result["steps_checked"] == spec.steps
    chapter = reference_decode(chapter_spec(spec.window, spec.steps))
    (chip,) = result["decodes"]
    assert chip["tokens"] == chapter.tokens
    assert [step["counters"]["total"] for step in result["steps"]] == [
        record.cycles[0] for record in chapter.records]
    assert chip["pages_after"] == [pages_held(s, spec.window, page_size)
                                   for s in range(1, spec.steps + 1)]
    print_timing(sim, spec.label(), result)


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job("PlanDecodeTest", lambda sim: [sinks_spec(steps_on(sim))]))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_sinks_decode(sim, seed, sim_run):
    """Exercise 3: W = 8 keeping 2 sink rows; the rule holds, pages exact, cycles flat."""
    spec = sinks_spec(steps_on(sim))
    result = sim_run.raise_if_failed()
    assert result["steps_checked"] == spec.steps > spec.window, "the window fills and slides"
    (chip,) = result["decodes"]
    assert_sinks_kept(spec, chip["pages_after"],
                      [step["counters"]["total"] for step in result["steps"]])
    ranges = result["coverage"]["summary"]["decode.page_cg.gather_ranges"]
    assert ranges["covered"] == 2, "no gather read the sinks apart from the recent rows"
    print_timing(sim, spec.label(), result)


def assert_sinks_kept(spec: DecodeSpec, pages_after: Sequence[int | None],
                      totals: Sequence[int]) -> None:
    """A decode with sinks, step by step: the pages held after each step are the closed form's
    (model.kv.step_rule.pages_held, the sinks in pages of their own), and the cycles grow up to
    step W, where the window fills, then are the same at every step after."""
    window, steps = spec.window, range(1, spec.steps + 1)
    closed_form = [pages_held(s, window, spec.page_size, spec.sinks) for s in steps]
    assert list(pages_after) == closed_form, "pages after each step, not the closed form's"
    growing, flat = list(totals[:window]), list(totals[window - 1:])
    assert all(a < b for a, b in pairwise(growing)), f"cycles up to step {window}: {growing}"
    assert flat == [flat[0]] * len(flat), f"cycles from step {window} on: {flat}"


def sinks_decode_records(spec: DecodeSpec) -> tuple[list[int | None], list[int]]:
    """The pages after each step and the cycles of each step of the reference host's decode."""
    host = reference_decode(spec)
    return ([host.pages_after(s) for s in range(1, spec.steps + 1)],
            [record.cycles[0] for record in host.records])


def test_the_sinks_check_fails_a_late_trim_and_creeping_cycles(monkeypatch):
    """The checks of test_sinks_decode pass the reference host's decode, and fail it with a
    planted fault: the cache giving the window's pages back a page late; a chip whose every step
    waits on memory one cycle longer than the one before."""
    spec = sinks_spec(SHORT_STEPS)
    assert_sinks_kept(spec, *sinks_decode_records(spec))
    trim = paged_host.PagedCache.trim
    with monkeypatch.context() as planted:
        planted.setattr(paged_host.PagedCache, "trim",
                        lambda cache, keep_from: trim(cache, keep_from - spec.page_size))
        with pytest.raises(AssertionError, match="not the closed form's"):
            assert_sinks_kept(spec, *sinks_decode_records(spec))
    run_reference = paged_host.run_reference

    def stalls_growing(inputs):
        run, step = run_reference(inputs), inputs.requests[0].plan.step
        waited = [replace(result.counters, total=result.counters.total + step,
                          wait=result.counters.wait + step) for result in run.results]
        return replace(run, results=[replace(result, counters=counters)
                                     for result, counters in zip(run.results, waited,
                                                                 strict=True)])

    monkeypatch.setattr(paged_host, "run_reference", stalls_growing)
    with pytest.raises(AssertionError, match=f"cycles from step {spec.window} on"):
        assert_sinks_kept(spec, *sinks_decode_records(spec))


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.sim_job(launch=decode_job("KitFloorTest", lambda sim: SHORT_PLAN))
@pytest.mark.parametrize("sim", ["verilator"])  # make bench's floor is timed on Verilator
def test_the_benchmark_floor_runs_each_step_through_the_bfm_alone(sim, seed, sim_run):
    """make bench's floor (KitFloorTest): every step of the plan loaded, run and read through
    the BFM with no agent, each run's total cycles those of the reference machine, and timed."""
    timing = sim_run.raise_if_failed()["timing"]
    assert timing["runs"] == sum(spec.steps for spec in SHORT_PLAN)
    assert 0 < timing["decode_s"] < timing["test_s"]


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job("PlanDecodeTest", lambda sim: random_plan(sim)))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_random_model_decodes(sim, seed, sim_run):
    """Random models, teacher-forced, with (W, P) = (6, 2) and (3, 1), then a greedy one."""
    result = sim_run.raise_if_failed()
    assert result["steps_checked"] == sum(spec.steps for spec in random_plan(sim))
    forced = result["decodes"][0]
    assert forced["spec"]["force"] is not None, "the seed did not draw the forced tokens"
    print_timing(sim, "random-model decodes", result)


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job("ForkDecodeTest", lambda sim: fork_plan(sim, FORK_PLAN)))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_fork_decode(sim, seed, sim_run):
    """A request forks after 10 steps (mid-page; on Icarus after 6 of 12): copy-on-write, both
    checked to the end."""
    result = sim_run.raise_if_failed()
    assert [d["spec"]["name"] for d in result["decodes"]] == ["random4-fork", "random4-fork-fork"]
    (spec,) = fork_plan(sim, FORK_PLAN)
    assert result["steps_checked"] == result["reference_runs"] == fork_steps(spec)
    page_cg = result["coverage"]["summary"]["decode.page_cg.cow_copy"]
    assert page_cg["covered"] == 1, "the fork never copied a shared page"
    print_timing(sim, "fork decode", result)


# ---- negative tests: broken copies of the RTL -----------------------------------------------


def broken_run(mutant_name: str, tmp_path, seed: int) -> dict:
    """Run the negative test on a broken copy; the cocotb test must pass (expect_fail).

    The result file, with ``image``: the failing run's memory image the run folder kept, and
    ``point``: the failure's point, as the run folder keeps it (failure_point.json)."""
    sources = make_broken_chip(RTL_MUTANTS[mutant_name], tmp_path)
    run = run_decode(chip_build("icarus", sources), "BrokenChipTest", SHORT_PLAN, seed)
    assert run.error is None, f"the broken chip was not caught:\n{run.failure}"
    assert run.result is not None and run.result["status"] == "failed", run.result
    point = read_point(run.run_dir)  # None when the failure was not located (an X read)
    assert (asdict(point) if point else None) == run.result["failure_point"], run.result
    return {**run.result, "image": np.load(run.run_dir / FAILING_IMAGE), "point": point}


def first_differing_write(right: list[machine.Executed], wrong: list[machine.Executed]) -> tuple:
    """Where the reference machine's trace and a model of the known fault's first write
    differently: (the instruction's trace entry, the scratchpad address)."""
    for want, got in zip(right, wrong, strict=True):
        differing = sorted(a for a in want.sram if want.sram[a] != got.sram.get(a))
        if differing:
            return want, differing[0]
    raise AssertionError("the fault's model changes no write")


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_counter_mutant_fails_the_scoreboard(tmp_path, seed):
    """cnt_mat misses a cycle per MATMUL: the first difference names step 1 and the counter."""
    result = broken_run("cnt_mat_misses_a_cycle", tmp_path, seed)
    report = result["failure"]
    assert result["failure_type"] == "ScoreboardMismatch"
    assert "step 1 (context 1)" in report
    found = re.search(r"first difference: counter mat: expected (\d+), got (\d+)", report)
    assert found and int(found[2]) < int(found[1]), report
    assert f"seed: {seed}" in report and "re-run with waves:" in report
    # every instruction wrote and took what it should: the counter is the controller's
    assert result["point"].unit == "controller" and result["point"].pc is None, report
    assert "the counters that differ are the controller's" in report


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_requant_mutant_fails_the_scoreboard(tmp_path, seed):
    """Requant floors instead of rounding: the first difference is a named output word."""
    result = broken_run("requant_floors", tmp_path, seed)
    report = result["failure"]
    assert result["failure_type"] == "ScoreboardMismatch"
    assert "step 1 (context 1)" in report
    found = re.search(r"first difference: memory word (\d+) \((logits|k_new|v_new)\[(\d+)\]\): "
                      r"expected (0x[0-9a-f]{8}), got (0x[0-9a-f]{8})", report)
    assert found, report
    assert found[4] != found[5]
    # the cause, located: the first scratchpad word a model of the fault (requantization that
    # floors) writes differently, its instruction, and a cycle inside that instruction's EXEC
    floors = lambda acc, mult, shift: arith.rounding_doubling_high_mul(acc, mult) >> shift  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arith, "requant_unclamped", floors)
        broken = machine.run(result["image"], trace=True).trace
    right = machine.run(result["image"], trace=True).trace
    want, address = first_differing_write(right, broken)
    point = result["point"]
    assert (point.unit, point.pc, point.instruction) == ("mat", want.pc, str(want.instr)), report
    assert want.exec_start <= point.cycle < want.end, (point, want)
    assert f"scratchpad word {address} = " in report and point.time_ns is not None


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_watchdog_stops_a_chip_that_never_finishes(tmp_path, seed):
    """done never rises: the watchdog stops the run and names the step, seed and waves."""
    result = broken_run("done_never_rises", tmp_path, seed)
    report = result["failure"]
    assert result["failure_type"] == "ChipHung"
    assert "watchdog: structured-short (W=None, P=4) step 1" in report
    assert f"seed: {seed}" in report
    assert "waves: " in report and "re-run with waves:" in report
    # what the hung chip was doing: the controller done (in DONE) at the program's HALT, no unit
    # busy, the HALT's fetch the last transaction; stopped at the watchdog's last cycle
    image = result["image"]
    halt = WORDS_PER_INSTR * (len(isa.disassemble(image)) - 1)
    limit = isa.program_cycles(image, ChipConfig()) + DEFAULT_WATCHDOG_MARGIN
    point = result["point"]
    assert (point.unit, point.pc, point.instruction, point.cycle) == (
        "controller", halt, "HALT", limit - 1), report
    assert (f"the controller is in DONE at pc {halt}, unit busy: none" in report
            and f"the last memory transaction: a read of 4 words at word {halt} " in report), report


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_unknown_output_is_an_error(tmp_path, seed):
    """An X on a counter (Icarus shows it) is UnknownValue, raised with the step that read it."""
    result = broken_run("cnt_sm_unknown", tmp_path, seed)
    report = result["failure"]
    assert result["failure_type"] == "UnknownValue"
    assert report.startswith("structured-short (W=None, P=4) step 1 (context 1): ")
    assert re.search(r"output \w+ is [01xz]*x", report.lower()), report
    assert f"seed: {seed}" in report
