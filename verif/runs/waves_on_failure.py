"""pytest plugin: a failing simulation test is run again once, alone, with waves on.

The verdict stays; a section "waves of this failure" names the waves and the commands that open
them at the failure. WAVES_ON_FAILURE=0 or WAVES=1 turn it off.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from sim.runner import RunRequest
from verif.runs.batching import launch_of
from verif.runs.failure_waves import FailureWaves, rerun_launch, rerun_request, wanted

SECTION = "waves of this failure"
TIMEOUT_MARK = "from pytest-timeout"  # in pytest-timeout's failure message


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" and report.failed and wanted() and call.excinfo is not None \
            and TIMEOUT_MARK not in str(call.excinfo.value):
        attach(report, waves_section(item, call.excinfo.value))
    return report


def waves_section(item: pytest.Item, error: BaseException) -> str | None:
    """The section's text, or None when the test ran no simulation to repeat."""
    try:
        record = rerun(item, error)
    except Exception as problem:  # the failing test's own report must come through whole
        return f"no waves: running the test again with waves failed: {problem!r}"
    return record.report() if record else None


def rerun(item: pytest.Item, error: BaseException) -> FailureWaves | None:
    if item.get_closest_marker("sim_job") is not None:
        return rerun_launch(launch_of(item), item.nodeid)
    request = request_of(error)
    return rerun_request(request, item.nodeid) if request else None


def request_of(error: BaseException | None) -> RunRequest | None:
    """The run_test call behind an error: its own, or that of an error it was raised from."""
    while error is not None:
        request = getattr(error, "request", None)
        if isinstance(request, RunRequest):
            return request
        error = error.__cause__ or error.__context__
    return None


def attach(report: pytest.TestReport, text: str | None) -> None:
    """Add the section to the failure's report (a bare report keeps it among its sections)."""
    if text is None:
        return
    if hasattr(report.longrepr, "addsection"):
        report.longrepr.addsection(SECTION, text)
    else:
        report.sections.append((SECTION, text))
