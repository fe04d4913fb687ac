"""`make waves`: re-run one decode test with waveforms on and say where the FST file is.

    python -m verif.waves TEST SIM

TEST is a pytest node id (sim/tests/test_decode.py::test_fork_decode[icarus]) or a short name
matched with `pytest -k` (fork_decode, W8, watchdog); SIM (icarus or verilator) picks the
simulator of a parametrized test. WAVES=1 makes sim/runner.py build a tracing configuration
(its own build folder) and write an FST into the run folder; open it with the save file
hw/gtkwave/chip.gtkw.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from sim.runner import REPO_ROOT, RUNS_ROOT

DECODE_TESTS = "sim/tests/test_decode.py"
SAVE_FILE = REPO_ROOT / "hw" / "gtkwave" / "chip.gtkw"


def pytest_target(test: str, sim: str) -> list[str]:
    """A node id as given; a short name as a -k expression that also picks the simulator."""
    if "::" in test:
        return [test]
    return [DECODE_TESTS, "-k", f"({test}) and ({sim} or not (icarus or verilator))"]


def new_waves(since: float) -> list[Path]:
    found = [*RUNS_ROOT.rglob("*.fst"), *RUNS_ROOT.rglob("*.vcd")]
    return sorted(p for p in found if p.stat().st_mtime >= since)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    test, sim = argv
    started = time.time()
    command = [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", *pytest_target(test, sim)]
    status = subprocess.call(command, cwd=REPO_ROOT, env={**os.environ, "WAVES": "1"})
    waves = new_waves(started)
    for path in waves:
        print(f"waves: {path}\n  view: gtkwave {path} {SAVE_FILE}")
    if not waves:
        print("no waveform was written: did the test selection match a simulation test?")
    return status if waves else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
