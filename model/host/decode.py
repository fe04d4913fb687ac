"""The paged host: decodes one request on the chip, its KV cache in a page table.

``PagedHost`` runs the step rule's plans through the step interface every host shares
(``prepare_step``, the chip, ``finish_step``), so the reference machine and the RTL run the very
same steps. ``decode`` is the chapter's decode; ``ListCache`` is the plain cache to compare with.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

import numpy as np

from model.chip.isa import ChipConfig
from model.compiler.cache import ProgramCache
from model.compiler.gather import KEY, VALUE, gather_for, pool_differences, pool_words, step_table
from model.compiler.inputs import RequestInputs, StepInputs, run_reference
from model.compiler.layout import Pool
from model.compiler.program import StepResult
from model.compiler.quantize import calibrate
from model.kv.paged import PageTable
from model.kv.step_rule import StepPlan, next_input, plan_step
from model.lm.lm_grad import log_softmax
from model.lm.tiny_lm import TinyLM
from model.lm.window_quality import Reading, Setting


class PoolMismatch(AssertionError):
    """The pools the chip left differ from the page table's pool."""


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
    """One request in a PageTable of (key, value) rows; with ``sinks`` the first rows live in a
    table entry of their own, ``(rid, "sinks")``, that trims never reach."""

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
        """Chip gather: append a zero row to take the next row's slot before the chip writes it;
        returns the (source, destination) pages of a copy the chip must make, or None."""
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


# ---- the decode loop ---------------------------------------------------------------------------


@dataclass
class StepRecord:
    """One finished step: what went in, what came out, the pages in use when it started."""

    inputs: StepInputs
    result: StepResult
    pages: int | None

    @property
    def request(self) -> RequestInputs:
        return self.inputs.requests[0]

    @property
    def step(self) -> int:
        return self.request.plan.step

    @property
    def context(self) -> int:
        return self.request.plan.context

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
    """The decode state of one request: its cache, the next step's plan and input token
    (``force[L]`` after step L when teacher-forced)."""

    def __init__(self, programs: ProgramCache, cache: KVCache, start: int,
                 window: int | None = None, sinks: int = 0,
                 force: Sequence[int] | None = None):
        self.plan = plan_step(1, window, sinks)  # the next step's plan (it checks the window)
        self.chip_gather = programs.gather.mode == "chip"
        if self.chip_gather and (sinks or not isinstance(cache, PagedCache)):
            raise ValueError("chip gather reads a page table's pools and keeps no sink rows "
                             "apart: use host gather for sinks or a plain-list cache")
        self.programs = programs
        self.cache = cache
        self.sinks = sinks
        self.force = force
        self.token = start  # the next step's input
        self.peak_pages = cache.pages_in_use()

    @property
    def window(self) -> int | None:
        return self.plan.window

    @property
    def rid(self) -> Hashable:
        return getattr(self.cache, "rid", 0)

    def pages_in_use(self) -> int | None:
        return self.cache.pages_in_use()

    def prepare_step(self) -> StepInputs:
        """The next step's inputs: its rows (host gather), or its block table (chip gather)."""
        plan = self.plan
        x = self.programs.x_table[self.token]
        if self.chip_gather:
            return self._chip_gather_inputs(plan, x)
        kc, vc = gather_plan(self.cache, plan)
        request = RequestInputs(rid=self.rid, plan=plan, token=self.token, x=x, kc=kc, vc=vc)
        return StepInputs(program=self.programs.get(plan.context), requests=(request,))

    def _chip_gather_inputs(self, plan: StepPlan, x: np.ndarray) -> StepInputs:
        """Take the new row's slot, then the block table of rows lo .. L-1."""
        before = pool_words(self.cache.table)  # the chip's pools now
        pair = self.cache.reserve()
        table = step_table(self.cache.table, self.cache.rid, plan.lo, plan.step - 1)
        request = RequestInputs(rid=self.rid, plan=plan, token=self.token, x=x, table=table)
        return StepInputs(program=self.programs.get(plan.context, copy=pair is not None),
                          requests=(request,), pair=pair, pool_words=before)

    def finish_step(self, inputs: StepInputs, results: Sequence[StepResult]) -> None:
        """Cache the new row, release the pages the next step will not read, plan that step."""
        (request,), (result,) = inputs.requests, results
        plan = request.plan
        if plan != self.plan:
            raise ValueError(f"finish_step({plan.step}) but step {self.plan.step} is in progress")
        if self.chip_gather:
            self.cache.fill(result.k_new, result.v_new)
        else:
            self.cache.append(result.k_new, result.v_new)
        if plan.keep_from is not None:
            self.cache.trim(plan.keep_from)
        self.plan = plan_step(plan.step + 1, plan.window, self.sinks)
        self.token = next_input(plan.step, result.token, self.force)
        pages = self.cache.pages_in_use()
        if pages is not None:
            self.peak_pages = pages if self.peak_pages is None else max(self.peak_pages, pages)

    def step(self) -> StepRecord:
        """One step on the reference machine (chip gather: its pools checked too)."""
        pages = self.cache.pages_in_use()
        inputs = self.prepare_step()
        run = run_reference(inputs)
        self.finish_step(inputs, run.results)
        if self.chip_gather:
            check_pools(self.programs, run.ext, self.cache.table)
        return StepRecord(inputs, run.results[0], pages)

    def fork(self, rid: Hashable) -> PagedHost:
        """A second request sharing every page of this one (copy-on-write from then on)."""
        child = PagedHost(self.programs, self.cache.fork(rid), self.token, self.window,
                          self.sinks, self.force)
        child.plan = self.plan
        return child


def check_pools(programs: ProgramCache, ext: np.ndarray, table: PageTable) -> None:
    """Chip gather: the pools in a run's final memory against the page table's pool."""
    start, end = programs.layout.pools
    problems = pool_differences(programs.layout, ext[start:end], table)
    if problems:
        raise PoolMismatch(problems[0])


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


def decode_programs(model: TinyLM, steps: int, window: int | None, *, page_size: int = 4,
                    n_pages: int = 64, gather: str = "host", sinks: int = 0,
                    calib_steps: int | None = None, cfg: ChipConfig | None = None
                    ) -> ProgramCache:
    """The program cache of one request's decode, calibrated over ``calib_steps or steps``."""
    strategy = gather_for(gather)
    calibration = calibrate(model, calib_steps or steps, window, sinks=sinks)
    pool = Pool(page_size, n_pages, model.dim) if gather == "chip" else None
    return ProgramCache(model, calibration, cfg, strategy, pool=pool)


def decode(model: TinyLM, n: int, start: int = 0, window: int | None = None, *,
           page_size: int = 4, n_pages: int = 64, paged: bool = True,
           force: Sequence[int] | None = None, calib_steps: int | None = None,
           cfg: ChipConfig | None = None, sinks: int = 0, gather: str = "host") -> Decode:
    """Decode n tokens of one request on the reference machine (the chapter's generate);
    ``sinks`` keeps the first rows in every window."""
    programs = decode_programs(model, n, window, page_size=page_size, n_pages=n_pages,
                               gather=gather, sinks=sinks, calib_steps=calib_steps, cfg=cfg)
    cache = (paged_cache(model.dim, page_size, n_pages, sinks) if paged
             else ListCache(model.dim))
    host = PagedHost(programs, cache, start, window, sinks, force)
    tokens, records = [start], []
    for _ in range(n):
        records.append(host.step())
        tokens.append(host.token)
    return Decode(tokens, records, len(programs), host.peak_pages, cache.pages_in_use())


def chip_reader(model: TinyLM, tokens: np.ndarray, setting: Setting) -> Reading:
    """The reference machine's reading: the chip's tokens, its logits dequantized."""
    forced = [int(t) for t in tokens]
    run = decode(model, len(forced) - 1, forced[0], setting.window, force=forced,
                 sinks=setting.sinks)
    decisions = np.array([record.token for record in run.records])
    logits = np.array([record.logits for record in run.records])
    return Reading(decisions, log_softmax(logits))
