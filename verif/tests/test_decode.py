"""Decodes of the tiny model on the RTL, in the pyuvm environment, on Icarus and Verilator.

Each (simulator, window) pair is its own pytest test, so pytest-xdist spreads them; each run has
its own folder (out/runs/<sim>/<node>/seed<seed>) holding sim.log, result.json, the coverage
database and, with WAVES=1, the waveform. Icarus and Verilator are not compared with each other
directly: each run's per-step counters (result.json) are compared with the reference host's
(model.host.decode on the reference machine), which is equivalent and needs no ordering between
parallel tests. The negative tests build deliberately broken copies of the RTL (Icarus only: one
build each, a few steps) and check that the environment fails them with a clear report.
"""

from __future__ import annotations

import re
import time
from itertools import pairwise

import pytest

from sim.toolchain import SIMULATORS
from verif.decode_checks import flatness_differences, reference_decode, rule_differences
from verif.decode_spec import DecodeSpec
from verif.launch import DecodeRun, chip_build, run_decode
from verif.mutants import MUTANTS, make_mutant

CHAPTER_STEPS = 32
CHAPTER_WINDOWS = (None, 8, 4)
TABLE_STEPS = (1, 4, 8, 9, 12, 16, 24, 32)  # the chapter's cycle table


def chapter_spec(window: int | None) -> DecodeSpec:
    return DecodeSpec(f"structured-W{window}", "structured", steps=CHAPTER_STEPS, window=window,
                      page_size=4)


def decode(sim: str, testcase: str, plan: list[DecodeSpec], seed: int,
           sources=None) -> tuple[DecodeRun, float]:
    started = time.perf_counter()
    run = run_decode(chip_build(sim, sources), testcase, plan, seed)
    return run, time.perf_counter() - started


def check_against_reference(result: dict) -> None:
    """Every decode's per-step counters equal the reference host's, step by step.

    A forked request's steps before the fork ran as its parent's, so they are checked there.
    """
    for decode_result in result["decodes"]:
        spec = DecodeSpec(**decode_result["spec"])
        steps = [s for s in result["steps"] if s["decode"] == spec.label()]
        reference = reference_decode(spec)
        assert decode_result["tokens"] == reference.tokens, spec.label()
        assert steps and steps[-1]["step"] == spec.steps, f"{spec.label()}: steps missing"
        for got in steps:
            ref = reference.records[got["step"] - 1]
            assert got["counters"] == ref.result.counters.as_dict(), (
                f"{spec.label()} step {got['step']}: {got['counters']} vs reference "
                f"{ref.result.counters.as_dict()}")


def print_timing(sim: str, what: str, seconds: float, result: dict) -> None:
    timing = result.get("timing", {})
    steps = max(result["steps_checked"], 1)
    print(f"\n[{sim}] {what}: {seconds:.1f} s wall, {result['steps_checked']} steps, "
          f"{1000 * timing.get('decode_s', 0) / steps:.1f} ms/step in the simulator process, "
          f"Python {timing.get('python_total_s', 0):.2f} s")


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.parametrize("window", CHAPTER_WINDOWS, ids=lambda w: f"W{w}")
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chapter_decode(sim, window, seed):
    """32 steps of the structured model: the rule holds, every step matches, cycles go flat."""
    spec = chapter_spec(window)
    run, seconds = decode(sim, "plan_decode_test", [spec], seed)
    result = run.raise_if_failed()
    assert result["steps_checked"] == CHAPTER_STEPS
    tokens = result["decodes"][0]["tokens"]
    assert not rule_differences(spec, tokens)
    totals = [step["counters"]["total"] for step in result["steps"]]
    assert not flatness_differences(spec, totals)
    if window is None:
        assert all(b > a for a, b in pairwise(totals)), "without a window cycles must grow"
    check_against_reference(result)
    print_timing(sim, spec.label(), seconds, result)
    print("  cycles at steps " + ", ".join(f"{s}: {totals[s - 1]}" for s in TABLE_STEPS)
          + f"; total {sum(totals)}")


RANDOM_PLAN = [
    DecodeSpec("random1-forced", "random", model_seed=1, start=3, steps=24, window=6,
               page_size=2, force_random=True),
    DecodeSpec("random2-forced", "random", model_seed=2, start=5, steps=24, window=3,
               page_size=1, force_random=True),
    DecodeSpec("random3-greedy", "random", model_seed=3, start=7, steps=16, window=None,
               page_size=1),
]


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_random_model_decodes(sim, seed):
    """Random models, teacher-forced, with (W, P) = (6, 2) and (3, 1), then a greedy one."""
    run, seconds = decode(sim, "plan_decode_test", RANDOM_PLAN, seed)
    result = run.raise_if_failed()
    assert result["steps_checked"] == sum(spec.steps for spec in RANDOM_PLAN)
    forced = result["decodes"][0]
    assert forced["tokens"][1:] == forced["spec"]["force"][1:], "forced tokens were not used"
    check_against_reference(result)
    print_timing(sim, "random-model decodes", seconds, result)


FORK_PLAN = [DecodeSpec("random4-fork", "random", model_seed=4, start=1, steps=20, window=8,
                        page_size=4, fork_at=10, force_random=True)]


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_fork_decode(sim, seed):
    """A request forks after 10 steps (mid-page): copy-on-write, both checked to the end."""
    run, seconds = decode(sim, "fork_decode_test", FORK_PLAN, seed)
    result = run.raise_if_failed()
    assert [d["spec"]["name"] for d in result["decodes"]] == ["random4-fork", "random4-fork-fork"]
    assert result["steps_checked"] == 2 * 20 - 10
    page_cg = result["coverage"]["summary"]["decode.page_cg.cow_copy"]
    assert page_cg["covered"] == 1, "the fork never copied a shared page"
    check_against_reference(result)
    print_timing(sim, "fork decode", seconds, result)


# ---- negative tests: broken copies of the RTL -----------------------------------------------

SHORT_PLAN = [DecodeSpec("structured-short", "structured", steps=4, window=None)]


def broken_run(mutant_name: str, tmp_path, seed: int) -> dict:
    """Run the negative test on a broken copy; the cocotb test must pass (expect_fail)."""
    sources = make_mutant(MUTANTS[mutant_name], tmp_path)
    run, _ = decode("icarus", "broken_chip_test", SHORT_PLAN, seed, sources)
    assert run.error is None, f"the broken chip was not caught:\n{run.error}"
    assert run.result is not None and run.result["status"] == "failed", run.result
    return run.result


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
    assert "seed: " in report and "re-run with waves:" in report


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_requant_mutant_fails_the_scoreboard(tmp_path, seed):
    """Requant floors instead of rounding: the first difference is an output word."""
    result = broken_run("requant_floors", tmp_path, seed)
    report = result["failure"]
    assert result["failure_type"] == "ScoreboardMismatch"
    assert "step 1 (context 1)" in report
    assert "first difference: memory word" in report and ": expected 0x" in report
    assert ", got 0x" in report, report


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_watchdog_stops_a_chip_that_never_finishes(tmp_path, seed):
    """done never rises: the watchdog stops the run and names the step, seed and waves."""
    result = broken_run("done_never_rises", tmp_path, seed)
    report = result["failure"]
    assert result["failure_type"] == "ChipHung"
    assert "watchdog: decode structured-short (W=None, P=4) step 1" in report
    assert f"seed: {seed}" in report
    assert "waves: " in report and "re-run with waves:" in report


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_unknown_output_is_an_error(tmp_path, seed):
    """An X on a counter (Icarus shows it) is an error of the step that read it."""
    result = broken_run("cnt_sm_unknown", tmp_path, seed)
    report = result["failure"]
    assert result["failure_type"] in ("UnknownValue", "ScoreboardMismatch")
    assert "cnt_sm" in report and "step 1" in report, report
