"""Attention sinks (the chapter's exercise 3): the first S rows stay in every window.

The step rule reads rows 0..S-1 and the W-1-S most recent ones once the window is full; the
sink rows live in pages of their own that no trim releases, so the pages in use follow a closed
form (model.kv.step_rule.pages_held), checked here at every step against the page table. The float
reference follows the same rule, checked against a recomputation from the token ids.
"""

from __future__ import annotations

import numpy as np
import pytest

from model.host.decode import ListCache, PagedCache, decode, gather_plan
from model.kv.paged import PageTable
from model.kv.step_rule import pages_held, plan_step
from model.lm.tiny_lm import DIM, float_step, float_windowed, make_model, random_model

STEPS = 32


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def test_the_plan_reads_the_sinks_and_the_recent_rows():
    assert plan_step(8, 8, 2).ranges == ((0, 7),)  # the window is just full: every row
    assert plan_step(9, 8, 2).ranges == ((0, 2), (3, 8))
    assert plan_step(20, 8, 2).ranges == ((0, 2), (14, 19))
    assert all(plan_step(step, 8, 2).rows == min(step, 8) - 1 for step in range(1, 40))
    assert plan_step(9, 8, 2).keep_from == 4 and plan_step(8, 8, 2).keep_from == 3
    assert plan_step(3, 8, 2).keep_from == 0
    assert plan_step(9, 8).ranges == ((1, 8),)  # no sinks: the chapter's rule


@pytest.mark.parametrize(("window", "sinks", "match"), [
    (8, 8, "need a window of more than 8"), (8, 9, "need a window of more than 9"),
    (None, 1, "window None"), (8, -1, "cannot be negative")])
def test_bad_sinks_are_refused_clearly(window, sinks, match):
    with pytest.raises(ValueError, match=match):
        plan_step(1, window, sinks)
    with pytest.raises(ValueError, match=match):
        decode(make_model("structured"), 2, 0, window, sinks=sinks)


def test_pages_held_matches_a_hand_count():
    """W = 8, S = 2, P = 4 after step 20: sinks in 1 page; recent rows 2..19 are 18 rows in
    5 pages, of which the 3 below recent row 13 (= 20 + 1 - 8) are released: 1 + 5 - 3 = 3."""
    assert pages_held(20, 8, 4, 2) == 3
    assert pages_held(1, 8, 4, 2) == 1 and pages_held(3, 8, 4, 2) == 2


@pytest.mark.parametrize(("window", "sinks", "page"),
                         [(8, 2, 4), (8, 2, 1), (8, 1, 2), (6, 4, 4), (4, 3, 16), (8, 7, 2)])
def test_pages_in_use_follow_the_closed_form_at_every_step(window, sinks, page):
    run = decode(make_model("structured"), STEPS, 0, window, page_size=page, sinks=sinks)
    got = [run.pages_after(step) for step in range(1, STEPS + 1)]
    recent_pages = [ceil_div(max(0, s - sinks), page) - max(0, s + 1 - window) // page
                    for s in range(1, STEPS + 1)]
    expected = [ceil_div(min(s, sinks), page) + r for s, r in zip(range(1, STEPS + 1),
                                                                  recent_pages, strict=True)]
    assert got == expected == [pages_held(s, window, page, sinks) for s in range(1, STEPS + 1)]


def test_the_sink_pages_are_never_released():
    table = PageTable(16, 2, row_shape=(2, DIM), dtype=np.int8)
    cache = PagedCache(table, "r", sinks=3)
    for step in range(1, 25):
        cache.append(np.full(DIM, step), np.full(DIM, -step))
        cache.trim(plan_step(step, 6, 3).keep_from)
        if step >= 3:  # rows 0-1 in page 0 and row 2 in page 1, taken first and kept
            assert table.block_table(("r", "sinks")) == [0, 1]
    keys, _ = gather_plan(cache, plan_step(25, 6, 3))
    assert keys[:, 0].tolist() == [1, 2, 3, 23, 24]  # rows 0-2 and 22-23 (row r holds r + 1)


@pytest.mark.parametrize(("window", "sinks", "page"), [(8, 2, 4), (6, 1, 1), (5, 4, 2)])
def test_paged_and_plain_hosts_agree_in_every_integer(window, sinks, page):
    model = random_model(2)
    paged = decode(model, 20, 3, window, page_size=page, sinks=sinks)
    plain = decode(model, 20, 3, window, paged=False, sinks=sinks)
    assert paged.tokens == plain.tokens
    for a, b in zip(paged.records, plain.records, strict=True):
        assert a.logits_int.tolist() == b.logits_int.tolist() and a.cycles == b.cycles


def test_the_structured_rule_holds_with_sinks_and_cycles_go_flat():
    run = decode(make_model("structured"), STEPS, 0, 8, sinks=2)
    expected = [0]
    for _ in range(STEPS):
        expected.append((5 * expected[-1] + 3) % 16)
    assert run.tokens == expected
    totals = [r.cycles[0] for r in run.records]
    assert len(set(totals[7:])) == 1 and run.programs_compiled == 8


@pytest.mark.parametrize(("window", "sinks"), [(5, 2), (4, 1), (6, 5)])
def test_the_float_window_keeps_exactly_the_sinks_and_the_recent_tokens(window, sinks):
    """The windowed float step against a recomputation from the token ids of exactly the
    first S and the last W - S tokens (the new one included)."""
    model = random_model(1)
    tokens = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7]
    keys, values = [], []
    for n in range(1, len(tokens) + 1):
        logits, k, v = float_windowed(model, tokens[n - 1], keys, values, window, sinks)
        attended = tokens[: n - 1] if n <= window else (
            tokens[:sinks] + tokens[n - (window - sinks) : n - 1])
        x = model.embed[attended]
        reference = float_step(model, tokens[n - 1], x @ model.w_k, x @ model.w_v)[0]
        assert np.allclose(logits, reference, atol=1e-12), n
        keys.append(k)
        values.append(v)


def test_a_plain_list_gathers_the_same_rows():
    cache = ListCache(DIM)
    for step in range(1, 13):
        cache.append(np.full(DIM, step), np.full(DIM, step))
    keys, _ = gather_plan(cache, plan_step(13, 8, 2))
    assert keys[:, 0].tolist() == [1, 2, 8, 9, 10, 11, 12]
