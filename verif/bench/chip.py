"""Simulated chip cycles per second: reference machine, Icarus and Verilator (cocotb and replay).

Every engine runs the same constrained-random programs (program_seqs' seeds), builds made before
timing starts; out/bench_chip.json. ``python -m scripts.bench chip [-- --programs 100]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from model.chip import machine, randprog
from model.paths import RUNS_ROOT
from sim.replay import Record, build_replay, run_replay, write_records
from sim.toolchain import SIMULATORS
from verif.report.output import text_table, write_json
from verif.runs.launch import chip_build, run_programs
from verif.sequences.program_seqs import program_seed

RUN_SEED = 1


def timed(action: Callable[[], object]) -> float:
    """Seconds one call of ``action`` takes (the benchmarks' plain timer)."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def cocotb_seconds(sim: str, count: int) -> float:
    """The pyuvm env running the programs (RandomProgramsTest: every run scoreboarded)."""
    chip = chip_build(sim, waves=False)
    folder = RUNS_ROOT / sim / "bench_chip"
    return timed(lambda: run_programs(chip, "RandomProgramsTest", RUN_SEED, count,
                                      folder).raise_if_failed())


def replay_seconds(sim: str, records_file: Path) -> float:
    build_replay(sim)
    result = run_replay(sim, records_file)
    if not result.passed:
        raise SystemExit(f"replay on {sim} failed: {result.summary}")
    return result.seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=100)
    count = parser.parse_args(argv).programs
    progs = [randprog.generate(program_seed(RUN_SEED, i)) for i in range(count)]
    expected = [machine.run(p.image) for p in progs]
    cycles = sum(r.counters.total for r in expected)
    records_file = RUNS_ROOT / "bench_chip" / "records.hex"
    write_records(records_file, [Record(p.image, [(0, p.ext_used)], r)
                                 for p, r in zip(progs, expected, strict=True)])
    rows = [("reference machine (numpy)", timed(lambda: [machine.run(p.image) for p in progs]))]
    for sim in SIMULATORS:
        rows.append((f"{sim}, pyuvm env (backdoor loads)", cocotb_seconds(sim, count)))
        rows.append((f"{sim}, replay testbench", replay_seconds(sim, records_file)))
    print(f"{count} random programs, {cycles} simulated cycles\n")
    reference = rows[0][1]
    print(text_table(["engine", "seconds", "cycles/s", "vs reference"],
                     [[name, f"{seconds:.2f}", f"{cycles / seconds:.0f}",
                       f"{seconds / reference:.0f}x"] for name, seconds in rows], left=(0,)))
    write_json("bench_chip.json", {"programs": count, "cycles": cycles, "seconds": dict(rows)})
