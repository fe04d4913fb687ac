"""The page-table agent's driver: owns the PageTable and applies each operation to it.

A gather reads the rows through the block table (one vectorised read) and writes them into the
chip's kc/vc inputs in external memory; the chip never sees a page. After every operation the
table's invariants are re-derived from scratch (model.paged.check_invariants): a broken
refcount or a leaked page fails the test at the operation that caused it.
"""

from __future__ import annotations

import numpy as np
from pyuvm import ConfigDB, uvm_analysis_port, uvm_driver

from model.paged import PageTable, check_invariants
from model.tiny_lm import DIM
from verif.env_config import CFG_KEY, DecodeEnvConfig
from verif.failures import recording_failures
from verif.page_op_item import PageOp, PageOpItem, PageOpResult
from verif.profiling import PROFILE

KEY, VALUE = 0, 1  # a row is np.stack([k, v]), as model.host.PagedCache stores it


class PageTableDriver(uvm_driver):
    """Applies PageOpItems to the table; publishes each finished item on `ap`."""

    def build_phase(self) -> None:
        self.cfg: DecodeEnvConfig = ConfigDB().get(self, "", CFG_KEY)
        self.ap = uvm_analysis_port("ap", self)
        self.table: PageTable | None = None

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
        table = self.table
        length = table.length(rid) if rid in table.requests() else 0
        return PageOpResult(pages_used=table.used(), length=length, **fields)

    def configure(self, item: PageOpItem) -> PageOpResult:
        if self.table is not None and self.table.requests():
            raise RuntimeError(f"configure: requests {self.table.requests()} are still live")
        self.table = PageTable(item.n_pages, item.page_size, row_shape=(2, DIM), dtype=np.int8)
        return PageOpResult(pages_used=0)

    def new(self, item: PageOpItem) -> PageOpResult:
        self.table.new(item.rid)
        return self.summary(item.rid)

    def gather(self, item: PageOpItem) -> PageOpResult:
        """Rows lo..hi-1 through the block table, written to the chip's kc and vc inputs."""
        rows = self.table.rows(item.rid, item.lo, item.hi)
        keys, values = rows[:, KEY], rows[:, VALUE]
        layout, memory = self.cfg.layout, self.cfg.memory
        written = memory.write(layout.kc, keys) + memory.write(layout.vc, values)
        page = self.table.page_size
        spanned = len({i // page for i in range(item.lo, item.hi)})
        return self.summary(item.rid, keys=keys, values=values, pages_spanned=spanned,
                            words_written=written)

    def append(self, item: PageOpItem) -> PageOpResult:
        table = self.table
        opens_page = table.length(item.rid) % table.page_size == 0
        copies = table.cow_copies
        table.append(item.rid, np.stack([item.k, item.v]))
        return self.summary(item.rid, new_page=opens_page, cow_copy=table.cow_copies > copies)

    def trim(self, item: PageOpItem) -> PageOpResult:
        before = self.table.used()
        self.table.trim(item.rid, item.keep_from)
        return self.summary(item.rid, released=before - self.table.used())

    def fork(self, item: PageOpItem) -> PageOpResult:
        self.table.fork(item.src, item.rid)
        return self.summary(item.rid)

    def release(self, item: PageOpItem) -> PageOpResult:
        before = self.table.used()
        self.table.release(item.rid)
        return self.summary(item.rid, released=before - self.table.used())
