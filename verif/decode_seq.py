"""DecodeSeq: one request decoded on the chip, step by step, its KV cache paged.

Each step follows model.step_rule, as the reference host does; this sequence only turns the
rule's plan into agent operations:

    gather the plan's rows (page-table agent -> the chip's kc/vc memory)
    run the program for the plan's context on the chip (chip agent)
    append the chip's new (k, v) row; trim at the plan's keep_from
    the next input: model.step_rule.next_input

The sequence runs on no sequencer of its own: it sends page operations and chip steps to the
two agents' sequencers. `fork()` makes a second request that shares this one's pages.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import asdict

import numpy as np
from pyuvm import uvm_sequence, uvm_sequencer

from model.compiler import calibrate
from model.host import ProgramCache
from model.step_rule import StepPlan, next_input, plan_step
from model.tiny_lm import make_model
from verif.decode_spec import DecodeSpec
from verif.item_sequence import send
from verif.page_op_item import PageOp, PageOpItem, PageOpResult
from verif.run_record import DecodeResult
from verif.step_item import StepItem, StepResponse


class DecodeSeq(uvm_sequence):
    """Decode `spec.steps` tokens of one request on the chip agent and the page-table agent."""

    def __init__(self, spec: DecodeSpec, chip_sqr: uvm_sequencer, pt_sqr: uvm_sequencer,
                 programs: ProgramCache | None = None):
        super().__init__(f"decode_{spec.name}")
        self.spec = spec
        self.chip_sqr, self.pt_sqr = chip_sqr, pt_sqr
        self.rid: Hashable = spec.name
        self.programs = programs or self._compile(spec)
        self.tokens = [spec.start]  # the input of each step, then the last output
        self.pages_after: list[int | None] = []  # once each step has appended and trimmed
        self.responses: list[StepResponse] = []
        self.shares_pool = False  # forked: the pool's page count is not this request's alone

    @staticmethod
    def _compile(spec: DecodeSpec) -> ProgramCache:
        """Calibrate as model.host.decode does, so both hosts run identical programs."""
        model = make_model(spec.model, spec.model_seed)
        return ProgramCache(model, calibrate(model, spec.steps, spec.window, sinks=spec.sinks))

    @property
    def done_steps(self) -> int:
        return len(self.tokens) - 1

    @property
    def finished(self) -> bool:
        return self.done_steps >= self.spec.steps

    async def body(self) -> None:
        await self.open()
        while not self.finished:
            await self.step()
        await self.close()

    async def open(self) -> None:
        """A fresh pool with this request's page size, and the request in it."""
        spec = self.spec
        await self._page(PageOpItem(PageOp.CONFIGURE, page_size=spec.page_size,
                                    n_pages=spec.n_pages))
        await self._page(PageOpItem(PageOp.NEW, self.rid, sinks=spec.sinks))

    async def close(self) -> None:
        await self._page(PageOpItem(PageOp.RELEASE, self.rid))

    async def step(self) -> StepResponse:
        """One decode step: gather, run on the chip, append, trim, choose the next input."""
        plan = plan_step(self.done_steps + 1, self.spec.window, self.spec.sinks)
        gathered = await self._page(PageOpItem(PageOp.GATHER, self.rid, ranges=plan.ranges))
        response = await self._run_on_chip(plan, gathered)
        out = response.outputs
        last = await self._page(PageOpItem(PageOp.APPEND, self.rid, k=out.k_new, v=out.v_new))
        if plan.keep_from is not None:
            last = await self._page(PageOpItem(PageOp.TRIM, self.rid, keep_from=plan.keep_from))
        self.pages_after.append(last.pages_used)
        self.responses.append(response)
        self.tokens.append(next_input(plan.step, out.token, self.spec.force))
        return response

    async def _run_on_chip(self, plan: StepPlan, gathered: PageOpResult) -> StepResponse:
        token = self.tokens[-1]
        item = StepItem(f"step{plan.step}", self.spec.label(), plan, token,
                        self.programs.get(plan.context), self.programs.x_table[token],
                        gathered.keys, gathered.values, self.spec.window, self.spec.page_size)
        return await send(self.chip_sqr, item, want_response=True)

    async def _page(self, item: PageOpItem) -> PageOpResult:
        done = await send(self.pt_sqr, item)
        return done.result

    async def fork(self, spec: DecodeSpec) -> DecodeSeq:
        """A second request sharing every page of this one, continuing from the same state."""
        child = DecodeSeq(spec, self.chip_sqr, self.pt_sqr, self.programs)
        child.tokens = list(self.tokens)
        child.pages_after = list(self.pages_after)
        child.responses = list(self.responses)
        child.shares_pool = self.shares_pool = True
        await self._page(PageOpItem(PageOp.FORK, child.rid, src=self.rid))
        return child

    def result(self) -> DecodeResult:
        """What the run record keeps of this decode."""
        return DecodeResult(spec=asdict(self.spec), tokens=list(self.tokens),
                            pages_after=list(self.pages_after),
                            programs_compiled=len(self.programs))

    def cycles(self) -> np.ndarray:
        """The five cycle counters of every step, as the chip reported them."""
        return np.array([r.counters.cycles() for r in self.responses], dtype=np.int64)
