"""DecodeSeq: one request decoded on the chip, step by step, its KV cache paged.

The page-table agent's host plans and finishes each step; the sequence only moves the step
between the two agents, so it runs on no sequencer of its own.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
from pyuvm import uvm_sequence, uvm_sequencer

from model.chip.isa import ErrorCode, Op, program_cycles
from verif.agents.chip.items import ChipResponse, StepItem
from verif.agents.page_table.items import PageOp, PageOpItem, PageOpResult
from verif.runs.record import DecodeResult
from verif.runs.spec import DecodeSpec
from verif.sequences.send import send


class DecodeSeq(uvm_sequence):
    """Decode `spec.steps` tokens of one request: per step PREPARE (page-table agent), a
    StepItem (chip agent, compared by the scoreboard), FINISH (page-table agent)."""

    def __init__(self, spec: DecodeSpec, chip_sqr: uvm_sequencer, pt_sqr: uvm_sequencer):
        super().__init__(f"decode_{spec.name}")
        self.spec = spec
        self.chip_sqr, self.pt_sqr = chip_sqr, pt_sqr
        self.rid = spec.name
        self.tokens = [spec.start]  # the input of each step, then the last output
        self.pages_after: list[int | None] = []  # once each step has appended and trimmed
        self.responses: list[ChipResponse] = []
        self.shares_pool = False  # forked: the pool's page count is not this request's alone
        self.host_words: list[int] = []  # words the page-table agent wrote for each step's rows
        self.copy_cycles: list[int] = []  # each step's copy-on-write prologue (chip gather)
        self.programs_compiled = 0
        self.verdicts: dict[str, list[str]] = {}  # the decode checks', set in check_phase
        self.stopped = False  # the chip stopped a step with an error (a BAD_PAGE test)

    @property
    def done_steps(self) -> int:
        return len(self.tokens) - 1

    @property
    def finished(self) -> bool:
        return self.stopped or self.done_steps >= self.spec.steps

    async def body(self) -> None:
        await self.open()
        while not self.finished:
            await self.step()
        await self.close()

    async def open(self) -> None:
        """A fresh pool with this request's page size, and the request in it."""
        spec = self.spec
        await self._page(PageOpItem(PageOp.CONFIGURE, page_size=spec.page_size,
                                    n_pages=spec.n_pages, gather=spec.gather))
        await self._page(PageOpItem(PageOp.NEW, self.rid, spec=spec))

    async def close(self) -> None:
        await self._page(PageOpItem(PageOp.RELEASE, self.rid))

    async def step(self) -> ChipResponse:
        """One decode step: prepare, run on the chip, finish."""
        step = self.done_steps + 1
        prepared = await self._page(PageOpItem(PageOp.PREPARE, self.rid,
                                               corrupt=step == self.spec.bad_table_at))
        self.host_words.append(prepared.words_written)
        self.programs_compiled = prepared.programs_compiled
        inputs = prepared.inputs
        item = StepItem(f"step{step}", self.spec.label(), step, inputs)
        response = await send(self.chip_sqr, item, want_response=True)
        self.responses.append(response)
        prologue = [i for i in inputs.program.instructions() if i.op == Op.PCOPY]
        self.copy_cycles.append(program_cycles(prologue, inputs.program.cfg) if prologue else 0)
        if response.error != ErrorCode.OK:  # the scoreboard predicted it: the decode ends here
            self.stopped = True
            return response
        finished = await self._page(PageOpItem(PageOp.FINISH, self.rid,
                                               results=response.results))
        self.pages_after.append(finished.pages_used)
        self.tokens.append(finished.token)
        return response

    async def _page(self, item: PageOpItem) -> PageOpResult:
        done = await send(self.pt_sqr, item)
        return done.result

    async def fork(self, spec: DecodeSpec) -> DecodeSeq:
        """A second request sharing every page of this one, continuing from the same state."""
        child = DecodeSeq(spec, self.chip_sqr, self.pt_sqr)
        for name in ("tokens", "pages_after", "responses", "host_words", "copy_cycles"):
            setattr(child, name, list(getattr(self, name)))
        child.programs_compiled = self.programs_compiled
        child.shares_pool = self.shares_pool = True
        await self._page(PageOpItem(PageOp.FORK, child.rid, src=self.rid, spec=spec))
        return child

    def result(self) -> DecodeResult:
        """What the run record keeps of this decode."""
        return DecodeResult(spec=asdict(self.spec), tokens=list(self.tokens),
                            pages_after=list(self.pages_after),
                            programs_compiled=self.programs_compiled,
                            host_words=list(self.host_words), verdicts=dict(self.verdicts))

    def cycles(self) -> np.ndarray:
        """The cycle counters of every step, as the chip reported them."""
        return np.array([r.counters.cycles() for r in self.responses], dtype=np.int64)

    def program_cycles(self) -> list[int]:
        """Each step's total cycles less its copy-on-write prologue (the page table's work)."""
        return [int(total) - copy for total, copy in zip(self.cycles()[:, 0], self.copy_cycles,
                                                         strict=True)]
