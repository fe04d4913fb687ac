"""Hypothesis drives the page table and a shadow of plain lists with any sequence of operations.

Pools are small (1-8 pages of 1-4 rows) so exhaustion, copy-on-write and trimming to an
empty table all happen often; after every step the invariants hold and every live
request reads back exactly its shadow rows.
"""

from __future__ import annotations

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from model.kv.paged import OutOfPages, PageTable, check_invariants
from model.tests.test_paged import readable_rows, snapshot


class PageTableMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.table = PageTable(1, 1)
        self.shadow: dict[int, list[list[int]]] = {}
        self.next_id = 0
        self.counter = 0

    @initialize(n_pages=st.integers(1, 8), page_size=st.integers(1, 4))
    def make_table(self, n_pages: int, page_size: int) -> None:
        self.table = PageTable(n_pages, page_size, row_shape=(2,))
        self.new()  # start with a live request, so that every rule is enabled

    def _pick(self, data: st.DataObject) -> int:
        return data.draw(st.sampled_from(sorted(self.shadow)))

    @rule()
    def new(self) -> None:
        self.table.new(self.next_id)
        self.shadow[self.next_id] = []
        self.next_id += 1

    @precondition(lambda self: self.shadow)
    @rule(data=st.data())
    def append(self, data: st.DataObject) -> None:
        rid = self._pick(data)
        self.counter += 1
        row = [self.counter, -self.counter]
        before = snapshot(self.table)
        try:
            self.table.append(rid, row)
        except OutOfPages:
            event("out of pages")
            assert before["free"] == [], "OutOfPages while pages were free"
            assert snapshot(self.table) == before
            return
        if self.table.cow_copies > before["cow_copies"]:
            event("copy-on-write")
        self.shadow[rid].append(row)

    @precondition(lambda self: self.shadow)
    @rule(data=st.data())
    def fork(self, data: st.DataObject) -> None:
        src = self._pick(data)
        self.table.fork(src, self.next_id)
        self.shadow[self.next_id] = list(self.shadow[src])
        self.next_id += 1

    @precondition(lambda self: self.shadow)
    @rule(data=st.data())
    def trim(self, data: st.DataObject) -> None:
        rid = self._pick(data)
        self.table.trim(rid, data.draw(st.integers(0, len(self.shadow[rid]))))

    @precondition(lambda self: self.shadow)
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        rid = self._pick(data)
        self.table.release(rid)
        del self.shadow[rid]

    @invariant()
    def matches_shadow(self) -> None:
        check_invariants(self.table)
        assert self.table.requests() == list(self.shadow)
        for rid, rows in self.shadow.items():
            assert self.table.length(rid) == len(rows)
            assert readable_rows(self.table, rid) == rows[self.table.first_row(rid) :]

    def teardown(self) -> None:
        for rid in list(self.shadow):
            self.table.release(rid)
        check_invariants(self.table)
        assert self.table.free_count() == self.table.n_pages


PageTableMachine.TestCase.settings = settings(
    max_examples=100, stateful_step_count=50, deadline=None
)
TestPageTableMachine = PageTableMachine.TestCase
