"""`make waves`: re-run one decode test with waves on and print the command lines that open them,
at its failure when it failed; without TEST, those of the newest failure.

    python -m scripts.waves TEST SIM    (TEST: a node id, or a name for pytest -k)
    python -m scripts.waves "" SIM      (SIM: icarus or verilator; "": the newest failure's waves)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from model.paths import REPO_ROOT, RUNS_ROOT
from sim.toolchain import SIMULATORS
from verif.runs.failure_waves import newest_record, open_at_failure
from verif.runs.launch import CHIP_TOPLEVEL

DECODE_TESTS = "verif/tests/test_decode.py"


def pytest_target(test: str, sim: str) -> list[str]:
    """A node id as given; a short name as a -k expression that also picks the simulator."""
    if "::" in test:
        return [test]
    return [DECODE_TESTS, "-k", f"({test}) and ({sim} or not (icarus or verilator))"]


def collect(target: list[str]) -> list[str]:
    """The node ids a selection matches (none when it matches nothing or is not a test)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:xdist", "-p", "no:cacheprovider", *target],
                          cwd=REPO_ROOT, capture_output=True, text=True)
    return [line for line in done.stdout.splitlines() if "::" in line]


def selection_problem(test: str, sim: str) -> str | None:
    """Why TEST and SIM cannot be run, in one line with the valid choices; None when they can."""
    if sim not in SIMULATORS:
        return f"make waves: unknown simulator SIM={sim}; choose one of {', '.join(SIMULATORS)}"
    if not collect(pytest_target(test, sim)):
        choices = sorted({node.split("::")[1].split("[")[0]
                          for node in collect([DECODE_TESTS])})
        return (f"make waves: TEST={test!r} matches no decode test on {sim}; give a node id "
                f"or one of the names {', '.join(choices)} (or a -k expression over them)")
    return None


def new_waves(since: float) -> list[Path]:
    found = [*RUNS_ROOT.rglob("*.fst"), *RUNS_ROOT.rglob("*.vcd")]
    return sorted(p for p in found if p.stat().st_mtime >= since)


def newest_failure() -> int:
    """Print the commands that open the newest failure's waves."""
    record = newest_record()
    if record is None:
        print("make waves: no failure has waves yet (a failing simulation test of make test runs "
              "again with waves); give TEST= to run one decode test with waves", file=sys.stderr)
        return 2
    print(f"{record.test}\n{record.report()}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    test, sim = argv
    if not test:
        return newest_failure()
    problem = selection_problem(test, sim)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    started = time.time()
    command = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", *pytest_target(test, sim)]
    status = subprocess.call(command, cwd=REPO_ROOT, env={**os.environ, "WAVES": "1"})
    waves = new_waves(started)
    for path in waves:
        record = open_at_failure(path, CHIP_TOPLEVEL, test, failed=status != 0, since=started)
        print(record.report())
    if not waves:
        print("no waveform was written: the test ran no simulation (see its output above)")
    return status if waves else 1
