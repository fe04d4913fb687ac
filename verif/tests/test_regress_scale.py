"""Regressions beyond pytest-xdist: the Dask executor and the shards (verif/regress/regress.py).

The pure-Python tests check the pieces (shard parsing, the balanced split, JUnit addresses, the
merge of shard folders, the refusal of bad input). The two simulation tests run real
regressions in subprocesses and compare them (outcomes, coverage, failure groups) with the xdist
run of the same suite, the `tiny` suite (four pure-Python tests and a decode on Verilator): on a
local Dask cluster of two workers, and as three shards plus the merge.

The nested regressions write their JUnit files and reports under pytest's temporary folders
(`--out`), and use their own RANDOM_SEED, so their run folders (named after node ids, which end in
the seed) never meet those of a regression running this file. The unsharded xdist run both tests
compare with is made once per session (`xdist_tiny`), whichever pytest worker asks first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _pytest.junitxml import mangle_test_address

from model.paths import REPO_ROOT, RUNS_ROOT_ENV
from sim.runner import locked
from verif.regress import regress
from verif.regress.failure_groups import groups_file
from verif.regress.regress import case_outcome, junit_address, junit_cases
from verif.regress.shards import Manifest, Node, Shard, parse_shard, split
from verif.tests.session_shared import session_folder

DECODE = "verif/tests/test_decode.py::test_chapter_decode"


def test_a_shard_is_i_of_n():
    assert parse_shard("2/3") == Shard(2, 3) and parse_shard(" 1/1 ") == Shard(1, 1)
    for text in ("0/3", "4/3", "x", "1/0", "1/3/4", "-1/3", "", "1of3"):
        assert parse_shard(text) is None, text


def suite_like(count: int) -> list[Node]:
    """Pure-Python tests, short simulations, long ones on both simulators."""
    nodes = [Node(f"model/tests/test_x.py::test_{i}") for i in range(count)]
    nodes += [Node(f"sim/tests/test_blocks.py::test_b[{sim}-seed{i}]", sim, True, 600)
              for i in range(count // 4) for sim in ("icarus", "verilator")]
    nodes += [Node(f"{DECODE}[{sim}-W{i}-seed1]", sim, True, 900)
              for i in range(count // 8) for sim in ("icarus", "verilator")]
    return nodes


def test_shards_are_deterministic_and_balanced():
    nodes = suite_like(40)
    shards = split(nodes, 3)
    def names(shards: list[list[Node]]) -> list[set[str]]:
        return [{n.nodeid for n in shard} for shard in shards]
    assert names(shards) == names(split(list(reversed(nodes)), 3)), "depends on the input order"
    assert sorted(n.nodeid for shard in shards for n in shard) == sorted(n.nodeid for n in nodes)
    costs = [sum(n.cost for n in shard) for shard in shards]
    assert max(costs) - min(costs) <= max(n.cost for n in nodes)
    assert [n.cost for n in nodes[-2:]] == [18, 6]  # a long simulation: on Icarus, on Verilator
    assert split(nodes[:2], 3)[2] == []  # more shards than tests: the last ones are empty


def test_junit_addresses_are_pytests_own():
    for nodeid in (f"{DECODE}[icarus-W8-seed1]", "model/tests/test_paged.py::test_fork",
                   "sim/tests/test_x.py::TestClass::test_y[a/b-c::d]"):
        names = mangle_test_address(nodeid)
        assert junit_address(nodeid) == (".".join(names[:-1]), names[-1])


def test_bad_input_is_refused_in_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch):
    # named by its path: only this test imports distributed (0.3 s in every collecting process)
    monkeypatch.setattr("verif.regress.dask_executor.CONNECT_TIMEOUT_S", 0.2)
    cases = {
        ("--executor", "threads"): "EXECUTOR=threads",
        ("--shard", "0/3"): "SHARD=0/3",
        ("--shard", "4/3"): "SHARD=4/3",
        ("--shard", "x"): "SHARD=x",
        ("--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"): "tcp://127.0.0.1:9",
        ("--scheduler", "tcp://127.0.0.1:9"): "EXECUTOR=dask",
        ("--merge", "--shards", "x"): "SHARDS=x",
        ("--merge", "--shards", "3"): "shard 1/3 of suite smoke has not finished",
    }
    for args, named in cases.items():
        assert regress.main(["--suite", "smoke", "--out", str(tmp_path), *args]) == 2, args
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and named in err, err
    assert list(tmp_path.iterdir()) == []


def write_shard(out: Path, shard: Shard, cases: dict[str, str], all_nodes: list[str]) -> None:
    """A finished shard's folder: its manifest and a JUnit file with the given outcomes."""
    folder = shard.folder(out, "smoke")
    folder.mkdir(parents=True)
    elements = []
    for nodeid, outcome in cases.items():
        classname, name = junit_address(nodeid)
        case = ET.Element("testcase", classname=classname, name=name, time="1.0")
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="seed", value="7")
        if outcome != "passed":
            ET.SubElement(case, "failure" if outcome == "failed" else "skipped", message="x")
        elements.append(case)
    regress.write_junit(elements, folder / "junit.xml", 1.0)
    Manifest(suite="smoke", seeds=1, random_seed="7", shard=shard.index, shards=shard.count,
             suite_digest="same", suite_nodes=len(all_nodes), nodes=list(cases),
             positions=[all_nodes.index(n) for n in cases],
             simulations=[n for n in cases if "decode" in n], executor="xdist", started=0.0,
             seconds=1.0, status=int("failed" in cases.values())).write(folder)


def test_the_merge_orders_the_cases_and_lists_the_reruns(tmp_path, capsys):
    nodes = [f"{DECODE}[icarus-W8-seed7]", "model/tests/test_x.py::test_a",
             f"{DECODE}[verilator-W8-seed7]"]
    write_shard(tmp_path, Shard(1, 2), {nodes[2]: "failed"}, nodes)
    write_shard(tmp_path, Shard(2, 2), {nodes[0]: "passed", nodes[1]: "skipped"}, nodes)
    assert regress.merge("smoke", 2, tmp_path) == 1
    merged = junit_cases(tmp_path / "junit" / "smoke.xml")
    assert [junit_address(n) for n in nodes] == [(c.get("classname"), c.get("name"))
                                                 for c in merged]
    assert [case_outcome(c) for c in merged] == ["passed", "skipped", "failed"]
    out = capsys.readouterr().out
    assert f"WAVES=1 RANDOM_SEED=7 .venv/bin/pytest -p no:xdist '{nodes[2]}'" in out
    assert (tmp_path / "coverage.md").exists()


# --- real regressions, in subprocesses ---------------------------------------------------------


def regression(out: Path, seed: int, *args: str) -> subprocess.CompletedProcess:
    """`python -m scripts.regress ARGS --out OUT` with RANDOM_SEED=seed, outside this pytest,
    its run folders under OUT (the regressions of these tests run the same decode with the same
    seed, at the same time on two workers)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env |= {"RANDOM_SEED": str(seed), RUNS_ROOT_ENV: str(out / "runs")}
    done = subprocess.run([sys.executable, "-m", "scripts.regress", "--out", str(out), *args],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: a test failed, still compared
    return done


def outcomes(junit: Path) -> dict[str, str]:
    """{(classname, name): outcome} of a JUnit file; the key is the node id as JUnit spells it."""
    return {f"{c.get('classname')}::{c.get('name')}": case_outcome(c) for c in junit_cases(junit)}


def failure_groups(junit: Path) -> list[tuple]:
    """The failure groups written beside a JUnit file: signature, count and tests (in any
    order: xdist lists them as they finish)."""
    groups = json.loads(groups_file(junit).read_text())
    return [(g["signature"], g["count"], sorted(g["tests"])) for g in groups]


def functional(report: Path) -> str:
    """The functional-coverage section of a coverage report, without the merged file's path."""
    section = report.read_text().split("## Functional coverage")[1].split("## Verilator")[0]
    return section.replace(str(report.parent), "OUT")


TINY_SEED = 4201


@pytest.fixture
def xdist_tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of the tiny suite run by xdist on two workers with TINY_SEED: made once
    per session, by the first test to ask (verif/tests/session_shared.py)."""
    shared = session_folder(tmp_path_factory, "xdist_tiny")
    with locked(shared.with_suffix(".lock")):
        if not (shared / "junit" / "tiny.xml").exists():
            regression(shared, TINY_SEED, "--suite", "tiny", "--jobs", "2")
    return shared


@pytest.mark.sim
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_dask_runs_the_tiny_suite_like_xdist(tmp_path, xdist_tiny):
    done = regression(tmp_path / "dask", TINY_SEED, "--suite", "tiny", "--jobs", "2",
                      "--executor", "dask")
    assert "Dask: 5 tests on 2 workers of tcp://127.0.0.1:" in done.stdout, done.stdout
    xdist, dask = (outcomes(run / "junit" / "tiny.xml") for run in (xdist_tiny, tmp_path / "dask"))
    assert len(dask) == 5 and dask == xdist
    assert failure_groups(tmp_path / "dask" / "junit" / "tiny.xml") == failure_groups(
        xdist_tiny / "junit" / "tiny.xml")
    report = tmp_path / "dask" / "coverage.md"
    assert functional(report) == functional(xdist_tiny / "coverage.md")
    if "passed" in dask.values():
        assert "Merged from" in functional(report), report.read_text()


@pytest.mark.sim
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_three_shards_merge_into_the_unsharded_run(tmp_path, xdist_tiny):
    seed = TINY_SEED
    single, sharded = xdist_tiny, tmp_path / "sharded"
    for i in (1, 2, 3):
        regression(sharded, seed, "--suite", "tiny", "--jobs", "1", "--shard", f"{i}/3")
    manifests = [Manifest.read(Shard(i, 3).folder(sharded, "tiny")) for i in (1, 2, 3)]
    assert all(m.nodes for m in manifests) and len({m.suite_digest for m in manifests}) == 1
    assert json.loads((Shard(1, 3).folder(sharded, "tiny") / "shard.json").read_text())["runs"]
    done = regression(sharded, seed, "--merge", "--suite", "tiny", "--shards", "3")
    assert "3 shards merged" in done.stdout, done.stdout
    merged = outcomes(sharded / "junit" / "tiny.xml")
    assert len(merged) == 5 and merged == outcomes(single / "junit" / "tiny.xml")
    assert failure_groups(sharded / "junit" / "tiny.xml") == failure_groups(
        single / "junit" / "tiny.xml")
    assert functional(sharded / "coverage.md") == functional(single / "coverage.md")
