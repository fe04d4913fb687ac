"""Chip gather's KV pools in the chip's memory, as the page-table agent keeps and checks them.

The agent writes block tables only; this zeroes the pools, checks them after every step, counts
freed pages named again (coverage) and corrupts the BAD_PAGE test's table."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from model.compiler.gather import pool_differences
from model.compiler.inputs import StepInputs
from model.compiler.layout import Layout
from model.kv.paged import PageTable
from verif.kit.memory import Backdoor


class PoolConservationError(AssertionError):
    """The pools in the chip's memory differ from the page table's pool."""


class ChipPools:
    """Both pools in the chip's memory, and the pages block tables have named."""

    def __init__(self, layout: Layout, memory: Backdoor):
        self.layout = layout
        self.memory = memory
        self.seen: set[int] = set()  # every page a block table has named
        self.freed: set[int] = set()  # .. and found on the free list afterwards
        start, end = layout.pools
        memory.write(start, np.zeros(end - start, dtype=np.uint32))

    def reused(self, table: PageTable, pages: tuple[int, ...]) -> int:
        """How many of a block table's pages were given back once and are held again."""
        self.freed |= self.seen & set(table.free_pages())
        self.seen.update(pages)
        return len(set(pages) & self.freed)

    def corrupted(self, inputs: StepInputs) -> StepInputs:
        """The step with its table's first page outside the pool: its first PLOAD must stop."""
        (request,) = inputs.requests
        table = request.table.copy()
        table[1] = self.layout.pool.n_pages
        return replace(inputs, requests=(replace(request, table=table),))

    def check(self, table: PageTable, where: str) -> None:
        """Pool conservation: the chip's pools, read back, against the page table's pool."""
        start, end = self.layout.pools
        problems = pool_differences(self.layout, self.memory.read(start, end - start), table)
        if problems:
            raise PoolConservationError(f"pool conservation: {problems[0]}\n{where}")
