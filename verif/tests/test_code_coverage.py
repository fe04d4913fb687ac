"""Verilator code coverage: the coverage.dat reader and merger, and a real coverage build."""

from __future__ import annotations

from pathlib import Path

import pytest

from model.isa import ChipConfig
from sim.runner import RTL_DIR, build, run_test
from verif.code_coverage import HEADER, summarize
from verif.launch import chip_sources

RTL_FILE = str(RTL_DIR / "widget.v")


def point(kind: str, line: int, comment: str, file: str = RTL_FILE, hier: str = "top.u") -> str:
    """One line of a coverage.dat as Verilator 5.048 writes it (control-character separators)."""
    fields = {"f": file, "l": str(line), "n": "3", "t": kind, "page": f"v_{kind}/widget",
              "o": comment, "h": hier}
    return "C '" + "".join(f"\x01{k}\x02{v}" for k, v in fields.items()) + "'"


def write_run(folder: Path, lines: list[str]) -> Path:
    folder.mkdir(parents=True)
    (folder / "coverage.dat").write_text("\n".join([HEADER, *lines]) + "\n")
    return folder


def test_merging_adds_counts_per_point_and_finds_the_holes(tmp_path):
    first = write_run(tmp_path / "a" / "seed1", [
        f"{point('line', 10, 'block')} 5",
        f"{point('branch', 12, 'if')} 0",
        f"{point('toggle', 3, 'go:0->1')} 0",
        f"{point('toggle', 3, 'go:1->0')} 0",
        f"{point('toggle', 4, 'data[0]:0->1')} 0",
        f"{point('line', 7, 'block', file='/elsewhere/harness.v')} 0",
    ])
    second = write_run(tmp_path / "b" / "seed2", [
        f"{point('line', 10, 'block', hier='top.*')} 2",  # same point, other instance name
        f"{point('toggle', 3, 'go:0->1')} 1",
        f"{point('toggle', 4, 'data[0]:0->1')} 0",
        f"{point('line', 20, 'else')} 0",
    ])

    summary = summarize([first, second])

    assert len(summary.sources) == 2
    counts = {(p.kind, p.line, p.comment): n for p, n in summary.counts.items()}
    assert counts == {("line", 10, "block"): 7, ("branch", 12, "if"): 0,
                      ("toggle", 3, "go:0->1"): 1, ("toggle", 3, "go:1->0"): 0,
                      ("toggle", 4, "data[0]:0->1"): 0, ("line", 20, "else"): 0}
    totals = {kind: (t.points, t.hit) for kind, t in summary.totals().items()}
    assert totals == {"line": (2, 1), "branch": (1, 0), "toggle": (3, 1)}
    assert [(p.line, p.comment) for p in summary.holes()] == [
        (3, "go:1->0"), (4, "data[0]:0->1"), (12, "if"), (20, "else")]
    by_signal = [(p.signal, missed, total) for p, missed, total in summary.toggle_holes_by_signal()]
    assert by_signal == [("go", 1, 2), ("data", 1, 1)]
    assert summary.to_dict()["modules"]["widget"]["toggle"] == {"points": 3, "hit": 1,
                                                               "percent": 33.33}
    report = summary.to_markdown()
    assert "| toggle | 3 | 1 | 33.3 |" in report
    assert "widget.v:12:3 branch `if`" in report
    assert len(summarize([tmp_path], roots=None).counts) == 7  # the harness point too


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_random_programs_leave_line_and_toggle_coverage(seed):
    b = build("verilator", "chip_harness", chip_sources(),
              parameters=ChipConfig().verilog_parameters(), coverage=True)
    run = run_test(b, "verif.chip_programs", testcase="random_programs",
                   seed=seed, extra_env={"PROGRAMS": "5"})

    assert run.coverage_file is not None and run.coverage_file.exists()
    summary = summarize([run.test_dir])
    modules = summary.to_dict()["modules"]
    rtl = {path.stem for path in RTL_DIR.glob("*.v")}
    # Random programs run every opcode, so every module of the chip executes some of its lines
    # and toggles some of its bits; what stays uncovered is a small remainder (error paths,
    # parameter checks), not a whole unit.
    assert rtl <= set(modules), f"modules without coverage: {sorted(rtl - set(modules))}"
    for name in sorted(rtl):  # a module without statements (chip_top) has no line points
        for kind, counts in modules[name].items():
            assert counts["hit"] > 0, f"{name}: no {kind} covered ({counts})"
    totals = summary.totals()
    assert totals["toggle"].hit < totals["toggle"].points  # 32-bit counters never fill


def test_icarus_cannot_collect_code_coverage():
    with pytest.raises(ValueError, match="code coverage needs Verilator"):
        build("icarus", "chip_harness", chip_sources(), coverage=True)
