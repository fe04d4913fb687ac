"""ServingVseq: many requests served with continuous batching on one chip over one pool.

The page-table agent's scheduler decides everything a server decides; the virtual sequence only
moves each step through the two agents.
"""

from __future__ import annotations

from pyuvm import uvm_sequence, uvm_sequencer

from model.host.throughput import attention_cycles
from verif.agents.chip.items import ChipResponse, StepItem
from verif.agents.page_table.items import SERVING, PageOp, PageOpItem, PageOpResult
from verif.runs.spec import ServingSpec
from verif.sequences.send import send


class ServingVseq(uvm_sequence):  # virtual sequences end in Vseq (OpenTitan: _vseq)
    """Serve the spec's workload to the end, a step at a time (PREPARE, a chip run unless the
    step is idle, FINISH); `responses` holds every batched run."""

    def __init__(self, name: str = "serving_vseq", spec: ServingSpec | None = None,
                 chip_sqr: uvm_sequencer | None = None, pt_sqr: uvm_sequencer | None = None):
        super().__init__(name)
        self.spec = spec
        self.chip_sqr, self.pt_sqr = chip_sqr, pt_sqr
        self.responses: list[ChipResponse] = []
        self.pages_used: list[int] = []  # pages in use after each finished step
        self.host_words: list[int] = []  # words the page-table agent wrote per PREPARE
        self.attention_cycles: list[int] = []  # per run: its requests' attention, closed form

    async def body(self) -> None:
        await self._page(PageOpItem(PageOp.SERVE, spec=self.spec))
        while True:
            prepared = await self._page(PageOpItem(PageOp.PREPARE, SERVING))
            plan = prepared.inputs
            if plan is None:
                break
            self.host_words.append(prepared.words_written)
            results = []
            if plan.requests:
                item = StepItem(f"serve{plan.step}", self.spec.label(), plan.step + 1, plan,
                                serving=True)
                response = await send(self.chip_sqr, item, want_response=True)
                self.responses.append(response)
                self.attention_cycles.append(attention_cycles(plan.program))
                results = response.results
            finished = await self._page(PageOpItem(PageOp.FINISH, SERVING, results=results))
            self.pages_used.append(finished.pages_used)

    async def _page(self, item: PageOpItem) -> PageOpResult:
        done = await send(self.pt_sqr, item)
        return done.result
