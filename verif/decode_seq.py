"""DecodeSeq: one request decoded on the chip, step by step, its KV cache paged.

Each step follows model.step_rule, as the reference host does; this sequence only turns the
rule's plan into agent operations:

    gather the plan's rows (page-table agent -> the chip's kc/vc memory)
    run the program for the plan's context on the chip (chip agent)
    append the chip's new (k, v) row; trim at the plan's keep_from
    the next input: model.step_rule.next_input

In chip gather (spec.gather == "chip") the first and third hops change: VIEW takes the new row's
slot and writes the step's block table (the page-table agent copies no row), the chip runs the
chip-gather program (model.paged_programs: PLOADs through the table, PSTOREs of the new row,
PCOPYs first on copy-on-write), and FILL records the row the chip wrote and checks the pools.

The sequence runs on no sequencer of its own: it sends page operations and chip steps to the
two agents' sequencers. `fork()` makes a second request that shares this one's pages.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import asdict

import numpy as np
from pyuvm import uvm_sequence, uvm_sequencer

from model.compiler import CompiledStep
from model.host import ChipProgramCache, ProgramCache
from model.isa import ChipConfig, ErrorCode, Op, disassemble, exec_cycles, overhead_cycles
from model.step_rule import StepPlan, next_input, plan_step
from model.tiny_lm import make_model
from verif.calibration_cache import cached_calibration
from verif.chip_step_item import ChipStepItem
from verif.decode_spec import DecodeSpec
from verif.item_sequence import send
from verif.page_op_item import PageOp, PageOpItem, PageOpResult
from verif.run_record import DecodeResult
from verif.step_item import StepItem, StepResponse


class DecodeSeq(uvm_sequence):
    """Decode `spec.steps` tokens of one request on the chip agent and the page-table agent."""

    def __init__(self, spec: DecodeSpec, chip_sqr: uvm_sequencer, pt_sqr: uvm_sequencer,
                 programs: ProgramCache | ChipProgramCache | None = None):
        super().__init__(f"decode_{spec.name}")
        self.spec = spec
        self.chip_sqr, self.pt_sqr = chip_sqr, pt_sqr
        self.rid: Hashable = spec.name
        self.programs = programs or self._compile(spec)
        self.tokens = [spec.start]  # the input of each step, then the last output
        self.pages_after: list[int | None] = []  # once each step has appended and trimmed
        self.responses: list[StepResponse] = []
        self.shares_pool = False  # forked: the pool's page count is not this request's alone
        self.host_words: list[int] = []  # words the page-table agent wrote for each step's rows
        self.copy_cycles: list[int] = []  # each step's copy-on-write prologue (chip gather)
        self.stopped = False  # the chip stopped a step with an error (a BAD_PAGE test)

    @staticmethod
    def _compile(spec: DecodeSpec) -> ProgramCache | ChipProgramCache:
        return compile_programs(spec)

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
        await self._page(PageOpItem(PageOp.NEW, self.rid, sinks=spec.sinks))

    async def close(self) -> None:
        await self._page(PageOpItem(PageOp.RELEASE, self.rid))

    async def step(self) -> StepResponse:
        """One decode step: gather, run on the chip, append, trim, choose the next input."""
        plan = plan_step(self.done_steps + 1, self.spec.window, self.spec.sinks)
        if self.spec.gather == "chip":
            return await self._chip_gather_step(plan)
        gathered = await self._page(PageOpItem(PageOp.GATHER, self.rid, ranges=plan.ranges))
        self.host_words.append(gathered.words_written)
        response = await self._run_on_chip(plan, gathered)
        out = response.outputs
        last = await self._page(PageOpItem(PageOp.APPEND, self.rid, k=out.k_new, v=out.v_new))
        return await self._finish(plan, response, last)

    async def _chip_gather_step(self, plan: StepPlan) -> StepResponse:
        """VIEW (block table, no row), run the chip-gather program, FILL; then as any step."""
        corrupt = plan.step == self.spec.bad_table_at
        view = await self._page(PageOpItem(PageOp.VIEW, self.rid, ranges=((plan.lo, plan.hi),),
                                           corrupt=corrupt))
        self.host_words.append(view.words_written)
        program = self.programs.get(plan.context, copy=view.pair is not None)
        before = self.responses[-1].observation.outputs if corrupt and self.responses else None
        token = self.tokens[-1]
        item = ChipStepItem(f"step{plan.step}", self.spec.label(), plan, token, program,
                            self.programs.x_table[token], view, self.programs.pool,
                            self.spec.window, self.spec.page_size, before)
        response = await send(self.chip_sqr, item, want_response=True)
        self.copy_cycles.append(prologue_cycles(program, self.programs.cfg))
        if response.error != ErrorCode.OK:  # the scoreboard predicted it: the decode ends here
            self.stopped = True
            self.responses.append(response)
            return response
        out = response.outputs
        last = await self._page(PageOpItem(PageOp.FILL, self.rid, k=out.k_new, v=out.v_new))
        return await self._finish(plan, response, last)

    async def _finish(self, plan: StepPlan, response: StepResponse,
                      last: PageOpResult) -> StepResponse:
        """Trim at the plan's keep_from, keep the step, choose the next input."""
        out = response.outputs
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
        child.host_words = list(self.host_words)
        child.copy_cycles = list(self.copy_cycles)
        child.shares_pool = self.shares_pool = True
        await self._page(PageOpItem(PageOp.FORK, child.rid, src=self.rid))
        return child

    def result(self) -> DecodeResult:
        """What the run record keeps of this decode."""
        return DecodeResult(spec=asdict(self.spec), tokens=list(self.tokens),
                            pages_after=list(self.pages_after),
                            programs_compiled=len(self.programs),
                            host_words=list(self.host_words))

    def cycles(self) -> np.ndarray:
        """The five cycle counters of every step, as the chip reported them."""
        return np.array([r.counters.cycles() for r in self.responses], dtype=np.int64)

    def program_cycles(self) -> list[int]:
        """Each step's total cycles less its copy-on-write prologue: the step program's own,
        which a window makes flat (a copy is the page table's work, not the step's)."""
        copies = self.copy_cycles or [0] * len(self.responses)
        return [int(total) - copy for total, copy in zip(self.cycles()[:, 0], copies,
                                                         strict=True)]


def compile_programs(spec: DecodeSpec) -> ProgramCache | ChipProgramCache:
    """The decode's program cache, calibrated as model.host.decode does (identical programs).

    Programs compile lazily, one per context size the decode meets (``len`` counts them);
    the calibration comes from `cached_calibration`.
    """
    model = make_model(spec.model, spec.model_seed)
    programs = ProgramCache(model, cached_calibration(model, spec.steps, spec.window,
                                                      spec.sinks))
    if spec.gather == "chip":
        return ChipProgramCache(programs, spec.page_size, spec.n_pages)
    return programs


def prologue_cycles(program: CompiledStep, cfg: ChipConfig) -> int:
    """The closed-form cycles (hw/ISA.md) of a program's copy-on-write PCOPYs."""
    return sum(overhead_cycles(cfg) + exec_cycles(instr, cfg)
               for instr in disassemble(program.words) if instr.op == Op.PCOPY)
