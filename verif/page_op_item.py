"""The page-table agent's sequence item: one operation on the paged KV cache, and its outcome.

The driver fills in `result` before `item_done`, so the sequence reads the gathered rows (or
what an append did) from the item it sent; the agent's analysis port publishes the same item.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from enum import Enum

import numpy as np
from pyuvm import uvm_sequence_item

from model.serving import BatchPlan
from verif.serving_spec import ServingSpec


class PageOp(Enum):
    CONFIGURE = "configure"  # a fresh pool of n_pages pages of page_size rows (no live request)
    NEW = "new"  # a request, its first `sinks` rows kept in pages of their own
    GATHER = "gather"  # the rows of `ranges`, in order, into the chip's kc/vc inputs
    APPEND = "append"
    TRIM = "trim"
    FORK = "fork"
    RELEASE = "release"
    SERVE = "serve"  # serving: a fresh pool owned by a scheduler with the spec's workload
    PLAN = "plan"  # serving: the scheduler plans a step; its requests' rows into the chip
    COMMIT = "commit"  # serving: the chip's results of the planned step written back
    VIEW = "view"  # chip gather: take the new row's slot, write the step's block table
    FILL = "fill"  # chip gather: record the row the chip wrote; check the pools against the table


@dataclass
class PageOpResult:
    """What the operation did, for the sequence and for coverage."""

    pages_used: int  # pages in use in the pool afterwards
    length: int = 0  # the request's rows afterwards (0 once released)
    keys: np.ndarray | None = None  # GATHER: (rows, dim) int8
    values: np.ndarray | None = None
    pages_spanned: int = 0  # GATHER: physical pages the rows came from
    new_page: bool = False  # APPEND: the row opened a new page (a page boundary was crossed)
    cow_copy: bool = False  # APPEND: a shared page was copied first
    released: int = 0  # TRIM, RELEASE: pages given back to the free list
    words_written: int = 0  # GATHER, PLAN: backdoor writes into the chip's memory
    serving: ServingEvent | None = None  # PLAN, COMMIT: what the scheduler did
    table: np.ndarray | None = None  # VIEW: the block table written (header, then the pages)
    pair: tuple[int, int] | None = None  # VIEW: the copy-on-write pair written, if any
    pool_words: np.ndarray | None = None  # VIEW: the pools as the chip holds them before the step
    reused_pages: int = 0  # VIEW: table pages that were freed once and are held again


@dataclass
class ServingEvent:
    """One serving operation as coverage and the sequence see it."""

    plan: BatchPlan | None  # PLAN: the step planned (None once every request has finished)
    batch: int = 0  # requests the step runs
    admitted: int = 0
    preempted: int = 0
    refused: bool = False  # a request waited although the batch had room: the rule said no
    prefix_hits: int = 0  # pages served from the prefix cache (this operation)
    evictions: int = 0  # cached pages taken back for reuse (this operation)
    free_pages: int = 0  # afterwards


class PageOpItem(uvm_sequence_item):
    """One page-table operation on request `rid`; the fields a kind does not use stay at 0."""

    def __init__(self, kind: PageOp, rid: Hashable = 0, *,
                 ranges: tuple[tuple[int, int], ...] = (), keep_from: int = 0,
                 k: np.ndarray | None = None, v: np.ndarray | None = None,
                 src: Hashable = None, page_size: int = 0, n_pages: int = 0, sinks: int = 0,
                 spec: ServingSpec | None = None, results: list | None = None,
                 gather: str = "host", corrupt: bool = False):
        super().__init__(f"page_{kind.value}")
        self.kind = kind
        self.rid = rid
        self.ranges, self.keep_from, self.sinks = ranges, keep_from, sinks
        self.spec = spec  # SERVE
        self.results = results  # COMMIT: each request's StepResult, in the plan's order
        self.gather = gather  # CONFIGURE: "chip" lays the pools out in the chip's memory
        self.corrupt = corrupt  # VIEW: write a page outside the pool (a BAD_PAGE test)
        self.k, self.v = k, v
        self.src = src
        self.page_size, self.n_pages = page_size, n_pages
        self.result: PageOpResult | None = None

    @property
    def rows(self) -> int:
        """GATHER: the rows it reads."""
        return sum(hi - lo for lo, hi in self.ranges)

    def __str__(self) -> str:
        return f"PageOpItem({self.kind.value}, rid={self.rid!r})"
