"""The paged host: decodes one request on the chip, its KV cache in a page table.

Each step follows the step rule (model.step_rule: context, rows read, trim point, next input).
The host

1. gathers the rows the step reads into the contiguous ``kc``/``vc`` inputs of the program
   compiled for the step's context (``prepare_step``);
2. runs the program (here on the reference machine; a testbench runs the RTL instead);
3. appends the new (k, v) row and releases the pages the next step no longer needs
   (``finish_step``).

The chip never sees a page. With a window only contexts 1..W occur, so only W programs are
compiled and every step after the window fills runs the same program.

Chip gather (``gather="chip"``, ``ChipGatherHost``) is the other mode: the pool lives in the
chip's external memory (model.paged_programs) and the chip reads the rows through the block
table itself. Per step the host takes the new row's slot first (``PagedCache.reserve``: a new
page, or a private copy of a shared one, which the chip then makes), writes the step's block
table, runs the chip-gather program for the context, and records the row the chip wrote
(``fill``). It copies no row. Both modes give the chip the same rows in the same order, so
identical integers, tokens and pages.

A plain-list cache (``ListCache``) stands in for the page table when comparing: both must give
the chip identical inputs, hence identical integers.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

import numpy as np

from model import machine
from model.compiler import (
    Calibration,
    CompiledStep,
    Layout,
    StepResult,
    calibrate,
    compile_step,
    int8_scale,
    quantize,
    run_step,
)
from model.isa import ChipConfig
from model.paged import PageTable
from model.paged_programs import PoolLayout, chip_program, step_table
from model.paged_programs import image as chip_gather_image
from model.step_rule import StepPlan, check_window, next_input, plan_step
from model.tiny_lm import TinyLM

KEY, VALUE = 0, 1  # a cache row is np.stack([k, v]): shape (2, dim)
GATHER_MODES = ("host", "chip")  # who copies a step's rows: the host, or the chip itself


# ---- where the cached rows live ----------------------------------------------------------------


class KVCache(Protocol):
    """The rows of one request, as the host needs them."""

    def gather(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Keys and values of logical rows lo <= i < hi, each (hi - lo, dim)."""
        ...

    def append(self, k: np.ndarray, v: np.ndarray) -> None: ...

    def trim(self, keep_from: int) -> None:
        """Give back what lies entirely before logical row keep_from (sinks excepted)."""
        ...

    def pages_in_use(self) -> int | None:
        """Pages held (None: the cache has no pages)."""
        ...


def gather_plan(cache: KVCache, plan: StepPlan) -> tuple[np.ndarray, np.ndarray]:
    """The keys and values a step reads, its ranges one after another (sinks first)."""
    parts = [cache.gather(lo, hi) for lo, hi in plan.ranges] or [cache.gather(0, 0)]
    return (np.concatenate([keys for keys, _ in parts]),
            np.concatenate([values for _, values in parts]))


class PagedCache:
    """One request in a PageTable whose rows have shape (2, dim): key and value.

    With ``sinks`` the first rows live in pages of their own (a second entry of the table,
    ``(rid, "sinks")``, so they fill whole pages apart from the rest): trims never reach them,
    and the recent rows (``(rid, "recent")``, logical row S + r is its row r) are trimmed as a
    sink-less request would be. Production paged caches keep sinks apart the same way.
    """

    def __init__(self, table: PageTable, rid: Hashable = 0, sinks: int = 0):
        if table.row_shape[:1] != (2,):
            raise ValueError(f"rows must have shape (2, dim), the table has {table.row_shape}")
        if sinks < 0:
            raise ValueError(f"the number of sink rows cannot be negative, got {sinks}")
        self.table = table
        self.rid = rid
        self.sinks = sinks
        self.parts = [(rid, "sinks"), (rid, "recent")] if sinks else [rid]
        for part in self.parts:
            table.new(part)

    def locate(self, row: int) -> tuple[Hashable, int]:
        """The table entry that holds logical row ``row``, and the row's index there."""
        if not self.sinks:
            return self.rid, row
        return ((self.rid, "sinks"), row) if row < self.sinks else (
            (self.rid, "recent"), row - self.sinks)

    def length(self) -> int:
        return sum(self.table.length(part) for part in self.parts)

    def gather(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        cuts = sorted({lo, hi, *([min(max(self.sinks, lo), hi)] if self.sinks else [])})
        pieces = []
        for a, b in pairwise(cuts):
            part, first = self.locate(a)
            pieces.append(self.table.rows(part, first, first + b - a))
        rows = (np.concatenate(pieces) if pieces
                else np.zeros((0, *self.table.row_shape), self.table.pool.dtype))
        return rows[:, KEY], rows[:, VALUE]

    def append(self, k: np.ndarray, v: np.ndarray) -> None:
        part, _ = self.locate(self.length())
        self.table.append(part, np.stack([k, v]))

    def trim(self, keep_from: int) -> None:
        part, row = self.locate(max(keep_from, self.sinks))
        self.table.trim(part, row)

    def fork(self, rid: Hashable) -> PagedCache:
        """A second request sharing every page of this one (copy-on-write from then on)."""
        child = object.__new__(PagedCache)
        child.table, child.rid, child.sinks = self.table, rid, self.sinks
        child.parts = [(rid, "sinks"), (rid, "recent")] if self.sinks else [rid]
        for src, dst in zip(self.parts, child.parts, strict=True):
            self.table.fork(src, dst)
        return child

    def release(self) -> None:
        for part in self.parts:
            self.table.release(part)

    def reserve(self) -> tuple[int, int] | None:
        """Chip gather: take the next row's slot before the chip writes the row there.

        Appends a placeholder (zero) row as ``append`` would place the real one: into a new page,
        or into a private copy of a shared last page. Returns that copy's (source, destination)
        pages, which the chip must copy, or None.
        """
        part, _ = self.locate(self.length())
        before = self.table.block_table(part)
        copies = self.table.cow_copies
        self.table.append(part, np.zeros(self.table.row_shape, self.table.dtype))
        if self.table.cow_copies == copies:
            return None
        return before[-1], self.table.block_table(part)[-1]

    def fill(self, k: np.ndarray, v: np.ndarray) -> None:
        """Chip gather: record the row the chip wrote into the slot ``reserve`` took."""
        part, index = self.locate(self.length() - 1)
        self.table.write(part, index, np.stack([k, v]))

    def pages_in_use(self) -> int:
        """Pages in use in the whole pool (the chapter's count: one request per pool)."""
        return self.table.used()


class ListCache:
    """The reference host's cache: two plain lists, nothing ever released."""

    def __init__(self, dim: int):
        self.dim = dim
        self.keys: list[np.ndarray] = []
        self.values: list[np.ndarray] = []

    def gather(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        shape = (-1, self.dim)
        return (np.array(self.keys[lo:hi], dtype=np.int64).reshape(shape),
                np.array(self.values[lo:hi], dtype=np.int64).reshape(shape))

    def append(self, k: np.ndarray, v: np.ndarray) -> None:
        self.keys.append(np.asarray(k, dtype=np.int64))
        self.values.append(np.asarray(v, dtype=np.int64))

    def trim(self, keep_from: int) -> None:
        """A plain list keeps every row: only the gather bounds apply the window."""

    def pages_in_use(self) -> None:
        return None


def paged_cache(dim: int, page_size: int, n_pages: int, sinks: int = 0) -> PagedCache:
    """A fresh pool of int8 (key, value) rows holding one request."""
    return PagedCache(PageTable(n_pages, page_size, row_shape=(2, dim), dtype=np.int8),
                      sinks=sinks)


# ---- compiled programs -------------------------------------------------------------------------


class ProgramCache:
    """One program per context size, compiled the first time a step needs it."""

    def __init__(self, model: TinyLM, calibration: Calibration, cfg: ChipConfig | None = None):
        self.model = model
        self.calibration = calibration
        self.cfg = cfg or ChipConfig()
        self.programs: dict[int, CompiledStep] = {}
        self.x_table = quantize(model.embed, int8_scale(calibration.shared["x"]))

    def get(self, context: int) -> CompiledStep:
        if context not in self.programs:
            self.programs[context] = compile_step(self.model, context, self.calibration, self.cfg)
        return self.programs[context]

    def __len__(self) -> int:
        """Distinct programs compiled so far."""
        return len(self.programs)


class ChipProgramCache:
    """Chip gather's programs: each context's host-gather program with the paged loads and
    stores (model.paged_programs), and its copy-on-write variant; compiled once per context."""

    def __init__(self, programs: ProgramCache, page_size: int, n_pages: int):
        model = programs.model
        self.programs = programs
        self.pool = PoolLayout.after(Layout.for_model(model.dim, model.vocab, programs.cfg.k_max),
                                     page_size, n_pages)
        self.pool.check_fits(programs.cfg)
        self.variants: dict[tuple[int, bool], CompiledStep] = {}

    @property
    def x_table(self) -> np.ndarray:
        return self.programs.x_table

    @property
    def cfg(self) -> ChipConfig:
        return self.programs.cfg

    def get(self, context: int, copy: bool = False) -> CompiledStep:
        """The program for ``context`` tokens; with ``copy`` behind the copy-on-write prologue."""
        if (context, copy) not in self.variants:
            self.variants[context, copy] = chip_program(self.programs.get(context), self.pool,
                                                        copy)
        return self.variants[context, copy]

    def __len__(self) -> int:
        """Contexts compiled so far: a copy prologue is not a compilation."""
        return len(self.programs)


# ---- the decode loop ---------------------------------------------------------------------------


@dataclass
class StepInputs:
    """Everything one step hands the chip; ``image()`` is the whole external memory."""

    plan: StepPlan  # the step rule's plan: step, context, rows read, trim point
    token: int  # the input token
    pages: int | None  # pages in use at the start of the step
    program: CompiledStep
    x: np.ndarray  # (dim,) int8 embedding of the input token
    kc: np.ndarray  # (context - 1, dim) int8 keys of rows lo .. L-2
    vc: np.ndarray  # (context - 1, dim) int8 values

    @property
    def step(self) -> int:
        return self.plan.step

    @property
    def context(self) -> int:
        return self.plan.context

    def image(self) -> np.ndarray:
        return self.program.image(self.x, self.kc, self.vc)

    @property
    def host_words(self) -> int:
        """Words the host writes for the step's cached rows: every row read, copied."""
        return self.kc.size + self.vc.size


@dataclass
class ChipStepInputs:
    """One chip-gather step: the block table and copy pair the host writes, the pools as the
    chip holds them; ``image()`` is the whole external memory."""

    plan: StepPlan
    token: int
    pages: int | None
    program: CompiledStep  # the chip-gather program (with its copy prologue if ``pair``)
    x: np.ndarray
    table: np.ndarray  # the step's block table: header, then the pages
    pair: tuple[int, int] | None  # the copy-on-write copy the chip makes first, if any
    pool: PoolLayout
    pool_words: np.ndarray  # both pools, as the chip's memory holds them before the step

    @property
    def step(self) -> int:
        return self.plan.step

    @property
    def context(self) -> int:
        return self.plan.context

    @property
    def host_words(self) -> int:
        """Words the host writes for the step's cached rows: the block table (and the pair)."""
        return self.table.size + (2 if self.pair else 0)

    def image(self) -> np.ndarray:
        return chip_gather_image(self.program, self.pool, self.x, self.table, self.pair,
                                 self.pool_words)


@dataclass
class StepRecord:
    """One finished step: what went in and what came out."""

    inputs: StepInputs | ChipStepInputs
    result: StepResult

    @property
    def step(self) -> int:
        return self.inputs.step

    @property
    def context(self) -> int:
        return self.inputs.context

    @property
    def pages(self) -> int | None:
        return self.inputs.pages

    @property
    def logits_int(self) -> np.ndarray:
        return self.result.logits_int

    @property
    def logits(self) -> np.ndarray:
        return self.result.logits

    @property
    def token(self) -> int:
        return self.result.token

    @property
    def cycles(self) -> tuple[int, int, int, int, int]:
        return self.result.cycles


class PagedHost:
    """The decode state of one request: its cache, the next step and the next input token.

    ``step()`` runs a whole step on the reference machine. A testbench calls ``prepare_step()``,
    runs the inputs on the RTL, then ``finish_step()`` with what the RTL returned.
    """

    def __init__(self, programs: ProgramCache, cache: KVCache, start: int,
                 window: int | None = None, sinks: int = 0):
        check_window(window, sinks)
        self.programs = programs
        self.cache = cache
        self.window = window
        self.sinks = sinks
        self.token = start  # the next step's input
        self.done_steps = 0  # rows cached so far
        self.peak_pages = cache.pages_in_use()

    def prepare_step(self) -> StepInputs:
        """Gather the window's rows and pick the program for the next step."""
        plan = plan_step(self.done_steps + 1, self.window, self.sinks)
        kc, vc = gather_plan(self.cache, plan)
        program = self.programs.get(plan.context)
        x = self.programs.x_table[self.token]
        pages = self.cache.pages_in_use()
        return StepInputs(plan, self.token, pages, program, x, kc, vc)

    def finish_step(self, plan: StepPlan, k_new: np.ndarray, v_new: np.ndarray,
                    next_token: int) -> None:
        """Cache the new row, release what the next step will not read, move to the next token."""
        if plan.step != self.done_steps + 1:
            raise ValueError(f"finish_step({plan.step}) but step {self.done_steps + 1} is in "
                             "progress")
        self.keep_row(k_new, v_new)
        if plan.keep_from is not None:
            self.cache.trim(plan.keep_from)
        self.done_steps = plan.step
        self.token = next_token
        self._track_peak()

    def keep_row(self, k_new: np.ndarray, v_new: np.ndarray) -> None:
        """Cache the step's new row."""
        self.cache.append(k_new, v_new)

    def _track_peak(self) -> None:
        pages = self.cache.pages_in_use()
        if pages is not None:
            self.peak_pages = pages if self.peak_pages is None else max(self.peak_pages, pages)

    def step(self, force: Sequence[int] | None = None) -> StepRecord:
        """One step on the reference machine; the next input follows the step rule."""
        inputs = self.prepare_step()
        result = run_step(inputs.program, inputs.x, inputs.kc, inputs.vc)
        next_token = next_input(inputs.step, result.token, force)
        self.finish_step(inputs.plan, result.k_new, result.v_new, next_token)
        return StepRecord(inputs, result)


@dataclass
class DevicePool:
    """Chip gather: both pools' words as the chip's external memory holds them between steps.
    Requests forked from one another share it, as they share the page table."""

    layout: PoolLayout
    words: np.ndarray

    @classmethod
    def zeroed(cls, layout: PoolLayout) -> DevicePool:
        """A fresh pool: zero, as a fresh PageTable's pool is."""
        start, end = layout.pools
        return cls(layout, np.zeros(end - start, dtype=np.uint32))


class ChipGatherHost(PagedHost):
    """A PagedHost whose chip reads and writes the cached rows itself, through the block table.

    ``prepare_step`` takes the new row's slot and writes no row: only the block table (and the
    copy pair, on copy-on-write). ``step()`` runs the step on the reference machine with the
    pools as the chip holds them, keeps the pools the chip left, and records the new row.
    """

    def __init__(self, programs: ChipProgramCache, cache: PagedCache, start: int,
                 window: int | None = None, device: DevicePool | None = None):
        if cache.sinks:
            raise ValueError("chip gather keeps no sink rows apart: use host gather for sinks")
        super().__init__(programs.programs, cache, start, window)
        self.chip_programs = programs
        self.device = device or DevicePool.zeroed(programs.pool)

    def prepare_step(self) -> ChipStepInputs:
        """Take the new row's slot, then the block table of rows lo .. L-1 and the program."""
        plan = plan_step(self.done_steps + 1, self.window)
        pages = self.cache.pages_in_use()
        pair = self.cache.reserve()
        table = step_table(self.cache.table, self.cache.rid, plan.lo, plan.step - 1)
        program = self.chip_programs.get(plan.context, copy=pair is not None)
        x = self.programs.x_table[self.token]
        return ChipStepInputs(plan, self.token, pages, program, x, table, pair,
                              self.chip_programs.pool, self.device.words)

    def keep_row(self, k_new: np.ndarray, v_new: np.ndarray) -> None:
        self.cache.fill(k_new, v_new)

    def step(self, force: Sequence[int] | None = None) -> StepRecord:
        """One step on the reference machine; the pools it leaves are the chip's from now on."""
        inputs = self.prepare_step()
        run = machine.run(inputs.image(), self.programs.cfg, raise_on_error=True)
        start, end = inputs.pool.pools
        self.device.words = run.ext[start:end].copy()
        result = inputs.program.read_result(run.ext, run.counters)
        self.finish_step(inputs.plan, result.k_new, result.v_new,
                         next_input(inputs.step, result.token, force))
        return StepRecord(inputs, result)

    def fork(self, rid: Hashable) -> ChipGatherHost:
        """A second request sharing every page of this one, and the chip's pools."""
        child = ChipGatherHost(self.chip_programs, self.cache.fork(rid), self.token,
                               self.window, self.device)
        child.done_steps = self.done_steps
        return child


@dataclass
class Decode:
    """A whole decode: tokens [start, t1, ..., tn] (the inputs), one record per step."""

    tokens: list[int]
    records: list[StepRecord]
    programs_compiled: int
    peak_pages: int | None  # the most pages in use after any step (after its trim)
    final_pages: int | None  # pages in use after the last step

    def pages_after(self, step: int) -> int | None:
        """Pages in use once step ``step`` (1-based) has appended and trimmed."""
        return self.records[step].pages if step < len(self.records) else self.final_pages


def decode(model: TinyLM, n: int, start: int = 0, window: int | None = None, *,
           page_size: int = 4, n_pages: int = 64, paged: bool = True,
           force: Sequence[int] | None = None, calib_steps: int | None = None,
           cfg: ChipConfig | None = None, sinks: int = 0, gather: str = "host") -> Decode:
    """Decode n tokens of one request on the reference machine (the chapter's generate).

    ``force`` teacher-forces: after step L the next input is force[L], not the chip's token.
    Calibration covers ``calib_steps`` steps (default n) from every start token. ``sinks``
    keeps the first rows in every window (model.step_rule). ``gather`` is "host" (the host
    copies the rows a step reads) or "chip" (the chip reads them through the block table).
    """
    check_window(window, sinks)
    if gather not in GATHER_MODES:
        raise ValueError(f"gather must be one of {GATHER_MODES}, got {gather!r}")
    calibration = calibrate(model, calib_steps or n, window, sinks=sinks)
    programs = ProgramCache(model, calibration, cfg)
    cache = (paged_cache(model.dim, page_size, n_pages, sinks) if paged
             else ListCache(model.dim))
    if gather == "chip":
        host: PagedHost = ChipGatherHost(ChipProgramCache(programs, page_size, n_pages), cache,
                                         start, window)
    else:
        host = PagedHost(programs, cache, start, window, sinks)
    tokens, records = [start], []
    for _ in range(n):
        records.append(host.step(force))
        tokens.append(host.token)
    return Decode(tokens, records, len(programs), host.peak_pages, cache.pages_in_use())
