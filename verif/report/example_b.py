"""Example B: what paging, prefix sharing and sliding windows buy.

1. Memory waste: how many requests of a long-tailed length distribution fit in a pool of
   8,192 cache rows, reserving the longest allowed length per request (contiguous) or
   taking pages as the request grows (paged, several page sizes).
2. Prefix sharing: 8 requests start with the same prompt; store it once (fork) and let
   copy-on-write duplicate only a shared tail page that a request writes into.
3. What a window costs in accuracy: random tiny language models, teacher-forced, each
   window against full attention (verif/report/example_b_part3.py).
4. Serving arithmetic (derived, assumed chip): the batch the memory allows, with and
   without a window.

Run from the repository root: ``python -m scripts.report example-b`` or
``python verif/report/example_b.py``. Writes ``out/example_b.json``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from model.host.workloads import MAX_LENGTH, N_REQUESTS, sample_lengths, share_prompt
from model.kv.paged import OutOfPages, PageTable
from model.lm.tiny_lm import VOCAB
from verif.report.example_b_part3 import MODEL_SEEDS, STEPS, part3
from verif.report.output import write_json

# Part 1: the pool (the sampled request lengths are model/host/workloads.py's).
POOL_ROWS = 8192
PAGE_SIZES = (1, 4, 16, 64, 256)

# Part 2: a shared prompt, then rows of each request's own.
PROMPTS = (96, 100, 250)
SHARE_PAGE_SIZES = (16, 40)
SHARERS = 8
OWN_ROWS = 40
SHARE_POOL_PAGES = 400

# Part 4: ASSUMED chip and model (7B-class, int8 weights), as in the book's chapters 9 and 14.
CHIP_BYTES = 80 * 10**9
WEIGHT_BYTES = 7 * 10**9
KV_BYTES_PER_TOKEN = 256 * 1024
SERVING_WINDOW = 4096
CONTEXTS = (2048, 8192, 32768, 131072)
GIB = 2**30


@dataclass
class WasteRow:
    """One scheme of part 1; ``page_size`` is None for the contiguous reservation."""

    page_size: int | None
    requests_held: int
    rows_used: int
    rows_reserved: int

    @property
    def wasted(self) -> float:
        return (self.rows_reserved - self.rows_used) / self.rows_reserved


@dataclass
class SharingRow:
    """One (prompt, page size) pair of part 2: pages in use without and with sharing."""

    prompt: int
    page: int
    pages_copied: int  # every request stores the prompt itself
    pages_shared: int  # the prompt is stored once, forked, copied on write
    cow_copies: int

    @property
    def saved(self) -> float:
        return (self.pages_copied - self.pages_shared) / self.pages_copied


@dataclass
class ServingRow:
    """One context length of part 4 (derived, not measured)."""

    context: int
    kv_bytes_full: int
    kv_bytes_window: int
    max_batch_full: int
    max_batch_window: int


# ---- part 1: memory waste -----------------------------------------------------------------


def admit_contiguous(lengths: Sequence[int]) -> WasteRow:
    """Admit requests in order while a full MAX_LENGTH reservation still fits."""
    held = min(len(lengths), POOL_ROWS // MAX_LENGTH)
    return WasteRow(None, held, sum(lengths[:held]), held * MAX_LENGTH)


def admit_paged(lengths: Sequence[int], page_size: int) -> WasteRow:
    """Admit requests in order, growing each row by row, until the pool runs out."""
    table = PageTable(POOL_ROWS // page_size, page_size)
    held = rows_used = 0
    for rid, length in enumerate(lengths):
        table.new(rid)
        try:
            for _ in range(length):
                table.append(rid, 0)
        except OutOfPages:
            table.release(rid)
            break
        held += 1
        rows_used += length
    return WasteRow(page_size, held, rows_used, table.used() * page_size)


def memory_waste_rows(lengths: Sequence[int] | None = None) -> list[WasteRow]:
    """Part 1's table: the contiguous scheme, then one row per page size."""
    lengths = sample_lengths() if lengths is None else lengths
    return [admit_contiguous(lengths)] + [admit_paged(lengths, p) for p in PAGE_SIZES]


def part1() -> list[WasteRow]:
    lengths = sample_lengths()
    print(
        f"   {N_REQUESTS} sample lengths: mean {statistics.fmean(lengths):.0f}, "
        f"median {sorted(lengths)[N_REQUESTS // 2]}, max {max(lengths)}; "
        f"pool of {POOL_ROWS} rows; contiguous reserves {MAX_LENGTH} rows per request"
    )
    rows = memory_waste_rows(lengths)
    print(
        f"{'scheme':26s} {'requests held':>14s} {'rows used':>10s} {'rows reserved':>14s} "
        f"{'wasted':>7s}"
    )
    for r in rows:
        scheme = "contiguous" if r.page_size is None else f"paged, page = {r.page_size}"
        print(
            f"{scheme:26s} {r.requests_held:14d} {r.rows_used:10d} {r.rows_reserved:14d} "
            f"{100 * r.wasted:6.1f}%"
        )
    return rows


# ---- part 2: prefix sharing ---------------------------------------------------------------


def share_prefix(prompt: int, page_size: int) -> SharingRow:
    """Pages in use for SHARERS requests of prompt + OWN_ROWS rows, copied vs shared."""
    copied = PageTable(SHARE_POOL_PAGES, page_size)
    for rid in range(SHARERS):
        copied.new(rid)
        for _ in range(prompt + OWN_ROWS):
            copied.append(rid, 0)
    shared = share_prompt(prompt, page_size, SHARERS, OWN_ROWS, SHARE_POOL_PAGES)
    return SharingRow(prompt, page_size, copied.used(), shared.pages, shared.cow_copies)


def prefix_sharing_rows() -> list[SharingRow]:
    """Part 2's table: every prompt length with every page size."""
    return [share_prefix(prompt, page) for prompt in PROMPTS for page in SHARE_PAGE_SIZES]


def part2() -> list[SharingRow]:
    rows = prefix_sharing_rows()
    print(
        f"{'prompt rows':>12s} {'page':>5s} {'pages, copied':>14s} {'pages, shared':>14s} "
        f"{'saved':>6s} {'copy-on-write copies':>21s}"
    )
    for r in rows:
        print(
            f"{r.prompt:12d} {r.page:5d} {r.pages_copied:14d} {r.pages_shared:14d} "
            f"{100 * r.saved:5.0f}% {r.cow_copies:21d}"
        )
    print("   a prompt ending mid-page costs each request one copy of the shared tail page")
    return rows


# ---- part 4: serving arithmetic -----------------------------------------------------------


def serving_rows() -> list[ServingRow]:
    """Part 4's table: cache bytes per request and the largest batch the memory allows."""
    rows = []
    for context in CONTEXTS:
        full = KV_BYTES_PER_TOKEN * context
        window = KV_BYTES_PER_TOKEN * min(context, SERVING_WINDOW)
        rows.append(ServingRow(context, full, window, _max_batch(full), _max_batch(window)))
    return rows


def _max_batch(kv_bytes_per_request: int) -> int:
    return (CHIP_BYTES - WEIGHT_BYTES) // kv_bytes_per_request


def part4() -> list[ServingRow]:
    rows = serving_rows()
    print(
        f"{'context':>8s} {'KV GiB, full':>13s} {'max batch, full':>16s} "
        f"{'KV GiB, window ' + str(SERVING_WINDOW):>20s} {'max batch, window':>18s}"
    )
    for r in rows:
        print(
            f"{r.context:8d} {r.kv_bytes_full / GIB:13.2f} {r.max_batch_full:16d} "
            f"{r.kv_bytes_window / GIB:20.2f} {r.max_batch_window:18d}"
        )
    return rows


# ---- the parts, in the chapter's order ----------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One part of the example; ``run`` prints its table and returns its rows."""

    key: str
    title: str
    run: Callable[[], Sequence[Any]]


PARTS = (
    Part("part1", "memory: contiguous reservation vs pages, how many requests fit", part1),
    Part(
        "part2",
        f"prefix sharing: {SHARERS} requests share a prompt, then append {OWN_ROWS} rows each",
        part2,
    ),
    Part(
        "part3",
        f"what a window costs in accuracy: random models, teacher-forced on the "
        f"full-context float tokens ({len(MODEL_SEEDS)} models x {VOCAB} starts x {STEPS} steps)",
        part3,
    ),
    Part(
        "part4",
        f"serving arithmetic (DERIVED; ASSUMED {CHIP_BYTES // 10**9} GB chip, "
        f"{WEIGHT_BYTES // 10**9} GB int8 weights, {KV_BYTES_PER_TOKEN // 1024} KiB "
        "of cache per token)",
        part4,
    ),
)


def main() -> None:
    results = {}
    for number, part in enumerate(PARTS, start=1):
        print(f"\n== {number}. {part.title}")
        results[part.key] = [asdict(row) for row in part.run()]
    print(f"\nwrote {write_json('example_b.json', results)}")
