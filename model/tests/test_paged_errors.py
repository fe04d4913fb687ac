"""Bad input to the page table: a clear error naming the request and value, and no change.

Also: ``check_invariants`` notices every kind of broken bookkeeping, and reference counts
refuse to go negative (a double free), as in vLLM's block pool.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from model.kv.paged import (
    DuplicateRequest,
    InvalidArgument,
    InvariantError,
    OutOfPages,
    PageTable,
    UnknownRequest,
    check_invariants,
)
from model.tests.test_paged import snapshot


def make_table() -> PageTable:
    """Every state at once: A trimmed (first_row 2, length 5), B forked from A, C empty."""
    table = PageTable(8, 2, row_shape=(2,))
    table.new("A")
    for row in range(5):
        table.append("A", (row, -row))
    table.trim("A", 2)
    table.fork("A", "B")
    table.new("C")
    check_invariants(table)
    return table


BadCall = Callable[[PageTable], object]

BAD_CALLS: dict[str, tuple[BadCall, type[Exception], list[str]]] = {
    "new duplicate": (lambda t: t.new("A"), DuplicateRequest, ["'A'", "already exists"]),
    "fork onto existing": (lambda t: t.fork("A", "C"), DuplicateRequest, ["'C'", "exists"]),
    "fork onto itself": (lambda t: t.fork("A", "A"), DuplicateRequest, ["'A'"]),
    "fork from unknown": (lambda t: t.fork("Z", "D"), UnknownRequest, ["'Z'", "new()"]),
    "append unknown": (lambda t: t.append("Z", (0, 0)), UnknownRequest, ["'Z'"]),
    "rows unknown": (lambda t: t.rows("Z", 0, 0), UnknownRequest, ["'Z'"]),
    "trim unknown": (lambda t: t.trim("Z", 0), UnknownRequest, ["'Z'"]),
    "release unknown": (lambda t: t.release("Z"), UnknownRequest, ["'Z'"]),
    "length unknown": (lambda t: t.length("Z"), UnknownRequest, ["'Z'"]),
    "first_row unknown": (lambda t: t.first_row("Z"), UnknownRequest, ["'Z'"]),
    "block_table unknown": (lambda t: t.block_table("Z"), UnknownRequest, ["'Z'"]),
    "rows below first_row": (
        lambda t: t.rows("A", 1, 3), InvalidArgument, ["'A'", "rows(1, 3)", "[2, 5)"]
    ),
    "rows past length": (lambda t: t.rows("A", 2, 6), InvalidArgument, ["'A'", "rows(2, 6)"]),
    "rows lo above hi": (lambda t: t.rows("B", 4, 3), InvalidArgument, ["'B'", "rows(4, 3)"]),
    "rows of an empty request": (lambda t: t.rows("C", 0, 1), InvalidArgument, ["'C'", "[0, 0)"]),
    "rows non-integer": (lambda t: t.rows("A", 2.5, 4), InvalidArgument, ["'A'", "2.5"]),
    "trim past length": (lambda t: t.trim("A", 6), InvalidArgument, ["'A'", "keep_from=6", "5"]),
    "trim negative": (lambda t: t.trim("B", -1), InvalidArgument, ["'B'", "keep_from=-1"]),
    "row too long": (lambda t: t.append("A", (1, 2, 3)), InvalidArgument, ["'A'", "(3,)", "(2,)"]),
    "row scalar": (lambda t: t.append("B", 7), InvalidArgument, ["'B'", "shape ()"]),
    "row float": (lambda t: t.append("A", (1.5, 2.0)), InvalidArgument, ["'A'", "float64"]),
    "row text": (lambda t: t.append("A", ("a", "b")), InvalidArgument, ["'A'", "<U1"]),
    "refcount past pool": (lambda t: t.refcount(8), InvalidArgument, ["page 8", "0..7"]),
    "refcount negative": (lambda t: t.refcount(-1), InvalidArgument, ["page -1"]),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_CALLS)
def test_bad_call_names_the_culprit_and_changes_nothing(case):
    call, error, words = BAD_CALLS[case]
    table = make_table()
    before = snapshot(table)
    with pytest.raises(error) as caught:
        call(table)
    for word in words:
        assert word in str(caught.value)
    assert snapshot(table) == before
    check_invariants(table)


def test_error_classes_are_the_usual_builtins():
    assert issubclass(UnknownRequest, KeyError)
    assert issubclass(DuplicateRequest, ValueError) and issubclass(InvalidArgument, ValueError)
    assert issubclass(InvariantError, AssertionError)
    assert str(UnknownRequest("plain message")) == "plain message"  # no KeyError quoting


def test_double_release_is_refused_and_changes_nothing():
    table = make_table()
    table.release("B")
    before = snapshot(table)
    with pytest.raises(UnknownRequest, match=r"'B'.*already been released"):
        table.release("B")
    assert snapshot(table) == before


@pytest.mark.parametrize(
    ("n_pages", "page_size", "bad"),
    [(0, 4, "n_pages"), (-3, 4, "n_pages"), (4, 0, "page_size"), (2.5, 4, "n_pages")],
)
def test_non_positive_sizes_are_refused(n_pages, page_size, bad):
    with pytest.raises(InvalidArgument, match=f"{bad} must be a positive integer"):
        PageTable(n_pages, page_size)


def test_a_row_out_of_the_pool_dtype_range_is_refused():
    table = PageTable(2, 2, row_shape=(2,), dtype=np.int8)
    table.new("q")
    before = snapshot(table)
    with pytest.raises(InvalidArgument, match=r"'q'.*int8"):
        table.append("q", (1, 300))
    assert snapshot(table) == before


def test_out_of_pages_for_a_new_page_changes_nothing():
    table = PageTable(2, 2)
    table.new("a")
    for row in range(4):
        table.append("a", row)
    before = snapshot(table)
    with pytest.raises(OutOfPages, match=r"'a'.*row 4.*all 2 pages"):
        table.append("a", 4)
    assert snapshot(table) == before


def test_out_of_pages_for_the_copy_on_write_copy_changes_nothing():
    table = PageTable(3, 2)
    table.new("a")
    for row in range(3):
        table.append("a", row)  # page 1 holds one row and has room
    table.fork("a", "b")
    table.new("c")
    table.append("c", 9)  # takes the last free page
    before = snapshot(table)
    with pytest.raises(OutOfPages, match=r"'b'.*copy-on-write copy of shared page 1"):
        table.append("b", 30)
    assert snapshot(table) == before
    assert table.rows("b", 0, 3).tolist() == [0, 1, 2]


def test_a_reference_count_never_goes_negative():
    table = make_table()
    table._refcounts[2] = 0  # corrupt: A and B still name page 2
    with pytest.raises(InvariantError, match="double free: page 2"):
        table.release("B")


# ---- check_invariants catches each kind of broken bookkeeping --------------------------------


def _refcount_too_high(t: PageTable) -> None:
    t._refcounts[1] += 1


def _free_twice(t: PageTable) -> None:
    t._free.append(t._free[-1])


def _free_and_referenced(t: PageTable) -> None:
    t._free.append(1)


def _leak(t: PageTable) -> None:
    t._free.pop()


def _page_outside_pool(t: PageTable) -> None:
    t._requests["A"].pages[0] = 99


def _length_disagrees(t: PageTable) -> None:
    t._requests["B"].length += 2


def _dropped_disagrees(t: PageTable) -> None:
    t._requests["A"].dropped += 1


def _dropped_past_length(t: PageTable) -> None:
    t._requests["C"].dropped = 1


def _counter_disagrees(t: PageTable) -> None:
    t.used = lambda: 0  # type: ignore[method-assign]


def _pool_reshaped(t: PageTable) -> None:
    t.pool = t.pool[:, :1]


CORRUPTIONS = {
    "refcount too high": (_refcount_too_high, "page 1: refcount 3 but 2 block-table entries"),
    "free twice": (_free_twice, "on the free list twice"),
    "free and referenced": (_free_and_referenced, "both free and referenced"),
    "leak": (_leak, "neither free nor referenced"),
    "page outside the pool": (_page_outside_pool, "outside 0..7"),
    "length disagrees": (_length_disagrees, "request 'B': block table has 2 pages"),
    "dropped disagrees": (_dropped_disagrees, "request 'A'"),
    "dropped past length": (_dropped_past_length, "request 'C': length 0 with 1 dropped"),
    "counter disagrees": (_counter_disagrees, r"used\(\) 0 .* but 2 of 8 pages are referenced"),
    "pool reshaped": (_pool_reshaped, r"pool has shape \(8, 1, 2\)"),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_check_invariants_catches(case):
    corrupt, message = CORRUPTIONS[case]
    table = make_table()
    corrupt(table)
    with pytest.raises(InvariantError, match=message):
        check_invariants(table)
