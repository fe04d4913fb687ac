"""Failure groups (verif/regress/failure_groups.py): a failure's first error, its signature, and
the groups a regression writes beside its JUnit file and prints in its summary.

The unit tests clean real texts of our checkers: the scoreboard's report (its own `report`,
with the difference lines of verif/kit/compare.py and model.chip.machine, raised as the decode tests
raise it), the AXI port checker's (ChipBfm.check_protocol) and an unknown value's
(verif/kit/memory.py's `known`) made by their own code; the watchdog's, a block test's and
pytest's own as runs wrote them.

The acceptance test runs a regression (`regress.run_regression`, what `make regress` runs once
it has chosen its executor) on a tmp folder of plain pytest tests with injected failures: 3
scoreboard mismatches that differ only in their numbers, seed and paths, 2 hung chips, 3
passes. They run under pytest-xdist with the regression plugin, which writes the JUnit file the
groups are read from, as for a suite (the tmp tests are no suite's, so the test gives
run_regression an executor of its own). The merge of that JUnit file split into two shards
groups the same.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from model.chip.isa import ChipConfig
from model.chip.machine import Counters, counter_differences
from model.chip.rtl_defs import AxiChannel, AxiRule
from model.paths import REPO_ROOT
from sim.runner import SimulationFailed
from sim.runner import rerun_command as sim_rerun_command
from verif.agents.chip.config import ChipAgentConfig
from verif.kit.bfm import ChipBfm
from verif.kit.compare import first_error, first_memory_difference, first_write_difference
from verif.kit.failure_point import FailurePoint
from verif.kit.memory import known
from verif.regress import regress
from verif.regress.failure_groups import (
    FailedTest,
    failure_message,
    group_failures,
    groups_file,
    signature,
    summary_lines,
)
from verif.regress.plugin import rerun_command
from verif.regress.shards import Manifest, Node, Shard, read_node_info
from verif.runs.record import RunRecorder
from verif.scoreboard.locate import Located
from verif.scoreboard.scoreboard import Scoreboard

LOGITS = 1528  # where the logits start in these reports' memory
DIFFERENT_VALUE = ("first difference: different value: memory word <n> (logits[<n>]): the "
                   "reference machine wrote <hex>, the chip wrote <hex>")
WATCHDOG = ("SimulationFailed: watchdog: structured-short (W=None, P=<n>) step <n> (context <n>): "
            "done did not rise within <n> cycles (closed-form cost <n> + margin <n>)")


def logits_name(address: int) -> str:
    return f"logits[{address - LOGITS}]"


def as_pytest_writes(error: BaseException) -> str:
    """The message attribute of pytest's JUnit <failure>: the exception as Python prints it."""
    return "".join(traceback.format_exception_only(error)).rstrip("\n")


def scoreboard_failure(problem: str, seed: int, step: int) -> str:
    """A decode test's failure: the scoreboard's report of a differing step, raised as
    SimulationFailed (verif/runs/launch.py), with the seed, waves and re-run lines of its run."""
    node = f"verif/tests/test_decode.py::test_chapter_decode[icarus-W8-seed{seed}]"
    recorder = RunRecorder(Path(f"out/runs/icarus/x/seed{seed}"), seed=seed, sim="icarus",
                           waves=f"/work/main/out/runs/icarus/x_seed{seed}/seed{seed}/dump.fst",
                           rerun=sim_rerun_command(seed, node))
    cfg = ChipAgentConfig(bfm=None, chip=ChipConfig(), recorder=recorder)
    item = SimpleNamespace(where=lambda: f"decode chapter step {step} (context {step})",
                           listing=lambda: "")
    located = Located(FailurePoint("mat", 8 * step), [
        f"the first wrong instruction: pc {8 * step} (MATMUL a=384 b=0 c=392 m=1 k=8 n=8 "
        f"flags=0x0 shift=6 mult=1154335928), unit mat, cycle {400 + step}: scratchpad word "
        f"{390 + step} = {step:#010x}, the reference machine wrote {step + 1:#010x}"])
    report = Scoreboard.report(SimpleNamespace(cfg=cfg), item, [problem], located)
    return as_pytest_writes(SimulationFailed(report))


def different_value(word: int, want: int, got: int) -> str:
    return first_write_difference({word: want}, {word: got}, logits_name)


def raised_by(call: Callable, *args: object) -> BaseException:
    """What `call(*args)` raises (it must raise)."""
    try:
        call(*args)
    except AssertionError as error:
        return error
    raise AssertionError(f"{call.__name__} did not raise")


def axi_failure(cycle: int) -> str:
    """The AXI4 port checker's report: ChipBfm.check_protocol reading the harness's ports."""
    ports = {"axi_violations": 3, "axi_first_channel": AxiChannel.AR,
             "axi_first_rule": AxiRule.CROSSES_4K, "axi_first_cycle": cycle}
    dut = SimpleNamespace(**{name: SimpleNamespace(value=f"{int(value):b}")
                             for name, value in ports.items()})
    return as_pytest_writes(raised_by(ChipBfm.check_protocol,
                                      SimpleNamespace(dut=dut, reset_ns=20.0)))


def hung_failure(limit: int) -> str:
    """A watchdog's report (verif/agents/chip/driver.py), as a run's result file kept it."""
    return as_pytest_writes(SimulationFailed(
        f"watchdog: structured-short (W=None, P=4) step 1 (context 1): done did not rise "
        f"within {limit} cycles (closed-form cost {limit - 1000} + margin 1000)\n"
        f"  seed: 1  simulator: icarus\n  waves: not recorded (re-run with WAVES=1)"))


# ---- the first error and its signature --------------------------------------------------------


def test_scoreboard_reports_that_differ_only_in_numbers_share_a_signature():
    one = scoreboard_failure(different_value(LOGITS + 5, 0xFFFFFFFF, 0xFFFFFFFE), 7, 2)
    other = scoreboard_failure(different_value(LOGITS + 2, 0x13, 0x0), 20240601, 5)
    assert one != other
    assert first_error(one) == ("first difference: different value: memory word 1533 "
                                "(logits[5]): the reference machine wrote 0xffffffff, the chip "
                                "wrote 0xfffffffe")
    assert signature(first_error(one)) == signature(first_error(other)) == DIFFERENT_VALUE


def test_different_kinds_of_failure_have_different_signatures():
    counters = Counters()
    failures = [
        scoreboard_failure(different_value(LOGITS + 5, 1, 2), 7, 2),
        scoreboard_failure(first_write_difference({LOGITS: 1}, {}, logits_name), 7, 2),
        scoreboard_failure(first_memory_difference([1, 2], [1, 3], LOGITS, logits_name), 7, 2),
        scoreboard_failure(counter_differences(replace(counters, mat=796),
                                               replace(counters, mat=789))[0], 7, 2),
        scoreboard_failure(counter_differences(replace(counters, dma=449),
                                               replace(counters, dma=453))[0], 7, 2),
        hung_failure(2462),
        "AssertionError: assert 3 == 4",
    ]
    signatures = [signature(first_error(failure)) for failure in failures]
    assert len(set(signatures)) == len(failures), signatures


REAL_TEXTS = {  # a checker: (the message of its failure, its signature)
    "watchdog": (hung_failure(2462), WATCHDOG),
    "axi-checker": (axi_failure(120), "AxiProtocolError: AXI4 port: <n> cycles break a rule; "
                    "the first, cycle <n> after reset: channel AR, rule CROSSES_4K"),
    "unknown-value": (as_pytest_writes(raised_by(known, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXX01",
                                                 "output cnt_sm")),
                      "UnknownValue: output cnt_sm is <bits>"),
    "block-test": ("AssertionError: seed 20240601: rd_data at 17 want 0x1f, got 0x0",
                   "AssertionError: seed <n>: rd_data at <n> want <hex>, got <hex>"),
    "batched-request": (
        "first difference: different value: memory word 1533 (logits[r2][5]): the reference "
        "machine wrote 0x1, the chip wrote 0x2 (3 written words differ)",
        "first difference: different value: memory word <n> (logits[r<n>][<n>]): the "
        "reference machine wrote <hex>, the chip wrote <hex> (<n> written words differ)"),
    "build": ('failed on setup with "sim.runner.BuildFailed: verilator could not build '
              "matrix_unit_harness with parameters {'ARRAY_N': 4} and defines {}: see "
              '/work/wt/build/verilator/matrix_unit_harness-3f2a/build.log"',
              'failed on setup with "BuildFailed: verilator could not build matrix_unit_harness '
              "with parameters {'ARRAY_N': <n>} and defines {}: see <path>\""),
    "shard-nodes": ("pytest.UsageError: --nodes-file: 2 listed test(s) not collected (another "
                    "--seeds or RANDOM_SEED?), first: "
                    "verif/tests/test_decode.py::test_fork_decode[verilator-seed7]",
                    "UsageError: --nodes-file: <n> listed test(s) not collected (another --seeds "
                    "or RANDOM_SEED?), first: <test>"),
    "timeout": ("Failed: Timeout >1200.0s", "Failed: Timeout ><n>s"),
}


@pytest.mark.parametrize(("message", "cleaned"), REAL_TEXTS.values(), ids=REAL_TEXTS)
def test_real_failure_texts_keep_their_words(message, cleaned):
    assert signature(first_error(message)) == cleaned


def junit_case(element: str, message: str | None, text: str) -> ET.Element:
    case = ET.Element("testcase", classname="verif.tests.test_x", name="test_y[seed3]")
    failure = ET.SubElement(case, element, **({"message": message} if message else {}))
    failure.text = text
    return case


def test_the_first_error_comes_from_the_message_else_from_the_traceback():
    report = scoreboard_failure(different_value(LOGITS + 5, 1, 2), 3, 2)
    case = junit_case("failure", report, "def test_y():\n>   raise ...\nE   ignored")
    assert first_error(failure_message(case)).startswith("first difference: different value")
    traceback_only = junit_case("error", None, "    def broken():\n>       raise x\n"
                                "E       RuntimeError: setup broke\nE         at step 2")
    assert first_error(failure_message(traceback_only)) == "RuntimeError: setup broke"


def test_groups_come_largest_first_with_an_example_and_its_rerun():
    failed = [FailedTest("t.py::a", "KeyError: 'x'", "rerun a"),
              *(FailedTest(f"t.py::b[{i}]", f"assert {i} == 0", f"rerun b{i}") for i in (1, 2))]
    groups = group_failures(failed)
    assert [(g.signature, g.count) for g in groups] == [("assert <n> == <n>", 2),
                                                         ("KeyError: 'x'", 1)]
    assert (groups[0].example, groups[0].example_test, groups[0].rerun) == (
        "assert 1 == 0", "t.py::b[1]", "rerun b1")
    assert groups[0].tests == ["t.py::b[1]", "t.py::b[2]"]
    assert summary_lines([], Path("out/junit/x.groups.json")) == [
        "failure groups: no failures (out/junit/x.groups.json)"]


# ---- a regression with injected failures ------------------------------------------------------

INJECTED = '''"""Injected failures for verif/tests/test_failure_groups.py."""

import pytest

from sim.runner import SimulationFailed

SCOREBOARD = {scoreboard!r}
HUNG = {hung!r}


@pytest.mark.sim
@pytest.mark.parametrize("seed", sorted(SCOREBOARD))
def test_decode(seed, record_property):
    record_property("seed", seed)
    raise SimulationFailed(SCOREBOARD[seed])


@pytest.mark.parametrize("limit", sorted(HUNG))
def test_program(limit):
    raise SimulationFailed(HUNG[limit])


@pytest.mark.parametrize("case", range(3))
def test_passes(case):
    assert case >= 0
'''


def expected_rerun(test: str) -> str:
    """The re-run command of an injected test: the decodes are simulations with a seed (the
    last digit of their parameter)."""
    if "test_decode" in test:
        return rerun_command(test, test[-2], True)
    return rerun_command(test, None, False)


def reported(failure: str) -> str:
    """A failure's report as the test raises it again (without the exception's name)."""
    return failure.partition(": ")[2]


def write_injected_tests(folder: Path) -> Path:
    folder.mkdir()
    scoreboard = {seed: reported(scoreboard_failure(different_value(LOGITS + word, 0xFF, got),
                                                    seed, step))
                  for seed, word, got, step in ((7, 5, 0xFE, 2), (8, 3, 0x0, 4), (9, 1, 0x7, 6))}
    hung = {limit: reported(hung_failure(limit)) for limit in (2462, 3100)}
    (folder / "test_injected.py").write_text(INJECTED.format(scoreboard=scoreboard, hung=hung))
    (folder / "pytest.ini").write_text("[pytest]\nmarkers =\n    sim: a simulation\n")
    return folder


def plain_pytest(tests: Path) -> regress.Execute:
    """An executor of the pytest files in `tests`: pytest-xdist on two workers with the
    regression plugin, writing the regression's JUnit file and node info as run_xdist does."""

    def run(regression: regress.Regression, nodes: list[Node] | None) -> regress.Ran:
        info = regression.out / "nodes.json"
        info.parent.mkdir(parents=True, exist_ok=True)
        env = {name: value for name, value in os.environ.items()
               if not name.startswith("PYTEST_")}
        command = [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
                   "-p", "verif.regress.plugin", f"--junitxml={regression.junit}",
                   f"--node-info={info}", str(tests)]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        assert regression.junit.exists(), done.stdout + done.stderr
        return regress.Ran(done.returncode, time.perf_counter() - started, [],
                           read_node_info(info))

    return run


@pytest.fixture(scope="module")
def injected(tmp_path_factory) -> SimpleNamespace:
    """One regression of the injected tests: its folder, status, summary and groups."""
    root = tmp_path_factory.mktemp("injected")
    regression = regress.Regression("injected", 1, 2, "xdist", root / "out")
    printed = io.StringIO()
    with redirect_stdout(printed):
        status = regress.run_regression(regression, plain_pytest(write_injected_tests(
            root / "tests")))
    groups = json.loads(groups_file(regression.junit).read_text())
    return SimpleNamespace(root=root, junit=regression.junit, status=status,
                           summary=printed.getvalue(), groups=groups)


def test_a_regression_with_two_kinds_of_injected_failure_shows_two_groups_with_their_counts(
        injected):
    assert injected.status == 1
    assert regress.junit_counts(injected.junit).line() == "3 passed, 5 failed, 0 skipped"
    assert injected.junit.with_name("injected.groups.json").exists()
    scoreboard, hung = injected.groups
    assert (scoreboard["count"], hung["count"]) == (3, 2)
    assert (scoreboard["signature"], hung["signature"]) == (DIFFERENT_VALUE, WATCHDOG)
    assert sorted(scoreboard["tests"]) == [f"test_injected.py::test_decode[{seed}]"
                                           for seed in (7, 8, 9)]
    for group in (scoreboard, hung):
        assert group["example_test"] in group["tests"]
        assert signature(group["example"]) == group["signature"]
        assert group["rerun"] == expected_rerun(group["example_test"])
    assert scoreboard["rerun"].startswith("WAVES=1 RANDOM_SEED=")
    lines = injected.summary.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.startswith("failure groups ("))
    rows = lines[heading + 3:]  # after the heading, the columns' names and their rule
    assert len(rows) == 2
    for row, group, start in zip(rows, (scoreboard, hung), (DIFFERENT_VALUE[:60], WATCHDOG[:60]),
                                 strict=True):
        assert row.split()[0] == str(group["count"]) and start in row
        assert row.endswith(group["example_test"].rpartition("::")[2])


def unordered(groups: list[dict]) -> list[tuple]:
    """Signature, count and tests of each group, the tests in any order (xdist lists them as
    they finish, the merge in collection order)."""
    return [(g["signature"], g["count"], sorted(g["tests"])) for g in groups]


def test_the_merge_of_shards_groups_the_same(injected):
    cases = regress.junit_cases(injected.junit)
    nodeids = [regress.case_nodeid(case) for case in cases]
    simulations = [nodeid for nodeid in nodeids if "test_decode" in nodeid]  # marked sim
    out = injected.root / "merged"
    for shard, part in ((Shard(1, 2), cases[::2]), (Shard(2, 2), cases[1::2])):
        folder = shard.folder(out, "injected")
        regress.write_junit(part, folder / "junit.xml", 1.0)
        mine = [regress.case_nodeid(case) for case in part]
        Manifest("injected", 1, None, shard.index, 2, "same", len(cases), mine,
                 [nodeids.index(n) for n in mine], [n for n in mine if n in simulations],
                 "xdist", 0.0, status=1).write(folder)
    with redirect_stdout(io.StringIO()) as printed:
        assert regress.merge("injected", 2, out) == 1
    merged = json.loads(groups_file(out / "junit" / "injected.xml").read_text())
    assert unordered(merged) == unordered(injected.groups)
    assert all(group["rerun"] == expected_rerun(group["example_test"]) for group in merged)
    assert "failure groups (" in printed.getvalue()
