"""A prefix cache: full pages of identical token prefixes are computed once and shared.

vLLM v1's automatic prefix caching, kept small: a request's rows are a function of its tokens,
so requests whose tokens agree up to a page boundary may share the pages up to there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from model.chip.geometry import page_of, slot_of
from model.kv.paged import CachingPageTable
from model.kv.step_rule import check_window, plan_step

ROOT_KEY = b"prefix-cache root"  # the "previous page's key" of page 0


def page_keys(tokens: Sequence[int], page_size: int) -> list[bytes]:
    """The chained key of every full page of ``tokens``: key_j = H(key_{j-1}, page j's tokens)."""
    keys, parent = [], ROOT_KEY
    for start in range(0, len(tokens) - page_size + 1, page_size):
        page = ",".join(str(int(t)) for t in tokens[start : start + page_size])
        parent = hashlib.sha256(parent + page.encode()).digest()
        keys.append(parent)
    return keys


@dataclass(frozen=True)
class PrefixHit:
    """What a lookup found: pages to adopt for logical pages ``skipped`` onwards."""

    pages: tuple[int, ...]  # physical pages, in logical order
    skipped: int  # logical pages below the window: not held, not computed
    unowned: int  # pages of ``pages`` nobody holds: adopting takes each off the free list
    looked_up: int  # full pages the lookup could have served
    page_size: int

    @property
    def rows(self) -> int:
        """Rows the request starts with: its first computed step is ``rows + 1``."""
        return (self.skipped + len(self.pages)) * self.page_size


@dataclass
class CacheStats:
    """Pages, as counted by ``PrefixCache.adopt``."""

    hits: int = 0  # pages served that the request never computed before
    misses: int = 0  # pages looked up, not served: the request computes them
    resumed: int = 0  # pages served that the request computed in an earlier life

    def add(self, other: CacheStats, sign: int = 1) -> None:
        self.hits += sign * other.hits
        self.misses += sign * other.misses
        self.resumed += sign * other.resumed


class PrefixCache:
    """Finds, shares and keys full prompt pages of the requests in one ``CachingPageTable``.

    Only full pages have keys (chained: equal keys mean equal prefixes), so a shared page is
    never written; a lookup serves at most ``len(tokens) - 1`` rows, as the last known token
    must still be fed."""

    def __init__(self, table: CachingPageTable, window: int | None = None):
        check_window(window)
        self.table = table
        self.window = window
        self.stats = CacheStats()

    @property
    def evictions(self) -> int:
        return self.table.evictions

    def lookup(self, tokens: Sequence[int]) -> PrefixHit:
        """The longest usable cached prefix of ``tokens``: every page the first computed step
        reads must be cached (pages below its window are skipped). Changes nothing."""
        size = self.table.page_size
        keys = page_keys(tokens[: len(tokens) - 1], size)
        for served in range(len(keys), 0, -1):
            first = page_of(plan_step(served * size + 1, self.window).lo, size)
            pages = [self.table.lookup(key) for key in keys[first:served]]
            if pages and None not in pages:
                unowned = sum(1 for page in pages if self.table.refcount(page) == 0)
                return PrefixHit(tuple(pages), first, unowned, len(keys), size)
        return PrefixHit((), 0, 0, len(keys), size)

    def adopt(self, rid: Hashable, hit: PrefixHit, computed_rows: int = 0) -> CacheStats:
        """Start ``rid`` on the hit's pages; return what this adoption counted (pages within
        ``computed_rows``, computed in earlier lives, are not hits)."""
        self.table.adopt(rid, hit.pages, hit.skipped)
        earlier = page_of(computed_rows, hit.page_size)  # full pages it computed before
        served = range(hit.skipped, hit.skipped + len(hit.pages))
        resumed = sum(1 for page in served if page < earlier)
        unserved = range(hit.skipped + len(hit.pages), hit.looked_up)
        counted = CacheStats(hits=len(hit.pages) - resumed, resumed=resumed,
                             misses=sum(1 for page in unserved if page >= earlier))
        self.stats.add(counted)
        return counted

    def withdraw(self, counted: CacheStats) -> None:
        """Take back an adoption's counts: its request was preempted before it ran a step."""
        self.stats.add(counted, sign=-1)

    def register(self, rid: Hashable, tokens: Sequence[int]) -> None:
        """Key the request's last page if its last append filled it; ``tokens[i]`` is row i's."""
        length, size = self.table.length(rid), self.table.page_size
        if length == 0 or slot_of(length, size):
            return
        self.table.cache(self.table.block_table(rid)[-1], page_keys(tokens[:length], size)[-1])
