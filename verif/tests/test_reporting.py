"""The regression's bookkeeping, without a simulator: suites, re-run commands, the report."""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import pytest

from model.chip.machine import CYCLE_NAMES
from model.compiler.gather import GATHER_MODES
from model.lm.tiny_lm import rule_tokens
from sim.runner import Build, default_test_dir, run_folder_name
from sim.toolchain import SIMULATORS
from verif.regress import main_job
from verif.regress.plugin import rerun_command
from verif.regress.suites import SUITES, Entry
from verif.report import chapter as chapter_report
from verif.report import serving as serving_report
from verif.report.chapter import ChapterRun, StepRow, first_disagreement, read_run
from verif.runs.plans import (
    CHAPTER_STEPS,
    CHAPTER_WINDOWS,
    SERVING_BATCHES,
    chapter_spec,
    serving_spec,
)
from verif.tests.session_shared import collected_node_ids

CHAPTER = "verif/tests/test_decode.py::test_chapter_decode"


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


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> list[SimpleNamespace]:
    """The collected tests, as Entry.matches reads them (simulator from the node id)."""
    def item(node: str) -> SimpleNamespace:
        sim = next((s for s in ("icarus", "verilator") if f"[{s}" in node or f"-{s}" in node),
                   None)
        return fake_item(node, sim)
    return [item(node) for node in collected_node_ids(tmp_path_factory)]


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_every_entry_of_a_suite_selects_a_test(suite, nodes):
    for entry in SUITES[suite]:
        assert any(entry.matches(node) for node in nodes), f"{suite}: {entry} selects nothing"


def test_the_full_suite_runs_every_test(nodes):
    missed = [n.nodeid for n in nodes if not any(e.matches(n) for e in SUITES["full"])]
    assert missed == [], f"the full suite leaves out {len(missed)} tests: {missed[:5]}"


def test_rerun_commands_turn_waves_on_for_simulations_only():
    node = f"{CHAPTER}[icarus-W8-seed7]"
    assert rerun_command(node, 7, is_sim=True) == (
        f"WAVES=1 RANDOM_SEED=7 .venv/bin/pytest -p no:xdist '{node}'")
    assert rerun_command("model/tests/test_paged.py::test_x", None, is_sim=False) == (
        ".venv/bin/pytest -p no:xdist model/tests/test_paged.py::test_x")


def test_run_folders_are_found_by_the_runners_own_naming(monkeypatch, tmp_path):
    """verif/regress/regress.py finds a test's run folder by the name sim.runner gives it."""
    node = f"{CHAPTER}[icarus-W8-seed7]"
    monkeypatch.setenv("PYTEST_CURRENT_TEST", f"{node} (call)")
    folder = default_test_dir(Build("icarus", "chip_harness", tmp_path, waves=False), 7)
    assert folder.parent.name == run_folder_name(node)


def chapter_result(window: int | None, failing_step: int | None = None) -> dict:
    """A result file of a chapter decode whose every counter is the step number."""
    steps = failing_step or CHAPTER_STEPS
    spec = chapter_spec(window)
    counters = dict.fromkeys(CYCLE_NAMES, 0)
    return {
        "sim": "icarus", "status": "failed" if failing_step else "passed", "failure": None,
        "steps": [{"step": s, "context": s, "counters": counters | {"total": s},
                   "mismatches": int(s == failing_step)} for s in range(1, steps + 1)],
        "decodes": [{"spec": vars(spec), "tokens": rule_tokens(spec.start, steps),
                     "pages_after": list(range(1, steps + 1)), "programs_compiled": 3,
                     # check_phase records the verdicts; a run that failed earlier has none
                     "verdicts": {} if failing_step else {"tokens": [], "pages": [],
                                                          "programs": [], "cycles": []}}],
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


def agreeing_run(sim: str, window: int | None = 8, steps: int = CHAPTER_STEPS) -> ChapterRun:
    rows = [StepRow(s, s, 1, {"total": 100 + s}, 0, {"total": 100 + s, "sat": 0, "ops": [1, 2]},
                    [s, 2 * s]) for s in range(1, steps + 1)]
    return ChapterRun(sim, window, "passed", steps=rows)


def test_simulators_agree_only_on_complete_identical_runs():
    assert first_disagreement([agreeing_run("icarus"), agreeing_run("verilator")], 8) is None
    short = [agreeing_run("icarus", steps=3), agreeing_run("verilator", steps=3)]
    assert "icarus has 3 of 32 steps" in first_disagreement(short, 8)
    assert "1 of 2 simulators ran" in first_disagreement([agreeing_run("icarus")], 8)


def test_a_difference_in_one_counter_or_word_is_named():
    icarus, verilator = agreeing_run("icarus"), agreeing_run("verilator")
    verilator.steps[6].all_counters["sat"] = 1
    assert first_disagreement([icarus, verilator], 8) == (
        "W=8: step 7: counter sat: icarus 0, verilator 1")
    verilator = agreeing_run("verilator")
    verilator.steps[2].outputs[1] = 7
    assert first_disagreement([icarus, verilator], 8) == (
        "W=8: step 3: output word 1: icarus 0x00000006, verilator 0x00000007")


def test_the_report_stage_fails_when_the_simulators_differ(monkeypatch, tmp_path):
    """make run's report stage: two runs that differ in one counter fail it, named."""
    runs = [agreeing_run(sim, window) for window in CHAPTER_WINDOWS for sim in SIMULATORS]
    runs[3].steps[4].all_counters["total"] += 1
    for run in runs:
        run.rule_ok = True
    monkeypatch.setattr(main_job.chapter_report, "collect_runs",
                        lambda dirs, profile="ideal": runs if profile == "ideal" else [])
    monkeypatch.setattr(main_job, "session_runs", lambda junit, since: [])
    monkeypatch.setattr(main_job, "REGRESS_JSON", tmp_path / "regress.json")
    monkeypatch.setattr(main_job, "write_plots", lambda runs, since: [])
    monkeypatch.setattr(main_job, "write_coverage_report",
                        lambda dirs, since, title: tmp_path / "coverage.md")
    ok, note = main_job.Report(0.0).build()
    assert not ok
    assert note == ("Icarus and Verilator differ: W=8: step 5: counter total: "
                    "icarus 105, verilator 106")


def test_the_serving_table_holds_the_measured_gain_against_the_chips_ceiling(monkeypatch):
    """Runs of every gather mode and B (as the serving tests record them) make the rows, the
    gains and their bounds, the gather cost and the ceiling computed on the reference machine."""
    def serving(gather: str, batch: int) -> dict:
        cycles = {1: 4000, 2: 3000, 4: 2600, 8: 2500}[batch] * (1.05 if gather == "chip" else 1)
        measured = {"gather": gather, "chip_cycles": int(cycles), "dma_cycles": 100,
                    "host_words": 10, "tokens_per_kilocycle": round(1000 / cycles, 4),
                    "tokens_generated": 2, "port_words": {1: 1800, 8: 1000}.get(batch, 1200),
                    "attention_cycles": {1: 1000, 8: 1300}.get(batch, 1100),
                    "generated": {"r0": [1, 2]}, "spec": {"n_requests": 24}}
        return {"serving": {key: 0 for _, key in serving_report.COLUMNS} | measured}

    runs = {(sim, serving_spec(b, g).name): serving(g, b) for sim in ("icarus", "verilator")
            for g in GATHER_MODES for b in SERVING_BATCHES}
    monkeypatch.setattr(serving_report, "newest_results", lambda names, since: runs)
    table = serving_report.serving_table()
    assert table["missing"] == [] and table["b8_simulators_agree"]
    assert table["gain_b8_over_b1"] == table["gain_b8_over_b1_chip"] == 1.6
    assert [c["context"] for c in table["ceiling"]] == list(serving_report.CEILING_CONTEXTS)
    assert all(1 < c["gain_b8"] < c["limit"] for c in table["ceiling"])
    text = serving_report.print_table(table)
    assert table["port_bound_gain"] == {"host": 1.8, "chip": 1.8}  # 1800 / 1000 port words
    # the cycles left without attention: host 3000 at B = 1 over 1200 at B = 8, chip 3200 / 1325
    assert table["attention_free_gain"] == {"host": 2.5, "chip": 2.42}
    # per gather mode: the batching gain, the port-bound and the attention-free gains
    assert re.search(r"^host +1\.6x +1\.8x +2\.5x$", text, re.M)
    assert re.search(r"^chip +1\.6x +1\.8x +2\.42x$", text, re.M)
    last = table["ceiling"][-1]
    assert re.search(rf"^ +8 +{last['gain_b8']}x +{last['limit']}x +{last['solo_cycles']} ",
                     text, re.M)
    b8 = ("icarus", serving_spec(8, "chip").name)
    runs[b8] = {"serving": runs[b8]["serving"] | {"spec": {"n_requests": 12}}}
    assert serving_report.serving_table()["b8_simulators_agree"] is None, "not comparable"
    runs[b8] = {"serving": runs[b8]["serving"] | {"spec": {"n_requests": 24},
                                                   "chip_cycles": 1}}
    assert serving_report.serving_table()["b8_simulators_agree"] is False


def test_a_run_under_a_memory_profile_is_held_against_the_ideal_run():
    """The per-profile table: a light run whose cycles (waits taken out) equal the ideal run's
    on the steps it ran is fine, its waits are counted; one cycle off is a problem."""
    ideal = agreeing_run("icarus")
    light = replace(agreeing_run("icarus", steps=8), profile="light")
    for row in light.steps:
        row.all_counters["wait"] = 7
    rows = chapter_report.profile_rows([ideal], [light])
    assert [row[-1] for row in rows] == ["True", "True"]
    assert rows[1][4:8] == ["8", str(sum(light.cycles)), "56", str(sum(light.cycles) + 56)]
    assert chapter_report.profile_problems(rows) == []
    light.steps[3].counters["total"] += 1
    rows = chapter_report.profile_rows([ideal], [light])
    assert chapter_report.profile_problems(rows) == [
        "light W=8 host icarus: its ideal-memory cycles differ from the ideal run's"]
