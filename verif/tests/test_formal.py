"""The formal flow's quick part (make test): every block's covers and a shallow bounded check
of its assertions (verif/formal/plan.py), the broken AXI4 managers each caught on its own rule,
and how the report counts what sby said."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import pytest

from model.chip.rtl_defs import AxiRule
from verif.formal import negative, report
from verif.formal.counterexample import read_vcd
from verif.formal.plan import BLOCKS, NEGATIVE
from verif.formal.sby import Check, CheckResult, Property


@pytest.fixture(scope="module")
def quick_checks(tmp_path_factory) -> dict[str, report.BlockReport | negative.NegativeVerdict]:
    """Every block's quick checks and the ten negative checks, two at a time: each is a few
    seconds, most of it Yosys's start-up, so the module takes half the time on two cores."""
    work = tmp_path_factory.mktemp("formal")
    jobs = {**{block.name: partial(report.run_block, block, True, work) for block in BLOCKS},
            **{check.fault.name: partial(negative.run_negative, check, work)
               for check in NEGATIVE}}
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda job: job(), jobs.values()))
    return dict(zip(jobs, done, strict=True))


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.name)
def test_the_blocks_covers_are_reached_and_its_assertions_hold_to_a_shallow_depth(block,
                                                                                  quick_checks):
    found = quick_checks[block.name]
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


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.parametrize("check", NEGATIVE, ids=lambda c: c.fault.name)
def test_each_broken_manager_fails_on_its_own_rule_and_the_clean_one_passes(check,
                                                                             quick_checks):
    verdict = quick_checks[check.fault.name]
    assert verdict.caught, verdict
    assert (verdict.trace is None) == (check.fault == AxiRule.NONE)


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_a_counterexample_names_its_cycle_channel_and_rule_and_opens_at_that_cycle(
        quick_checks):
    verdict = quick_checks[AxiRule.WLAST.name]
    cycle, channel = next(c for c in NEGATIVE if c.fault == AxiRule.WLAST).expected()
    assert verdict.found == f"cycle {cycle}, {channel.name}_{AxiRule.WLAST.name}"
    assert negative.problems([verdict]) == []
    # the save file's marker is on the trace's step where the rules' own count shows the cycle
    vcd = read_vcd(Path(verdict.trace))
    at = vcd.rules_cycle_time(cycle)
    save = Path(verdict.save_file).read_text()
    assert re.search(rf"^\*-?[\d.]+ {at} {at}$", save, re.M), save
    assert f'[dumpfile] "{verdict.trace}"' in save
    shown = [line for line in save.splitlines() if line.startswith("axi_bad_manager_fv.")]
    assert {re.sub(r"\[\d+:0\]$", "", line) for line in shown} <= set(vcd.widths)
    assert any(line.endswith(".wlast") for line in shown)


def test_a_check_that_misses_its_rule_is_a_problem():
    missed = negative.NegativeVerdict("WLAST", "cycle 5, W_WLAST", "cycle 4, W_TRACKED", False,
                                      1.0)
    assert negative.problems([missed]) == [
        "negative check WLAST: expected cycle 5, W_WLAST, found cycle 4, W_TRACKED"]
