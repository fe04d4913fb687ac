"""Verilator code coverage: the coverage.dat reader and merger, and a real coverage build."""

from __future__ import annotations

from pathlib import Path

import pytest

from model.paths import RTL_DIR
from sim.runner import COVERAGE_FILE, build
from verif.coverage.code_coverage import (
    COUNTER_HIGH,
    DEAD_DEFAULT,
    HEADER,
    LINT_SINK,
    LOW_BITS,
    PARAMETER_CHECK,
    UNEXPLAINED,
    UNUSED_BITS,
    VALUE_HIGH,
    Thresholds,
    excluded_lines,
    main,
    summarize,
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
    # go toggled once (its missing fall is a high bit never left); data never changed at all
    assert {p.signal: name for p, name in summary.toggle_classes.items()} == {
        "go": VALUE_HIGH, "data": UNEXPLAINED}
    by_signal = [(p.signal, missed, total) for p, missed, total in summary.toggle_holes_by_signal()]
    assert by_signal == [("data", 1, 1)]
    assert summary.to_dict()["modules"]["widget"]["toggle"] == {"points": 3, "hit": 1,
                                                               "percent": 33.33}
    report = summary.to_markdown()
    assert "| toggle | 3 | 1 | 33.3 |" in report
    assert "widget.v:12:3 branch `if`" in report
    assert len(summarize([tmp_path], roots=None).counts) == 7  # the harness point too


# A module with every kind of unreachable point, one reachable default and lint sink, and
# counters; line numbers (from 1) in the comments are the ones the tests name.
WIDGET_RTL = """\
`include "chip_defs.vh"
module widget #(parameter DEPTH = 4, parameter WIDTH = 8) (
    input wire clk, input wire go, input wire [1:0] d, input wire [7:0] ir, output reg [1:0] e
);
initial begin
    `CHECK_RANGE("DEPTH", DEPTH, 2, 64)
    if (WIDTH < 1) begin
        $display("bad WIDTH");
        $finish;
    end
end
localparam [1:0] S_IDLE = 2'd0;
localparam [1:0] S_RUN  = 2'd1;
localparam [1:0] S_END  = 2'd2;
reg [1:0] state_reg;
reg [1:0] state_next;
wire [7:0] opcode = ir;
always @* begin
    state_next = state_reg;
    case (state_reg)
        S_IDLE: if (go) state_next = S_RUN;
        S_RUN, S_END: state_next = S_IDLE;   // begin and case in a comment: ignored
        default: state_next = S_IDLE;        // line 23: 2'd3 is never assigned
    endcase
end
always @(posedge clk) state_reg <= state_next;
always @* begin
    case (d)
        2'd0: e = 2'd1;
        2'd1: e = 2'd2;
        2'd2: e = 2'd3;
        2'h3: e = 2'd0;
        default: e = 2'd0;                   // line 33: all four values listed
    endcase
end
always @* begin
    case (opcode)
        8'd1: e = 2'd1;
        default: e = 2'd0;                   // line 39: any other opcode reaches it
    endcase
end
wire unused_widget = &{1'b0, ir[7:2]};
reg [31:0] cnt_total;
endmodule
"""


def test_the_exclusion_rule_reads_parameter_checks_and_dead_defaults_from_the_source():
    assert excluded_lines(WIDGET_RTL) == {
        6: PARAMETER_CHECK, 7: PARAMETER_CHECK, 8: PARAMETER_CHECK, 9: PARAMETER_CHECK,
        10: PARAMETER_CHECK, 23: DEAD_DEFAULT, 33: DEAD_DEFAULT}


def widget_run(tmp_path: Path, lines: list[tuple[str, int, str, int]]) -> Path:
    """A run of WIDGET_RTL (in tmp_path) whose coverage.dat holds (kind, line, comment, count)
    points; the parameter checks' two arms are columns 5 (`if`) and 6 (`else`), as Verilator's."""
    rtl = tmp_path / "rtl" / "widget.v"
    rtl.parent.mkdir(parents=True, exist_ok=True)
    rtl.write_text(WIDGET_RTL)
    column = {"if": 5, "else": 6}
    return write_run(tmp_path / "run", [
        f"{point(kind, line, comment, file=str(rtl), column=column.get(comment, 3))} {count}"
        for kind, line, comment, count in lines])


def test_excluded_points_are_reported_apart_and_percentages_count_reachable_points(tmp_path):
    run = widget_run(tmp_path, [
        ("branch", 6, "if", 0), ("branch", 6, "else", 4),    # CHECK_RANGE: fails, passes
        ("branch", 7, "if", 0), ("branch", 7, "else", 4),    # if (WIDTH < 1) ... $finish
        ("line", 21, "case", 9), ("line", 22, "case", 9),
        ("line", 23, "case", 0),                             # the state machine's default
        ("line", 33, "case", 0),                             # the full case's default
        ("line", 39, "case", 0),                             # reachable: a hole
    ])

    summary = summarize([run], roots=[tmp_path / "rtl"])

    assert sorted((p.line, p.comment, rule) for p, rule in summary.excluded.items()) == [
        (6, "if", PARAMETER_CHECK), (7, "if", PARAMETER_CHECK), (23, "case", DEAD_DEFAULT),
        (33, "case", DEAD_DEFAULT)]
    totals = {kind: (t.points, t.hit) for kind, t in summary.totals().items()}
    assert totals == {"line": (3, 2), "branch": (2, 2)}
    assert [(p.line, p.comment) for p in summary.holes()] == [(39, "case")]
    assert {rule: (t.points, t.hit) for rule, t in summary.excluded_by_rule().items()} == {
        PARAMETER_CHECK: (2, 0), DEAD_DEFAULT: (2, 0)}
    report = summary.to_markdown()
    assert "| parameter check | 2 | 0 |" in report and "| unreachable default | 2 | 0 |" in report


def test_the_check_fails_under_the_thresholds_and_on_a_hit_excluded_point(tmp_path, capsys):
    run = widget_run(tmp_path, [("line", 21, "case", 1), ("line", 39, "case", 0),
                                ("branch", 6, "if", 0), ("branch", 6, "else", 1)])
    summary = summarize([run], roots=[tmp_path / "rtl"])

    assert summary.check(Thresholds(line=100.0, branch=98.0)) == [
        "line coverage 50.00% is under 100.0%"]
    assert summary.check(Thresholds(line=50.0, branch=100.0)) == []
    assert main([str(run), "--all", "--check"]) == 1
    assert "CHECK FAILED: line coverage 50.00% is under 100.0%" in capsys.readouterr().out
    assert main([str(run), "--all"]) == 0  # without --check it only reports

    hit_check = widget_run(tmp_path / "b", [("line", 39, "case", 1), ("branch", 7, "if", 1)])
    problems = summarize([hit_check], roots=[tmp_path / "b"]).check()
    assert len(problems) == 1 and "was hit but is excluded as parameter check" in problems[0]


def test_every_untoggled_bit_gets_a_class_or_is_a_hole(tmp_path):
    def bits(signal: str, toggled: set[int], width: int) -> list[tuple[str, int, str, int]]:
        return [("toggle", 43, f"{signal}[{b}]:{d}", int(b in toggled))
                for b in range(width) for d in ("0->1", "1->0")]

    run = widget_run(tmp_path, [
        ("toggle", 42, "unused_widget:0->1", 0), ("toggle", 42, "unused_widget:1->0", 0),
        *bits("cnt_total", {0, 1, 2}, 8),     # a counter that counted to 7: 5 high bits
        *bits("pc", {2, 3}, 6),               # word addresses by 4: bits 0 and 1, and 4, 5
        *bits("data", {0, 1, 3}, 4),          # bit 2 in the middle: a hole
        *bits("ir", set(range(7)), 8),        # ir[7]: the lint sink names ir[7:2]
    ])

    summary = summarize([run], roots=[tmp_path / "rtl"])

    classes = {(p.signal, p.bit): name for p, name in summary.toggle_classes.items()}
    assert classes[("unused_widget", 0)] == LINT_SINK
    assert {classes[("cnt_total", b)] for b in range(3, 8)} == {COUNTER_HIGH}
    assert {classes[("pc", b)] for b in (0, 1)} == {LOW_BITS}
    assert {classes[("pc", b)] for b in (4, 5)} == {VALUE_HIGH}
    assert classes[("data", 2)] == UNEXPLAINED
    assert classes[("ir", 7)] == UNUSED_BITS
    assert summary.untoggled_by_module()["widget"] == {
        LINT_SINK: 2, COUNTER_HIGH: 10, LOW_BITS: 4, VALUE_HIGH: 4, UNEXPLAINED: 2,
        UNUSED_BITS: 2}
    assert [(p.signal, missed) for p, missed, _ in summary.toggle_holes_by_signal()] == [
        ("data", 2)]


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_random_programs_leave_line_and_toggle_coverage(seed):
    b = chip_build("verilator", coverage=True)  # make run's coverage build
    run = run_programs(b, "RandomProgramsTest", seed, programs=5)
    run.raise_if_failed()
    assert (run.run_dir / COVERAGE_FILE).exists()
    summary = summarize([run.run_dir])
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
