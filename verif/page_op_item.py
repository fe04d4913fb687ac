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


class PageOp(Enum):
    CONFIGURE = "configure"  # a fresh pool of n_pages pages of page_size rows (no live request)
    NEW = "new"  # a request, its first `sinks` rows kept in pages of their own
    GATHER = "gather"  # the rows of `ranges`, in order, into the chip's kc/vc inputs
    APPEND = "append"
    TRIM = "trim"
    FORK = "fork"
    RELEASE = "release"


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
    words_written: int = 0  # GATHER: backdoor writes into the chip's memory


class PageOpItem(uvm_sequence_item):
    """One page-table operation on request `rid`; the fields a kind does not use stay at 0."""

    def __init__(self, kind: PageOp, rid: Hashable = 0, *,
                 ranges: tuple[tuple[int, int], ...] = (), keep_from: int = 0,
                 k: np.ndarray | None = None, v: np.ndarray | None = None,
                 src: Hashable = None, page_size: int = 0, n_pages: int = 0, sinks: int = 0):
        super().__init__(f"page_{kind.value}")
        self.kind = kind
        self.rid = rid
        self.ranges, self.keep_from, self.sinks = ranges, keep_from, sinks
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
