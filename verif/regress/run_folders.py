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
    """Run folders of these tests (named after one, written since `since`: other sessions may
    share the tree), marked by cocotb's results.xml or, batched, by the run's own result file."""
    names = {run_folder_name(nodeid) for nodeid in nodeids}
    marks = [*runs_root.rglob("results.xml"), *runs_root.rglob(RESULT_FILE)]
    return sorted({path.parent for path in marks
                   if path.parent.parent.name in names and path.stat().st_mtime >= since})
