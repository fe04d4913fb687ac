"""A prefix cache: full pages of identical token prefixes are computed once and shared.

vLLM v1's automatic prefix caching, kept small. A request's rows are a function of its tokens
(row i holds the key and value computed for token i), so two requests whose tokens agree up to
a page boundary may hold the same physical pages up to there.
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

    * Keys. A full page's key is a SHA-256 of its tokens chained with the previous page's key
      (``page_keys``): equal keys mean equal prefixes, not just an equal page. Partly filled
      pages have no key; they are never shared, so no copy-on-write is ever needed.
    * Pages. A page is keyed once full (``register``), shared by reference count, kept in an
      LRU when its last owner leaves, and handed out again only when no plain free page is
      left, its key dropped first (model.kv.paged.CachingPageTable).
    * Lookup. The longest prefix of a request's known tokens whose pages are cached, at most
      ``len(tokens) - 1`` rows: the last known token must still be fed, since its step gives
      the next token (vLLM recomputes the last token for the same reason). With a window only
      the pages the first computed step reads must be cached, and only they are adopted: the
      pages below lie outside the window, neither held nor counted.
    * Counting. A hit on a page nobody holds takes it off the free list: ``PrefixHit.unowned``
      tells admission what the hit costs. Hits and misses count pages looked up; a page a
      readmitted request computed in an earlier life is neither (``resumed``): tokens
      recomputed after a preemption are not prefix hits. An adoption whose request never ran
      (preempted by the plan that admitted it) is ``withdraw``n, so that its next admission
      does not count the same pages twice. Evictions are counted by the table.
    """

    def __init__(self, table: CachingPageTable, window: int | None = None):
        check_window(window)
        self.table = table
        self.window = window
        self.stats = CacheStats()

    @property
    def evictions(self) -> int:
        return self.table.evictions

    def lookup(self, tokens: Sequence[int]) -> PrefixHit:
        """The longest usable cached prefix of ``tokens`` (see the class docstring); no change.

        For n pages served the first computed step is n * P + 1; it reads the rows from
        ``plan_step(...).lo``, so the pages from that row's page to n - 1 must all be cached.
        """
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
        """Start ``rid`` on the hit's pages and count it; ``computed_rows``: rows the request
        computed in earlier lives (0 for a new request), whose pages are not hits. Returns
        what this adoption counted."""
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
