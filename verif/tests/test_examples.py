"""The example scripts against the chapter's recorded numbers (examples A and B) and the
model report script (its tables follow the window rule)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from model.chip import isa, machine
from model.chip.isa import Op, program_cycles
from model.host.decode import decode_programs
from model.kv.step_rule import pages_held
from model.lm.tiny_lm import structured_model
from model.paths import REPO_ROOT
from verif.report import chapter as report_model
from verif.report import example_a, example_b
from verif.report import output as _common

STEPS = 24  # example B part 3's teacher-forced steps


# Example A part 1, from the chapter's recorded output: (gathered rows, table, dropped, free).
RECORDED_WINDOW_LOG = [
    ([], [0], 0, [1, 2, 3, 4, 5, 6, 7]),
    ([0], [0], 0, [1, 2, 3, 4, 5, 6, 7]),
    ([0, 1], [0], 0, [1, 2, 3, 4, 5, 6, 7]),
    ([0, 1, 2], [0], 0, [1, 2, 3, 4, 5, 6, 7]),
    ([0, 1, 2, 3], [0, 1], 0, [2, 3, 4, 5, 6, 7]),
    ([0, 1, 2, 3, 4], [0, 1], 0, [2, 3, 4, 5, 6, 7]),
    ([1, 2, 3, 4, 5], [0, 1], 0, [2, 3, 4, 5, 6, 7]),
    ([2, 3, 4, 5, 6], [0, 1], 0, [2, 3, 4, 5, 6, 7]),
    ([3, 4, 5, 6, 7], [1, 2], 1, [0, 3, 4, 5, 6, 7]),
    ([4, 5, 6, 7, 8], [1, 2], 1, [0, 3, 4, 5, 6, 7]),
    ([5, 6, 7, 8, 9], [1, 2], 1, [0, 3, 4, 5, 6, 7]),
    ([6, 7, 8, 9, 10], [1, 2], 1, [0, 3, 4, 5, 6, 7]),
    ([7, 8, 9, 10, 11], [2, 0], 2, [1, 3, 4, 5, 6, 7]),
    ([8, 9, 10, 11, 12], [2, 0], 2, [1, 3, 4, 5, 6, 7]),
]


def test_example_a_window_log_matches_the_chapter():
    log = example_a.window_log()
    got = [(s.gathered, s.table, s.dropped, s.free) for s in log]
    assert got == RECORDED_WINDOW_LOG
    assert [s.wrote for s in log] == list(range(14))
    assert len(log[-1].table) == 2


def test_example_a_fork_and_copy_on_write_match_the_chapter():
    before, forked, appended, released = example_a.fork_events()
    assert before.tables == {"A": [0, 1, 2]} and before.refcounts == {0: 1, 1: 1, 2: 1}
    assert forked.tables == {"A": [0, 1, 2], "B": [0, 1, 2]}
    assert forked.refcounts == {0: 2, 1: 2, 2: 2}
    assert appended.tables == {"A": [0, 1, 2], "B": [0, 1, 3]}
    assert appended.refcounts == {0: 2, 1: 2, 2: 1, 3: 1} and appended.cow_copies == 1
    assert appended.rows == {"A": list(range(10)), "B": [*range(10), 100]}
    assert released.refcounts == {0: 1, 1: 1, 2: 1} and released.free == [3, 4, 5, 6, 7]


# Example B part 1: (page size, requests held, rows used, rows reserved, wasted %).
RECORDED_WASTE = [
    (None, 4, 1022, 8192, 87.5),
    (1, 34, 7852, 7852, 0.0),
    (4, 34, 7852, 7916, 0.8),
    (16, 34, 7852, 8112, 3.2),
    (64, 27, 7308, 8128, 10.1),
    (256, 20, 5267, 7680, 31.4),
]
# Example B part 2: (prompt, page, pages copied, pages shared, saved %, copy-on-write copies).
RECORDED_SHARING = [
    (96, 16, 72, 30, 58, 0),
    (96, 40, 32, 18, 44, 8),
    (100, 16, 72, 30, 58, 8),
    (100, 40, 32, 18, 44, 8),
    (250, 16, 152, 47, 69, 8),
    (250, 40, 64, 22, 66, 8),
]
# Example B part 4: (context, KV GiB full, max batch full, KV GiB window, max batch window).
RECORDED_SERVING = [
    (2048, 0.50, 135, 0.50, 135),
    (8192, 2.00, 33, 1.00, 67),
    (32768, 8.00, 8, 1.00, 67),
    (131072, 32.00, 2, 1.00, 67),
]


def test_example_b_sample_lengths_match_the_chapter():
    lengths = example_b.sample_lengths()
    assert (round(np.mean(lengths)), sorted(lengths)[200], max(lengths)) == (274, 194, 1884)


def test_example_b_memory_waste_matches_the_chapter():
    got = [
        (r.page_size, r.requests_held, r.rows_used, r.rows_reserved, round(100 * r.wasted, 1))
        for r in example_b.memory_waste_rows()
    ]
    assert got == RECORDED_WASTE


def test_example_b_prefix_sharing_matches_the_chapter():
    got = [
        (r.prompt, r.page, r.pages_copied, r.pages_shared, round(100 * r.saved), r.cow_copies)
        for r in example_b.prefix_sharing_rows()
    ]
    assert got == RECORDED_SHARING


def test_example_b_serving_arithmetic_matches_the_chapter():
    gib = 2**30
    got = [
        (r.context, r.kv_bytes_full / gib, r.max_batch_full, r.kv_bytes_window / gib,
         r.max_batch_window)
        for r in example_b.serving_rows()
    ]  # fmt: skip
    assert got == RECORDED_SERVING


def test_example_mains_write_their_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_common, "OUT", tmp_path / "out")
    example_a.main()
    example_b.main()
    printed = capsys.readouterr().out
    assert "87.5%" in printed and "1152/1152 (100.0%)" in printed
    a = json.loads((tmp_path / "out" / "example_a.json").read_text())
    assert [s["table"] for s in a["window_log"]] == [t for _, t, _, _ in RECORDED_WINDOW_LOG]
    b = json.loads((tmp_path / "out" / "example_b.json").read_text())
    assert sorted(b) == ["part1", "part2", "part3", "part4"]
    assert b["part1"][0] == {
        "page_size": None, "requests_held": 4, "rows_used": 1022, "rows_reserved": 8192,
    }  # fmt: skip
    assert [row["cow_copies"] for row in b["part2"]] == [r[-1] for r in RECORDED_SHARING]


def test_example_script_runs_as_a_file():
    done = subprocess.run(
        [sys.executable, "-m", "scripts.report", "example-a"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    # step 14: rows read, row written, block table, pages dropped, free pages
    assert re.search(r"^ +14 +\[8, 9, 10, 11, 12\] +13 +\[2, 0\] +2 +\[1, 3, 4, 5, 6, 7\]$",
                     done.stdout, re.M)


def test_example_b_part3_full_window_is_exact_and_small_windows_cost():
    rows = example_b.window_accuracy_rows(seeds=(1,), windows=(2, 24))
    small, full = rows
    assert (full.agree, full.total, full.mean_logit_error) == (full.total, 16 * STEPS, 0.0)
    assert small.agree < small.total and small.mean_logit_error > 0.05


# ---- the report script -----------------------------------------------------------------------


def closed_form_totals(steps: int, page_size: int) -> dict[int | None, int]:
    """Each chapter window's total cycles in closed form: step L runs the program of context
    min(L, W) (the chapter's window rule), and a program's cycles are hw/ISA.md's cost of its
    listing (model.chip.isa.program_cycles), summed without running it: nothing of the decode
    loop, the machine that counts the cycles or the report."""
    programs = decode_programs(structured_model(), steps, None, page_size=page_size)
    cost = {n: program_cycles(programs.get(n).words, programs.cfg) for n in range(1, steps + 1)}
    return {window: sum(cost[min(step, window or steps)] for step in range(1, steps + 1))
            for window in (None, 8, 4)}


def run_report(tmp_path, monkeypatch, capsys) -> tuple[str, dict, dict]:
    """Run the report: what it printed, its JSON, and its totals (JSON and printed)."""
    monkeypatch.setattr(_common, "OUT", tmp_path / "out")
    report_model.main()
    printed = capsys.readouterr().out
    data = json.loads((tmp_path / "out" / "report_model.json").read_text())
    windows = [entry["window"] for entry in data["windows"]]
    total_row = re.search(r"^ *total +(\d+) +(\d+) +(\d+) *$", printed, re.M).groups()
    totals = {"json": {entry["window"]: entry["total_cycles"] for entry in data["windows"]},
              "printed": dict(zip(windows, map(int, total_row), strict=True))}
    return printed, data, totals


def test_report_model_prints_the_window_rule_and_flat_cycles(tmp_path, monkeypatch, capsys):
    printed, data, totals = run_report(tmp_path, monkeypatch, capsys)
    summary = re.findall(r"^ *(None|8|4) +(True|False) +(\d+) ", printed, re.M)
    assert summary == [("None", "True", "32"), ("8", "True", "8"), ("4", "True", "4")]
    steps, page = data["steps"], data["page_size"]
    for entry in data["windows"]:
        window = entry["window"]
        assert entry["rule_ok"] and entry["flat_from_window"]
        assert entry["programs_compiled"] == (steps if window is None else window)
        assert entry["pages_after"] == {
            str(step): pages_held(step, window, page) for step in (1, 8, 16, 32)}
        assert entry["peak_pages"] == max(
            pages_held(step, window, page) for step in range(1, steps + 1))
    closed_form = closed_form_totals(steps, page)
    assert totals == {"json": closed_form, "printed": closed_form}


@pytest.fixture
def softmax_costs_a_cycle_more(monkeypatch):
    """A planted fault: the machine counts every SOFTMAX one cycle more than hw/ISA.md says
    (one a step, so the cycles stay flat from the window on and every other check holds)."""
    def exec_cycles(instr, cfg):
        return isa.exec_cycles(instr, cfg) + (instr.op == Op.SOFTMAX)

    monkeypatch.setattr(machine, "exec_cycles", exec_cycles)
    machine.check.cache_clear()  # its Checked records hold the costs
    yield
    machine.check.cache_clear()


def test_report_model_totals_catch_a_machine_off_by_a_cycle_a_step(
        softmax_costs_a_cycle_more, tmp_path, monkeypatch, capsys):
    _, data, totals = run_report(tmp_path, monkeypatch, capsys)
    closed_form = closed_form_totals(data["steps"], data["page_size"])
    assert totals["json"] == totals["printed"] == {
        window: total + data["steps"] for window, total in closed_form.items()}
