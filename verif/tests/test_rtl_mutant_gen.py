"""The RTL mutant generator (verif/mutation/rtl_generator.py), and one mutant through the real
check.

The generator is pure text processing: these tests read hw/rtl, never a simulator, except the
last one, which runs the mutation entry point (verif/mutation/rtl_run.py, as a command: a test of
this layer does not import scripts) on one mutant the requant block test must catch.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest

from model.paths import RTL_DIR
from verif.mutation import rtl_generator as gen
from verif.mutation import rtl_run
from verif.mutation.framework import (
    REPO_ROOT,
    Verdict,
    changed_lines,
    check_applies,
    mutate_text,
)
from verif.mutation.rtl_run import RtlOutcome, StageResult

SEED = 1


@pytest.fixture(scope="module")
def mutants():
    return gen.generate(SEED, gen.DEFAULT_COUNT)


def test_the_same_seed_gives_the_same_mutants_and_another_seed_others(mutants):
    assert gen.generate(SEED, gen.DEFAULT_COUNT) == mutants
    assert gen.generate(SEED + 1, gen.DEFAULT_COUNT) != mutants
    assert gen.sample(mutants, 6, SEED) == gen.sample(mutants, 6, SEED)


def test_at_least_60_mutants_over_every_module_and_every_operator_class(mutants):
    modules = {path.stem for path in RTL_DIR.glob("*.v")}
    assert len(mutants) >= 60 and len(modules) >= 13
    assert {gen.module_of(m) for m in mutants} == modules
    assert {gen.operator_of(m) for m in mutants} == set(gen.OPERATORS)
    assert len({m.name for m in mutants}) == len(mutants)
    per_module = Counter(gen.module_of(m) for m in mutants)
    assert min(per_module.values()) >= gen.MIN_PER_MODULE


def test_every_mutant_changes_exactly_one_line(mutants):
    for mutant in mutants:
        check_applies(mutant)
        before = (REPO_ROOT / mutant.path).read_text()
        assert len(changed_lines(before, mutate_text(before, mutant))) == 1, mutant.name


def test_no_mutant_touches_a_comment_a_parameter_check_or_a_declaration(mutants):
    skipped = {path.name: lines_never_mutated(path.read_text()) for path in RTL_DIR.glob("*.v")}
    for mutant in mutants:
        line = gen.line_of(mutant)
        assert line not in skipped[mutant.path.split("/")[-1]], (mutant.name, mutant.original)
        code, comment = gen.split_comment(mutant.original)
        assert code, f"{mutant.name} mutates a comment"
        if gen.operator_of(mutant) != "drop":  # a dropped line keeps its code as a comment
            assert gen.split_comment(mutant.mutated)[1] == comment, mutant.name


def lines_never_mutated(text: str) -> set[int]:
    """Line numbers (an independent scan) of comments, initial blocks, parameters, ports."""
    lines, depth = set(), 0
    for number, raw in enumerate(text.splitlines(), start=1):
        code = raw.split("//")[0].strip()
        if depth or code.startswith("initial"):
            depth += len(re.findall(r"\bbegin\b", code)) - len(re.findall(r"\bend\b", code))
            lines.add(number)
        elif not code or code.startswith(("parameter", "input", "output", "`", "module")):
            lines.add(number)
    return lines


def test_the_compiled_lines_leave_out_ifdefs_comments_and_initial_blocks():
    text = "\n".join([
        "`ifdef NOT_SET", "assign a = b + c;", "`else", "assign a = b - c;", "`endif",
        "/* assign x = 1'b1;", "   still a comment */ assign y = z;",
        "initial begin", "    if (W < 2) begin", "        $finish;", "    end", "end",
        "// assign q = r;", "assign d = e & f;  // and",
    ])
    kept = [code for _, code in gen.compiled_lines(text, set())]
    assert kept == ["assign a = b - c;", "assign y = z;", "assign d = e & f;"]
    assert next(code for _, code in gen.compiled_lines(text, {"NOT_SET"})) == "assign a = b + c;"


def test_only_the_generate_branch_the_parameters_defaults_take_is_mutated():
    """The chip without its parity checks (PARITY = 0) is a measurement's reference, as an
    untaken `ifdef is: its branch's lines are not the design a mutant breaks."""
    text = "\n".join([
        "parameter PARITY = `ON,", "parameter OFF = 0", "generate",
        "    if (PARITY) begin : g_on", "        assign a = b ^ c;", "    end else begin : g_off",
        "        assign a = 1'b0;", "    end",
        "    if (OFF) begin : g_x", "        assign x = y;", "    end else begin : g_y",
        "        assign x = z;", "    end", "endgenerate", "assign d = e & f;",
    ])
    lines = gen.compiled_lines(text, set())
    kept = [code for _, code in gen.elaborated_lines(lines, {"ON": "1"})]
    assert kept == ["parameter PARITY = `ON,", "parameter OFF = 0", "generate",
                    "assign a = b ^ c;", "assign x = z;", "endgenerate", "assign d = e & f;"]
    off = [code for _, code in gen.elaborated_lines(lines, {"ON": "0"})]
    assert "assign a = 1'b0;" in off and "assign a = b ^ c;" not in off


def sites_of(code: str, sizes=None, procedure=False) -> dict[str, list[str]]:
    import random

    found: dict[str, list[str]] = {}
    for site in gen.line_sites(gen.Line(code), False, sizes or {}, procedure, {"en"},
                               random.Random(0)):
        found.setdefault(site.operator, []).append(site.mutated)
    return found


def test_each_operator_class_breaks_what_it_says_and_never_a_select():
    assert sites_of("wire [8:0] s = {x[7], x} + {y[7], y};") == {
        "arith": ["wire [8:0] s = {x[7], x} - {y[7], y};"]}
    found = sites_of("wire ok = (a < b) && (c >= 8'd3);", {"ok": 1})
    assert found["compare"] == ["wire ok = (a <= b) && (c >= 8'd3);",
                                "wire ok = (a < b) && (c > 8'd3);"]
    assert found["logic"] == ["wire ok = (a < b) || (c >= 8'd3);"]
    assert set(found["const"]) == {"wire ok = (a < b) && (c >= 8'd4);",
                                   "wire ok = (a < b) && (c >= 8'd2);"}
    assert found["negate"] == ["wire ok = !((a < b) && (c >= 8'd3));"]
    assert sites_of("assign w = {{(N-16){1'b0}}, v[N-1:0]};") == {
        "const": ["assign w = {{(N-16){1'b1}}, v[N-1:0]};"],
        "drop": ["// dropped: assign w = {{(N-16){1'b0}}, v[N-1:0]};"]}
    registers = sites_of("count <= count + 4'd1;  // next", {"count": 4}, procedure=True)
    assert registers["drop"] == [";  // dropped: count <= count + 4'd1;"]
    assert [re.sub(r"4'h[0-9A-F]", "M", s) for s in registers["stuck"]] == [
        "count <= (count + 4'd1) & M;  // next", "count <= (count + 4'd1) | M;  // next"]
    assert sites_of("if (en && !busy) begin")["negate"] == [
        "if (en && busy) begin", "if (!(en && !busy)) begin"]
    assert sites_of(".en (go),") == {} and sites_of(".en (go && x),")["logic"] == [
        ".en (go || x),"]  # only the input ports of an instance


def test_the_unbroken_copy_runs_each_check_that_decided_a_verdict_once():
    block, *_, decode = rtl_run.SUITES["rtl-mutation"]
    outcomes = [RtlOutcome("a", Verdict.CAUGHT, "", decided_by=(block, "sram")),
                RtlOutcome("b", Verdict.CAUGHT, "", decided_by=(block, "sram")),
                RtlOutcome("c", Verdict.TIMEOUT, "", decided_by=(decode, None)),
                RtlOutcome("d", Verdict.SURVIVED, "every stage passed"),
                RtlOutcome("e", Verdict.DOES_NOT_BUILD, "", decided_by=(block, "dma"))]
    assert rtl_run.deciding_checks(outcomes) == [(decode, None), (block, "dma"),
                                                 (block, "sram")]


def test_the_control_fails_when_the_unbroken_copy_fails_a_deciding_check(tmp_path, monkeypatch):
    block = rtl_run.SUITES["blocks-only"][0]
    copy = tmp_path / "copy"
    (copy / "hw").mkdir(parents=True)
    (copy / "hw" / "x.v").write_text("module x; endmodule\n")
    ran = []

    def stage_result(stage, tree, name):
        ran.append((stage.name, name, (tree / "hw" / "x.v").exists()))
        return StageResult(name != "dma", f"test_block[{name}]", "got 1, want 2")

    monkeypatch.setattr(rtl_run, "MUTANT_ROOT", tmp_path / "mutants")
    monkeypatch.setattr(rtl_run, "stage_result", stage_result)
    caught = [RtlOutcome(n, Verdict.CAUGHT, "", decided_by=(block, n)) for n in ("sram", "dma")]
    outcome = rtl_run.unbroken_control(workers=1)(caught, copy)
    assert sorted(ran) == [("block", "dma", True), ("block", "sram", True)]  # on the mirror
    assert outcome.verdict == Verdict.CAUGHT
    assert outcome.detail == "block:dma: test_block[dma]: got 1, want 2"
    assert rtl_run.unbroken_control(workers=1)(caught[:1], copy).verdict == Verdict.SURVIVED


@pytest.mark.sim
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_requant_mutant_is_caught_by_the_real_check_and_the_unbroken_copy_passes(tmp_path):
    seed, mutant = next((s, m) for s in range(1, 200) for m in gen.generate(s)
                        if gen.module_of(m) == "requant" and gen.operator_of(m) == "arith")
    command = [sys.executable, "-m", "verif.mutation.rtl_run", "--seed", str(seed), "--only",
               mutant.name, "--suite", "blocks-only", "--workers", "1", "--out", str(tmp_path)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=280,
                          env=os.environ | {"PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "unbroken copy passes: True" in done.stdout
    result = json.loads((tmp_path / "mutants.json").read_text())
    assert result["unbroken_checks"] == ["block:requant"]  # the check that caught the mutant
    (record,) = result["mutants"]
    assert record["name"] == mutant.name and record["verdict"] == "caught"
    assert record["catching_test"].startswith("block: ") and "requant" in record["catching_test"]
    assert record["first_difference"]
