"""The page-table agent's driver: owns the PageTable and applies each operation to it.

Each request is a model.host.PagedCache on the one table (the reference host's own class, so
where a row lives, sinks included, is defined once). A gather reads the rows through the block
table and writes them into the chip's kc/vc inputs in external memory; the chip never sees a
page. After every operation the
table's invariants are re-derived from scratch (model.paged.check_invariants): a broken
refcount or a leaked page fails the test at the operation that caused it. Every gather is also
compared with a shadow that keeps each request's rows in a plain list (the chapter's shadow
model): rows that come back wrong through the block table fail at the gather that read them.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
from pyuvm import ConfigDB, uvm_analysis_port, uvm_driver

from model.host import PagedCache
from model.paged import PageTable, check_invariants
from model.tiny_lm import DIM
from verif.env_config import CFG_KEY, DecodeEnvConfig
from verif.failures import recording_failures
from verif.page_op_item import PageOp, PageOpItem, PageOpResult
from verif.profiling import PROFILE


class GatherMismatch(AssertionError):
    """Rows read through the block table differ from the rows the request appended."""


class PageTableDriver(uvm_driver):
    """Applies PageOpItems to the table; publishes each finished item on `ap`."""

    def build_phase(self) -> None:
        self.cfg: DecodeEnvConfig = ConfigDB().get(self, "", CFG_KEY)
        self.ap = uvm_analysis_port("ap", self)
        self.table: PageTable | None = None
        self.caches: dict[Hashable, PagedCache] = {}  # each live request (model.host's cache)
        self.shadow: dict[Hashable, list[np.ndarray]] = {}  # every row each request appended

    @recording_failures
    async def run_phase(self) -> None:
        while True:
            item = await self.seq_item_port.get_next_item()
            with PROFILE.section("page_table"):
                item.result = self.apply(item)
                check_invariants(self.table)
            self.seq_item_port.item_done()
            self.ap.write(item)

    def apply(self, item: PageOpItem) -> PageOpResult:
        handler = {
            PageOp.CONFIGURE: self.configure, PageOp.NEW: self.new, PageOp.GATHER: self.gather,
            PageOp.APPEND: self.append, PageOp.TRIM: self.trim, PageOp.FORK: self.fork,
            PageOp.RELEASE: self.release,
        }[item.kind]
        return handler(item)

    def summary(self, rid, **fields) -> PageOpResult:
        length = self.caches[rid].length() if rid in self.caches else 0
        return PageOpResult(pages_used=self.table.used(), length=length, **fields)

    def configure(self, item: PageOpItem) -> PageOpResult:
        if self.caches:
            raise RuntimeError(f"configure: requests {list(self.caches)} are still live")
        self.table = PageTable(item.n_pages, item.page_size, row_shape=(2, DIM), dtype=np.int8)
        self.shadow = {}
        return PageOpResult(pages_used=0)

    def new(self, item: PageOpItem) -> PageOpResult:
        self.caches[item.rid] = PagedCache(self.table, item.rid, item.sinks)
        self.shadow[item.rid] = []
        return self.summary(item.rid)

    def gather(self, item: PageOpItem) -> PageOpResult:
        """The ranges' rows through the block table, written to the chip's kc and vc inputs."""
        cache = self.caches[item.rid]
        parts = [cache.gather(lo, hi) for lo, hi in item.ranges]
        keys = np.concatenate([k for k, _ in parts]) if parts else np.zeros((0, DIM), np.int8)
        values = np.concatenate([v for _, v in parts]) if parts else keys
        self.check_against_shadow(item, keys, values)
        layout, memory = self.cfg.layout, self.cfg.memory
        written = memory.write(layout.kc, keys) + memory.write(layout.vc, values)
        page = self.table.page_size
        spanned = len({(part, index // page) for lo, hi in item.ranges for row in range(lo, hi)
                       for part, index in [cache.locate(row)]})
        return self.summary(item.rid, keys=keys, values=values, pages_spanned=spanned,
                            words_written=written)

    def check_against_shadow(self, item: PageOpItem, keys: np.ndarray,
                             values: np.ndarray) -> None:
        expected = [row for lo, hi in item.ranges for row in self.shadow[item.rid][lo:hi]]
        got = list(np.stack([keys, values], axis=1))
        if len(expected) != len(got) or any(
                not np.array_equal(want, row) for want, row in zip(expected, got, strict=False)):
            raise GatherMismatch(f"gather of rows {item.ranges} of request {item.rid!r}: the "
                                 "block table returned rows that differ from the ones appended"
                                 f"\n{self.cfg.where()}")

    def append(self, item: PageOpItem) -> PageOpResult:
        cache, table = self.caches[item.rid], self.table
        opens_page = cache.locate(cache.length())[1] % table.page_size == 0
        copies = table.cow_copies
        cache.append(item.k, item.v)
        self.shadow[item.rid].append(np.stack([item.k, item.v]).astype(np.int8))
        return self.summary(item.rid, new_page=opens_page, cow_copy=table.cow_copies > copies)

    def trim(self, item: PageOpItem) -> PageOpResult:
        before = self.table.used()
        self.caches[item.rid].trim(item.keep_from)
        return self.summary(item.rid, released=before - self.table.used())

    def fork(self, item: PageOpItem) -> PageOpResult:
        self.caches[item.rid] = self.caches[item.src].fork(item.rid)
        self.shadow[item.rid] = list(self.shadow[item.src])
        return self.summary(item.rid)

    def release(self, item: PageOpItem) -> PageOpResult:
        before = self.table.used()
        self.caches.pop(item.rid).release()
        del self.shadow[item.rid]
        return self.summary(item.rid, released=before - self.table.used())
