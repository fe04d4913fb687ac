"""The regression's bookkeeping, without a simulator: suites, re-run commands, the report."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from model.machine import Counters
from scripts.chapter_report import ChapterRun, StepRow, read_run, simulators_agree
from scripts.regress_plugin import rerun_command
from scripts.suites import SUITES, Entry
from sim.runner import Build, default_test_dir, run_folder_name
from sim.tests.test_decode import CHAPTER_STEPS, chapter_spec
from verif.decode_checks import rule_tokens

CHAPTER = "sim/tests/test_decode.py::test_chapter_decode"


def fake_item(nodeid: str, sim: str | None = None, seed_index: int = 0) -> SimpleNamespace:
    """What Entry.matches reads of a collected pytest item."""
    params = {"sim": sim} if sim else {}
    marker = SimpleNamespace(args=(seed_index,))
    return SimpleNamespace(nodeid=nodeid, callspec=SimpleNamespace(params=params),
                           get_closest_marker=lambda name: marker)


def test_an_entry_selects_by_test_simulator_parameter_and_seed():
    entry = Entry(CHAPTER, sims=("icarus",), ids=("W8",), seeds=1)
    assert entry.matches(fake_item(f"{CHAPTER}[icarus-W8-seed1]", "icarus"))
    assert not entry.matches(fake_item(f"{CHAPTER}[verilator-W8-seed1]", "verilator"))
    assert not entry.matches(fake_item(f"{CHAPTER}[icarus-W4-seed1]", "icarus"))
    assert not entry.matches(fake_item(f"{CHAPTER}[icarus-W8-seed2]", "icarus", seed_index=1))
    assert not entry.matches(fake_item(f"{CHAPTER}_other[icarus-W8-seed1]", "icarus"))
    assert Entry("model/tests").matches(fake_item("model/tests/test_paged.py::test_x"))


@pytest.mark.parametrize("suite", ["smoke", "full"])
def test_the_required_suites_exist(suite):
    assert SUITES[suite]


def test_rerun_commands_turn_waves_on_for_simulations_only():
    node = f"{CHAPTER}[icarus-W8-seed7]"
    assert rerun_command(node, 7, is_sim=True) == (
        f"WAVES=1 RANDOM_SEED=7 .venv/bin/pytest -p no:xdist '{node}'")
    assert rerun_command("model/tests/test_paged.py::test_x", None, is_sim=False) == (
        ".venv/bin/pytest -p no:xdist model/tests/test_paged.py::test_x")


def test_run_folders_are_found_by_the_runners_own_naming(monkeypatch, tmp_path):
    """scripts/regress.py finds a test's run folder by the name sim.runner gives it."""
    node = f"{CHAPTER}[icarus-W8-seed7]"
    monkeypatch.setenv("PYTEST_CURRENT_TEST", f"{node} (call)")
    folder = default_test_dir(Build("icarus", "chip_harness", tmp_path, waves=False), 7)
    assert folder.parent.name == run_folder_name(node)


def chapter_result(window: int | None, failing_step: int | None = None) -> dict:
    """A result file of a chapter decode whose every counter is the step number."""
    steps = failing_step or CHAPTER_STEPS
    spec = chapter_spec(window)
    counters = dict.fromkeys(Counters.CYCLE_NAMES, 0)
    return {
        "sim": "icarus", "status": "failed" if failing_step else "passed", "failure": None,
        "steps": [{"step": s, "context": s, "counters": counters | {"total": s},
                   "mismatches": int(s == failing_step)} for s in range(1, steps + 1)],
        "decodes": [{"spec": vars(spec), "tokens": rule_tokens(spec.start, steps),
                     "pages_after": list(range(1, steps + 1)), "programs_compiled": 3}],
    }


def test_a_passing_run_reads_back_with_its_pages_and_no_mismatch(tmp_path):
    run = read_run(tmp_path, chapter_result(8), 8)
    assert run.rule_ok and run.mismatches == 0 and run.programs_compiled == 3
    assert run.pages_after(CHAPTER_STEPS) == run.peak_pages == CHAPTER_STEPS
    assert run.cycles == list(range(1, CHAPTER_STEPS + 1))


def test_a_failing_run_keeps_its_mismatch_and_breaks_the_rule(tmp_path):
    run = read_run(tmp_path, chapter_result(4, failing_step=5), 4)
    assert run.status == "failed" and run.mismatches == 1 and not run.rule_ok
    assert run.pages_after(CHAPTER_STEPS) is None


def test_simulators_agree_only_on_complete_identical_runs():
    def run(sim: str, total: int, steps: int = CHAPTER_STEPS) -> ChapterRun:
        rows = [StepRow(s, s, 1, {"total": total}, 0) for s in range(1, steps + 1)]
        return ChapterRun(sim, 8, "passed", steps=rows)

    assert simulators_agree([run("icarus", 5), run("verilator", 5)], 8)
    assert not simulators_agree([run("icarus", 5), run("verilator", 6)], 8)
    assert not simulators_agree([run("icarus", 5, 3), run("verilator", 5, 3)], 8)
