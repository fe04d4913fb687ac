"""Chip gather's report and benchmark, without a simulator: the figures add up and are labelled."""

from __future__ import annotations

import json

from model.chip.machine import Counters
from model.lm.tiny_lm import rule_tokens
from verif.bench import gather as bench_gather
from verif.report.chapter import collect_chip_gather_runs, collect_runs, regress_json
from verif.report.gather import GatherSteps, rtl_decodes, summary_rows
from verif.runs.plans import CHAPTER_STEPS, chapter_spec, chip_gather_spec


def test_the_indirection_at_pages_of_four_stays_within_the_aim_and_adds_up():
    cost = bench_gather.cost(4)
    assert cost.overhead <= bench_gather.AIM
    assert cost.chip_cycles - cost.host_cycles == cost.table_cycles + cost.store_cycles
    assert cost.pload_entries == 3 and cost.table_cycles == 2 * (3 + 2 + 3)  # E + L + 3


def test_the_summary_gives_each_modes_steady_state_and_the_overhead():
    steps = range(1, CHAPTER_STEPS + 1)
    host = GatherSteps(8, "host", "model", [16 * min(s - 1, 7) for s in steps],
                       [1000 + min(s, 8) for s in steps])
    chip = GatherSteps(8, "chip", "model", [3] * CHAPTER_STEPS, [1010 + min(s, 8) for s in steps])
    rows = {row[1]: row for row in summary_rows([host, chip])}
    assert rows["host"][3:5] == ["112", "1008"]
    assert rows["chip"][3:6] == ["3", "1018", "+0.99%"]


def write_result(folder, spec, host_words, steps: int = CHAPTER_STEPS) -> None:
    counters = Counters(total=100).as_dict()
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps({
        "test": "PlanDecodeTest", "sim": "icarus", "status": "passed", "failure": None,
        "steps": [{"step": s, "context": s, "counters": counters, "mismatches": 0}
                  for s in range(1, steps + 1)],
        "decodes": [{"spec": vars(spec), "tokens": rule_tokens(spec.start, steps),
                     "pages_after": [1] * steps, "programs_compiled": 8,
                     "host_words": host_words}]}))


def test_a_shorter_rtl_run_is_left_out_of_the_steady_state_table(tmp_path):
    """Icarus runs chip gather's shorter version in make run: no full window to read."""
    write_result(tmp_path / "full", chapter_spec(None), [3] * CHAPTER_STEPS)
    write_result(tmp_path / "short", chip_gather_spec(None), [3] * 16, steps=16)
    decodes = rtl_decodes([tmp_path / "full", tmp_path / "short"])
    assert [(d.gather, len(d.cycles)) for d in decodes] == [("host", CHAPTER_STEPS)]
    assert len(summary_rows(decodes)) == 1


def test_regress_json_says_who_gathered_each_run(tmp_path):
    write_result(tmp_path / "host", chapter_spec(8), [112] * CHAPTER_STEPS)
    write_result(tmp_path / "chip", chip_gather_spec(8), [3] * CHAPTER_STEPS)
    folders = [tmp_path / "host", tmp_path / "chip"]
    chip_runs = collect_chip_gather_runs(folders)
    assert [(run.window, run.gather) for run in chip_runs] == [(8, "chip")]
    host_runs = [run for run in collect_runs(folders) if run.status == "passed"]
    assert [(run.window, run.gather) for run in host_runs] == [(8, "host")]
    runs = regress_json(host_runs + chip_runs)["runs"]
    assert [(run["gather"], run["host_words"][0]) for run in runs] == [("host", 112), ("chip", 3)]
