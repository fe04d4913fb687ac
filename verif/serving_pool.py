"""The page-table agent's serving side: the model's scheduler owns the pool, the agent runs it.

In a serving run the pool, the admission, the preemptions and the prefix cache are
model.serving.Scheduler's (nothing here restates them). The agent's driver hands it the three
serving operations: SERVE makes the scheduler and submits the workload; PLAN plans a step and
writes each request's cached rows into its slot of the chip's batch inputs (the chip never
sees a page); COMMIT writes the chip's results back and checks the pool (free + evictable +
owned == total, refcounts equal owners, cached pages accounted for) after every step.
"""

from __future__ import annotations

from model.batch_compiler import BatchLayout
from model.serving import BatchPlan, Scheduler
from verif.ext_memory import ExtMemoryMirror
from verif.page_op_item import ServingEvent
from verif.serving_spec import ServingSpec


class ServingPool:
    """One scheduler and the chip memory its plans are written into."""

    def __init__(self, spec: ServingSpec, layout: BatchLayout, memory: ExtMemoryMirror,
                 scheduler: Scheduler):
        self.spec, self.layout, self.memory = spec, layout, memory
        self.scheduler = scheduler
        self.pending: BatchPlan | None = None

    def plan(self) -> tuple[ServingEvent, int]:
        """Plan the next step (None once all finished); write its requests' cached rows."""
        scheduler = self.scheduler
        if scheduler.done:
            return ServingEvent(None, free_pages=scheduler.table.free_count()), 0
        before = self._counts()
        plan = self.pending = scheduler.plan()
        written = 0
        if plan.requests:
            for address, words in plan.program.input_words(*plan.inputs()).items():
                if address != self.layout.x:  # the chip driver writes the x rows
                    written += self.memory.write(address, words)
        waiting = bool(scheduler.queued())
        refused = waiting and len(plan.requests) < scheduler.batch_size
        return self._event(plan, before, refused=refused), written

    def commit(self, results: list) -> ServingEvent:
        """The chip's results of the pending step, written back; the pool checked."""
        before = self._counts()
        plan, self.pending = self.pending, None
        self.scheduler.commit(plan, results)
        self.scheduler.check_invariants()
        return self._event(plan, before)

    def _counts(self) -> tuple[int, int]:
        return self.scheduler.cache.stats.hits, self.scheduler.table.evictions

    def _event(self, plan: BatchPlan, before: tuple[int, int],
               refused: bool = False) -> ServingEvent:
        hits, evictions = (now - then for now, then in zip(self._counts(), before, strict=True))
        return ServingEvent(plan, len(plan.requests), len(plan.admitted), len(plan.preempted),
                            refused, hits, evictions, self.scheduler.table.free_count())
