"""The page table (model/kv/paged.py) against the chapter's specification.

(1) a shadow model of plain Python lists under 6 x 400 random operations, with every
invariant checked after every operation; (2) exhaustion; (3) exact page counts under the
window rule; basic behaviour (free-list order, fork, copy-on-write, trim, release, dtypes).
The recorded numbers of examples A and B are checked in scripts/tests/test_examples.py.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Any

import numpy as np
import pytest

from model.chip.geometry import pages_for
from model.kv.paged import OutOfPages, PageTable, check_invariants


def snapshot(table: PageTable) -> dict[str, Any]:
    """Everything observable about a table, as plain data, for before/after comparisons."""
    return {
        "requests": {
            rid: (table.length(rid), table.first_row(rid), table.block_table(rid))
            for rid in table.requests()
        },
        "refcounts": [table.refcount(page) for page in range(table.n_pages)],
        "free": table.free_pages(),
        "cow_copies": table.cow_copies,
        "pool": table.pool.tolist(),
    }


def readable_rows(table: PageTable, rid: Hashable) -> list:
    """The request's rows from first_row to length, as nested lists."""
    return table.rows(rid, table.first_row(rid), table.length(rid)).tolist()


# ---- basic behaviour ------------------------------------------------------------------------


def test_free_list_hands_out_page_zero_first_and_reuses_freed_pages_first():
    table = PageTable(4, 2)
    table.new("a")
    for row in range(6):
        table.append("a", row)
    assert table.block_table("a") == [0, 1, 2]
    assert table.free_pages() == [3]
    table.trim("a", 4)  # releases pages 0 then 1: page 1 is on top of the stack
    assert table.free_pages() == [3, 0, 1]
    table.new("b")
    table.append("b", 9)
    assert table.block_table("b") == [1]


def test_rows_gathers_across_pages_with_row_shape():
    table = PageTable(8, 3, row_shape=(2, 4), dtype=np.int8)
    table.new("r")
    rows = np.arange(7 * 8, dtype=np.int8).reshape(7, 2, 4)
    for row in rows:
        table.append("r", row)
    got = table.rows("r", 2, 7)
    assert got.shape == (5, 2, 4) and got.dtype == np.int8
    np.testing.assert_array_equal(got, rows[2:7])
    assert table.rows("r", 4, 4).shape == (0, 2, 4)


def test_fork_shares_pages_and_copy_on_write_copies_only_the_written_page():
    table = PageTable(8, 4)
    table.new("a")
    for row in range(6):
        table.append("a", row)
    table.fork("a", "b")
    assert table.block_table("b") == table.block_table("a") == [0, 1]
    assert [table.refcount(p) for p in (0, 1)] == [2, 2]
    table.append("b", 60)
    assert table.block_table("b") == [0, 2] and table.cow_copies == 1
    assert [table.refcount(p) for p in (0, 1, 2)] == [2, 1, 1]
    table.append("a", 6)  # page 1 is A's alone now: no copy
    assert table.cow_copies == 1
    assert readable_rows(table, "a") == [0, 1, 2, 3, 4, 5, 6]
    assert readable_rows(table, "b") == [0, 1, 2, 3, 4, 5, 60]
    check_invariants(table)


def test_fork_of_a_trimmed_request_keeps_its_dropped_pages():
    table = PageTable(8, 2)
    table.new("a")
    for row in range(5):
        table.append("a", row)
    table.trim("a", 4)
    table.fork("a", "b")
    assert (table.length("b"), table.first_row("b")) == (5, 4)
    assert readable_rows(table, "b") == [4]
    check_invariants(table)


def test_trim_releases_only_pages_entirely_below_keep_from():
    table = PageTable(8, 4)
    table.new("a")
    for row in range(10):
        table.append("a", row)
    table.trim("a", 7)  # page 1 still holds row 7
    assert (table.first_row("a"), table.block_table("a")) == (4, [1, 2])
    table.trim("a", 3)  # below first_row: nothing to do
    assert table.block_table("a") == [1, 2]
    table.trim("a", 8)
    assert (table.first_row("a"), table.block_table("a")) == (8, [2])


def test_trim_to_a_full_length_empties_the_table_and_append_continues():
    table = PageTable(4, 2)
    table.new("a")
    for row in range(4):
        table.append("a", row)
    table.trim("a", 4)
    assert (table.block_table("a"), table.used(), table.first_row("a")) == ([], 0, 4)
    table.append("a", 4)
    assert readable_rows(table, "a") == [4]
    check_invariants(table)


def test_release_frees_only_unshared_pages():
    table = PageTable(6, 2)
    table.new("a")
    for row in range(3):
        table.append("a", row)
    table.fork("a", "b")
    table.append("b", 30)  # copy-on-write of page 1 into page 2
    table.release("a")
    assert table.requests() == ["b"]
    assert table.used() == 2 and table.block_table("b") == [0, 2]
    assert table.refcount(0) == 1 and table.refcount(1) == 0
    check_invariants(table)


def test_object_rows_are_stored_as_given():
    table = PageTable(2, 2, dtype=object)
    table.new("a")
    for row in (None, "x", 1):
        table.append("a", row)
    assert readable_rows(table, "a") == [None, "x", 1]


def test_python_ints_and_small_dtypes_convert_exactly():
    table = PageTable(2, 2, row_shape=(2,), dtype=np.int8)
    table.new("a")
    table.append("a", [127, -128])
    table.append("a", np.array([1, 2], dtype=np.int64))
    assert readable_rows(table, "a") == [[127, -128], [1, 2]]


# ---- (1) the shadow model under random operations -------------------------------------------

OPERATIONS = ["append"] * 6 + ["new", "fork", "trim", "release"]
MAX_LIVE = 5


class RandomRun:
    """The chapter's check (1): random operations on a PageTable(n_pages, 4) and a shadow dict."""

    def __init__(self, seed: int, n_pages: int = 24) -> None:
        self.rng = random.Random(seed)
        self.table = PageTable(n_pages, 4, row_shape=(2,))
        self.shadow: dict[int, list[list[int]]] = {}
        self.next_id = 0
        self.counter = 0
        self.out_of_pages = 0

    def step(self) -> None:
        op = self.rng.choice(OPERATIONS)
        before = snapshot(self.table)
        try:
            getattr(self, f"do_{op}")()
        except OutOfPages:
            self.out_of_pages += 1
            assert before["free"] == [], "OutOfPages while pages were free"
            assert snapshot(self.table) == before
        check_invariants(self.table)
        self.assert_matches_shadow()

    def do_new(self) -> None:
        if len(self.shadow) < MAX_LIVE:
            self.table.new(self.next_id)
            self.shadow[self.next_id] = []
            self.next_id += 1

    def do_append(self) -> None:
        if self.shadow:
            rid = self.rng.choice(list(self.shadow))
            self.counter += 1
            row = [self.counter, -self.counter]
            self.table.append(rid, row)
            self.shadow[rid].append(row)

    def do_fork(self) -> None:
        if self.shadow and len(self.shadow) < MAX_LIVE:
            src = self.rng.choice(list(self.shadow))
            self.table.fork(src, self.next_id)
            self.shadow[self.next_id] = list(self.shadow[src])
            self.next_id += 1

    def do_trim(self) -> None:
        if self.shadow:
            rid = self.rng.choice(list(self.shadow))
            self.table.trim(rid, self.rng.randrange(0, len(self.shadow[rid]) + 1))

    def do_release(self) -> None:
        if self.shadow:
            rid = self.rng.choice(list(self.shadow))
            self.table.release(rid)
            del self.shadow[rid]

    def assert_matches_shadow(self) -> None:
        assert self.table.requests() == list(self.shadow)
        for rid, rows in self.shadow.items():
            assert self.table.length(rid) == len(rows)
            assert readable_rows(self.table, rid) == rows[self.table.first_row(rid) :]


def run_random(seed: int, n_pages: int) -> RandomRun:
    """400 random operations, then release everything: the pool must be whole again."""
    run = RandomRun(seed, n_pages)
    for _ in range(400):
        run.step()
    for rid in list(run.shadow):
        run.table.release(rid)
    check_invariants(run.table)
    assert run.table.free_count() == n_pages
    assert all(run.table.refcount(page) == 0 for page in range(n_pages))
    return run


@pytest.mark.parametrize("seed", range(6))
def test_random_operations_match_the_shadow(seed):
    run = run_random(seed, n_pages=24)
    assert run.table.cow_copies > 0, "the run never exercised copy-on-write"


@pytest.mark.parametrize("seed", range(3))
def test_random_operations_match_the_shadow_when_the_pool_runs_out(seed):
    """24 pages never run out in the chapter's runs (peak 18); 6 pages do, often."""
    run = run_random(seed, n_pages=6)
    assert run.out_of_pages > 0


# ---- (2) exhaustion -------------------------------------------------------------------------


def test_exhaustion_raises_at_the_seventh_row_and_changes_nothing():
    table = PageTable(3, 2, row_shape=(2,))
    table.new(0)
    for row in range(6):
        table.append(0, (row, row))
    before = snapshot(table)
    for row in range(6, 10):
        with pytest.raises(OutOfPages, match="request 0"):
            table.append(0, (row, row))
        assert snapshot(table) == before
    assert table.length(0) == 6
    check_invariants(table)


# ---- (3) exact page counts under the window rule --------------------------------------------

WINDOWS_AND_PAGES = [
    (None, 4), (8, 4), (6, 2), (4, 4), (3, 1),
    (2, 1), (2, 4), (5, 3), (7, 8), (9, 4), (16, 4), (None, 1),
]  # fmt: skip


@pytest.mark.parametrize(("window", "page_size"), WINDOWS_AND_PAGES)
def test_pages_in_use_follow_the_window_rule_exactly(window, page_size):
    steps = 40
    table = PageTable(64, page_size)
    table.new(0)
    bound = None if window is None else pages_for(window - 1, page_size) + 1
    for step in range(1, steps + 1):
        # The chapter's form, counted when the step starts (before its append).
        kept_before = 0 if window is None else max(0, step - window)
        assert table.used() == pages_for(step - 1, page_size) - kept_before // page_size
        table.append(0, step - 1)
        keep_from = 0 if window is None else max(0, step + 1 - window)
        peak = table.used()
        table.trim(0, keep_from)
        # Independently: the pages that hold a row the next step still reads.
        needed_pages = {row // page_size for row in range(keep_from, step)}
        assert table.used() == len(needed_pages)
        assert table.used() == pages_for(step, page_size) - keep_from // page_size
        if bound is not None:
            assert table.used() <= bound and peak <= bound + 1
    if window is None:
        assert table.used() == pages_for(steps, page_size)
