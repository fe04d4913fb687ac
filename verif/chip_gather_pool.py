"""Chip gather's side of the page-table agent: the KV pools and the block table in chip memory.

With ``DecodeSpec.gather == "chip"`` the pools live in the chip's external memory, at the
addresses of model.paged_programs.PoolLayout, and the chip reads and writes the rows itself
(PLOAD, PSTORE, PCOPY). The page-table agent copies no row. Per step:

- VIEW: take the new row's slot in the page table (model.host.PagedCache.reserve: a new page,
  or a private copy of a shared one, which the chip's PCOPYs then make) and write the step's
  block table (model.paged_programs.step_table) and, on copy-on-write, the copy pair into the
  chip's memory: a few words, only those that changed (the memory mirror skips the others);
- FILL: record the row the chip wrote (PagedCache.fill), then read both pools back and check
  pool conservation (model.paged_programs.pool_differences): every held page holds exactly its
  rows and every free page what it held when it was freed, word for word. A row written to the
  wrong slot, or into a page the table gave back, fails at the step that wrote it.

CONFIGURE zeroes the pools, as a fresh page table's pool is zero. Serving in chip gather
(verif/serving_pool.py) zeroes and checks its pools with the same two functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.compiler import Layout
from model.host import PagedCache
from model.paged import PageTable
from model.paged_programs import PoolLayout, pool_differences, pool_words, step_table
from verif.ext_memory import ExtMemoryMirror


class PoolConservationError(AssertionError):
    """The pools in the chip's memory differ from the page table's pool."""


def zero_pools(pool: PoolLayout, memory: ExtMemoryMirror) -> None:
    """Both pools zeroed in the chip's memory, as a fresh page table's pool is."""
    start, end = pool.pools
    memory.write(start, np.zeros(end - start, dtype=np.uint32))


def check_pools(pool: PoolLayout, memory: ExtMemoryMirror, table: PageTable, where: str) -> None:
    """Pool conservation: the chip's pools, read back, against the page table's pool."""
    start, end = pool.pools
    problems = pool_differences(pool, memory.read(start, end - start), table)
    if problems:
        raise PoolConservationError(f"pool conservation: {problems[0]}\n{where}")


@dataclass
class View:
    """What VIEW wrote for one step."""

    table: np.ndarray  # the block table: header, then the pages
    pair: tuple[int, int] | None  # the copy-on-write pair, if the step copies a page
    pool_words: np.ndarray  # both pools as the chip holds them before the step
    words_written: int  # backdoor writes: the table's changed words (and the pair)
    new_page: bool  # the new row opened a page
    reused_pages: int  # pages of the table that were given back once and are held again


class ChipGatherPool:
    """The pools' layout in the chip's memory and what the agent writes there."""

    def __init__(self, layout: Layout, memory: ExtMemoryMirror, page_size: int, n_pages: int):
        self.layout = PoolLayout.after(layout, page_size, n_pages)
        self.memory = memory
        self.seen: set[int] = set()  # every page a block table has named
        self.freed: set[int] = set()  # .. and found on the free list afterwards
        zero_pools(self.layout, memory)

    def view(self, cache: PagedCache, first_row: int, corrupt: bool = False) -> View:
        """Reserve the new row's slot; write the block table of rows first_row .. new row."""
        table = cache.table
        self.freed |= self.seen & set(table.free_pages())
        before = pool_words(table)  # the chip's pools now: conservation held after the last step
        opens_page = cache.locate(cache.length())[1] % table.page_size == 0
        pair = cache.reserve()
        words = step_table(table, cache.rid, first_row, cache.length() - 1)
        self.seen.update(words[1:].tolist())
        if corrupt:  # the first row's page: the first PLOAD must stop on it
            words = words.copy()
            words[1] = self.layout.n_pages
        written = self.memory.write(self.layout.table, words)
        if pair is not None:
            written += self.memory.write(self.layout.pair, np.array(pair))
        reused = len(set(words[1:].tolist()) & self.freed)
        return View(words, pair, before, written, opens_page, reused)

    def check(self, table: PageTable, where: str) -> None:
        """Pool conservation after a step (``check_pools``)."""
        check_pools(self.layout, self.memory, table, where)
