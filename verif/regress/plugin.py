"""pytest plugin of the regressions (``-p verif.regress.plugin``, not in ``make test``): a suite
(``--suite``), a shard (``--nodes-file``), what shards and Dask know of each test
(``--node-info``), a line per finished simulation or failure, and the failures' re-run commands."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from sim import runner
from verif.regress.suites import SUITES, select

VERDICTS = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}
RERUN_HEADING = "re-run each failing test (with waves for simulations)"
FIRST_WORKER = "gw0"  # pytest-xdist's name of its first worker


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--suite", choices=sorted(SUITES), help="run only this regression suite")
    parser.addoption("--nodes-file", metavar="FILE",
                     help="run only the node ids listed in FILE, one a line (a shard)")
    parser.addoption("--node-info", metavar="FILE",
                     help="write the selected tests as JSON to FILE (node id, sim, timeout)")


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        config.pluginmanager.register(Progress(config), "regress-progress")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    suite = config.getoption("suite")
    if suite:
        kept, dropped = select(suite, items)
        items[:] = kept
        config.hook.pytest_deselected(items=dropped)
    nodes_file = config.getoption("nodes_file")
    if nodes_file:
        keep_listed(config, items, Path(nodes_file).read_text().split())


def keep_listed(config: pytest.Config, items: list[pytest.Item], listed: list[str]) -> None:
    """Keep the listed node ids; a listed node that was not collected is an error."""
    missing = sorted(set(listed) - {item.nodeid for item in items})
    if missing:
        raise pytest.UsageError(f"--nodes-file: {len(missing)} listed test(s) not collected "
                                f"(another --seeds or RANDOM_SEED?), first: {missing[0]}")
    wanted = set(listed)
    dropped = [item for item in items if item.nodeid not in wanted]
    items[:] = [item for item in items if item.nodeid in wanted]
    config.hook.pytest_deselected(items=dropped)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Write --node-info: in this pytest, or under xdist in its first worker (every worker
    collects the same tests; the controller collects none)."""
    path = session.config.getoption("node_info")
    worker = getattr(session.config, "workerinput", {}).get("workerid", FIRST_WORKER)
    if path and worker == FIRST_WORKER:
        Path(path).write_text(json.dumps([node_info(item) for item in session.items]))


def node_info(item: pytest.Item) -> dict:
    """What the shards and the Dask executor know of a test before running it."""
    callspec = getattr(item, "callspec", None)
    timeout = item.get_closest_marker("timeout")
    return {"nodeid": item.nodeid,
            "sim": callspec.params.get("sim") if callspec is not None else None,
            "simulation": item.get_closest_marker("sim") is not None,
            "timeout": (timeout.args or [timeout.kwargs.get("timeout")])[0] if timeout else None}


def rerun_command(nodeid: str, seed: object | None, is_sim: bool) -> str:
    """The command that re-runs one test alone; a simulation test with its seed and waves."""
    if is_sim:
        return runner.rerun_command(seed, nodeid)
    return f".venv/bin/pytest -p no:xdist {shlex.quote(nodeid)}"


def progress_line(done: int, total: int, nodeid: str, outcome: str, seconds: float) -> str:
    """``[k/N] PASS  test_name[params]  12.3 s``: one finished test."""
    verdict = VERDICTS.get(outcome, outcome.upper())
    return f"[{done}/{total}] {verdict}  {nodeid.rpartition('::')[2]}  {seconds:.1f} s"


class Progress:
    """Counts finished tests and keeps the failures (controller side only)."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.total = 0
        self.done = 0
        self.failures: list[str] = []

    def write(self, line: str) -> None:
        self.config.pluginmanager.get_plugin("terminalreporter").write_line(line)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items) or self.total

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        self.total = len(ids)

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config):
        """No dot or F for a finished test: its progress line (or the summary) says it."""
        if report.when == "call" and not hasattr(report, "wasxfail"):
            return report.outcome, "", report.outcome.upper()
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        finished = report.when == "call" or (report.when == "setup" and not report.passed)
        if not finished:
            return
        self.done += 1
        is_sim = "sim" in report.keywords
        if report.failed:
            seed = dict(report.user_properties).get("seed")
            self.failures.append(rerun_command(report.nodeid, seed, is_sim))
        if is_sim or not report.passed:
            self.write(progress_line(self.done, self.total, report.nodeid, report.outcome,
                                     report.duration))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.failures:
            terminalreporter.section(RERUN_HEADING)
            for command in self.failures:
                terminalreporter.write_line(command)
