"""DecodeSequence: one request decoded on the chip, step by step, its KV cache paged.

Per step L (the chapter's host loop, the same rule as model.host.PagedHost):

    context = min(L, W); gather rows L-context .. L-2 (page-table agent -> chip's kc/vc)
    run the program for `context` on the chip (chip agent)
    append the chip's new (k, v) row; trim(keep_from = L + 1 - W)
    next input = the forced token, or the chip's ARGMAX

The sequence runs on no sequencer of its own: it sends page operations and chip steps to the
two agents' sequencers. `fork()` makes a second request that shares this one's pages.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import asdict

import numpy as np
from pyuvm import uvm_sequence, uvm_sequencer

from model.compiler import calibrate
from model.host import ProgramCache, trim_point
from model.tiny_lm import context_size, make_model
from verif.decode_spec import DecodeSpec
from verif.item_sequence import send
from verif.page_op_item import PageOp, PageOpItem, PageOpResult
from verif.run_record import DecodeResult
from verif.step_item import StepItem, StepResponse


class DecodeSequence(uvm_sequence):
    """Decode `spec.steps` tokens of one request on the chip agent and the page-table agent."""

    def __init__(self, spec: DecodeSpec, chip_sqr: uvm_sequencer, pt_sqr: uvm_sequencer,
                 programs: ProgramCache | None = None):
        super().__init__(f"decode_{spec.name}")
        self.spec = spec
        self.chip_sqr, self.pt_sqr = chip_sqr, pt_sqr
        self.rid: Hashable = spec.name
        self.programs = programs or self._compile(spec)
        self.tokens = [spec.start]  # the input of each step, then the last output
        self.pages: list[int | None] = []  # at the start of each step
        self.pages_after: list[int | None] = []  # once each step has appended and trimmed
        self.responses: list[StepResponse] = []
        self.shares_pool = False  # forked: the pool's page count is not this request's alone

    @staticmethod
    def _compile(spec: DecodeSpec) -> ProgramCache:
        """Calibrate as model.host.decode does, so both hosts run identical programs."""
        model = make_model(spec.model, spec.model_seed)
        return ProgramCache(model, calibrate(model, spec.steps, spec.window))

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
        await self._page(PageOpItem(PageOp.NEW, self.rid))

    async def close(self) -> None:
        await self._page(PageOpItem(PageOp.RELEASE, self.rid))

    async def step(self) -> StepResponse:
        """One decode step: gather, run on the chip, append, trim, choose the next token."""
        step = self.done_steps + 1
        context = context_size(step, self.spec.window)
        gathered = await self._page(PageOpItem(PageOp.GATHER, self.rid, lo=step - context,
                                               hi=step - 1))
        response = await self._run_on_chip(step, context, gathered)
        out = response.outputs
        last = await self._page(PageOpItem(PageOp.APPEND, self.rid, k=out.k_new, v=out.v_new))
        if self.spec.window is not None:
            last = await self._page(PageOpItem(PageOp.TRIM, self.rid,
                                               keep_from=trim_point(step, self.spec.window)))
        self.pages.append(gathered.pages_used)
        self.pages_after.append(last.pages_used)
        self.responses.append(response)
        self.tokens.append(self._next_token(step, out.token))
        return response

    async def _run_on_chip(self, step: int, context: int,
                           gathered: PageOpResult) -> StepResponse:
        token = self.tokens[-1]
        item = StepItem(f"step{step}", self.spec.label(), step, token,
                        self.programs.get(context), self.programs.x_table[token],
                        gathered.keys, gathered.values, self.spec.window, self.spec.page_size)
        return await send(self.chip_sqr, item, want_response=True)

    def _next_token(self, step: int, chip_token: int) -> int:
        return chip_token if self.spec.force is None else int(self.spec.force[step])

    async def _page(self, item: PageOpItem) -> PageOpResult:
        done = await send(self.pt_sqr, item)
        return done.result

    async def fork(self, spec: DecodeSpec) -> DecodeSequence:
        """A second request sharing every page of this one, continuing from the same state."""
        child = DecodeSequence(spec, self.chip_sqr, self.pt_sqr, self.programs)
        child.tokens = list(self.tokens)
        child.pages = list(self.pages)
        child.pages_after = list(self.pages_after)
        child.responses = list(self.responses)
        child.shares_pool = self.shares_pool = True
        await self._page(PageOpItem(PageOp.FORK, child.rid, src=self.rid))
        return child

    def result(self) -> DecodeResult:
        """What the run record keeps of this decode."""
        return DecodeResult(spec=asdict(self.spec), tokens=list(self.tokens),
                            pages=list(self.pages), pages_after=list(self.pages_after),
                            programs_compiled=len(self.programs))

    def cycles(self) -> np.ndarray:
        """The five cycle counters of every step, as the chip reported them."""
        return np.array([r.counters.cycles() for r in self.responses], dtype=np.int64)
