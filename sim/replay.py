"""The plain-Verilog replay testbench: records from the reference machine, run with no Python.

`write_records()` turns (memory image, prediction) pairs into the hex file `hw/tb/replay_tb.v`
reads (its header documents the format); `build_replay()` compiles the testbench once per
simulator; `run_replay()` runs it and returns the PASS/FAIL line with the per-record counters.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model.isa import ChipConfig
from model.machine import RunResult
from sim import toolchain
from sim.runner import BUILD_ROOT, TB_DIR, BuildFailed, locked, rtl_sources, up_to_date

MAGIC = 0x52504C59
END_MARKER = 0x454E4421
HARNESS = [TB_DIR / "replay_tb.v", TB_DIR / "chip_harness.v", TB_DIR / "ext_mem.v"]


@dataclass(frozen=True)
class Record:
    """One run to replay: the initial image, the words to check afterwards, the prediction."""

    image: np.ndarray
    checked: Sequence[tuple[int, int]]  # (address, count) regions of external memory
    expected: RunResult


@dataclass
class ReplayResult:
    passed: bool
    summary: str  # the testbench's last line
    total_cycles: int
    seconds: float
    output: str


def _segments(image: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Runs of non-zero words: memory starts zeroed, so only these need loading."""
    nonzero = np.flatnonzero(image)
    if nonzero.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(nonzero) > 8) + 1
    return [(int(run[0]), image[run[0] : run[-1] + 1])
            for run in np.split(nonzero, breaks)]


def record_words(record: Record) -> list[int]:
    """One record in replay_tb.v's format: image segments, checked segments, 20 status words."""
    image = np.asarray(record.image, dtype=np.int64) & 0xFFFFFFFF
    segments = _segments(image)
    words: list[int] = [len(segments)]
    for address, values in segments:
        words += [address, len(values), *values.tolist()]
    words.append(len(record.checked))
    for address, count in record.checked:
        words += [address, count, *record.expected.ext[address : address + count].tolist()]
    c = record.expected.counters
    words += [int(record.expected.error), record.expected.error_pc,
              c.total, c.dma, c.mat, c.vec, c.sm, c.instr, c.sat,
              *c.ops, c.dma_words, c.sm_max_len, c.sm_range]
    return words


def write_records(path: Path, records: Iterable[Record]) -> int:
    """Write the hex file; returns the number of records."""
    records = list(records)
    words = [MAGIC, len(records)]
    for record in records:
        words += record_words(record)
    words.append(END_MARKER)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{w & 0xFFFFFFFF:08x}\n" for w in words))
    return len(records)


def build_replay(sim: str, cfg: ChipConfig | None = None) -> Path:
    """Compile the replay testbench once; returns the executable (Icarus: the .vvp file)."""
    toolchain.prepare(sim)
    params = (cfg or ChipConfig()).verilog_parameters()
    tag = "-".join(f"{k}{v}" for k, v in params.items())
    build_dir = BUILD_ROOT / "replay" / sim / tag
    sources = [*rtl_sources(), *HARNESS]
    stamp = build_dir / "built.stamp"
    target = build_dir / ("replay.vvp" if sim == "icarus" else "Vreplay_tb")
    with locked(build_dir.with_suffix(".lock")):
        if not up_to_date(stamp, sources):
            build_dir.mkdir(parents=True, exist_ok=True)
            _run_build(_build_command(sim, params, sources, build_dir, target), build_dir)
            stamp.write_text(tag)
    return target


def _build_command(sim, params, sources, build_dir, target) -> list[str]:
    files = [str(s) for s in sources]
    if sim == "icarus":
        overrides = [f"-Preplay_tb.{k}={v}" for k, v in params.items()]
        return ["iverilog", "-g2012", "-s", "replay_tb", "-o", str(target), *overrides, *files]
    overrides = [f"-G{k}={v}" for k, v in params.items()]
    # --timing runs the testbench's delays as C++20 coroutines: g++ 12 needs the standard named
    return ["verilator", "--binary", "--timing", "-CFLAGS", "-std=c++20", "-Wno-fatal",
            "--top-module", "replay_tb",
            "-Mdir", str(build_dir), "-j", "2", *overrides, *files]


def _run_build(command: list[str], build_dir: Path) -> None:
    log = build_dir / "build.log"
    with open(log, "w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=build_dir)
    if done.returncode != 0:
        raise BuildFailed(f"replay testbench build failed: {' '.join(command[:3])} ... see {log}")


def run_replay(sim: str, records_file: Path, cfg: ChipConfig | None = None,
               timeout_s: float = 1800) -> ReplayResult:
    """Run the replay testbench on a records file and parse its verdict."""
    target = build_replay(sim, cfg)
    command = (["vvp", "-n", str(target)] if sim == "icarus" else [str(target)])
    command.append(f"+records={records_file}")
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                          cwd=records_file.parent)
    seconds = time.perf_counter() - started
    output = done.stdout + done.stderr
    verdicts = [line for line in output.splitlines() if line.startswith(("PASS:", "FAIL:"))]
    summary = verdicts[-1] if verdicts else f"no verdict (exit {done.returncode})"
    match = re.search(r"(\d+) cycles in total", summary)
    return ReplayResult(
        passed=summary.startswith("PASS:") and done.returncode == 0,
        summary=summary,
        total_cycles=int(match.group(1)) if match else 0,
        seconds=seconds,
        output=output,
    )
