"""A regression's run folders: which ones its tests wrote, and which of their files reports read
(the Dask tasks ship these back from a worker's checkout)."""

from __future__ import annotations

from pathlib import Path

from model.paths import RUNS_ROOT
from sim.runner import COVERAGE_FILE, run_folder_name
from verif.runs.record import RESULT_FILE

FUNCTIONAL_FILE = "coverage.yml"  # a run's functional coverage database
REPORT_FILES = ("results.xml", RESULT_FILE, FUNCTIONAL_FILE, COVERAGE_FILE)  # what reports read


def fresh(path: Path, since: float) -> bool:
    """The file exists and was written since `since` (not left by an earlier run)."""
    return path.exists() and path.stat().st_mtime >= since


def node_runs(nodeids: list[str], since: float, runs_root: Path = RUNS_ROOT) -> list[Path]:
    """Run folders of these tests: named after one of them, written since `since`.

    Both conditions, because other sessions may run in the same working tree meanwhile. A
    folder is marked by cocotb's results.xml or by the run's own result file: tests batched
    into one simulator process share the first one's results.xml, each keeps its result file.
    """
    names = {run_folder_name(nodeid) for nodeid in nodeids}
    marks = [*runs_root.rglob("results.xml"), *runs_root.rglob(RESULT_FILE)]
    return sorted({path.parent for path in marks
                   if path.parent.parent.name in names and path.stat().st_mtime >= since})
