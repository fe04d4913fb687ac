"""pytest plugin of the regressions: a suite, a progress line per test, re-run commands.

Loaded with ``-p scripts.regress_plugin`` by ``make regress`` and ``make run`` (not by
``make test``, whose output stays pytest's own):

- ``--suite NAME`` keeps only the tests of that suite (scripts/suites.py);
- every finished simulation test, and every test that did not pass, prints one line
  ``[k/N] PASS  test_chapter_decode[icarus-W8-seed1]  12.3 s`` (under pytest-xdist the
  controller prints them as the workers report);
- at the end, each failing test's one re-run command (waves on for a simulation test).
"""

from __future__ import annotations

import shlex

import pytest

from scripts.suites import SUITES, select
from sim import runner

VERDICTS = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--suite", choices=sorted(SUITES), help="run only this regression suite")


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        config.pluginmanager.register(Progress(config), "regress-progress")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    suite = config.getoption("suite")
    if suite:
        kept, dropped = select(suite, items)
        items[:] = kept
        config.hook.pytest_deselected(items=dropped)


def rerun_command(nodeid: str, seed: object | None, is_sim: bool) -> str:
    """The command that re-runs one test alone; a simulation test with its seed and waves."""
    if is_sim:
        return runner.rerun_command(seed, nodeid)
    return f".venv/bin/pytest -p no:xdist {shlex.quote(nodeid)}"


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
            name = report.nodeid.rpartition("::")[2]
            verdict = VERDICTS.get(report.outcome, report.outcome.upper())
            self.write(f"[{self.done}/{self.total}] {verdict}  {name}  {report.duration:.1f} s")

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.failures:
            terminalreporter.section("re-run each failing test (with waves for simulations)")
            for command in self.failures:
                terminalreporter.write_line(command)
