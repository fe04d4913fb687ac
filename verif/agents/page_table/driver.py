"""The page-table agent's driver: the pool, a step host per request, and the checks around them.

The hosts are the reference model's own (a PagedHost per request, or one Scheduler), driven
through their step interface, so the step rule and the scheduling are defined once; the agent
adds the chip's memory and the checks.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
from pyuvm import ConfigDB, uvm_analysis_port, uvm_driver

from model.chip.geometry import opens_page, pages_spanned
from model.host.decode import PagedCache, PagedHost, gather_plan
from model.host.serving import Scheduler
from model.kv.paged import PageTable, check_invariants
from verif.agents.chip.config import CHIP_CFG, ChipAgentConfig
from verif.agents.page_table.items import SERVING, PageOp, PageOpItem, PageOpResult, ServingEvent
from verif.agents.page_table.pools import ChipPools
from verif.kit.failures import recording_failures
from verif.kit.profiling import PROFILE
from verif.runs.spec import DecodeSpec


class GatherMismatch(AssertionError):
    """Rows read through the block table differ from the rows the request appended."""


class PageTableDriver(uvm_driver):
    """Applies PageOpItems; publishes each finished item on `ap`. Checks every gather against
    a shadow of each request's rows, the table's invariants after every operation, and in chip
    gather both pools after every FINISH, word for word."""

    def build_phase(self) -> None:
        self.cfg: ChipAgentConfig = ConfigDB().get(self, "", CHIP_CFG)
        self.ap = uvm_analysis_port("ap", self)
        self.table: PageTable | None = None
        self.hosts: dict[Hashable, PagedHost | Scheduler] = {}
        self.pending: dict[Hashable, object] = {}  # each host's prepared, unfinished step
        self.pools: ChipPools | None = None  # chip gather's pools in the chip's memory
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
            PageOp.CONFIGURE: self.configure, PageOp.NEW: self.new, PageOp.FORK: self.fork,
            PageOp.RELEASE: self.release, PageOp.SERVE: self.serve,
            PageOp.PREPARE: self.prepare, PageOp.FINISH: self.finish,
        }[item.kind]
        return handler(item)

    @property
    def scheduler(self) -> Scheduler | None:
        return self.hosts.get(SERVING)

    # ---- the pool and the requests ----------------------------------------------------------

    def configure(self, item: PageOpItem) -> PageOpResult:
        if self.hosts:
            raise RuntimeError(f"configure: requests {list(self.hosts)} are still live")
        self.table = PageTable(item.n_pages, item.page_size, row_shape=(2, self.cfg.layout.dim),
                               dtype=np.int8)
        self.shadow, self.pools = {}, None
        return PageOpResult(pages_used=0)

    def new(self, item: PageOpItem) -> PageOpResult:
        """A request and its host; the first one of a chip-gather pool lays the pools out."""
        spec: DecodeSpec = item.spec
        programs = spec.programs(self.cfg.chip)
        if programs.layout.pool is not None and self.pools is None:
            self.pools = ChipPools(programs.layout, self.cfg.bfm.memory)
        cache = PagedCache(self.table, item.rid, spec.sinks)
        self.hosts[item.rid] = PagedHost(programs, cache, spec.start, spec.window, spec.sinks,
                                         spec.force)
        self.shadow[item.rid] = []
        return PageOpResult(pages_used=self.table.used())

    def fork(self, item: PageOpItem) -> PageOpResult:
        self.hosts[item.rid] = self.hosts[item.src].fork(item.rid)
        self.hosts[item.rid].force = item.spec.force
        self.shadow[item.rid] = list(self.shadow[item.src])
        return PageOpResult(pages_used=self.table.used())

    def release(self, item: PageOpItem) -> PageOpResult:
        before = self.table.used()
        self.hosts.pop(item.rid).cache.release()
        del self.shadow[item.rid]
        return PageOpResult(pages_used=self.table.used(), released=before - self.table.used())

    def serve(self, item: PageOpItem) -> PageOpResult:
        if self.hosts:
            raise RuntimeError(f"serve: requests {list(self.hosts)} are still live")
        scheduler = item.spec.scheduler(self.cfg.chip)
        self.hosts[SERVING] = scheduler
        self.table = scheduler.table
        self.pools = (ChipPools(scheduler.programs.layout, self.cfg.bfm.memory)
                      if scheduler.gather == "chip" else None)
        return PageOpResult(pages_used=0)

    # ---- the step interface -----------------------------------------------------------------

    def prepare(self, item: PageOpItem) -> PageOpResult:
        """The host's next step: its inputs, and what its cached rows need in chip memory."""
        if item.rid == SERVING:
            return self.prepare_serving()
        host = self.hosts[item.rid]
        pages, length = self.table.used(), host.cache.length()
        inputs = host.prepare_step()
        (request,) = inputs.requests
        self.check_against_shadow(item.rid, host, inputs)
        result = PageOpResult(
            pages_used=pages, programs_compiled=len(host.programs), rows=request.plan.rows,
            ranges=len(request.plan.ranges), pages_spanned=self.pages_spanned(host, request.plan),
            cow_copy=inputs.pair is not None)
        if self.pools is not None:
            inputs = self.pools.corrupted(inputs) if item.corrupt else inputs
            result.table = tuple(int(word) for word in inputs.requests[0].table)
            result.reused_pages = self.pools.reused(self.table, result.table[1:])
            result.new_page = opens_page(length, self.table.page_size)
        result.words_written = self.write_cache_rows(inputs)
        result.inputs = self.pending[item.rid] = inputs
        return result

    def finish(self, item: PageOpItem) -> PageOpResult:
        """The chip's results written back through the host; the pools checked."""
        if item.rid == SERVING:
            return self.finish_serving(item)
        host = self.hosts[item.rid]
        inputs = self.pending.pop(item.rid)
        before, length, copies = self.table.used(), host.cache.length(), self.table.cow_copies
        host.finish_step(inputs, item.results)
        (result,) = item.results
        self.shadow[item.rid].append(np.stack([result.k_new, result.v_new]).astype(np.int8))
        done = PageOpResult(pages_used=self.table.used(), token=host.token)
        if self.pools is None:  # host gather appended now: did it open or copy a page?
            done.new_page = opens_page(length, self.table.page_size)
            done.cow_copy = self.table.cow_copies > copies
            done.released = before + done.new_page + done.cow_copy - self.table.used()
        else:
            done.released = before - self.table.used()
            self.pools.check(self.table, self.cfg.recorder.where())
        return done

    def prepare_serving(self) -> PageOpResult:
        scheduler = self.scheduler
        if scheduler.done:
            return PageOpResult(pages_used=self.table.used(), serving=ServingEvent(
                free_pages=self.table.free_count()))
        before = self.counts()
        plan = self.pending[SERVING] = scheduler.prepare_step()
        written = self.write_cache_rows(plan) if plan.requests else 0
        refused = bool(scheduler.queued()) and len(plan.requests) < scheduler.batch_size
        return PageOpResult(pages_used=self.table.used(), inputs=plan, words_written=written,
                            serving=self.event(plan, before, refused))

    def finish_serving(self, item: PageOpItem) -> PageOpResult:
        before = self.counts()
        plan = self.pending.pop(SERVING)
        self.scheduler.finish_step(plan, item.results)
        self.scheduler.check_invariants()
        if self.pools is not None:
            self.pools.check(self.table, f"after serving step {plan.step + 1}\n"
                             + self.cfg.recorder.where())
        return PageOpResult(pages_used=self.table.used(), serving=self.event(plan, before))

    # ---- helpers ------------------------------------------------------------------------------

    def write_cache_rows(self, inputs) -> int:
        """Write the cached rows or block tables into the chip's memory; returns words written."""
        memory = self.cfg.bfm.memory
        return sum(memory.write(address, words)
                   for address, words in inputs.cache_writes().items())

    def check_against_shadow(self, rid: Hashable, host: PagedHost, inputs) -> None:
        """The rows the step reads through the block table, against the rows appended."""
        (request,) = inputs.requests
        keys, values = ((request.kc, request.vc) if request.kc is not None
                        else gather_plan(host.cache, request.plan))
        expected = [row for lo, hi in request.plan.ranges for row in self.shadow[rid][lo:hi]]
        got = list(np.stack([keys, values], axis=1))
        if len(expected) != len(got) or any(
                not np.array_equal(want, row) for want, row in zip(expected, got, strict=False)):
            raise GatherMismatch(f"gather of rows {request.plan.ranges} of request {rid!r}: the "
                                 "block table returned rows that differ from the ones appended"
                                 f"\n{self.cfg.recorder.where()}")

    def pages_spanned(self, host: PagedHost, plan) -> int:
        """Physical pages the step's rows lie in (sink rows lie in pages of their own)."""
        total = 0
        for lo, hi in plan.ranges:
            _, first = host.cache.locate(lo)
            total += pages_spanned(first, first + hi - lo, self.table.page_size)
        return total

    def counts(self) -> tuple[int, int]:
        return self.scheduler.cache.stats.hits, self.table.evictions

    def event(self, plan, before: tuple[int, int], refused: bool = False) -> ServingEvent:
        hits, evictions = (now - then for now, then in zip(self.counts(), before, strict=True))
        return ServingEvent(len(plan.requests), len(plan.admitted), len(plan.preempted), refused,
                            hits, evictions, self.table.free_count())
