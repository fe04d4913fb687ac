"""`make regress`: run a suite (verif/regress/suites.py), then write its JUnit file and report.

On pytest-xdist or a Dask cluster, whole or one shard; `--merge` combines the shards (README,
"Regressions on a farm"). ``python -m scripts.regress [--suite S] [--seeds N] [--jobs N]
[--executor xdist|dask] [--scheduler tcp://host:port] [--shard i/N | --merge --shards N]``
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from model.paths import OUT, REPO_ROOT, RUNS_ROOT, relative
from sim.lengths import FULL_LENGTH_ENV
from sim.runner import COVERAGE_FILE
from verif.coverage.code_coverage import summarize
from verif.coverage.report import merge_files, passed, to_markdown
from verif.kit.compare import first_error
from verif.regress.failure_groups import (
    FailedTest,
    failure_message,
    group_failures,
    groups_file,
    summary_lines,
    write_groups,
)
from verif.regress.plugin import RERUN_HEADING, progress_line, rerun_command
from verif.regress.run_folders import FUNCTIONAL_FILE, fresh, node_runs
from verif.regress.shards import (
    MANIFEST,
    Manifest,
    Node,
    Shard,
    collect,
    digest,
    parse_shard,
    read_node_info,
    split,
)
from verif.regress.suites import FULL_LENGTH_SUITES, SUITES, suite_paths

if TYPE_CHECKING:  # only the Dask path imports distributed (and its dependencies)
    from distributed import Client

    from verif.regress.dask_executor import TaskResult

COVERAGE_REPORT = OUT / "coverage.md"
MERGED = OUT / "coverage" / "regress_merged.yml"
EXECUTORS = ("xdist", "dask")
NOT_COLLECTED = ("Verilator code coverage: not collected (build without --coverage; "
                 "CODE_COVERAGE=1 collects it)")


@dataclass
class JunitCounts:
    """Test outcomes read back from a JUnit file, for a group of tests."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def line(self) -> str:
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"


def run_pytest(suite: str, seeds: int, jobs: int, junit: Path, nodes_file: Path | None = None,
               node_info: Path | None = None) -> tuple[int, float]:
    """(exit status, seconds) of the suite on `jobs` xdist workers, output to the terminal;
    `nodes_file` narrows it to a shard's, `node_info` receives the collected tests."""
    junit.parent.mkdir(parents=True, exist_ok=True)
    # two tests at a time: the long simulations, collected first, spread over the workers
    workers = ["-n", str(jobs), "--maxschedchunk", "2"] if jobs > 1 else ["-p", "no:xdist"]
    command = [sys.executable, "-m", "pytest", "-q", *workers, "-p", "verif.regress.plugin",
               "--suite", suite, "--seeds", str(seeds), f"--junitxml={junit}",
               *([f"--nodes-file={nodes_file}"] if nodes_file else []),
               *([f"--node-info={node_info}"] if node_info else []),
               *suite_paths(suite)]
    print("$ " + " ".join(command[2:]), flush=True)
    started = time.perf_counter()
    status = subprocess.call(command, cwd=REPO_ROOT)
    return status, time.perf_counter() - started


def case_outcome(case: ET.Element) -> str:
    """passed, failed (a failure or an error) or skipped: one JUnit test case's outcome."""
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    return "skipped" if case.find("skipped") is not None else "passed"


def junit_cases(junit: Path) -> list[ET.Element]:
    return list(ET.parse(junit).iter("testcase")) if junit.exists() else []


def junit_counts(junit: Path, classname_prefix: str = "") -> JunitCounts:
    """Outcomes of the test cases whose class (module) name starts with the prefix."""
    counts = JunitCounts()
    for case in junit_cases(junit):
        if case.get("classname", "").startswith(classname_prefix):
            outcome = case_outcome(case)
            setattr(counts, outcome, getattr(counts, outcome) + 1)
    return counts


def case_nodeid(case: ET.Element) -> str:
    """A test case's node id; a collection error's (no class name) is its module's path."""
    classname, name = case.get("classname", ""), case.get("name", "")
    if not classname:
        return name.replace(".", "/") + ".py"
    return f"{classname.replace('.', '/')}.py::{name}"


def junit_address(nodeid: str) -> tuple[str, str]:
    """(classname, name): where pytest's JUnit file puts a node id (as pytest mangles it)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def write_junit(cases: list[ET.Element], path: Path, seconds: float) -> Path:
    """One JUnit file (pytest's layout: one testsuite) holding the given test cases."""
    outcomes = [case_outcome(case) for case in cases]
    suite = ET.Element("testsuite", {
        "name": "pytest",
        "errors": str(sum(case.find("error") is not None for case in cases)),
        "failures": str(sum(case.find("failure") is not None for case in cases)),
        "skipped": str(outcomes.count("skipped")), "tests": str(len(cases)),
        "time": f"{seconds:.3f}", "timestamp": datetime.now(UTC).isoformat(),
        "hostname": socket.gethostname()})
    suite.extend(cases)
    root = ET.Element("testsuites", name="pytest tests")
    root.append(suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


def cases_in_order(cases: list[ET.Element], nodeids: list[str]) -> list[ET.Element]:
    """The test cases sorted as the node ids (collection order); unknown ones at the end."""
    rank = {junit_address(nodeid): i for i, nodeid in enumerate(nodeids)}
    return sorted(cases, key=lambda c: rank.get((c.get("classname"), c.get("name")), len(rank)))


def failed_tests(cases: list[ET.Element], nodes: list[Node]) -> list[FailedTest]:
    """Each failing test case: its node id (as collected if it was), first error, re-run."""
    node_at = {junit_address(node.nodeid): node for node in nodes}
    failed = []
    for case in cases:
        if case_outcome(case) == "failed":
            node = node_at.get((case.get("classname"), case.get("name"))) or Node(case_nodeid(case))
            seed = {p.get("name"): p.get("value") for p in case.iter("property")}.get("seed")
            failed.append(FailedTest(node.nodeid, first_error(failure_message(case)),
                                     rerun_command(node.nodeid, seed, node.simulation)))
    return failed


def report_failure_groups(cases: list[ET.Element], nodes: list[Node], junit: Path) -> None:
    """Write the failure groups beside the JUnit file and print their table."""
    groups = group_failures(failed_tests(cases, nodes))
    path = write_groups(groups, groups_file(junit))
    print("\n".join(summary_lines(groups, relative(path))))


def session_runs(junit: Path, since: float, runs_root: Path = RUNS_ROOT) -> list[Path]:
    """Run folders of a pytest session: those of its JUnit file's tests written since it began."""
    return node_runs([case_nodeid(case) for case in junit_cases(junit)], since, runs_root)


def functional_section(run_dirs: list[Path], merged: Path = MERGED) -> str:
    """Functional coverage of the passing decode runs, merged: hits per bin and holes."""
    files = [str(d / FUNCTIONAL_FILE) for d in run_dirs if (d / FUNCTIONAL_FILE).exists()
             and passed(d)]
    if not files:
        return "Functional coverage: no passing decode run wrote a coverage database."
    database = merge_files(files, merged)
    top = {name: entry for name, entry in database.items() if "." not in name}
    totals = ", ".join(f"{name} {entry['coverage']}/{entry['size']} bins "
                       f"({entry['cover_percentage']:.1f}%)" for name, entry in top.items())
    return (f"Merged from {len(files)} passing runs ({relative(merged)}): "
            f"{totals}.\n\n{to_markdown(database)}")


def code_section(run_dirs: list[Path], since: float) -> str:
    """Verilator line and toggle coverage, if the runs collected it since `since` (a run folder
    keeps an earlier coverage run's coverage.dat when this run had coverage off)."""
    with_data = [d for d in run_dirs if fresh(d / COVERAGE_FILE, since)]
    return summarize(with_data).to_markdown() if with_data else NOT_COLLECTED


def write_coverage_report(run_dirs: list[Path], since: float, title: str,
                          path: Path = COVERAGE_REPORT) -> Path:
    """The one coverage report of a regression: functional, then code coverage."""
    merged = path.parent / MERGED.relative_to(COVERAGE_REPORT.parent)
    text = "\n\n".join([f"# Coverage: {title}", f"{len(run_dirs)} simulation runs.",
                        "## Functional coverage (cocotb-coverage)",
                        functional_section(run_dirs, merged),
                        "## Verilator code coverage (line, toggle)",
                        code_section(run_dirs, since)])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
    return path


@dataclass
class Regression:
    """One `make regress`: what runs, how, and where its results go."""

    suite: str
    seeds: int
    jobs: int
    executor: str
    out: Path
    shard: Shard | None = None
    started: float = field(default_factory=time.time)
    manifest: Manifest | None = None  # a shard's, from prepare_shard

    @property
    def folder(self) -> Path:
        """Where the JUnit file and coverage report go (a shard has a folder of its own)."""
        return self.shard.folder(self.out, self.suite) if self.shard else self.out

    @property
    def junit(self) -> Path:
        return self.folder / "junit.xml" if self.shard else self.out / "junit" / f"{self.suite}.xml"

    @property
    def report(self) -> Path:
        return self.folder / COVERAGE_REPORT.name

    @property
    def title(self) -> str:
        shard = f", shard {self.shard.index}/{self.shard.count}" if self.shard else ""
        return f"suite {self.suite}, {self.seeds} seed(s){shard}, {self.executor}"


@dataclass
class Ran:
    """What an executor did; `nodes`, as collected, give the failures' re-run commands."""

    status: int
    seconds: float
    run_dirs: list[Path]
    nodes: list[Node] = field(default_factory=list)


Execute = Callable[[Regression, list[Node] | None], Ran]


def run_xdist(regression: Regression, nodes: list[Node] | None) -> Ran:
    """pytest-xdist on this machine: the whole suite, or the listed nodes (a shard's)."""
    nodes_file = None
    if nodes is not None:
        nodes_file = regression.folder / "nodes.txt"
        nodes_file.write_text("".join(f"{node.nodeid}\n" for node in nodes))
    with tempfile.TemporaryDirectory(prefix="regress-nodes-") as tmp:
        info = Path(tmp) / "nodes.json"
        status, seconds = run_pytest(regression.suite, regression.seeds, regression.jobs,
                                     regression.junit, nodes_file=nodes_file, node_info=info)
        collected = read_node_info(info) if info.exists() else []
    return Ran(status, seconds, session_runs(regression.junit, regression.started), collected)


def on_dask(client: Client) -> Execute:
    """The Dask executor on a connected client (verif/regress/dask_executor.py)."""
    from verif.regress import dask_executor as dask

    def run(regression: Regression, nodes: list[Node] | None) -> Ran:
        nodes = nodes if nodes is not None else collect(regression.suite, regression.seeds)
        print(f"Dask: {len(nodes)} tests on {len(client.scheduler_info()['workers'])} workers "
              f"of {client.scheduler.address}", flush=True)
        progress = DaskProgress(len(nodes), {node.nodeid for node in nodes if node.simulation})
        started = time.perf_counter()
        results = dask.run_nodes(client, nodes, regression.seeds, progress.task_done)
        seconds = time.perf_counter() - started
        cases = [case for result in results for case in task_cases(result)]
        write_junit(cases, regression.junit, seconds)
        print_reruns(cases, nodes)
        run_dirs = sorted(set().union(*(dask.store_files(result) for result in results)))
        failed = any(result.returncode != 0 for result in results)
        return Ran(int(failed), seconds, run_dirs, nodes)

    return run


def task_cases(result: TaskResult) -> list[ET.Element]:
    """A Dask task's JUnit test cases; an error case if its pytest wrote none."""
    cases = list(ET.fromstring(result.junit).iter("testcase")) if result.junit else []
    if cases:
        return cases
    classname, name = junit_address(result.nodeid)
    case = ET.Element("testcase", classname=classname, name=name, time=f"{result.seconds:.3f}")
    error = ET.SubElement(case, "error", message=f"pytest exited with status "
                          f"{result.returncode} on {result.worker} without running the test")
    error.text = result.output
    return [case]


def print_reruns(cases: list[ET.Element], nodes: list[Node]) -> None:
    """The failures' re-run commands, under the heading the xdist path prints."""
    commands = [test.rerun for test in failed_tests(cases, nodes)]
    if commands:
        print(f"\n{RERUN_HEADING}:\n" + "\n".join(commands))


@dataclass
class DaskProgress:
    """Progress lines of the Dask executor, as the regression plugin prints them under xdist."""

    total: int
    simulations: set[str]
    done: int = 0

    def task_done(self, result: TaskResult) -> None:
        self.done += 1
        for case in task_cases(result):
            outcome = case_outcome(case)
            if result.nodeid in self.simulations or outcome != "passed":
                print(progress_line(self.done, self.total, result.nodeid, outcome,
                                    float(case.get("time", 0))) + f"  ({result.worker})",
                      flush=True)


def run_regression(regression: Regression, execute: Execute) -> int:
    """Run the suite (or a shard), write its JUnit file, coverage report and failure groups."""
    nodes = prepare_shard(regression) if regression.shard else None
    if nodes == []:  # more shards than tests
        ran = Ran(0, 0.0, [])
        write_junit([], regression.junit, 0.0)
    else:
        ran = execute(regression, nodes)
    report = write_coverage_report(ran.run_dirs, regression.started, regression.title,
                                   regression.report)
    if regression.shard:
        finish_shard(regression, ran)
    print(f"\n{regression.title}: {junit_counts(regression.junit).line()} in "
          f"{ran.seconds:.1f} s\nJUnit: {regression.junit}\ncoverage report: {report}")
    report_failure_groups(junit_cases(regression.junit), ran.nodes, regression.junit)
    return ran.status


def prepare_shard(regression: Regression) -> list[Node]:
    """Collect the suite, keep this shard's nodes, clear the shard folder's old results."""
    shard = regression.shard
    nodes = collect(regression.suite, regression.seeds)
    mine = split(nodes, shard.count)[shard.index - 1]
    regression.folder.mkdir(parents=True, exist_ok=True)
    for path in (regression.folder / MANIFEST, regression.junit, groups_file(regression.junit),
                 regression.folder / "nodes.txt", regression.report):
        path.unlink(missing_ok=True)
    position = {node.nodeid: i for i, node in enumerate(nodes)}
    regression.manifest = Manifest(
        regression.suite, regression.seeds, os.environ.get("RANDOM_SEED"), shard.index,
        shard.count, digest(nodes), len(nodes), [n.nodeid for n in mine],
        [position[n.nodeid] for n in mine], [n.nodeid for n in mine if n.simulation],
        regression.executor, regression.started)
    print(f"shard {shard.index}/{shard.count} of suite {regression.suite}: {len(mine)} of "
          f"{len(nodes)} tests, cost {sum(n.cost for n in mine)} of "
          f"{sum(n.cost for n in nodes)}", flush=True)
    return mine


def finish_shard(regression: Regression, ran: Ran) -> None:
    manifest = regression.manifest
    manifest.seconds, manifest.status = ran.seconds, ran.status
    manifest.runs = [str(relative(d)) for d in ran.run_dirs]
    print(f"shard manifest: {manifest.write(regression.folder)}")


def merge(suite: str, count: int, out: Path) -> int:
    """Combine a suite's N shard folders into one run's JUnit file, report and failure groups."""
    folders = [Shard(i, count).folder(out, suite) for i in range(1, count + 1)]
    missing = [i for i, folder in enumerate(folders, 1) if not (folder / MANIFEST).exists()]
    if missing:
        return refuse("make regress-merge", f"shard {missing[0]}/{count} of suite {suite} has "
                      f"not finished ({len(missing)} of {count} missing, no "
                      f"{relative(folders[missing[0] - 1] / MANIFEST)}); run make regress "
                      f"SUITE={suite} SHARD=i/{count} for each i from 1 to {count} first")
    manifests = [Manifest.read(folder) for folder in folders]
    if len({(m.suite_digest, m.seeds, m.random_seed) for m in manifests}) > 1:
        return refuse("make regress-merge", f"the {count} shards of suite {suite} come from "
                      "different node lists (SEEDS, RANDOM_SEED or the suite changed between "
                      "them): re-run the shards with the same settings")
    position = {nodeid: i for m in manifests for nodeid, i in zip(m.nodes, m.positions,
                                                                     strict=True)}
    nodeids = sorted(position, key=position.get)  # the suite's collection order
    cases = cases_in_order([c for f in folders for c in junit_cases(f / "junit.xml")], nodeids)
    seconds = max(m.seconds for m in manifests)
    junit = write_junit(cases, out / "junit" / f"{suite}.xml", seconds)
    runs = [REPO_ROOT / run for m in manifests for run in m.runs]
    here = [run for run in runs if run.is_dir()]
    title = f"suite {suite}, {manifests[0].seeds} seed(s), {count} shards merged"
    report = write_coverage_report(here, min(m.started for m in manifests), title,
                                   out / COVERAGE_REPORT.name)
    simulations = {nodeid for m in manifests for nodeid in m.simulations}
    nodes = [Node(nodeid, simulation=nodeid in simulations) for nodeid in nodeids]
    print_reruns(cases, nodes)
    print(f"\n{title}: {junit_counts(junit).line()}; longest shard {seconds:.1f} s"
          + (f"; {len(runs) - len(here)} run folders not on this machine" if here != runs
             else "") + f"\nJUnit: {junit}\ncoverage report: {report}")
    report_failure_groups(cases, nodes, junit)
    if len(cases) != manifests[0].suite_nodes:
        print(f"INCOMPLETE: {len(cases)} of the suite's {manifests[0].suite_nodes} tests have "
              "a result in the shards' JUnit files")
        return 1
    return int(any(m.status for m in manifests) or junit_counts(junit).failed > 0)


def refuse(program: str, problem: str) -> int:
    print(f"{program}: {problem}", file=sys.stderr)
    return 2


def argument_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, in one line naming the valid choices; None if fine."""
    if args.suite not in SUITES:
        return (f"unknown suite SUITE={args.suite}; the suites are {', '.join(SUITES)} "
                "(verif/regress/suites.py)")
    if args.merge:
        if not (args.shards or "").isdigit() or int(args.shards) < 1:
            return (f"SHARDS={args.shards or ''} is not a number of shards: give the N of "
                    "SHARD=i/N, a whole number of at least 1")
        return None
    if args.seeds < 1 or args.jobs < 1:
        return f"SEEDS={args.seeds} and JOBS={args.jobs} must both be at least 1"
    if args.executor not in EXECUTORS:
        return (f"unknown executor EXECUTOR={args.executor}; the executors are xdist "
                "(pytest-xdist on this machine) and dask (a Dask cluster)")
    if args.shard and parse_shard(args.shard) is None:
        return (f"SHARD={args.shard} is not a shard: give i/N with 1 <= i <= N "
                "(for example SHARD=1/3)")
    if args.scheduler and args.executor != "dask":
        return (f"DASK_SCHEDULER={args.scheduler} is for the Dask executor: add EXECUTOR=dask, "
                "or leave DASK_SCHEDULER empty")
    return None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=os.environ.get("SUITE", "smoke"))
    parser.add_argument("--seeds", type=int, default=int(os.environ.get("SEEDS", "1")))
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("JOBS", "2")))
    parser.add_argument("--executor", default="xdist", help="xdist (default) or dask")
    parser.add_argument("--scheduler", default="",
                        help="EXECUTOR=dask: a running scheduler, tcp://host:port (default: a "
                             "local cluster of JOBS workers)")
    parser.add_argument("--shard", default="", help="i/N: run only the i-th of N shards")
    parser.add_argument("--merge", action="store_true", help="merge the shards of --suite")
    parser.add_argument("--shards", default="", help="--merge: how many shards (the N)")
    parser.add_argument("--out", type=Path, default=OUT,
                        help="where junit/, coverage.md and shards/ go (default out/)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    program = "make regress-merge" if args.merge else "make regress"
    problem = argument_problem(args)
    if problem:
        return refuse(program, problem)
    if args.merge:
        return merge(args.suite, int(args.shards), args.out.resolve())
    if args.suite in FULL_LENGTH_SUITES:  # every flow at full length, on every simulator
        os.environ[FULL_LENGTH_ENV] = "1"
    shard = parse_shard(args.shard) if args.shard else None
    regression = Regression(args.suite, args.seeds, args.jobs, args.executor, args.out.resolve(),
                            shard)
    if args.executor == "xdist":
        return run_regression(regression, run_xdist)
    from verif.regress.dask_executor import SchedulerUnreachable, cluster_client  # only on Dask
    with ExitStack() as stack:
        try:
            client = stack.enter_context(cluster_client(args.scheduler or None, args.jobs))
        except SchedulerUnreachable as err:
            return refuse(program, f"{err}; give DASK_SCHEDULER=tcp://host:port of a running "
                          "`dask scheduler` with workers, or leave it empty for a local cluster")
        return run_regression(regression, on_dask(client))
