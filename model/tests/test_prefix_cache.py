"""The prefix cache (model.kv.prefix_cache) and the page table under it (CachingPageTable).

Each trap production prefix caches fell into has a test here, on the table and cache alone;
test_serving.py repeats the ones that involve a scheduler with whole decodes:

* a page taken for reuse loses its key before anyone can hit it (a stale key gives a wrong hit);
* a hit on a cached page nobody holds costs one free page (admission must count it);
* tokens recomputed after a preemption are not counted as hits;
* with a window, only the pages inside the window serve a hit;
* the write offset after a hit: the request continues right after the hit's rows.
"""

from __future__ import annotations

import pytest

from model.kv.paged import (
    CachingPageTable,
    DuplicateRequest,
    InvalidArgument,
    InvariantError,
    OutOfPages,
    check_invariants,
)
from model.kv.prefix_cache import ROOT_KEY, PrefixCache, page_keys

P = 2  # rows per page


def table_of(n_pages: int) -> CachingPageTable:
    return CachingPageTable(n_pages, P, row_shape=(1,))


def fill(cache: PrefixCache, rid, tokens) -> None:
    """A request that computes ``tokens`` itself (row i = [tokens[i]]) and keys its full pages."""
    cache.table.new(rid)
    for i, token in enumerate(tokens):
        cache.table.append(rid, [token])
        cache.register(rid, tokens[: i + 1])
    check_invariants(cache.table)


def rows_of(table: CachingPageTable, rid) -> list[int]:
    return table.rows(rid, table.first_row(rid), table.length(rid))[:, 0].tolist()


# ---- keys --------------------------------------------------------------------------------------


def test_keys_chain_over_full_pages_only():
    keys = page_keys([1, 2, 3, 4, 5], P)
    assert len(keys) == 2  # the fifth token's page is not full
    assert page_keys([1, 2], P) == keys[:1]
    assert page_keys([9, 9, 3, 4], P)[1] != keys[1]  # the same page after another prefix
    assert ROOT_KEY not in keys


# ---- the table ---------------------------------------------------------------------------------


def test_a_cached_page_outlives_its_last_owner_and_is_adopted():
    cache = PrefixCache(table_of(4))
    fill(cache, "a", [1, 2, 3, 4, 5])
    pages = cache.table.block_table("a")
    cache.table.release("a")
    check_invariants(cache.table)
    assert cache.table.evictable_count() == 2  # the two full pages; the partial one is plain
    assert cache.table.free_count() == 4  # evictable pages are free pages
    hit = cache.lookup([1, 2, 3, 4, 7])
    assert (hit.pages, hit.skipped, hit.unowned, hit.rows) == (tuple(pages[:2]), 0, 2, 4)
    cache.adopt("b", hit)
    check_invariants(cache.table)
    assert cache.table.free_count() == 2 and cache.table.evictable_count() == 0
    assert rows_of(cache.table, "b") == [1, 2, 3, 4]
    assert (cache.stats.hits, cache.stats.misses) == (2, 0)


def test_the_write_offset_after_a_hit_is_right_after_its_rows():
    """A request starting on a hit continues at row hit.rows, on a fresh page at offset 0."""
    cache = PrefixCache(table_of(4))
    fill(cache, "a", [1, 2, 3, 4])
    cache.adopt("b", cache.lookup([1, 2, 3, 4, 6]))
    assert cache.table.length("b") == 4
    cache.table.append("b", [6])
    assert rows_of(cache.table, "b") == [1, 2, 3, 4, 6]
    assert rows_of(cache.table, "a") == [1, 2, 3, 4]  # the shared pages were not written
    assert cache.table.cow_copies == 0


def test_a_lookup_leaves_the_last_known_token_to_compute():
    """Every step fed a token gives the next one: a hit never covers the last known token."""
    cache = PrefixCache(table_of(4))
    fill(cache, "a", [1, 2, 3, 4])
    assert cache.lookup([1, 2, 3, 4]).rows == 2
    assert cache.lookup([1, 2, 3]).rows == 2
    assert cache.lookup([1, 2]).rows == 0
    assert cache.lookup([1, 9, 3, 4, 5]).rows == 0  # page 1's key depends on page 0


def test_a_page_taken_for_reuse_loses_its_key_first():
    """Trap: the pool hands out an evictable page; its key must already be gone, or the next
    lookup would 'hit' another request's rows."""
    cache = PrefixCache(table_of(2))
    fill(cache, "a", [1, 2])
    (page,) = cache.table.block_table("a")
    key = page_keys([1, 2], P)[0]
    cache.table.release("a")
    cache.table.new("b")
    for token in (7, 8, 9):  # a plain page first, then the evictable one is taken
        cache.table.append("b", [token])
    assert page in cache.table.block_table("b")
    assert cache.table.lookup(key) is None and cache.table.key_of(page) is None
    assert cache.lookup([1, 2, 3]).pages == ()
    assert cache.evictions == 1
    check_invariants(cache.table)


def test_plain_pages_go_first_then_the_least_recently_freed_tail_first():
    table = table_of(6)
    cache = PrefixCache(table)
    fill(cache, "old", [1, 2, 3, 4])  # pages 0, 1
    fill(cache, "new", [5, 6, 7, 8])  # pages 2, 3
    old, new = table.block_table("old"), table.block_table("new")
    table.release("old")
    table.release("new")
    plain = [p for p in table.free_pages() if table.key_of(p) is None]
    expected = [*plain[::-1], old[1], old[0], new[1], new[0]]  # top of the free list first
    assert table.allocation_order() == expected
    table.new("c")
    taken = []
    for token in range(12):
        table.append("c", [token])
        if token % P == 0:
            taken.append(table.block_table("c")[-1])
    assert taken == expected
    assert cache.evictions == 4
    with pytest.raises(OutOfPages):
        table.append("c", [0])
    check_invariants(table)


def test_a_hit_on_a_page_nobody_holds_costs_one_free_page():
    """Trap: admission must count it. The hit reports it; adopting takes it off the free list."""
    cache = PrefixCache(table_of(3))
    fill(cache, "a", [1, 2, 3, 4])
    cache.table.release("a")
    free = cache.table.free_count()
    hit = cache.lookup([1, 2, 3, 4, 5])
    assert (len(hit.pages), hit.unowned) == (2, 2)
    cache.adopt("b", hit)
    assert cache.table.free_count() == free - hit.unowned


def test_a_hit_on_a_held_page_costs_no_free_page():
    cache = PrefixCache(table_of(3))
    fill(cache, "a", [1, 2, 3])
    free = cache.table.free_count()
    hit = cache.lookup([1, 2, 9])
    assert (len(hit.pages), hit.unowned) == (1, 0)
    cache.adopt("b", hit)
    assert cache.table.free_count() == free
    assert cache.table.refcount(hit.pages[0]) == 2


def test_recomputed_pages_are_not_hits():
    """Trap: a readmitted request re-finding the pages it computed before is recomputation
    avoided, not a prefix hit; pages it never computed still count."""
    cache = PrefixCache(table_of(4))
    fill(cache, "other", [1, 2, 3, 4, 5, 6])  # three full pages
    cache.adopt("r", cache.lookup([1, 2, 3, 4, 5, 6, 0]), computed_rows=4)
    assert (cache.stats.hits, cache.stats.resumed, cache.stats.misses) == (1, 2, 0)


def test_misses_count_the_pages_a_request_computes():
    cache = PrefixCache(table_of(4))
    fill(cache, "a", [1, 2])
    cache.adopt("b", cache.lookup([1, 2, 3, 4, 5, 6, 7]))
    assert (cache.stats.hits, cache.stats.misses) == (1, 2)


# ---- windows -----------------------------------------------------------------------------------


def test_with_a_window_only_pages_inside_it_serve_a_hit():
    """Window 3, pages of 2: the first computed step after 4 pages (step 9) reads rows 6, 7,
    page 3 only; pages 0..2 lie below the window and are skipped: not held, not counted."""
    cache = PrefixCache(table_of(8), window=3)
    tokens = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    fill(cache, "a", tokens)
    hit = cache.lookup(tokens)
    a_pages = cache.table.block_table("a")
    assert (hit.pages, hit.skipped, hit.rows) == ((a_pages[3],), 3, 8)
    cache.adopt("b", hit)
    assert (cache.stats.hits, cache.stats.misses) == (1, 0)
    assert cache.table.first_row("b") == 6 and cache.table.length("b") == 8
    assert rows_of(cache.table, "b") == [7, 8]
    check_invariants(cache.table)


def test_with_a_window_pages_below_it_need_not_be_cached():
    """The pages below the window may have been evicted: the hit still serves the window."""
    cache = PrefixCache(table_of(8), window=3)
    tokens = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    fill(cache, "a", tokens)  # pages 0..3 full, page 4 partial, 3 pages free
    cache.table.trim("a", 6)  # pages 0..2 become evictable
    cache.table.new("thief")
    for _ in range(6 * P):  # the 3 plain free pages, then the 3 evictable ones
        cache.table.append("thief", [0])
    assert cache.evictions == 3
    hit = cache.lookup(tokens)
    assert (hit.pages, hit.skipped) == ((cache.table.block_table("a")[0],), 3)


def test_with_a_window_a_gap_inside_it_shortens_the_hit():
    """Page 3 is missing: 4 pages cannot be served; 3 can (step 7 reads rows 4, 5: page 2)."""
    cache = PrefixCache(table_of(8), window=3)
    tokens = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    fill(cache, "a", tokens)
    pages = cache.table.block_table("a")
    cache.table.release("a")
    cache.table.adopt("hold", pages[:3])  # only page 3 stays evictable
    cache.table.new("thief")
    while cache.table.key_of(pages[3]) is not None:  # plain pages first, then page 3
        cache.table.append("thief", [0])
    hit = cache.lookup(tokens)
    assert (hit.pages, hit.skipped, hit.rows) == ((pages[2],), 2, 6)


# ---- bad input ---------------------------------------------------------------------------------


def test_adopt_refuses_bad_pages_and_changes_nothing():
    cache = PrefixCache(table_of(4))
    fill(cache, "a", [1, 2, 3])
    full, partial = cache.table.block_table("a")
    before = (cache.table.free_pages(), cache.table.requests(), cache.table.refcount(full))
    for pages, skipped in (([partial], 0), ([full, full], 0), ([full], -1), ([99], 0)):
        with pytest.raises(InvalidArgument):
            cache.table.adopt("b", pages, skipped)
    with pytest.raises(DuplicateRequest):
        cache.table.adopt("a", [full])
    assert before == (cache.table.free_pages(), cache.table.requests(),
                      cache.table.refcount(full))
    check_invariants(cache.table)


def test_cache_refuses_free_and_already_cached_pages():
    table = table_of(3)
    table.new("a")
    table.append("a", [1])
    (page,) = table.block_table("a")
    assert table.cache(page, "k") is True
    with pytest.raises(InvalidArgument, match="already cached"):
        table.cache(page, "other")
    table.new("b")
    table.append("b", [1])
    assert table.cache(table.block_table("b")[0], "k") is False  # the key finds page already
    with pytest.raises(InvalidArgument, match="free"):
        table.cache(table.free_pages()[0], "x")


def test_check_invariants_catches_broken_cache_bookkeeping():
    cache = PrefixCache(table_of(3))
    fill(cache, "a", [1, 2])
    cache.table.release("a")
    cache.table._evictable.clear()  # an evictable page the table forgot: it would never be used
    with pytest.raises(InvariantError, match="evictable"):
        check_invariants(cache.table)
