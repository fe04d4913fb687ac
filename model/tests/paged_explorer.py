"""Every sequence of page-table operations up to a depth, on a small pool, against a shadow.

The random and Hypothesis checks of ``model/tests`` sample sequences; this explorer takes
*all* of them, breadth-first, on a pool small enough to run out (by default 3 pages of 2
rows, request ids ``"a"`` and ``"b"``). From every state it tries every operation with every
argument that makes sense, including the ones that must fail:

* ``new(r)`` and ``release(r)`` for each id, live or not;
* ``fork(s, d)`` for each pair of ids, ``s == d`` included;
* ``append(r, row)`` with a fresh tag, a row of the wrong shape and a non-integer row;
* ``trim(r, k)`` for every ``-1 <= k <= length + 1`` and a non-integer ``k``.

States are deduplicated by a canonical key (`state_key`): block tables, lengths, dropped
pages, reference counts, the free list in order, the pool's contents and the shadow's. Row
tags are renamed in order of first appearance in the pool, so two states that differ only in
which fresh numbers were written are one state (the table never looks at a row's value).

The shadow (`Shadow`) is a plain list of rows and a list of physical pages per request, and
a free stack; of ``model/kv/paged.py`` it uses only the error classes. A page is in use when
some block table names it (no reference counts), so the pool is exhausted exactly when every
page is named. The shadow predicts each operation's outcome: an error (the table must raise
exactly that one and change nothing) or success (then every live request's rows, read back
through the block table for every row range, its length, first row and block table, the
free list in order, the reference counts and the copy-on-write count must equal the
shadow's). After every operation ``check_invariants`` holds, and the queries refuse dead ids,
bad row ranges and pages outside the pool.

The first difference raises `ExplorationFailure` (an ``AssertionError``) naming the
operation sequence from an empty table, which replays as written.

Usage: ``python -m model.tests.paged_explorer --depth 9 [--pages 3] [--page-size 2]``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from model.kv.paged import (
    DuplicateRequest,
    InvalidArgument,
    InvariantError,
    OutOfPages,
    PageTable,
    PageTableError,
    UnknownRequest,
    check_invariants,
)

__all__ = ["ExplorationFailure", "ExploreReport", "Op", "Shadow", "explore", "state_key"]

BAD_ROWS = ((0, 0), 0.5)  # the pool holds scalar integers: a row of shape (2,); not an integer
BAD_INDEX = 0.5  # a trim point or row bound that is not an integer
OK = "ok"  # the outcome of an operation that must succeed


class ExplorationFailure(AssertionError):
    """The table broke an invariant or differs from the shadow after ``ops`` (from empty)."""

    def __init__(self, ops: tuple[Op, ...], problem: str) -> None:
        self.ops = ops
        self.problem = problem
        super().__init__(f"after {format_ops(ops)}: {problem}")


@dataclass(frozen=True)
class Op:
    """One call of a mutating ``PageTable`` method; ``Shadow`` has the same methods."""

    name: str
    args: tuple[Any, ...]

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(repr, self.args))})"

    def apply(self, target: PageTable | Shadow) -> None:
        getattr(target, self.name)(*self.args)


def format_ops(ops: tuple[Op, ...]) -> str:
    """The sequence as calls on a new table, in order: ``[new('a'); append('a', 1)]``."""
    return f"[{'; '.join(map(str, ops))}]" if ops else "[] (the empty table)"


# ---- the shadow ----------------------------------------------------------------------------


@dataclass
class ShadowRequest:
    """One live request: every row appended (dropped ones included) and its physical pages."""

    rows: list[int] = field(default_factory=list)
    first_row: int = 0  # rows below were released by trim and can no longer be read
    pages: list[int] = field(default_factory=list)


@dataclass
class Shadow:
    """The page table's specification in plain lists; a page is in use iff a table names it.

    Each method raises the error the table must raise, before changing anything.
    """

    n_pages: int
    page_size: int
    requests: dict[Hashable, ShadowRequest] = field(default_factory=dict)
    free: list[int] = field(default_factory=list)  # a stack: page 0 is handed out first
    copies: int = 0  # copy-on-write copies
    next_tag: int = 1  # a row value never written before on this path (the pool starts at 0)

    def __post_init__(self) -> None:
        if not self.free and not self.requests:
            self.free = list(range(self.n_pages - 1, -1, -1))

    def clone(self) -> Shadow:
        requests = {
            rid: ShadowRequest(list(r.rows), r.first_row, list(r.pages))
            for rid, r in self.requests.items()
        }
        return Shadow(self.n_pages, self.page_size, requests, list(self.free),
                      self.copies, self.next_tag)  # fmt: skip

    # ---- the operations --------------------------------------------------------------------

    def new(self, rid: Hashable) -> None:
        if rid in self.requests:
            raise DuplicateRequest(rid)
        self.requests[rid] = ShadowRequest()

    def fork(self, src: Hashable, dst: Hashable) -> None:
        source = self.get(src)
        if dst in self.requests:
            raise DuplicateRequest(dst)
        self.requests[dst] = ShadowRequest(list(source.rows), source.first_row,
                                           list(source.pages))  # fmt: skip

    def release(self, rid: Hashable) -> None:
        request = self.get(rid)
        del self.requests[rid]
        self._give_back(request.pages)

    def append(self, rid: Hashable, row: object) -> None:
        request = self.get(rid)
        if not isinstance(row, int):
            raise InvalidArgument(row)
        if len(request.rows) % self.page_size == 0:  # the last page is full, or there is none
            request.pages.append(self._take_page())
        elif self.holders(request.pages[-1]) > 1:  # shared: write into a private copy
            request.pages[-1] = self._take_page()
            self.copies += 1
        request.rows.append(row)
        self.next_tag = max(self.next_tag, row + 1)

    def trim(self, rid: Hashable, keep_from: object) -> None:
        request = self.get(rid)
        if not isinstance(keep_from, int) or not 0 <= keep_from <= len(request.rows):
            raise InvalidArgument(keep_from)
        # Logical page i holds rows [i * size, (i + 1) * size): all below keep_from iff
        # i < keep_from // size.
        below = keep_from // self.page_size - request.first_row // self.page_size
        if below > 0:
            released = request.pages[:below]
            del request.pages[:below]
            request.first_row += below * self.page_size
            self._give_back(released)

    # ---- pages -----------------------------------------------------------------------------

    def get(self, rid: Hashable) -> ShadowRequest:
        if rid not in self.requests:
            raise UnknownRequest(rid)
        return self.requests[rid]

    def holders(self, page: int) -> int:
        """How many block tables name ``page`` (the table's reference count)."""
        return sum(page in request.pages for request in self.requests.values())

    def pages_in_use(self) -> int:
        return len({page for request in self.requests.values() for page in request.pages})

    def _take_page(self) -> int:
        if self.pages_in_use() == self.n_pages:
            raise OutOfPages()
        return self.free.pop()

    def _give_back(self, pages: list[int]) -> None:
        """Push the pages no table names any more, in order: the last one is reused first."""
        for page in pages:
            if self.holders(page) == 0:
                self.free.append(page)


# ---- the operations tried from a state -----------------------------------------------------


def operations(shadow: Shadow, request_ids: tuple[Hashable, ...]) -> Iterator[Op]:
    """Every operation with every argument that makes sense in this state, failing ones too."""
    for rid in request_ids:
        yield Op("new", (rid,))
        yield Op("release", (rid,))
        for dst in request_ids:
            yield Op("fork", (rid, dst))
        for row in (shadow.next_tag, *BAD_ROWS):
            yield Op("append", (rid, row))
        for keep_from in trim_points(shadow, rid):
            yield Op("trim", (rid, keep_from))


def trim_points(shadow: Shadow, rid: Hashable) -> list[object]:
    """Every point from -1 to length + 1 and a non-integer; one point for a dead id."""
    if rid not in shadow.requests:
        return [0]
    return [*range(-1, len(shadow.requests[rid].rows) + 2), BAD_INDEX]


# ---- the state key -------------------------------------------------------------------------


class _Labels:
    """Renames row values in order of first appearance; 0 (never written) stays 0."""

    def __init__(self) -> None:
        self.names: dict[object, int] = {0: 0}

    def __call__(self, values: list[object]) -> tuple[int, ...]:
        return tuple(self.names.setdefault(value, len(self.names)) for value in values)


def state_key(table: PageTable, shadow: Shadow) -> tuple[object, ...]:
    """A hashable key of the table and the shadow, equal for states that behave alike.

    It holds everything `differences` compares, so a state whose key was seen needs no new
    check; of the copy-on-write counts (which grow along a path) only their difference.
    """
    labels = _Labels()
    pool = labels(table.pool.ravel().tolist())
    requests = tuple(
        (rid, table.length(rid), table.first_row(rid), tuple(table.block_table(rid)))
        for rid in table.requests()
    )
    refcounts = tuple(table.refcount(page) for page in range(table.n_pages))
    shadow_requests = tuple(
        (rid, r.first_row, labels(r.rows[r.first_row :]), tuple(r.pages))
        for rid, r in shadow.requests.items()
    )
    return (pool, requests, refcounts, tuple(table.free_pages()), table.used(), table.free_count(),
            shadow_requests, tuple(shadow.free), table.cow_copies - shadow.copies)  # fmt: skip


# ---- comparing a state with the shadow -----------------------------------------------------


def differences(
    table: PageTable, shadow: Shadow, request_ids: tuple[Hashable, ...]
) -> Iterator[str]:
    """Every way the table differs from the shadow, as a sentence; none when they agree."""
    yield from _compare(table.requests(), list(shadow.requests), "requests()")
    for rid, request in shadow.requests.items():
        yield from _compare_request(table, rid, request)
    yield from _compare_pool(table, shadow)
    for rid in request_ids:
        if rid not in shadow.requests:
            yield from _compare_dead(table, rid)


def _compare_request(table: PageTable, rid: Hashable, request: ShadowRequest) -> Iterator[str]:
    yield from _compare(table.length(rid), len(request.rows), f"length({rid!r})")
    yield from _compare(table.first_row(rid), request.first_row, f"first_row({rid!r})")
    yield from _compare(table.block_table(rid), request.pages, f"block_table({rid!r})")
    first, length = request.first_row, len(request.rows)
    for lo in range(first, length + 1):
        for hi in range(lo, length + 1):
            got = table.rows(rid, lo, hi).tolist()
            yield from _compare(got, request.rows[lo:hi], f"rows({rid!r}, {lo}, {hi})")
    bad_ranges = ((first - 1, length), (first, length + 1), (first + 1, first), (BAD_INDEX, length))
    for lo, hi in bad_ranges:
        yield from _refused(InvalidArgument, table.rows, rid, lo, hi)


def _compare_pool(table: PageTable, shadow: Shadow) -> Iterator[str]:
    yield from _compare(table.free_pages(), shadow.free, "free_pages()")
    yield from _compare(table.used(), shadow.pages_in_use(), "used()")
    yield from _compare(table.free_count(), table.n_pages - shadow.pages_in_use(), "free_count()")
    refcounts = [table.refcount(page) for page in range(table.n_pages)]
    holders = [shadow.holders(page) for page in range(table.n_pages)]
    yield from _compare(refcounts, holders, "refcounts (block tables naming each page)")
    yield from _compare(table.cow_copies, shadow.copies, "cow_copies")
    for page in (-1, table.n_pages):
        yield from _refused(InvalidArgument, table.refcount, page)


def _compare_dead(table: PageTable, rid: Hashable) -> Iterator[str]:
    for query in (table.length, table.first_row, table.block_table):
        yield from _refused(UnknownRequest, query, rid)
    yield from _refused(UnknownRequest, table.rows, rid, 0, 0)


def _compare(got: object, expected: object, what: str) -> Iterator[str]:
    if got != expected:
        yield f"{what} is {got!r}, the shadow says {expected!r}"


def _refused(error: type[Exception], query: Callable[..., object], *args: object) -> Iterator[str]:
    """Nothing if ``query(*args)`` raises exactly ``error``, else what it did instead."""
    what = f"{query.__name__}({', '.join(map(repr, args))})"
    try:
        query(*args)
    except Exception as other:
        if type(other) is not error:
            yield f"{what} raised {_describe(other)}, expected {error.__name__}"
        return
    yield f"{what} returned, expected {error.__name__}"


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


# ---- the search ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ExploreReport:
    """What a run explored: distinct states and operations applied, by outcome."""

    depth: int
    n_pages: int
    page_size: int
    request_ids: tuple[Hashable, ...]
    states: int  # distinct states reached, the empty table included
    transitions: int  # operations applied, failing ones included
    outcomes: dict[str, int]  # transitions by outcome: "ok" or the error the shadow predicted
    new_states_per_level: tuple[int, ...]  # distinct states first reached at depth 0, 1, ...

    def __str__(self) -> str:
        outcomes = ", ".join(f"{name} {count}" for name, count in sorted(self.outcomes.items()))
        return (
            f"depth {self.depth} on {self.n_pages} pages of {self.page_size} rows, ids "
            f"{list(self.request_ids)}: {self.states} distinct states, {self.transitions} "
            f"transitions ({outcomes}); new states per level "
            f"{list(self.new_states_per_level)}"
        )


@dataclass(frozen=True)
class _Node:
    """A state: the table and the shadow after ``ops`` from an empty table."""

    table: PageTable
    shadow: Shadow
    ops: tuple[Op, ...]
    key: tuple[object, ...]  # when reached, before any query or failing call on it

    @classmethod
    def reached(cls, table: PageTable, shadow: Shadow, ops: tuple[Op, ...]) -> _Node:
        return cls(table, shadow, ops, state_key(table, shadow))

    def unchanged(self) -> bool:
        return state_key(self.table, self.shadow) == self.key


def explore(
    depth: int,
    n_pages: int = 3,
    page_size: int = 2,
    request_ids: tuple[Hashable, ...] = ("a", "b"),
) -> ExploreReport:
    """Every operation sequence of length <= ``depth`` from an empty table, breadth-first.

    Raises ``ExplorationFailure`` at the first broken invariant or difference from the shadow.
    """
    root = _Node.reached(PageTable(n_pages, page_size), Shadow(n_pages, page_size), ())
    _check_state(root, request_ids)
    seen = {root.key}
    frontier, outcomes, per_level = [root], Counter[str](), [1]
    for _ in range(depth):
        reached = []
        for node in frontier:
            for op in operations(node.shadow, request_ids):
                child, outcome = step(node, op)
                outcomes[outcome] += 1
                if child is not None and child.key not in seen:
                    _check_state(child, request_ids)
                    seen.add(child.key)
                    reached.append(child)
        frontier = reached
        per_level.append(len(reached))
    return ExploreReport(depth, n_pages, page_size, tuple(request_ids), len(seen),
                         sum(outcomes.values()), dict(outcomes), tuple(per_level))  # fmt: skip


def step(node: _Node, op: Op) -> tuple[_Node | None, str]:
    """Apply ``op`` to a copy of the node: (the new node, "ok"), or (None, the error's name)."""
    shadow = node.shadow.clone()
    try:
        op.apply(shadow)
    except PageTableError as predicted:
        _check_refused(node, op, type(predicted))
        return None, type(predicted).__name__
    ops = (*node.ops, op)
    try:
        table = replay(node.table, ops)
    except Exception as error:
        raise ExplorationFailure(ops, f"raised {_describe(error)}; the shadow says it "
                                      "succeeds") from error  # fmt: skip
    return _Node.reached(table, shadow, ops), OK


def _check_refused(node: _Node, op: Op, predicted: type[PageTableError]) -> None:
    """The table must raise exactly ``predicted`` and change nothing."""
    ops = (*node.ops, op)
    try:
        op.apply(node.table)
    except Exception as error:
        if type(error) is not predicted:
            raise ExplorationFailure(ops, f"raised {_describe(error)}, the shadow says "
                                          f"{predicted.__name__}") from error  # fmt: skip
    else:
        raise ExplorationFailure(ops, f"succeeded, the shadow says {predicted.__name__}")
    if not node.unchanged():
        raise ExplorationFailure(ops, f"{predicted.__name__} was raised but the table changed")


def replay(table: PageTable, ops: tuple[Op, ...]) -> PageTable:
    """A new table of ``table``'s size after ``ops`` from empty (cheaper than a deep copy)."""
    replayed = type(table)(table.n_pages, table.page_size, table.row_shape, table.dtype)
    for op in ops:
        op.apply(replayed)
    return replayed


def _check_state(node: _Node, request_ids: tuple[Hashable, ...]) -> None:
    """The invariants hold, the table equals the shadow, and the queries changed nothing."""
    try:
        check_invariants(node.table)
        problem = next(differences(node.table, node.shadow, request_ids), None)
    except InvariantError as broken:
        problem = f"invariant broken: {broken}"
    except Exception as error:
        raise ExplorationFailure(node.ops, f"a query raised {_describe(error)}") from error
    if problem is None and not node.unchanged():
        problem = "a query changed the table"
    if problem is not None:
        raise ExplorationFailure(node.ops, problem)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, required=True, help="longest operation sequence")
    parser.add_argument("--pages", type=int, default=3, help="pages in the pool")
    parser.add_argument("--page-size", type=int, default=2, help="rows per page")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    report = explore(args.depth, args.pages, args.page_size)
    print(f"{report}\n{time.perf_counter() - started:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
