"""The formal flow's quick part (make test): every block's covers and a shallow bounded check
of its assertions (verif/formal/plan.py), and how the report counts what sby said."""

from __future__ import annotations

import pytest

from verif.formal import report
from verif.formal.plan import BLOCKS
from verif.formal.sby import Check, CheckResult, Property


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.name)
def test_the_blocks_covers_are_reached_and_its_assertions_hold_to_a_shallow_depth(block,
                                                                                  tmp_path):
    found = report.run_block(block, quick=True, work_root=tmp_path)
    assert report.problems([found], {}, quick=True) == [], found.checks
    assert found.covered and found.asserted and not found.unreachable
    assert found.bounded or found.proven


def result(mode: str, status: str, *props: tuple[str, str, str]) -> CheckResult:
    return CheckResult("x", Check(mode, 5), status, 1.0,
                       [Property(name, kind, verdict, "x.sv:1") for name, kind, verdict in props])


def test_the_counts_take_the_worst_verdict_and_a_proof_over_a_bound():
    block = BLOCKS[0]
    found = report.block_report(block, [
        result("bmc", "PASS", ("A", "assert", "pass"), ("B", "assert", "pass")),
        result("prove", "FAIL", ("A", "assert", "pass"), ("B", "assert", "fail"),
               ("C", "cover", "unknown")),
        result("cover", "FAIL", ("C", "cover", "pass"), ("D", "cover", "fail"))])
    assert (found.counterexample, found.undetermined, found.covered, found.unreachable) == (
        ["B"], ["A"], ["C"], ["D"])
    proven = report.block_report(block, [result("bmc", "PASS", ("A", "assert", "pass")),
                                         result("prove", "PASS", ("A", "assert", "pass"))])
    assert (proven.proven, proven.bounded, proven.pass_rate) == (["A"], [], 1.0)


def test_an_unwaived_failure_and_a_stale_waiver_are_problems():
    found = report.block_report(BLOCKS[0], [result("prove", "FAIL", ("B", "assert", "fail"))])
    assert report.problems([found], {}, quick=False) == ["divu.B: counterexample"]
    assert report.problems([found], {"divu.B": "why"}, quick=False) == []
    assert report.problems([found], {"divu.B": "why", "divu.Z": "old"}, quick=False) == [
        "stale waiver divu.Z: nothing unproven to waive"]
