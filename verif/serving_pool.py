"""The page-table agent's serving side: the model's scheduler owns the pool, the agent runs it.

In a serving run the pool, the admission, the preemptions and the prefix cache are
model.serving.Scheduler's (nothing here restates them). The agent's driver hands it the three
serving operations: SERVE makes the scheduler and submits the workload; PLAN plans a step and
writes what the chip's batch reads into its memory; COMMIT writes the chip's results back and
checks the pool (free + evictable + owned == total, refcounts equal owners, cached pages
accounted for) after every step.

What PLAN writes depends on the spec's gather mode:

- host gather: each request's cached rows into its kc/vc slot (the chip never sees a page);
- chip gather: each request's block table (model.batch_paged_programs.ChipBatchPlan: the rows
  it reads, then the planned slot of its new row) and no row; the KV pools live in the chip's
  memory (zeroed at SERVE), the chip reads and writes them itself, and COMMIT also reads both
  pools back and checks them against the page table's pool, word for word
  (verif/chip_gather_pool.py). Serving never copies a page (the prefix cache shares full pages
  only), so there is no copy pair to write.

PLAN's event carries the plan the chip agent runs: the scheduler's BatchPlan in host gather, its
ChipBatchPlan in chip gather.
"""

from __future__ import annotations

from model.batch_compiler import BatchLayout
from model.batch_paged_programs import ChipBatchPlan, PagedBatchProgramCache
from model.paged_programs import pool_words
from model.serving import BatchPlan, Scheduler
from verif.chip_gather_pool import check_pools, zero_pools
from verif.ext_memory import ExtMemoryMirror
from verif.page_op_item import ServingEvent
from verif.serving_spec import ServingSpec


class ServingPool:
    """One scheduler and the chip memory its plans are written into."""

    def __init__(self, spec: ServingSpec, layout: BatchLayout, memory: ExtMemoryMirror,
                 scheduler: Scheduler):
        self.spec, self.layout, self.memory = spec, layout, memory
        self.scheduler = scheduler
        self.pending: BatchPlan | None = None  # the scheduler's plan, until it is committed
        self.chip: PagedBatchProgramCache | None = None  # chip gather's programs and pools
        if spec.gather == "chip":
            self.chip = PagedBatchProgramCache(scheduler.programs, spec.page_size, spec.n_pages)
            zero_pools(self.chip.pool.pool, memory)

    def plan(self) -> tuple[ServingEvent, int]:
        """Plan the next step (None once all finished); write what its chip run reads."""
        scheduler = self.scheduler
        if scheduler.done:
            return ServingEvent(None, free_pages=scheduler.table.free_count()), 0
        before = self._counts()
        plan = self.pending = scheduler.plan()
        written = 0
        if plan.requests:
            plan, writes = self._inputs(plan)
            for address, words in writes.items():
                written += self.memory.write(address, words)
        waiting = bool(scheduler.queued())
        refused = waiting and len(plan.requests) < scheduler.batch_size
        return self._event(plan, before, refused=refused), written

    def _inputs(self, plan: BatchPlan) -> tuple[BatchPlan, dict]:
        """The plan the chip runs and the words this agent writes for it (the chip driver
        writes the x rows): cached rows in host gather, block tables in chip gather."""
        if self.chip is None:
            writes = plan.program.input_words(*plan.inputs())
            return plan, {a: w for a, w in writes.items() if a != self.layout.x}
        # the chip's pools now: pool conservation held after the last step
        chip = ChipBatchPlan.of(plan, self.scheduler.table, self.chip,
                                pool_words(self.scheduler.table))
        return chip, chip.table_words()

    def commit(self, results: list) -> ServingEvent:
        """The chip's results of the pending step, written back; the pool checked."""
        before = self._counts()
        plan, self.pending = self.pending, None
        self.scheduler.commit(plan, results)
        self.scheduler.check_invariants()
        if self.chip is not None:
            check_pools(self.chip.pool.pool, self.memory, self.scheduler.table,
                        f"after serving step {plan.step + 1}")
        return self._event(plan, before)

    def _counts(self) -> tuple[int, int]:
        return self.scheduler.cache.stats.hits, self.scheduler.table.evictions

    def _event(self, plan: BatchPlan, before: tuple[int, int],
               refused: bool = False) -> ServingEvent:
        hits, evictions = (now - then for now, then in zip(self._counts(), before, strict=True))
        return ServingEvent(plan, len(plan.requests), len(plan.admitted), len(plan.preempted),
                            refused, hits, evictions, self.scheduler.table.free_count())
