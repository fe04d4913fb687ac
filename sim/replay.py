"""The plain-Verilog replay testbench: records from the reference machine, run with no Python.

`write_records()` writes (memory image, prediction) pairs in hw/tb/replay_tb.v's hex format,
`build_replay()` compiles the testbench once, `run_replay()` runs it and reads its verdict."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from model.chip.isa import ChipConfig
from model.chip.machine import COUNTERS_W, Counters, RunResult, counter_fields_at
from model.chip.rtl_defs import REPLAY_END_MARKER, REPLAY_MAGIC
from model.paths import BUILD_ROOT, TB_DIR
from sim import toolchain
from sim.runner import (
    VERILATOR_OPTIMIZE,
    VERILATOR_SINGLE_UNIT,
    BuildFailed,
    include_dirs,
    locked,
    rtl_sources,
    up_to_date,
)

HARNESS = [TB_DIR / "replay_tb.v", TB_DIR / "chip_harness.v", TB_DIR / "axi_ram.v",
           TB_DIR / "axi_checker.v"]
COUNTER_WORDS = -(-COUNTERS_W // 32)  # the counters bus in 32-bit words (replay_tb.v's too)


@dataclass(frozen=True)
class Record:
    """One run to replay: the initial image, the words to check afterwards, the prediction."""

    image: np.ndarray
    checked: Sequence[tuple[int, int]]  # (address, count) regions of external memory
    expected: RunResult


@dataclass
class ReplayResult:
    """The testbench's verdict, read from its result line and its mismatch lines."""

    status: str  # "pass", "fail", "error" (the record file could not be read), or "none"
    records: int  # records run
    failed: int  # records that differed
    total_cycles: int  # the sum of the records' cnt_total
    mismatches: list[str] = field(default_factory=list)  # per differing record, in words
    error: str = ""  # with status "error": why
    seconds: float = 0.0
    output: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def summary(self) -> str:
        """One line for a person: the verdict, and the first difference if any."""
        if self.status in ("pass", "fail"):
            line = (f"{self.status.upper()}: {self.failed} of {self.records} records differ, "
                    f"{self.total_cycles} cycles in total")
            return f"{line}; {self.mismatches[0]}" if self.mismatches else line
        return f"ERROR: {self.error}"


def _segments(image: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Runs of non-zero words: memory starts zeroed, so only these need loading."""
    nonzero = np.flatnonzero(image)
    if nonzero.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(nonzero) > 8) + 1
    return [(int(run[0]), image[run[0] : run[-1] + 1])
            for run in np.split(nonzero, breaks)]


def record_words(record: Record) -> list[int]:
    """One record in replay_tb.v's format: image segments, checked segments, the status."""
    image = np.asarray(record.image, dtype=np.int64) & 0xFFFFFFFF
    segments = _segments(image)
    words: list[int] = [len(segments)]
    for address, values in segments:
        words += [address, len(values), *values.tolist()]
    words.append(len(record.checked))
    for address, count in record.checked:
        words += [address, count, *record.expected.ext[address : address + count].tolist()]
    bus = record.expected.counters.packed()
    words += [int(record.expected.error), record.expected.error_pc,
              *((bus >> (32 * i)) & 0xFFFFFFFF for i in range(COUNTER_WORDS))]
    return words


def write_records(path: Path, records: Iterable[Record]) -> int:
    """Write the hex file; returns the number of records."""
    records = list(records)
    words = [REPLAY_MAGIC, len(records)]
    for record in records:
        words += record_words(record)
    words.append(REPLAY_END_MARKER)
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
    includes = [f"-I{folder}" for folder in include_dirs(sources)]
    if sim == "icarus":
        overrides = [f"-Preplay_tb.{k}={v}" for k, v in params.items()]
        return ["iverilog", "-g2012", "-s", "replay_tb", "-o", str(target), *includes,
                *overrides, *files]
    overrides = [f"-G{k}={v}" for k, v in params.items()]
    # --timing runs the testbench's delays as C++20 coroutines: g++ 12 needs the standard named
    return ["verilator", "--binary", "--timing", "-CFLAGS", "-std=c++20", *VERILATOR_OPTIMIZE,
            *VERILATOR_SINGLE_UNIT, "-Wno-fatal",
            "--top-module", "replay_tb", "-Mdir", str(build_dir), "-j", "2", *includes,
            *overrides, *files]


def _run_build(command: list[str], build_dir: Path) -> None:
    log = build_dir / "build.log"
    with open(log, "w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=build_dir)
    if done.returncode != 0:
        raise BuildFailed(f"replay testbench build failed: {' '.join(command[:3])} ... see {log}")


def run_replay(sim: str, records_file: Path, cfg: ChipConfig | None = None,
               timeout_s: float = 1800) -> ReplayResult:
    """Run the replay testbench on a records file and read its verdict."""
    target = build_replay(sim, cfg)
    command = (["vvp", "-n", str(target)] if sim == "icarus" else [str(target)])
    command.append(f"+records={records_file}")
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                          cwd=records_file.parent)
    result = parse_output(done.stdout)
    result.seconds = time.perf_counter() - started
    result.output = done.stdout + done.stderr
    if done.returncode != 0 and result.passed:
        result.status, result.error = "error", f"the simulator exited with {done.returncode}"
    return result


def parse_output(text: str) -> ReplayResult:
    """The testbench's lines (replay_tb.v's header lists them) as a ReplayResult."""
    result = ReplayResult(status="none", records=0, failed=0, total_cycles=0,
                          error="the testbench printed no result line")
    for line in text.splitlines():
        kind, *pairs = line.split() or [""]
        values = dict(pair.split("=", 1) for pair in pairs if "=" in pair)
        if kind == "mismatch":
            result.mismatches.append(describe_mismatch(values))
        elif kind == "result":
            result.status = values["status"]
            result.records = int(values.get("records", 0))
            result.failed = int(values.get("failed", 0))
            result.total_cycles = int(values.get("cycles", 0))
            result.error = _error_text(values) if result.status == "error" else ""
    return result


def _error_text(values: dict[str, str]) -> str:
    reason = values.get("reason", "?")
    if reason == "malformed":
        return (f"the record file is malformed near word {values.get('word')} "
                f"(record {values.get('record')})")
    return {"cannot-open": "cannot open the record file",
            "bad-magic": "the record file does not start with the magic word"}.get(reason, reason)


def describe_mismatch(values: dict[str, str]) -> str:
    """A mismatch line in words: what differs, each counter by its name."""
    problems = []
    if values["timeout"] == "1":
        problems.append("no done within the watchdog")
    if values["memory_diffs"] != "0":
        problems.append(f"{values['memory_diffs']} memory words differ, first "
                        f"ext[{values['first_address']}] expected 0x{values['memory_want']} "
                        f"got 0x{values['memory_got']}")
    for name in ("error", "error_pc"):
        if values[f"{name}_want"] != values[f"{name}_got"]:
            problems.append(f"{name} expected {values[f'{name}_want']} "
                            f"got {values[f'{name}_got']}")
    problems += _counter_differences(values["counters_want"], values["counters_got"])
    if values.get("axi_violations", "0") != "0":
        problems.append(f"the AXI4 port broke a protocol rule in {values['axi_violations']} "
                        f"cycles (the simulator log names the first)")
    return f"record {values['record']}: " + "; ".join(problems)


def _counter_differences(want_hex: str, got_hex: str) -> list[str]:
    try:
        got_bus = int(got_hex, 16)
    except ValueError:  # x or z digits (Icarus): name the counters that hold them
        unknown = [4 * (len(got_hex) - 1 - i) + b for i, digit in enumerate(got_hex)
                   if digit not in "0123456789abcdefABCDEF" for b in range(4)]
        return [f"X or Z bits in {', '.join(f.hw_name for f in counter_fields_at(unknown))}"]
    want = Counters.from_packed(int(want_hex, 16)).as_dict()
    got = Counters.from_packed(got_bus).as_dict()
    return [f"counter {name} expected {want[name]} got {got[name]}"
            for name in want if want[name] != got[name]]
