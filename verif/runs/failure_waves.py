"""A failing simulation run again, once, alone, with waves, and opened where it failed; and the
pytest plugin that asks for it (its report gets a section "waves of this failure").

The run is repeated in the failing run folder's sibling ``<run folder>-waves``, and the failing
folder gets waves.json: the viewers' files, opened at the failure time read where the test ran
alone (README, "Re-running a failing simulation"). WAVES_ON_FAILURE=0 or WAVES=1 turn it off.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Generator
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from model.paths import GTKWAVE_SAVE_FILE, RUNS_ROOT
from sim.runner import (
    RunRequest,
    SimulationFailed,
    env_flag,
    failure_stop_ns,
    run_test,
    traced,
    waves_file,
    waves_requested,
)
from sim.wave_views import scope_layout, template_layout, write_viewers
from verif.kit.failure_point import POINT_FILE, read_point
from verif.runs.batching import launch_of
from verif.runs.launch import CHIP_TOPLEVEL, Launch, run_launches, traced_launch
from verif.runs.record import RESULT_FILE, read_result

WAVES_ON_FAILURE = "WAVES_ON_FAILURE"  # 0 switches the re-run off
WAVES_RECORD = "waves.json"
FOLDER_SUFFIX = "-waves"
SAVE_TEMPLATES = {CHIP_TOPLEVEL: GTKWAVE_SAVE_FILE}  # harnesses with a save file of their own
NO_TIME = "no failure time found: the viewers show the whole run"


@dataclass
class FailureWaves:
    """Where a run's waves are and how to open them at its failure (waves.json)."""

    test: str
    folder: str  # the run with waves
    waves: str
    failed: bool  # the run with waves failed too
    time_ns: float | None
    time_source: str  # which file gave the time, or why there is none
    save_file: str  # GTKWave's
    command_file: str  # Surfer's
    gtkwave: str  # the command lines that open them
    surfer: str

    def report(self) -> str:
        """The lines a failure report gets."""
        at = f"{self.time_ns:g} ns" if self.time_ns is not None else "none"
        verdict = "failed" if self.failed else "passed"
        return "\n".join([f"the run with waves, in {self.folder}: {verdict}",
                          f"  waves:        {self.waves}",
                          f"  failure time: {at} ({self.time_source})",
                          f"  save file:    {self.save_file}",
                          f"  command file: {self.command_file}",
                          f"  GTKWave:      {self.gtkwave}",
                          f"  Surfer:       {self.surfer}"])


def wanted() -> bool:
    """Whether a failing simulation test is run again with waves."""
    return env_flag(WAVES_ON_FAILURE, default="1") and not waves_requested()


def waves_folder(run_dir: Path) -> Path:
    """The folder of a failing run's run with waves: its sibling ``<run folder>-waves``."""
    run_dir = Path(run_dir)
    return run_dir.with_name(run_dir.name + FOLDER_SUFFIX)


def rerun_launch(launch: Launch, test: str) -> FailureWaves:
    """A pyuvm test's job again, alone, with waves; waves.json in its failing run folder."""
    run_dir = Path(launch.job.run_dir)
    traced_job = traced_launch(launch, _emptied(waves_folder(run_dir)))
    (run,) = run_launches([traced_job])
    return _recorded(run_dir, traced_job.build.toplevel, test, not run.passed,
                     waves_file(traced_job.build, run.run_dir))


def rerun_request(request: RunRequest, test: str) -> FailureWaves:
    """A block test's cocotb run again with waves; waves.json in its failing run folder."""
    folder = _emptied(waves_folder(request.test_dir))
    b = traced(request.build)
    try:
        run_test(b, request.test_module, request.testcase, request.seed, folder,
                 dict(request.extra_env), request.plusargs, rerun=False)
        failed = False
    except SimulationFailed:
        failed = True
    return _recorded(request.test_dir, b.toplevel, test, failed, waves_file(b, folder))


def _emptied(folder: Path) -> Path:
    """The folder, without what an earlier run with waves left (its failure point)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def _recorded(run_dir: Path, toplevel: str, test: str, failed: bool,
              waves: Path) -> FailureWaves:
    record = open_at_failure(waves, toplevel, test, failed)
    write_record(run_dir, record)
    return record


def open_at_failure(waves: Path, toplevel: str, test: str, failed: bool,
                    since: float = 0.0) -> FailureWaves:
    """The viewers' files for ``waves`` in its folder, at the failure time found there."""
    folder = Path(waves).parent
    time_ns, source = failure_time(folder, since)
    template = SAVE_TEMPLATES.get(toplevel)
    layout = template_layout(template) if template else scope_layout(waves, toplevel)
    viewers = write_viewers(folder, waves, time_ns, layout, note=f"{test}: {source}")
    return FailureWaves(test, str(folder), str(waves), failed, time_ns, source,
                        str(viewers.save_file), str(viewers.command_file), viewers.gtkwave,
                        viewers.surfer)


def failure_time(folder: Path, since: float = 0.0) -> tuple[float | None, str]:
    """(time in ns, its source) of a run folder's failure: the located point, else the recorded
    failure, else the failing cocotb test's stop, from files written since ``since``."""
    point = read_point(folder) if _fresh(folder / POINT_FILE, since) else None
    if point is not None and point.time_ns is not None:
        return point.time_ns, f"{POINT_FILE}: {point.summary()}"
    result = read_result(folder) if _fresh(folder / RESULT_FILE, since) else {}
    if result.get("failure_time_ns") is not None:
        return result["failure_time_ns"], f"{RESULT_FILE}: {result['failure_type']} recorded"
    stopped = failure_stop_ns(folder / "results.xml") \
        if _fresh(folder / "results.xml", since) else None
    if stopped is not None:
        return stopped, "results.xml: the failing cocotb test stopped"
    return None, NO_TIME


def _fresh(path: Path, since: float) -> bool:
    return path.exists() and path.stat().st_mtime >= since


def write_record(folder: Path, record: FailureWaves) -> Path:
    path = Path(folder) / WAVES_RECORD
    path.write_text(json.dumps(asdict(record), indent=1))
    return path


def read_record(path: Path) -> FailureWaves:
    return FailureWaves(**json.loads(Path(path).read_text()))


def newest_record(root: Path = RUNS_ROOT) -> FailureWaves | None:
    """The waves of the newest failure under ``root`` (every run folder), or None."""
    found = sorted(root.rglob(WAVES_RECORD), key=lambda path: path.stat().st_mtime)
    return read_record(found[-1]) if found else None


# ---- the pytest plugin ------------------------------------------------------------------------

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
