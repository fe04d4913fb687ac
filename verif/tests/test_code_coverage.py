"""Verilator code coverage: the coverage.dat reader and merger, the RTL's exclusions (Verilator's
own `coverage_off` comments), and a real coverage build."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from model.paths import RTL_DIR
from sim.runner import COVERAGE_FILE, build
from verif.coverage.code_coverage import (
    COVERAGE_OFF,
    HEADER,
    Thresholds,
    main,
    summarize,
    toggle_holes,
)
from verif.runs.launch import chip_build, chip_sources, run_programs

RTL_FILE = str(RTL_DIR / "widget.v")


def point(kind: str, line: int, comment: str, file: str = RTL_FILE, hier: str = "top.u",
          column: int = 3, module: str = "widget") -> str:
    """One line of a coverage.dat as Verilator 5.048 writes it (control-character separators)."""
    fields = {"f": file, "l": str(line), "n": str(column), "t": kind, "page": f"v_{kind}/{module}",
              "o": comment, "h": hier}
    return "C '" + "".join(f"\x01{k}\x02{v}" for k, v in fields.items()) + "'"


def write_run(folder: Path, lines: list[str]) -> Path:
    folder.mkdir(parents=True)
    (folder / "coverage.dat").write_text("\n".join([HEADER, *lines]) + "\n")
    return folder


def bits(signal: str, toggled: set[int], width: int, line: int = 20) -> list[str]:
    """A signal's toggle points, both directions of each bit, counted 1 where toggled."""
    return [f"{point('toggle', line, f'{signal}[{b}]:{d}')} {int(b in toggled)}"
            for b in range(width) for d in ("0->1", "1->0")]


def test_merging_adds_counts_per_point_and_finds_the_holes(tmp_path):
    first = write_run(tmp_path / "a" / "seed1", [
        f"{point('line', 10, 'block')} 5",
        f"{point('branch', 12, 'if')} 0",
        f"{point('toggle', 3, 'go:0->1')} 0",
        f"{point('toggle', 3, 'go:1->0')} 0",
        f"{point('line', 7, 'block', file='/elsewhere/harness.v')} 0",
        f"{point('line', 30, 'block', module='widget__W8_D40')} 0",  # a parameterised variant
    ])
    second = write_run(tmp_path / "b" / "seed2", [
        f"{point('line', 10, 'block', hier='top.*')} 2",  # same point, other instance name
        f"{point('toggle', 3, 'go:0->1')} 1",
        f"{point('line', 20, 'else')} 0",
    ])

    summary = summarize([first, second])

    assert len(summary.sources) == 2
    counts = {(p.module, p.kind, p.line, p.comment): n for p, n in summary.counts.items()}
    assert counts == {("widget", "line", 10, "block"): 7, ("widget", "branch", 12, "if"): 0,
                      ("widget", "toggle", 3, "go:0->1"): 1, ("widget", "toggle", 3, "go:1->0"): 0,
                      ("widget", "line", 20, "else"): 0, ("widget", "line", 30, "block"): 0}
    totals = {kind: (t.points, t.hit) for kind, t in summary.totals().items()}
    assert totals == {"line": (3, 1), "branch": (1, 0), "toggle": (2, 1)}
    assert [(p.line, p.comment) for p in summary.holes()] == [
        (3, "go:1->0"), (12, "if"), (20, "else"), (30, "block")]
    assert [(p.line, p.comment) for p in summary.holes("line")] == [(20, "else"), (30, "block")]
    assert summary.by_module()["widget"]["toggle"].cell() == "1/2 (50.0%)"
    report = summary.to_markdown()
    assert "| toggle | 2 | 1 | 50.0 |" in report
    assert "widget.v:12:3 branch `if`" in report
    assert len(summarize([tmp_path], roots=None).counts) == 7  # the harness point too


# A module with two excluded regions (a parameter check, a dead default) and a reachable
# default; the coverage.dat of its run has no point in either region, as Verilator writes it.
WIDGET_RTL = """\
module widget #(parameter DEPTH = 4) (input wire clk, input wire [1:0] d, output reg [1:0] e);
initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches $finish
    if (DEPTH < 2) begin
        $finish;
    end
    /* verilator coverage_on */
end
always @* begin
    case (d)
        2'd0: e = 2'd1;
        2'd1, 2'd2: e = 2'd2;
        /* verilator coverage_off */    // unreachable: d is never 3
        default: e = 2'd0;
        /* verilator coverage_on */
    endcase
end
endmodule
"""


def widget_run(tmp_path: Path, lines: list[tuple[str, int, str, int]]) -> Path:
    """A run of WIDGET_RTL (in tmp_path/rtl) whose coverage.dat holds (kind, line, comment,
    count) points."""
    rtl = tmp_path / "rtl" / "widget.v"
    rtl.parent.mkdir(parents=True, exist_ok=True)
    rtl.write_text(WIDGET_RTL)
    return write_run(tmp_path / "run", [f"{point(kind, line, comment, file=str(rtl))} {count}"
                                        for kind, line, comment, count in lines])


def test_the_check_fails_on_an_uncovered_line_and_under_the_branch_threshold(tmp_path, capsys):
    covered = [("line", 2, "block", 1), ("line", 11, "case", 4), ("line", 12, "case", 3),
               ("branch", 9, "if", 2), ("branch", 9, "else", 2)]
    full = widget_run(tmp_path / "full", covered)
    assert summarize([full], roots=[tmp_path / "full" / "rtl"]).check() == []
    assert main([str(full), "--all", "--check"]) == 0

    uncovered = widget_run(tmp_path / "hole", [*covered[:2], ("line", 12, "case", 0),
                                               *covered[3:]])
    summary = summarize([uncovered], roots=[tmp_path / "hole" / "rtl"])
    assert summary.check(Thresholds(line=100.0, branch=98.0)) == [
        "line coverage 66.67% is under 100.0%"]
    assert summary.check(Thresholds(line=60.0, branch=98.0)) == []
    assert main([str(uncovered), "--all", "--check"]) == 1
    assert "CHECK FAILED: line coverage 66.67% is under 100.0%" in capsys.readouterr().out
    assert main([str(uncovered), "--all"]) == 0  # without --check it only reports

    branch = widget_run(tmp_path / "branch", [*covered[:4], ("branch", 9, "else", 0)])
    assert summarize([branch], roots=[tmp_path / "branch" / "rtl"]).check() == [
        "branch coverage 50.00% is under 98.0%"]


def test_the_report_lists_the_excluded_regions_with_their_reasons(tmp_path):
    run = widget_run(tmp_path, [("line", 11, "case", 1)])
    summary = summarize([run], roots=[tmp_path / "rtl"])
    rtl = str(tmp_path / "rtl" / "widget.v")
    assert summary.excluded == [
        (rtl, 3, "parameter checks: only a bad parameter reaches $finish"),
        (rtl, 13, "unreachable: d is never 3")]
    assert ":13 unreachable: d is never 3" in summary.to_markdown()


def coverage_off_spans(text: str) -> list[tuple[int, int, str]]:
    """(first, last line, reason) of each `coverage_off` .. `coverage_on` region of a source."""
    spans, opened = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        if COVERAGE_OFF in line:
            assert opened is None, f"line {number}: coverage_off inside another region"
            opened = (number, line.partition("//")[2].strip())
        elif "verilator coverage_on" in line:
            assert opened is not None, f"line {number}: coverage_on without coverage_off"
            spans.append((opened[0], number, opened[1]))
            opened = None
    assert opened is None, f"line {opened and opened[0]}: coverage_off never closed"
    return spans


def test_every_exclusion_in_the_rtl_is_closed_and_says_why():
    spans = {path.name: coverage_off_spans(path.read_text()) for path in RTL_DIR.glob("*.v")}
    assert sum(map(len, spans.values())) >= 10, "the parameter checks and dead defaults"
    for name, regions in spans.items():
        for first, last, reason in regions:
            assert re.match(r"(parameter checks|unreachable): \w", reason), (name, first, reason)
            assert last - first <= 12, f"{name}:{first}: a region is a check or an arm, not more"


def test_a_toggle_hole_lies_between_bits_the_signal_toggled(tmp_path):
    run = write_run(tmp_path / "run", [
        *bits("pc", {2, 3}, 6),               # word addresses by 4, never past 16: no hole
        *bits("data", {0, 1, 3}, 4),          # bit 2 in the middle: a hole (both directions)
        *bits("idle", set(), 4),              # never changed: its range, not a hole
        *bits("ev_ops", {0, 1, 16, 18}, 32),  # per-opcode counter: field 1's bit 17 is a hole,
    ])                                        # field 0's bits 2..15 its range
    summary = summarize([run])
    assert [(p.signal, holes, total) for p, holes, total in toggle_holes(summary.counts)] == [
        ("data", 2, 8), ("ev_ops", 2, 64)]
    assert "`data`: 2 of 8 toggle points (widget)" in summary.to_markdown()


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_random_programs_leave_coverage_and_no_point_in_an_excluded_region(seed):
    b = chip_build("verilator", coverage=True)  # make run's coverage build
    run = run_programs(b, "RandomProgramsTest", seed, programs=5)
    run.raise_if_failed()
    assert (run.run_dir / COVERAGE_FILE).exists()
    summary = summarize([run.run_dir])
    modules = summary.by_module()
    rtl = {path.stem for path in RTL_DIR.glob("*.v")}
    # Random programs run every opcode, so every module of the chip executes some of its lines
    # and toggles some of its bits; what stays uncovered is a small remainder (error paths),
    # not a whole unit.
    assert rtl <= set(modules), f"modules without coverage: {sorted(rtl - set(modules))}"
    for name in sorted(rtl):  # a module without statements (chip_top) has no line points
        for kind, tally in modules[name].items():
            assert tally.hit > 0, f"{name}: no {kind} covered ({tally.cell()})"
    totals = summary.totals()
    assert totals["toggle"].hit < totals["toggle"].points  # 32-bit counters never fill
    # Verilator itself leaves the RTL's coverage_off regions out: no point of this build lies
    # in one, and the report lists every one of them
    spans = {str(path): coverage_off_spans(path.read_text()) for path in RTL_DIR.glob("*.v")}
    inside = [p.where() for p in summary.counts if p.kind != "toggle"
              and any(first <= p.line <= last for first, last, _ in spans.get(p.file, []))]
    assert inside == []
    assert len(summary.excluded) == sum(len(s) for f, s in spans.items()
                                        if Path(f).stem in modules)


def test_icarus_cannot_collect_code_coverage():
    with pytest.raises(ValueError, match="code coverage needs Verilator"):
        build("icarus", "chip_harness", chip_sources(), coverage=True)
