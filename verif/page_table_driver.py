"""The page-table agent's driver: owns the PageTable and applies each operation to it.

Each request is a model.host.PagedCache on the one table (the reference host's own class, so
where a row lives, sinks included, is defined once). A gather reads the rows through the block
table and writes them into the chip's kc/vc inputs in external memory; the chip never sees a
page. In chip gather (verif/chip_gather_pool.py) it writes no row: only each step's block table,
and it checks the pools the chip keeps in its memory against the table. After every operation the
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
from verif.chip_gather_pool import ChipGatherPool
from verif.env_config import CFG_KEY, DecodeEnvConfig
from verif.failures import recording_failures
from verif.page_op_item import PageOp, PageOpItem, PageOpResult
from verif.profiling import PROFILE
from verif.serving_pool import ServingPool


class GatherMismatch(AssertionError):
    """Rows read through the block table differ from the rows the request appended."""


class PageTableDriver(uvm_driver):
    """Applies PageOpItems to the table; publishes each finished item on `ap`."""

    def build_phase(self) -> None:
        self.cfg: DecodeEnvConfig = ConfigDB().get(self, "", CFG_KEY)
        self.ap = uvm_analysis_port("ap", self)
        self.table: PageTable | None = None
        self.caches: dict[Hashable, PagedCache] = {}  # each live request (model.host's cache)
        self.serving: ServingPool | None = None  # a serving run's scheduler (serving_pool.py)
        self.chip_pool: ChipGatherPool | None = None  # chip gather's pools (chip_gather_pool.py)
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
            PageOp.RELEASE: self.release, PageOp.SERVE: self.serve, PageOp.PLAN: self.plan,
            PageOp.COMMIT: self.commit, PageOp.VIEW: self.view, PageOp.FILL: self.fill,
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
        self.chip_pool = (ChipGatherPool(self.cfg.layout, self.cfg.memory, item.page_size,
                                         item.n_pages) if item.gather == "chip" else None)
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

    # ---- serving: the scheduler owns the pool (verif/serving_pool.py) --------------------------

    def serve(self, item: PageOpItem) -> PageOpResult:
        if self.caches:
            raise RuntimeError(f"serve: requests {list(self.caches)} are still live")
        scheduler = item.spec.scheduler(self.cfg.chip)
        self.serving = ServingPool(item.spec, self.cfg.layout, self.cfg.memory, scheduler)
        self.table = scheduler.table
        return PageOpResult(pages_used=0)

    def plan(self, item: PageOpItem) -> PageOpResult:
        event, written = self.serving.plan()
        return PageOpResult(pages_used=self.table.used(), words_written=written, serving=event)

    def commit(self, item: PageOpItem) -> PageOpResult:
        event = self.serving.commit(item.results)
        return PageOpResult(pages_used=self.table.used(), serving=event)

    # ---- chip gather: the chip reads the rows itself (verif/chip_gather_pool.py) --------------

    def view(self, item: PageOpItem) -> PageOpResult:
        """The new row's slot taken; the step's block table (rows ranges[0]) written, no row."""
        cache = self.caches[item.rid]
        (lo, hi), = item.ranges
        keys, values = cache.gather(lo, hi)  # read in the model only: checked, not copied
        self.check_against_shadow(item, keys, values)
        view = self.chip_pool.view(cache, lo, item.corrupt)
        return self.summary(item.rid, pages_spanned=len(view.table) - 1, new_page=view.new_page,
                            cow_copy=view.pair is not None, words_written=view.words_written,
                            table=view.table, pair=view.pair, pool_words=view.pool_words,
                            reused_pages=view.reused_pages)

    def fill(self, item: PageOpItem) -> PageOpResult:
        """The row the chip wrote, recorded; then the pools checked against the table."""
        self.caches[item.rid].fill(item.k, item.v)
        self.shadow[item.rid].append(np.stack([item.k, item.v]).astype(np.int8))
        self.chip_pool.check(self.table, self.cfg.where())
        return self.summary(item.rid)
