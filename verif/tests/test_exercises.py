"""verif/report/exercises.py: the chapter's exercises as tables and out/exercises.json."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from model.host.decode import decode
from model.lm.tiny_lm import make_model
from sim.toolchain import SIMULATORS
from verif.report import example_b, exercises
from verif.report import output as _common
from verif.runs import record
from verif.runs.plans import CHAPTER_STEPS, PAGE_SIZES, SHORT_STEPS, page_size_spec, sinks_spec
from verif.runs.record import RESULT_FILE
from verif.runs.spec import DecodeSpec
from verif.scoreboard.decode_checks import DecodeFacts, decode_verdicts


def test_unaligned_side_is_example_b_part2():
    got = [(r.prompt, r.page, r.pages_unaligned, r.cow_unaligned)
           for r in exercises.prefix_alignment_rows()]  # fmt: skip
    part2 = [(r.prompt, r.page, r.pages_shared, r.cow_copies)
             for r in example_b.prefix_sharing_rows()]  # fmt: skip
    assert got == part2


def test_aligned_prefix_is_never_copied_on_write():
    rows = exercises.prefix_alignment_rows()
    assert len(rows) == 6
    assert [r.cow_aligned for r in rows] == [0] * 6
    assert all(r.pages_saved == r.pages_unaligned - r.pages_aligned for r in rows)
    assert all(0 <= r.padding_rows < r.page for r in rows)


def test_the_table_is_json_ready():
    table = exercises.prefix_alignment_table()
    assert json.loads(json.dumps(table)) == table
    assert (table["sharers"], table["own_rows"]) == (example_b.SHARERS, example_b.OWN_ROWS)


def fake_run(runs: Path, sim: str, spec: DecodeSpec) -> None:
    """A passed result file of ``spec`` as the testbench writes it, from the reference host."""
    run = decode(make_model(spec.model), spec.steps, spec.start, spec.window,
                 page_size=spec.page_size, sinks=spec.sinks)
    folder = runs / sim / spec.name / "seed1"
    folder.mkdir(parents=True)
    steps = [{"step": r.step, "counters": r.result.counters.as_dict(), "outputs": [r.token]}
             for r in run.records]
    pages = [run.pages_after(step) for step in range(1, spec.steps + 1)]
    verdicts = decode_verdicts(DecodeFacts(spec, run.tokens, pages,
                                           [r.cycles[0] for r in run.records],
                                           run.programs_compiled))
    (folder / RESULT_FILE).write_text(json.dumps({
        "status": "passed", "sim": sim, "steps": steps,
        "decodes": [{"spec": asdict(spec), "tokens": run.tokens, "pages_after": pages,
                     "verdicts": verdicts}]}))


def test_the_rtl_exercises_read_their_tables_from_the_runs(tmp_path, monkeypatch):
    """Icarus ran the short versions (as in make test and make run): the table is the full
    run's, and the simulators agree on the steps both ran."""
    monkeypatch.setattr(record, "RUNS_ROOT", tmp_path)
    for sim in SIMULATORS:
        steps = CHAPTER_STEPS if sim == "verilator" else SHORT_STEPS
        for spec in [*(page_size_spec(p, steps) for p in PAGE_SIZES), sinks_spec(steps)]:
            fake_run(tmp_path, sim, spec)
    table = exercises.page_sizes_table()
    rows = {r["page_size"]: r for r in table["rows"]}
    # after 32 steps with W = 8 rows 25..31 are needed: 7 pages of 1 row, 4 of 2, 2 of 4,
    # 1 of 8 (rows 24..31), 1 of 16 (rows 16..31)
    assert [rows[p]["rows_reserved"] for p in PAGE_SIZES] == [7, 8, 8, 8, 16]
    assert [rows[p]["table_live"] + rows[p]["table_dropped"] for p in PAGE_SIZES] == [
        32, 16, 8, 4, 2]
    assert (table["fewest_rows_reserved"], table["largest_block_table"]) == (1, 1)
    assert all(r["simulators_agree"] and r["steady_cycles"] for r in table["rows"])
    sinks = exercises.sinks_rtl_rows()
    assert all(r["ran"] and r["rule_ok"] and r["pages_exact"] and r["flat_cycles"]
               for r in sinks)


def test_simulators_that_differ_in_a_step_both_ran_disagree():
    steps = [{"counters": {"total": 10}, "outputs": [1]}, {"counters": {"total": 12},
                                                           "outputs": [2]}]
    full = {"sim": "verilator", "steps": steps}
    assert exercises.results_agree([{"sim": "icarus", "steps": steps[:1]}, full])
    other = {"sim": "icarus", "steps": [steps[0], {"counters": {"total": 13}, "outputs": [2]}]}
    assert not exercises.results_agree([other, full])
    assert not exercises.results_agree([full]), "one simulator is not agreement"


def test_a_missing_rtl_run_is_a_problem_not_a_row(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(record, "RUNS_ROOT", tmp_path / "none")
    monkeypatch.setattr(_common, "OUT", tmp_path / "out")
    monkeypatch.setattr(exercises, "sinks_accuracy_rows", lambda: [])
    assert exercises.main([]) == 1
    printed = capsys.readouterr().out
    assert "PROBLEM: exercise 1: missing run icarus structured-W8-P1" in printed
    written = json.loads((tmp_path / "out" / "exercises.json").read_text())
    assert sorted(written) == ["admission", "page_sizes", "prefix_alignment", "sinks"]
    assert [row["completed"] for row in written["admission"]["rows"]] == [400] * 4
    assert written["prefix_alignment"] == exercises.prefix_alignment_table()
