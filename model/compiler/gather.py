"""Who moves a step's cached rows: the gather modes, as strategies of the one program builder.

Host gather copies the rows into kc/vc inputs that the program LOADs; chip gather keeps the KV
pools in the chip's memory, read and written through one block table per request, and checked
word for word against the page table (``pool_differences``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from model.chip import machine
from model.chip.geometry import page_of, pool_rows, slot_of
from model.chip.isa import PT_ENTRIES, Instr, load, paged_geometry, pcopy, pload, pstore, store
from model.compiler.layout import Layout, Scratchpad
from model.kv.paged import PageTable

KEY, VALUE = 0, 1  # a cache row is np.stack([k, v]): shape (2, dim)
COPY_BUFFER = 0  # scratchpad address PCOPY's rows pass through (the weights land there later)


class HostGather:
    """The host copies each request's rows into its kc/vc slot; the program LOADs them."""

    mode = "host"

    def reads(self, layout: Layout, index: int, context: int, keys: int,
              values: int) -> list[Instr]:
        """Request ``index``'s cached rows into the scratchpad at ``keys`` and ``values``."""
        if context == 1:
            return []
        rows = (context - 1) * layout.dim
        return [load(layout.kc_slot(index), keys, rows), load(layout.vc_slot(index), values, rows)]

    def new_rows(self, layout: Layout, pad: Scratchpad, contexts: tuple[int, ...]
                 ) -> list[Instr]:
        """The new key and value rows stored as outputs: the host reads and caches them."""
        rows = len(contexts) * layout.dim
        return [store(pad.k_new, layout.k_new, rows), store(pad.v_new, layout.v_new, rows)]

    def prologue(self, layout: Layout, copy: bool) -> list[Instr]:
        if copy:
            raise ValueError("host gather copies pages in the host: its programs copy none")
        return []


class ChipGather:
    """The chip reads and writes each request's rows in the pools, through its block table."""

    mode = "chip"

    def _paged(self, make, layout: Layout, index: int, sram: int, pool: int, length: int,
               row: int = 0) -> Instr:
        geometry = layout.pool
        instr = make(layout.table(index), sram, pool, layout.dim, length, geometry.page_shift,
                     geometry.n_pages, row=row)
        if paged_geometry(instr).entries > PT_ENTRIES:
            raise ValueError(f"{instr} reads more than {PT_ENTRIES} table entries: use larger "
                             "pages or a shorter window")
        return instr

    def reads(self, layout: Layout, index: int, context: int, keys: int,
              values: int) -> list[Instr]:
        if context == 1:
            return []
        return [self._paged(pload, layout, index, keys, layout.k_pool, context - 1),
                self._paged(pload, layout, index, values, layout.v_pool, context - 1)]

    def new_rows(self, layout: Layout, pad: Scratchpad, contexts: tuple[int, ...]
                 ) -> list[Instr]:
        """Each request's new rows into table row context - 1 of its pools, and nowhere else."""
        d = layout.dim
        return [self._paged(pstore, layout, i, new + i * d, pool, 1, row=n - 1)
                for i, n in enumerate(contexts)
                for new, pool in ((pad.k_new, layout.k_pool), (pad.v_new, layout.v_pool))]

    def prologue(self, layout: Layout, copy: bool) -> list[Instr]:
        """On copy-on-write, the pair's source page copied to its destination in both pools."""
        if not copy:
            return []
        geometry = layout.pool
        return [pcopy(layout.pair, COPY_BUFFER, pool, layout.dim, geometry.page_size,
                      geometry.page_shift, geometry.n_pages)
                for pool in (layout.k_pool, layout.v_pool)]


def new_row_addresses(layout: Layout, table: np.ndarray, context: int) -> tuple[int, int]:
    """Where a chip-gather step's PSTOREs put a request's new key and value rows."""
    (row,) = pool_rows(table, context - 1, 1, layout.pool.page_shift)
    offset = int(row) * layout.dim
    return layout.k_pool + offset, layout.v_pool + offset


Gather = HostGather | ChipGather
_STRATEGIES = {strategy.mode: strategy for strategy in (HostGather, ChipGather)}
GATHER_MODES = tuple(_STRATEGIES)  # "host", "chip"


def gather_for(mode: str) -> Gather:
    """The strategy of a gather mode, by name ("host" or "chip")."""
    if mode not in _STRATEGIES:
        raise ValueError(f"gather must be one of {GATHER_MODES}, got {mode!r}")
    return _STRATEGIES[mode]()


# ---- chip gather's block tables and pools ----------------------------------------------------


def step_table(table: PageTable, rid: Hashable, first_row: int, last_row: int) -> np.ndarray:
    """The block table of one step: rows first_row .. last_row of ``rid`` as table rows 0 ..
    (the header is first_row's slot, then the pages from first_row's to last_row's)."""
    size = table.page_size
    dropped = page_of(table.first_row(rid), size)
    pages = table.block_table(rid)[page_of(first_row, size) - dropped:
                                   page_of(last_row, size) - dropped + 1]
    return np.array([slot_of(first_row, size), *pages], dtype=np.int64)


def pool_words(table: PageTable) -> np.ndarray:
    """The words the key pool and then the value pool hold for this page table's pool."""
    rows = np.asarray(table.pool)  # (n_pages, page_size, 2, dim)
    return np.concatenate([machine.words(rows[:, :, part, :].reshape(-1))
                           for part in (KEY, VALUE)])


@dataclass(frozen=True)
class PoolWord:
    """Where a word of the pools lies: which pool, page, slot and word of the row."""

    part: str  # "key" or "value"
    page: int
    slot: int
    column: int


def locate_pool_word(layout: Layout, offset: int) -> PoolWord:
    """The place of the word ``offset`` words after the key pool's start."""
    pool = layout.pool
    part, within = divmod(offset, pool.words)
    page, rest = divmod(within, pool.page_size * pool.dim)
    slot, column = divmod(rest, pool.dim)
    return PoolWord(("key", "value")[part], page, slot, column)


def pool_differences(layout: Layout, got: np.ndarray, table: PageTable) -> list[str]:
    """How the pools' words (``got``, from the key pool's start) depart from the page table's."""
    want = pool_words(table)
    got = np.asarray(got, dtype=np.uint32)
    differing = np.flatnonzero(want != got)
    if differing.size == 0:
        return []
    first = int(differing[0])
    word = locate_pool_word(layout, first)
    held = "held" if table.refcount(word.page) else "free"
    return [f"{word.part} pool, page {word.page} ({held}), slot {word.slot}, word {word.column} "
            f"(address {layout.k_pool + first}): expected {int(want[first]):#010x}, got "
            f"{int(got[first]):#010x} ({differing.size} words differ)"]
