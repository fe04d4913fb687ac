"""The page table under every operation sequence up to a depth (model/tests/paged_explorer.py).

On 3 pages of 2 rows with request ids "a" and "b", every sequence of new, release, fork,
append and trim (with every argument that makes sense, failing ones included) up to
DEFAULT_DEPTH = 9 operations reaches 2,860 distinct states through 35,606 transitions
(1.2-1.8 s on 2 shared cores); after each one the invariants hold and the table equals the
shadow. The pool first runs out at depth 7 (new, append, fork, then four appends to the
original: a copy-on-write copy, a new page, a row, and the append that finds no page), so
depth 9 covers exhaustion, failed appends on a full pool and what follows them. Each of the
12 "page table" mutants of the mutation run fails this test alone (the first at depth 3, the
last, "exhaustion is not reported", at depth 7).

Deeper: ``pytest model/tests/test_paged_exhaustive.py --exhaustive-depth 11``
(depth 10: 5,406 states and 75,578 transitions, about 3 s; depth 11: 9,332 and
146,856, about 5-7 s).
"""

from __future__ import annotations

import pytest

from model.kv.paged import PageTable
from model.tests import paged_explorer
from model.tests.paged_explorer import ExplorationFailure, Op, explore

DEFAULT_DEPTH = 9
COUNTS_AT_DEFAULT_DEPTH = (2860, 35606)  # (distinct states, transitions)
OUTCOMES = {"ok", "DuplicateRequest", "UnknownRequest", "InvalidArgument", "OutOfPages"}


def test_every_sequence_up_to_the_depth_matches_the_shadow(exhaustive_depth):
    report = explore(exhaustive_depth)
    print(report)
    assert report.depth == exhaustive_depth
    assert sum(report.new_states_per_level) == report.states
    if exhaustive_depth >= 7:  # the first OutOfPages
        assert set(report.outcomes) == OUTCOMES, "some outcome was never exercised"
    if exhaustive_depth == DEFAULT_DEPTH:
        assert (report.states, report.transitions) == COUNTS_AT_DEFAULT_DEPTH


class _ForgetfulRelease(PageTable):
    """A broken table for the negative test: release leaks the request's pages."""

    def release(self, rid):
        self._get(rid)  # an unknown id is still refused
        del self._requests[rid]  # but the pages keep their reference counts


def test_a_broken_table_fails_naming_the_shortest_sequence(monkeypatch):
    """Negative test: the explorer must catch a leak, and name the sequence that shows it."""
    monkeypatch.setattr(paged_explorer, "PageTable", _ForgetfulRelease)
    with pytest.raises(ExplorationFailure, match="invariant broken: page 0: refcount 1") as failure:
        explore(3)
    assert failure.value.ops == (Op("new", ("a",)), Op("append", ("a", 1)),
                                 Op("release", ("a",)))  # fmt: skip
    assert "[new('a'); append('a', 1); release('a')]" in str(failure.value)
