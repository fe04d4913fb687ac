"""Chip gather: the decode step reads its cached rows through a block table, on the chip.

In host gather (model.compiler, the chapter's flow) the host copies the rows a step reads into
the contiguous kc/vc inputs. In chip gather the KV pool lives in the chip's external memory at
fixed addresses (`PoolLayout`) and the program reads it with the paged instructions (hw/ISA.md,
"Paged instructions"), as production paged attention does: the host only allocates pages and
writes the step's block table. The step program for context n is the host-gather program with

    LOAD kc, LOAD vc     ->  PLOAD of table rows 0 .. n-2 from the key pool, and the value pool
    (after the STOREs)   +   PSTORE of k_new and v_new into table row n-1 of their pools
    (first, on a copy)   +   PCOPY of the copy pair's page in the key pool, and the value pool

so one block table, rewritten by the host every step, serves all four: table row 0 is the
first row the step reads (`step_table`). A step whose new row lands in a page that another
request shares first copies that page (copy-on-write, `copy=True`): the host writes the pair
(source page, destination page) and runs the same program behind a two-instruction prologue.

External memory: compiler.Layout's regions unchanged, then (`PoolLayout`)

    table   the step's block table: header (the first row's slot) and entries
    pair    the copy-on-write pair: source page, destination page
    k_pool  n_pages pages of page_size key rows, dim words each (int8, sign-extended)
    v_pool  the same for the values

`pool_words` is what the pools must hold given a page table: word for word the table's pool,
so a held page holds exactly its rows and a freed page what it held when freed (nothing writes
it until it is reused); `pool_differences` names the first word that is not.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace

import numpy as np

from model import machine
from model.compiler import PROGRAM_WORDS, CompiledStep, Layout
from model.isa import (
    PAGE_SHIFT_MAX,
    PT_ENTRIES,
    ChipConfig,
    Instr,
    Op,
    assemble,
    disassemble,
    paged_geometry,
    pcopy,
    pload,
    pstore,
)
from model.paged import PageTable

KEY, VALUE = 0, 1  # a pool row is np.stack([k, v]) (model.host's cache rows)
COPY_BUFFER = 0  # scratchpad address PCOPY's rows pass through (the weights land there later)


def page_shift_of(page_size: int) -> int:
    """log2 of the page size: the ISA's pages are powers of two, up to 2^PAGE_SHIFT_MAX rows."""
    shift = page_size.bit_length() - 1
    if page_size < 1 or page_size != 1 << shift or shift > PAGE_SHIFT_MAX:
        raise ValueError(f"chip gather needs pages of 2^k rows, k <= {PAGE_SHIFT_MAX}; "
                         f"got {page_size}")
    return shift


@dataclass(frozen=True)
class PoolLayout:
    """Where chip gather keeps its block table, copy pair and KV pool in external memory."""

    page_size: int
    n_pages: int
    dim: int
    table: int  # the step's block table
    table_words: int  # room for the longest: header and every entry a step may read
    pair: int  # the copy-on-write pair
    k_pool: int
    v_pool: int
    end: int  # one past the value pool

    @classmethod
    def after(cls, layout: Layout, page_size: int, n_pages: int) -> PoolLayout:
        """The regions right after the compiler's layout."""
        shift = page_shift_of(page_size)
        # a PSTORE of table row max_context - 1 reads entries up to this one (hw/ISA.md, j_hi)
        table_words = 2 + ((page_size - 1 + layout.max_context - 1) >> shift)
        pool_words = n_pages * page_size * layout.dim
        table = layout.end
        pair = table + table_words
        k_pool = pair + 2
        return cls(page_size, n_pages, layout.dim, table, table_words, pair, k_pool,
                   k_pool + pool_words, k_pool + 2 * pool_words)

    @property
    def page_shift(self) -> int:
        return page_shift_of(self.page_size)

    @property
    def pools(self) -> tuple[int, int]:
        """The words of both pools [start, end): keys, then values."""
        return self.k_pool, self.end

    def check_fits(self, cfg: ChipConfig) -> None:
        if self.end > cfg.ext_words:
            raise ValueError(f"the pool of {self.n_pages} pages of {self.page_size} rows ends at "
                             f"{self.end}; the chip has {cfg.ext_words} external words")


# ---- the step's block table ------------------------------------------------------------------


def step_table(table: PageTable, rid: Hashable, first_row: int, last_row: int) -> np.ndarray:
    """The block table of one step: rows first_row .. last_row of request ``rid`` are table rows
    0 ..: the header is first_row's slot, the entries the pages from first_row's page to
    last_row's (its block table's, past the pages a window released)."""
    page = table.page_size
    dropped = table.first_row(rid) // page
    pages = table.block_table(rid)[first_row // page - dropped : last_row // page - dropped + 1]
    return np.array([first_row % page, *pages], dtype=np.int64)


# ---- the programs ----------------------------------------------------------------------------


def chip_program(step: CompiledStep, pool: PoolLayout, copy: bool = False) -> CompiledStep:
    """The chip-gather program of a compiled host-gather step (the module docstring's swap)."""
    layout, pad, dim, n = step.layout, step.scratchpad, step.layout.dim, step.context
    if layout.dim != pool.dim:
        raise ValueError(f"the pool's rows have {pool.dim} words, the program's {layout.dim}")

    def paged(make, sram: int, base: int, length: int, row: int = 0) -> Instr:
        return make(pool.table, sram, base, dim, length, pool.page_shift, pool.n_pages, row=row)

    cache_loads = {layout.kc: (pad.keys, pool.k_pool), layout.vc: (pad.values, pool.v_pool)}
    body = []
    for instr in disassemble(step.words)[:-1]:  # every instruction but the HALT
        if instr.op == Op.LOAD and instr.a in cache_loads:
            body.append(paged(pload, *cache_loads[instr.a], n - 1))
        else:
            body.append(instr)
    new_rows = [paged(pstore, pad.keys + (n - 1) * dim, pool.k_pool, 1, row=n - 1),
                paged(pstore, pad.values + (n - 1) * dim, pool.v_pool, 1, row=n - 1)]
    prologue = [pcopy(pool.pair, COPY_BUFFER, base, dim, pool.page_size, pool.page_shift,
                      pool.n_pages) for base in (pool.k_pool, pool.v_pool)] if copy else []
    instrs = [*prologue, *body, *new_rows]
    _check_program(instrs, pool, step.cfg)
    return replace(step, words=np.asarray(assemble(instrs), dtype=np.uint32))


def _check_program(instrs: list[Instr], pool: PoolLayout, cfg: ChipConfig) -> None:
    pool.check_fits(cfg)
    if len(instrs) * 4 + 4 > PROGRAM_WORDS:
        raise ValueError(f"a chip-gather program of {len(instrs) + 1} instructions does not fit "
                         f"its {PROGRAM_WORDS}-word room")
    for instr in instrs:
        if instr.op in (Op.PLOAD, Op.PSTORE) and paged_geometry(instr).entries > PT_ENTRIES:
            raise ValueError(f"{instr} reads more than {PT_ENTRIES} table entries: use larger "
                             "pages or a shorter window")


def image(step: CompiledStep, pool: PoolLayout, x: np.ndarray, table: np.ndarray,
          pair: tuple[int, int] | None, pool_words: np.ndarray) -> np.ndarray:
    """The whole external memory of one chip-gather step: program, weights, x, the block table,
    the copy pair (if any) and the pools as the chip holds them."""
    ext = np.zeros(pool.end, dtype=np.uint32)
    lay = step.layout
    ext[: step.words.size] = step.words
    ext[lay.weights : lay.weights + step.weight_words.size] = step.weight_words
    ext[lay.x : lay.x + lay.dim] = machine.words(x)
    ext[pool.table : pool.table + table.size] = machine.words(table)
    if pair is not None:
        ext[pool.pair : pool.pair + 2] = pair
    ext[pool.k_pool : pool.end] = pool_words
    return ext


# ---- the pools, word for word ----------------------------------------------------------------


def pool_words(table: PageTable) -> np.ndarray:
    """The words the key pool and then the value pool hold for this page table's pool."""
    rows = np.asarray(table.pool)  # (n_pages, page_size, 2, dim)
    return np.concatenate([machine.words(rows[:, :, part, :].reshape(-1))
                           for part in (KEY, VALUE)])


def pool_differences(pool: PoolLayout, got: np.ndarray, table: PageTable) -> list[str]:
    """Every way the pools' words (``got``, from pool.k_pool on) depart from the page table's:
    empty when a held page holds exactly its rows and a free page what it held."""
    want = pool_words(table)
    got = np.asarray(got, dtype=np.uint32)
    differing = np.flatnonzero(want != got)
    if differing.size == 0:
        return []
    words_per_pool = want.size // 2
    first = int(differing[0])
    part, offset = divmod(first, words_per_pool)
    page, rest = divmod(offset, pool.page_size * pool.dim)
    slot, column = divmod(rest, pool.dim)
    held = "held" if table.refcount(page) else "free"
    return [f"{('key', 'value')[part]} pool, page {page} ({held}), slot {slot}, word {column} "
            f"(address {pool.k_pool + first}): expected {int(want[first]):#010x}, got "
            f"{int(got[first]):#010x} ({differing.size} words differ)"]
