"""Benchmark: the page table against a plain-list cache, then example B's timing.

One random trace (fixed seed) of appends interleaved over several requests, then random
window gathers of WINDOW rows, run on both caches in the same process so the ratios are
comparable. The plain-list cache keeps a Python list of numpy rows per request (append
stores a reference; a gather is ``np.stack`` of a slice); the page table copies each row
into its pool and gathers with one fancy index. Finally example B's parts 1, 2 and 4 are
timed (the chapter's whole example took about 20 s).

Run from the repository root: ``python -m scripts.bench_paged`` or
``python scripts/bench_paged.py``. Writes ``out/bench_paged.json``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a file: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.paged import PageTable, pages_for
from scripts import example_b
from scripts._common import write_json

SEED = 2024
N_REQUESTS = 8
N_APPENDS = 40_000
N_GATHERS = 20_000
WINDOW = 64
ROW_SHAPE = (2, 16)  # a key and a value of 16 int8 lanes
PAGE_SIZE = 16
REPEATS = 3  # best of, to damp noise from other processes


@dataclass
class Trace:
    """Which request each append goes to, the rows, and the (request, hi) of each gather."""

    append_rids: np.ndarray
    rows: np.ndarray
    gather_rids: np.ndarray
    gather_his: np.ndarray


@dataclass
class Rate:
    """Operations per second of one operation on both caches."""

    operation: str
    paged_per_s: float
    plain_per_s: float

    @property
    def ratio(self) -> float:
        return self.paged_per_s / self.plain_per_s


def make_trace(rng: np.random.Generator) -> Trace:
    """Random appends over N_REQUESTS, then gathers ending anywhere after a full window."""
    append_rids = rng.integers(0, N_REQUESTS, N_APPENDS)
    rows = rng.integers(-128, 128, (N_APPENDS, *ROW_SHAPE), dtype=np.int8)
    lengths = np.bincount(append_rids, minlength=N_REQUESTS)
    gather_rids = rng.integers(0, N_REQUESTS, N_GATHERS)
    gather_his = rng.integers(WINDOW, lengths[gather_rids] + 1)
    return Trace(append_rids, rows, gather_rids, gather_his)


class PlainCache:
    """The reference host: one Python list of rows per request."""

    def __init__(self) -> None:
        self.lists: dict[int, list[np.ndarray]] = {}

    def new(self, rid: int) -> None:
        self.lists[rid] = []

    def append(self, rid: int, row: np.ndarray) -> None:
        self.lists[rid].append(row)

    def rows(self, rid: int, lo: int, hi: int) -> np.ndarray:
        return np.stack(self.lists[rid][lo:hi])


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _fill(cache: PageTable | PlainCache, trace: Trace) -> float:
    for rid in range(N_REQUESTS):
        cache.new(rid)
    rids = trace.append_rids.tolist()

    def run() -> None:
        for rid, row in zip(rids, trace.rows, strict=True):
            cache.append(rid, row)

    return _timed(run)


def _gather(cache: PageTable | PlainCache, trace: Trace) -> tuple[float, int]:
    pairs = list(zip(trace.gather_rids.tolist(), trace.gather_his.tolist(), strict=True))
    checksum = 0

    def run() -> None:
        nonlocal checksum
        for rid, hi in pairs:
            checksum += int(cache.rows(rid, hi - WINDOW, hi)[-1, 0, 0])

    return _timed(run), checksum


def _run_once(trace: Trace) -> tuple[float, float, float, float]:
    """Seconds for (paged append, plain append, paged gather, plain gather) on fresh caches."""
    n_pages = pages_for(N_APPENDS, PAGE_SIZE) + N_REQUESTS  # room for every partial last page
    paged = PageTable(n_pages, PAGE_SIZE, ROW_SHAPE, np.int8)
    plain = PlainCache()
    paged_append, plain_append = _fill(paged, trace), _fill(plain, trace)
    (paged_gather, paged_sum), (plain_gather, plain_sum) = (
        _gather(paged, trace),
        _gather(plain, trace),
    )
    if paged_sum != plain_sum:
        raise AssertionError(f"gathers disagree: checksum {paged_sum} vs {plain_sum}")
    return paged_append, plain_append, paged_gather, plain_gather


def compare_caches(trace: Trace) -> list[Rate]:
    """Append and gather rates of both caches, best of REPEATS runs; the gathers must agree."""
    best = np.min([_run_once(trace) for _ in range(REPEATS)], axis=0)
    return [
        Rate("append", N_APPENDS / best[0], N_APPENDS / best[1]),
        Rate(f"gather {WINDOW} rows", N_GATHERS / best[2], N_GATHERS / best[3]),
    ]


def time_example_b() -> dict[str, float]:
    """Seconds (best of REPEATS) for each computed part of example B, without printing."""
    parts = {
        "part1": example_b.memory_waste_rows,
        "part2": example_b.prefix_sharing_rows,
        "part4": example_b.serving_rows,
    }
    return {name: min(_timed(run) for _ in range(REPEATS)) for name, run in parts.items()}


def main() -> None:
    trace = make_trace(np.random.default_rng(SEED))
    rates = compare_caches(trace)
    print(
        f"trace: {N_REQUESTS} requests, {N_APPENDS} appends of int8 rows {ROW_SHAPE}, "
        f"{N_GATHERS} gathers of {WINDOW} rows; page size {PAGE_SIZE}"
    )
    print(f"{'operation':18s} {'PageTable ops/s':>16s} {'plain list ops/s':>17s} {'ratio':>7s}")
    for r in rates:
        print(f"{r.operation:18s} {r.paged_per_s:16,.0f} {r.plain_per_s:17,.0f} {r.ratio:7.2f}")
    seconds = time_example_b()
    parts = ", ".join(f"{name} {s * 1000:.1f} ms" for name, s in seconds.items())
    print(f"example B: {parts}; total {sum(seconds.values()):.3f} s")
    print("   (the chapter's whole example B, part 3 included, took about 20 s)")
    rows = [{**asdict(r), "ratio": r.ratio} for r in rates]
    print(f"wrote {write_json('bench_paged.json', {'rates': rows, 'example_b_s': seconds})}")


if __name__ == "__main__":
    main()
