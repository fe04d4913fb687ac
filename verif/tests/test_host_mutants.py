"""The host mutant catalogue stays in step with the code it breaks.

Each mutant still names one line of the current code, and that line is still live: breaking it
changes what the function it sits in returns on a small input named below (its probe), so a
line that a refactor left dead or equivalent is found here in well under a second, not after
the chapter's checks have run on the mutant and let it survive. A probe runs on the mutated
file, copied and broken by the mutation framework and loaded on its own (every other module
is the working tree's), and on the same file unbroken, which must give the expected value.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from model.lm.tiny_lm import structured_model
from model.paths import REPO_ROOT
from verif.mutation.framework import Mutant, apply, check_applies
from verif.mutation.host_run import HOST_MUTANTS

# ---- probes: the function a mutant breaks, on one small input -----------------------------------


def one_page_released(m: ModuleType) -> Any:
    """A request takes page 0 and is released: the pool's free list afterwards."""
    table = m.PageTable(2, 4)
    table.new("a")
    table.append("a", 1)
    table.release("a")
    return table.free_pages(), table.used()


def shared_then_released(m: ModuleType) -> Any:
    """b forks a (page 0 shared), then a is released: page 0 still b's, not free."""
    table = m.PageTable(2, 4)
    table.new("a")
    table.append("a", 1)
    table.fork("a", "b")
    table.release("a")
    return table.free_pages(), table.refcount(0)


def forked(m: ModuleType) -> Any:
    """a holds page 0 and b forks it: page 0's reference count."""
    table = m.PageTable(2, 4)
    table.new("a")
    table.append("a", 7)
    table.fork("a", "b")
    return table.refcount(0)


def append_into_shared(m: ModuleType) -> Any:
    """b forks a's half-full page 0 and appends: b's copy, its rows and the refcounts."""
    table = m.PageTable(3, 4)
    table.new("a")
    table.append("a", 7)
    table.fork("a", "b")
    table.append("b", 8)
    return (table.block_table("b"), table.rows("b", 0, 2).tolist(),
            table.rows("a", 0, 1).tolist(), table.refcount(0))


def trimmed(keep_from: int) -> Callable[[ModuleType], Any]:
    """Six rows in pages of 4, trimmed at ``keep_from``: the first readable row and the table."""
    def probe(m: ModuleType) -> Any:
        table = m.PageTable(4, 4)
        table.new("a")
        for row in range(6):
            table.append("a", row)
        table.trim("a", keep_from)
        return table.first_row("a"), table.block_table("a")
    return probe


def rows_after_trim(m: ModuleType) -> Any:
    """Six rows in pages of 4, page 0 trimmed away: rows 4 and 5 read through the table."""
    table = m.PageTable(4, 4)
    table.new("a")
    for row in range(6):
        table.append("a", row)
    table.trim("a", 4)
    return table.rows("a", 4, 6).tolist()


def exhausted(m: ModuleType) -> Any:
    """A pool of one page of one row, appended twice (the second raises)."""
    table = m.PageTable(1, 1)
    table.new("a")
    table.append("a", 1)
    table.append("a", 2)


def slots(m: ModuleType) -> Any:
    """geometry.slot_of: rows 0 .. 5 in pages of 4."""
    return [m.slot_of(row, 4) for row in range(6)]


def float_window(m: ModuleType) -> Any:
    """step_rule.attended_rows: of 10 cached rows, those the next step attends with W = 4."""
    return m.attended_rows(10, 4)


def step_10_of_window_4(m: ModuleType) -> Any:
    """step_rule.plan_step(10, W = 4): context, rows read (lo, hi) and the trim point."""
    plan = m.plan_step(10, 4)
    return plan.context, plan.lo, plan.hi, plan.keep_from


def gathered(m: ModuleType) -> Any:
    """decode.PagedCache: one row appended (key [1, 2], value [3, 4]), then gathered."""
    cache = m.paged_cache(2, 4, 4)
    cache.append(np.array([1, 2]), np.array([3, 4]))
    keys, values = cache.gather(0, 1)
    return keys.tolist(), values.tolist()


def windowed_decode(m: ModuleType) -> Any:
    """decode.decode: the chapter's model, 8 steps, W = 4, pages of 4: pages held after each."""
    run = m.decode(structured_model(), 8, 0, 4, page_size=4)
    return [run.pages_after(step) for step in range(1, 9)]


def pool_with_a_neighbour(m: ModuleType) -> Any:
    """decode.PagedCache.pages_in_use with another request's page in the same pool."""
    table = m.PageTable(4, 4, row_shape=(2, 2), dtype=np.int8)
    cache = m.PagedCache(table, "a")
    table.new("b")
    table.append("b", np.zeros((2, 2), dtype=np.int8))
    cache.append(np.array([1, 2]), np.array([3, 4]))
    return cache.pages_in_use()


def softmax_of_a_large_score(m: ModuleType) -> Any:
    """tiny_lm.float_trace: one token, its score 900 (exp overflows unless the max is taken)."""
    one = np.ones((1, 1))
    model = m.TinyLM(30 * one, one, one, one, one, one)
    with np.errstate(all="ignore"):
        return m.float_trace(model, 0, [], []).probs.tolist()


# description -> (probe, what the unbroken code returns); a mutant must change it
PROBES: dict[str, tuple[Callable[[ModuleType], Any], Any]] = {
    "a page freed by its last owner is not returned to the free list":
        (one_page_released, ([1, 0], 0)),
    "a freed page is put on the free list while others still share it":
        (shared_then_released, ([1], 1)),
    "fork does not count the new owner": (forked, 2),
    "no copy before writing into a shared page": (append_into_shared, ([1], [7, 8], [7], 1)),
    "the copy-on-write copy is empty": (append_into_shared, ([1], [7, 8], [7], 1)),
    "the copy keeps the shared page's reference": (append_into_shared, ([1], [7, 8], [7], 1)),
    "a new page is taken from a full page's neighbour (offset uses page+1)":
        (slots, [0, 1, 2, 3, 0, 1]),
    "the block-table lookup ignores pages already dropped": (rows_after_trim, [4, 5]),
    "trim releases a page that still holds a needed row": (trimmed(3), (0, [0, 1])),
    "trim keeps pages that are completely outside the window": (trimmed(4), (4, [1])),
    "release forgets the request's pages": (one_page_released, ([1, 0], 0)),
    "exhaustion is not reported": (exhausted, "raised OutOfPages"),
    "the float reference keeps W rows, not W-1": (float_window, [7, 8, 9]),
    "the chip's context is W+1": (step_10_of_window_4, (4, 6, 9, 7)),
    "the gather starts one row late": (step_10_of_window_4, (4, 6, 9, 7)),
    "the gather returns values where keys belong": (gathered, ([[1, 2]], [[3, 4]])),
    "pages outside the window are never released": (windowed_decode, [1, 1, 1, 1, 2, 2, 1, 1]),
    "the trim point is one token too late": (step_10_of_window_4, (4, 6, 9, 7)),
    "pages in use count only the request's pages, not the pool's": (pool_with_a_neighbour, 2),
    "the float softmax does not subtract the maximum score": (softmax_of_a_large_score, [1.0]),
}  # fmt: skip


def load(path: Path, name: str) -> ModuleType:
    """The module in ``path`` under a name of its own, beside the working tree's modules."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def outcome(probe: Callable[[ModuleType], Any], module: ModuleType) -> Any:
    """What the probe returns, or the error it raised (a behaviour too)."""
    try:
        return probe(module)
    except Exception as error:
        return f"raised {type(error).__name__}"


def probe_outcomes(mutant: Mutant, workdir: Path, source: Path = REPO_ROOT) -> tuple[Any, Any]:
    """The mutant's probe on its file as it is under ``source``, and on a broken copy."""
    probe, _ = PROBES[mutant.description]
    unbroken = load(source / mutant.path, f"_unbroken_{mutant.name.replace('-', '_')}")
    copy = apply(mutant, workdir, [mutant.path], source)
    broken = load(copy / mutant.path, f"_mutant_{mutant.name.replace('-', '_')}")
    return outcome(probe, unbroken), outcome(probe, broken)


def outcome_problem(mutant: Mutant, unbroken: Any, broken: Any) -> str | None:
    """Why the probe does not show the mutant breaking live code, or None."""
    expected = PROBES[mutant.description][1]
    if unbroken != expected:
        return (f"{mutant.name}: the unbroken code gives {unbroken!r}, the probe expects "
                f"{expected!r}")
    if broken == expected:
        return (f"{mutant.name}: the mutant changes nothing the probe sees ({broken!r}): its line "
                f"{mutant.original!r} is dead or the change is equivalent; update the catalogue")
    return None


# ---- the catalogue against the code --------------------------------------------------------------


@pytest.mark.parametrize("mutant", HOST_MUTANTS, ids=lambda m: m.name)
def test_each_host_mutant_changes_exactly_one_line_of_the_current_code(mutant):
    check_applies(mutant)


@pytest.mark.parametrize("mutant", HOST_MUTANTS, ids=lambda m: m.name)
def test_each_host_mutant_changes_what_the_function_it_breaks_returns(mutant, tmp_path):
    assert outcome_problem(mutant, *probe_outcomes(mutant, tmp_path)) is None


def test_every_host_mutant_has_a_probe_and_every_probe_a_mutant():
    assert sorted(m.description for m in HOST_MUTANTS) == sorted(PROBES)


def test_host_mutants_are_distinct_and_cover_the_chapters_groups():
    assert len({m.name for m in HOST_MUTANTS}) == len(HOST_MUTANTS) == 20
    assert len({(m.path, m.original, m.mutated) for m in HOST_MUTANTS}) == 20
    groups = [m.group for m in HOST_MUTANTS]
    assert (groups.count("page table"), groups.count("window"), groups.count("host")) == (12, 3, 5)


# ---- negative tests: a catalogue out of step with the code is found -----------------------------


def mutant_described(description: str) -> Mutant:
    return next(m for m in HOST_MUTANTS if m.description == description)


def test_an_equivalent_mutant_is_found(tmp_path):
    """`count <= 1` is `count == 1` where _unref reaches it (count <= 0 raised before)."""
    mutant = replace(mutant_described(
        "a freed page is put on the free list while others still share it"),
        mutated="if count <= 1:")
    problem = outcome_problem(mutant, *probe_outcomes(mutant, tmp_path))
    assert problem is not None and "equivalent" in problem


def test_a_mutant_whose_line_a_refactor_left_dead_is_found(tmp_path):
    """A refactor frees the page a line earlier and returns: the catalogue's line still
    applies (check_applies passes) but nothing runs it any more."""
    mutant = mutant_described("a page freed by its last owner is not returned to the free list")
    source = tmp_path / "refactored"
    target = source / mutant.path
    target.parent.mkdir(parents=True)
    text = (REPO_ROOT / mutant.path).read_text()
    live = "        self._refcounts[page] = count - 1\n"
    assert text.count(live) == 1
    target.write_text(text.replace(live, live + "        self._free.extend([page] if count == 1"
                                   " else [])\n        return\n"))
    check_applies(mutant, source)
    problem = outcome_problem(mutant, *probe_outcomes(mutant, tmp_path / "copies", source))
    assert problem is not None and "dead" in problem
