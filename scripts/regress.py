"""`make regress`: run a suite (scripts/suites.py) in parallel, then write its coverage report.

    python -m scripts.regress [--suite full] [--seeds 20] [--jobs 2]

pytest-xdist runs the suite's tests with the regression plugin (scripts/regress_plugin.py: a
progress line per test, the re-run commands of the failures at the end) and writes the JUnit
file out/junit/<suite>.xml. The coverage report (out/coverage.md) merges the functional
coverage of every run of this regression that passed, and adds Verilator's line and toggle
coverage when the runs collected it (`CODE_COVERAGE=1`, merged by verif/code_coverage.py).

The runs of this regression are the run folders named after its tests (its JUnit file) and
written since it started, so other sessions in the same working tree do not mix in.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from sim.runner import COVERAGE_FILE, REPO_ROOT, RUNS_ROOT, run_folder_name
from verif.code_coverage import summarize
from verif.coverage_report import merge_files, to_markdown
from verif.run_record import RESULT_FILE

OUT = REPO_ROOT / "out"
COVERAGE_REPORT = OUT / "coverage.md"
MERGED = OUT / "coverage" / "regress_merged.yml"
NOT_COLLECTED = ("Verilator code coverage: not collected (build without --coverage; "
                 "CODE_COVERAGE=1 collects it)")


@dataclass
class PytestRun:
    """One pytest session of a regression: its exit status and its JUnit file."""

    status: int
    junit: Path
    seconds: float


@dataclass
class JunitCounts:
    """Test outcomes read back from a JUnit file, for a group of tests."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def line(self) -> str:
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"


def run_pytest(suite: str, seeds: int, jobs: int, junit: Path,
               paths: tuple[str, ...] = ()) -> PytestRun:
    """The suite on `jobs` xdist workers; its output goes straight to the terminal.

    --maxschedchunk 2 hands tests out two at a time, so the long simulations that come first
    spread over the workers instead of queueing on one.
    """
    junit.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pytest", "-q", "-n", str(jobs), "--maxschedchunk", "2",
               "-p", "scripts.regress_plugin", "--suite", suite, "--seeds", str(seeds),
               f"--junitxml={junit}", *paths]
    print("$ " + " ".join(command[2:]), flush=True)
    started = time.perf_counter()
    status = subprocess.call(command, cwd=REPO_ROOT)
    return PytestRun(status, junit, time.perf_counter() - started)


def junit_counts(junit: Path, classname_prefix: str = "") -> JunitCounts:
    """Outcomes of the test cases whose class (module) name starts with the prefix."""
    counts = JunitCounts()
    if not junit.exists():
        return counts
    for case in ET.parse(junit).iter("testcase"):
        if not case.get("classname", "").startswith(classname_prefix):
            continue
        if case.find("failure") is not None or case.find("error") is not None:
            counts.failed += 1
        elif case.find("skipped") is not None:
            counts.skipped += 1
        else:
            counts.passed += 1
    return counts


def junit_node_ids(junit: Path) -> list[str]:
    """The pytest node ids of a JUnit file's test functions (module-level ones)."""
    if not junit.exists():
        return []
    return [f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
            for case in ET.parse(junit).iter("testcase")]


def session_runs(junit: Path, since: float, runs_root: Path = RUNS_ROOT) -> list[Path]:
    """Run folders of this pytest session: named after one of its tests, written since it began.

    Both conditions, because other sessions may run in the same working tree meanwhile.
    """
    names = {run_folder_name(nodeid) for nodeid in junit_node_ids(junit)}
    return sorted(path.parent for path in runs_root.rglob("results.xml")
                  if path.parent.parent.name in names and path.stat().st_mtime >= since)


def passed(run_dir: Path) -> bool:
    result = run_dir / RESULT_FILE
    return result.exists() and json.loads(result.read_text()).get("status") == "passed"


def functional_section(run_dirs: list[Path]) -> str:
    """Functional coverage of the passing decode runs, merged: hits per bin and holes."""
    files = [str(d / "coverage.yml") for d in run_dirs if (d / "coverage.yml").exists()
             and passed(d)]
    if not files:
        return "Functional coverage: no passing decode run wrote a coverage database."
    database = merge_files(files, MERGED)
    top = {name: entry for name, entry in database.items() if "." not in name}
    totals = ", ".join(f"{name} {entry['coverage']}/{entry['size']} bins "
                       f"({entry['cover_percentage']:.1f}%)" for name, entry in top.items())
    return (f"Merged from {len(files)} passing runs ({MERGED.relative_to(REPO_ROOT)}): "
            f"{totals}.\n\n{to_markdown(database)}")


def fresh(path: Path, since: float) -> bool:
    return path.exists() and path.stat().st_mtime >= since


def code_section(run_dirs: list[Path], since: float) -> str:
    """Verilator line and toggle coverage (verif/code_coverage.py), if the runs collected it.

    Only coverage files written since `since`: a run folder keeps the coverage.dat of an
    earlier coverage run of the same test when this run had coverage off.
    """
    with_data = [d for d in run_dirs if fresh(d / COVERAGE_FILE, since)]
    return summarize(with_data).to_markdown() if with_data else NOT_COLLECTED


def write_coverage_report(run_dirs: list[Path], since: float, title: str,
                          path: Path = COVERAGE_REPORT) -> Path:
    """The one coverage report of a regression: functional, then code coverage."""
    text = "\n\n".join([f"# Coverage: {title}", f"{len(run_dirs)} simulation runs.",
                        "## Functional coverage (cocotb-coverage)", functional_section(run_dirs),
                        "## Verilator code coverage (line, toggle)",
                        code_section(run_dirs, since)])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=os.environ.get("SUITE", "smoke"))
    parser.add_argument("--seeds", type=int, default=int(os.environ.get("SEEDS", "1")))
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("JOBS", "2")))
    args = parser.parse_args(argv)
    started = time.time()
    run = run_pytest(args.suite, args.seeds, args.jobs, OUT / "junit" / f"{args.suite}.xml")
    report = write_coverage_report(session_runs(run.junit, started), started,
                                   f"suite {args.suite}, {args.seeds} seed(s)")
    print(f"\nsuite {args.suite}: {junit_counts(run.junit).line()} in {run.seconds:.1f} s\n"
          f"JUnit: {run.junit}\ncoverage report: {report}")
    return run.status


if __name__ == "__main__":
    sys.exit(main())
