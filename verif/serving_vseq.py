"""ServingVseq: many requests served with continuous batching on one chip over one pool.

The page-table agent's scheduler (model.serving, in verif/serving_pool.py) decides everything a
server decides: arrivals, admission, preemption, prefix-cache hits, which requests run this
step. The virtual sequence only moves the step through the two agents:

    PLAN (page-table agent: the step planned; in host gather each request's cached rows, in
          chip gather each request's block table, written into the chip's memory)
    BatchStepItem (chip agent: one batched program for the step's requests; the scoreboard
                   compares the run with its one prediction); in chip gather a
                   ChipBatchStepItem, whose program reads and writes the pool itself
    COMMIT (page-table agent: the chip's results written back, the pool checked; in chip gather
            the pools in the chip's memory too)

until every request has finished. An idle step (nothing arrived yet) commits with no chip run.
The gather mode is the spec's (``ServingSpec.gather``); the page-table agent's plan says which
item the chip runs.
"""

from __future__ import annotations

from pyuvm import uvm_sequence, uvm_sequencer

from model.batch_paged_programs import ChipBatchPlan
from model.serving import BatchPlan
from verif.chip_step_item import ChipBatchStepItem
from verif.item_sequence import send
from verif.page_op_item import PageOp, PageOpItem, PageOpResult
from verif.serving_spec import ServingSpec
from verif.step_item import BatchStepItem, StepResponse


class ServingVseq(uvm_sequence):  # virtual sequences end in Vseq (OpenTitan: _vseq)
    """Serve the spec's workload to the end; `chip_runs` counts the batched runs."""

    def __init__(self, name: str = "serving_vseq", spec: ServingSpec | None = None,
                 chip_sqr: uvm_sequencer | None = None, pt_sqr: uvm_sequencer | None = None):
        super().__init__(name)
        self.spec = spec
        self.chip_sqr, self.pt_sqr = chip_sqr, pt_sqr
        self.responses: list[StepResponse] = []
        self.pages_used: list[int] = []  # pages in use after each committed step
        self.host_words: list[int] = []  # words the page-table agent wrote per PLAN

    async def body(self) -> None:
        await self._page(PageOpItem(PageOp.SERVE, spec=self.spec))
        while True:
            planned = await self._page(PageOpItem(PageOp.PLAN))
            plan = planned.serving.plan
            if plan is None:
                break
            self.host_words.append(planned.words_written)
            results = []
            if plan.requests:
                item = self._item(plan)
                response = await send(self.chip_sqr, item, want_response=True)
                self.responses.append(response)
                results = response.outputs.steps
            committed = await self._page(PageOpItem(PageOp.COMMIT, results=results))
            self.pages_used.append(committed.pages_used)

    def _item(self, plan: BatchPlan) -> BatchStepItem:
        """The chip agent's item for a planned step: its rows copied, or read by the chip."""
        name, label = f"serve{plan.step}", self.spec.label()
        if isinstance(plan, ChipBatchPlan):
            return ChipBatchStepItem(name, label, plan)
        return BatchStepItem(name, label, plan)

    async def _page(self, item: PageOpItem) -> PageOpResult:
        done = await send(self.pt_sqr, item)
        return done.result
