"""Serving in chip gather: a batched decode step that reads and writes the KV pool itself.

A host-gather batch (model.batch_compiler) has the host copy each request's window rows into its
kc/vc slot. In chip gather the pool lives in the chip's external memory (model.paged_programs)
and each request of the batch has a block table of its own; the batch program is the
host-gather batch program with, for each request i,

    LOAD kc_i, LOAD vc_i  ->  PLOAD of table i's rows 0 .. n_i-2 from the key pool, the value pool
    (after STORE v_new)   +   PSTORE of k_new[i] and v_new[i] into table i's row n_i-1

the swap of the solo chip-gather program (model.paged_programs.chip_program), made per request.
The new rows are written right after the STOREs of the new rows, not at the end as in the solo
program: request j's cached rows are loaded over the new rows of the requests before it
(model.batch_compiler's scratchpad), so by the end those rows are gone.

Each table is model.paged_programs.step_table's: table row 0 is the first row the request reads.
The scheduler (model.serving) plans a step before it appends, so a new row that opens a page
goes to the planned slot's page, the entry after the pages read. Serving never copies a page:
the prefix cache shares full pages only, so a new row never lands in a shared page.

External memory (``BatchPoolLayout``): model.batch_compiler.BatchLayout's regions unchanged
(the kc/vc slots unused), then one block table per request slot, then the pools: so a testbench
loads the weights once and either mode runs on the same build. ``ChipGather`` runs a
scheduler's steps this way on the reference machine, keeping the pools the chip leaves and
checking them against the page table's pool (``pool_differences``) before every step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np

from model import machine
from model.batch_compiler import (
    BATCH_PROGRAM_WORDS,
    BatchLayout,
    BatchProgram,
    BatchProgramCache,
    BatchResult,
)
from model.compiler import StepResult
from model.host import DevicePool
from model.isa import (
    PT_ENTRIES,
    WORDS_PER_INSTR,
    ChipConfig,
    Instr,
    Op,
    assemble,
    disassemble,
    paged_geometry,
    pload,
    pstore,
)
from model.machine import Counters
from model.paged import InvariantError, PageTable
from model.paged_programs import PoolLayout, pool_differences, step_table
from model.serving import BatchPlan, RequestStep, Scheduler

__all__ = [
    "BatchPoolLayout",
    "ChipBatchPlan",
    "ChipGather",
    "PagedBatchProgram",
    "PagedBatchProgramCache",
    "PoolMismatch",
    "chip_batch_program",
    "request_table",
]


class PoolMismatch(AssertionError):
    """The pools the chip left differ from the page table's pool."""


# ---- memory ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchPoolLayout:
    """Chip gather's regions after a batch layout: ``max_batch`` block tables, then the pools.

    ``pool`` is the solo chip gather's PoolLayout moved past the extra tables: its ``table`` is
    request 0's, request i's lies ``i`` tables further on.
    """

    pool: PoolLayout
    max_batch: int

    @classmethod
    def after(cls, layout: BatchLayout, page_size: int, n_pages: int) -> BatchPoolLayout:
        solo = PoolLayout.after(layout, page_size, n_pages)
        more = (layout.max_batch - 1) * solo.table_words  # the other requests' tables
        pool = replace(solo, pair=solo.pair + more, k_pool=solo.k_pool + more,
                       v_pool=solo.v_pool + more, end=solo.end + more)
        return cls(pool, layout.max_batch)

    def table(self, index: int) -> int:
        """Where request ``index``'s block table starts."""
        if not 0 <= index < self.max_batch:
            raise ValueError(f"request slot {index} is outside 0..{self.max_batch - 1}")
        return self.pool.table + index * self.pool.table_words

    @property
    def end(self) -> int:
        return self.pool.end


# ---- the program -------------------------------------------------------------------------------


@dataclass
class PagedBatchProgram:
    """The chip-gather program of a batch: the host-gather program's, rows moved by the chip."""

    host: BatchProgram  # the program it was made from: contexts, scales, outputs
    words: np.ndarray  # the chip-gather program, uint32, at external address 0
    pool: BatchPoolLayout

    @property
    def contexts(self) -> tuple[int, ...]:
        return self.host.contexts

    @property
    def layout(self) -> BatchLayout:
        return self.host.layout

    @property
    def weight_words(self) -> np.ndarray:
        return self.host.weight_words

    @property
    def cfg(self) -> ChipConfig:
        return self.host.cfg

    def x_words(self, xs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
        """The x rows' write: the host-gather program's (the same layout)."""
        return self.host.x_words(xs)

    def input_words(self, xs: Sequence[np.ndarray],
                    tables: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
        """The per-step writes to external memory: {address: words}, the x rows and each
        request's block table (the host copies no row)."""
        if not len(xs) == len(tables) == len(self.contexts):
            raise ValueError(f"a batch of {len(self.contexts)} requests takes as many x and "
                             f"tables, got {len(xs)} and {len(tables)}")
        writes = self.x_words(xs)
        for i, table in enumerate(tables):
            if not 1 <= len(table) <= self.pool.pool.table_words:
                raise ValueError(f"request {i}'s block table has {len(table)} words, its room "
                                 f"{self.pool.pool.table_words}")
            writes[self.pool.table(i)] = machine.words(np.asarray(table, dtype=np.int64))
        return writes

    def image(self, xs: Sequence[np.ndarray], tables: Sequence[np.ndarray],
              pool_words: np.ndarray) -> np.ndarray:
        """The whole external memory of one run: program, weights, x rows, tables, pools."""
        ext = np.zeros(self.pool.end, dtype=np.uint32)
        ext[: self.words.size] = self.words
        start = self.layout.weights
        ext[start : start + self.weight_words.size] = self.weight_words
        for address, values in self.input_words(xs, tables).items():
            ext[address : address + values.size] = values
        start, end = self.pool.pool.pools
        ext[start:end] = pool_words
        return ext

    def read_result(self, ext: np.ndarray, counters: Counters) -> BatchResult:
        """Every request's outputs: the output region is the host-gather program's."""
        return self.host.read_result(ext, counters)


def chip_batch_program(program: BatchProgram, pool: BatchPoolLayout) -> PagedBatchProgram:
    """The chip-gather program of a host-gather batch program (the module docstring's swap)."""
    layout, dim, geometry = program.layout, program.layout.dim, pool.pool
    if dim != geometry.dim:
        raise ValueError(f"the pool's rows have {geometry.dim} words, the program's {dim}")

    def paged(make, index: int, sram: int, base: int, length: int, row: int = 0) -> Instr:
        return make(pool.table(index), sram, base, dim, length, geometry.page_shift,
                    geometry.n_pages, row=row)

    cache_loads = {}
    for i in range(len(program.contexts)):
        cache_loads[layout.kc_slot(i)] = (i, geometry.k_pool)
        cache_loads[layout.vc_slot(i)] = (i, geometry.v_pool)
    pad = program.scratchpad
    new_rows = [paged(pstore, i, new + i * dim, base, 1, row=n - 1)
                for i, n in enumerate(program.contexts)
                for new, base in ((pad.k_new, geometry.k_pool), (pad.v_new, geometry.v_pool))]
    instrs = []
    for instr in disassemble(program.words)[:-1]:  # every instruction but the HALT
        if instr.op == Op.LOAD and instr.a in cache_loads:
            index, base = cache_loads[instr.a]
            instrs.append(paged(pload, index, instr.b, base, program.contexts[index] - 1))
        else:
            instrs.append(instr)
        if instr.op == Op.STORE and instr.a == layout.v_new:
            instrs += new_rows
    _check_program(instrs, pool, program.cfg)
    return PagedBatchProgram(program, np.asarray(assemble(instrs), dtype=np.uint32), pool)


def _check_program(instrs: list[Instr], pool: BatchPoolLayout, cfg: ChipConfig) -> None:
    pool.pool.check_fits(cfg)
    if (len(instrs) + 1) * WORDS_PER_INSTR > BATCH_PROGRAM_WORDS:
        raise ValueError(f"a chip-gather batch program of {len(instrs) + 1} instructions does "
                         f"not fit its {BATCH_PROGRAM_WORDS}-word room")
    for instr in instrs:
        if instr.op in (Op.PLOAD, Op.PSTORE) and paged_geometry(instr).entries > PT_ENTRIES:
            raise ValueError(f"{instr} reads more than {PT_ENTRIES} table entries: use larger "
                             "pages or a shorter window")


class PagedBatchProgramCache:
    """Chip-gather batch programs by their tuple of contexts, made from the host-gather ones."""

    def __init__(self, programs: BatchProgramCache, page_size: int, n_pages: int):
        self.host = programs
        model, cfg = programs.solo.model, programs.solo.cfg
        self.pool = BatchPoolLayout.after(BatchLayout.for_model(model, cfg), page_size, n_pages)
        self.pool.pool.check_fits(cfg)
        self.programs: dict[tuple[int, ...], PagedBatchProgram] = {}

    def get(self, contexts: Sequence[int]) -> PagedBatchProgram:
        key = tuple(contexts)
        if key not in self.programs:
            self.programs[key] = chip_batch_program(self.host.get(key), self.pool)
        return self.programs[key]


# ---- a scheduler step in chip gather -----------------------------------------------------------


def request_table(table: PageTable, step: RequestStep) -> np.ndarray:
    """The block table of one request's step, planned but not yet appended: step_table's rows
    lo .. L-2 (the rows read), then the planned slot's page if the new row opens one."""
    plan, (page, slot) = step.plan, step.slot
    words = step_table(table, step.rid, plan.lo, plan.step - 2)
    if slot == 0:
        words = np.append(words, page)
    new_row = int(words[0]) + plan.context - 1  # table row context - 1, as the PSTORE reads it
    size = table.page_size
    if (int(words[1 + new_row // size]), new_row % size) != (page, slot):
        raise InvariantError(f"request {step.rid!r}: its table puts row {plan.step - 1} "
                             f"elsewhere than the planned slot {step.slot}")
    return words


@dataclass(frozen=True)
class ChipBatchPlan(BatchPlan):
    """A scheduler step run in chip gather: the same requests, read by the chip through their
    block tables. ``image()`` is the chip's whole memory for the step."""

    chip_program: PagedBatchProgram
    tables: tuple[np.ndarray, ...]  # request i's block table, in the program's order
    pool_words: np.ndarray  # both pools as the chip holds them before the step

    @classmethod
    def of(cls, plan: BatchPlan, table: PageTable, programs: PagedBatchProgramCache,
           pool_words: np.ndarray) -> ChipBatchPlan:
        """The chip-gather form of a planned (not yet committed) step with requests."""
        if not plan.requests:
            raise ValueError(f"step {plan.step} is idle: there is no chip run")
        tables = tuple(request_table(table, step) for step in plan.requests)
        program = programs.get([step.plan.context for step in plan.requests])
        planned = {f.name: getattr(plan, f.name) for f in fields(BatchPlan)}
        return cls(**planned, chip_program=program, tables=tables, pool_words=pool_words)

    def table_words(self) -> dict[int, np.ndarray]:
        """The words the host writes for the cached rows: each request's block table."""
        return {address: words for address, words in self.input_words().items()
                if address != self.chip_program.layout.x}

    def input_words(self) -> dict[int, np.ndarray]:
        """Every per-step write: the x rows and the block tables."""
        return self.chip_program.input_words([r.x for r in self.requests], self.tables)

    def image(self) -> np.ndarray:
        return self.chip_program.image([r.x for r in self.requests], self.tables,
                                       self.pool_words)


class ChipGather:
    """A scheduler's steps run in chip gather on the reference machine.

    ``run`` is the ``run`` of Scheduler.run_on_reference: it checks that the pools the chip
    holds equal the page table's pool (the last step's rows and every page's history), runs the
    step's ChipBatchPlan and keeps the pools the chip left.
    """

    def __init__(self, scheduler: Scheduler):
        self.scheduler = scheduler
        table = scheduler.table
        self.programs = PagedBatchProgramCache(scheduler.programs, table.page_size,
                                               table.n_pages)
        self.device = DevicePool.zeroed(self.programs.pool.pool)

    def plan(self, plan: BatchPlan) -> ChipBatchPlan:
        return ChipBatchPlan.of(plan, self.scheduler.table, self.programs, self.device.words)

    def run(self, plan: BatchPlan) -> list[StepResult]:
        """One planned step on the reference machine; an error stop raises MachineError."""
        self.check_pool()
        chip = self.plan(plan)
        result = machine.run(chip.image(), chip.chip_program.cfg, raise_on_error=True)
        start, end = self.programs.pool.pool.pools
        self.device.words = result.ext[start:end].copy()
        return chip.chip_program.read_result(result.ext, result.counters).steps

    def check_pool(self) -> None:
        """The chip's pools against the page table's: call between steps."""
        problems = pool_differences(self.programs.pool.pool, self.device.words,
                                    self.scheduler.table)
        if problems:
            raise PoolMismatch(f"after step {self.scheduler.step - 1}: {problems[0]}")

