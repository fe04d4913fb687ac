"""Prefix alignment (the chapter's exercise 4): ``PageTable.pad_to_page`` and its table.

The unaligned side of the table is example B part 2, whose numbers
scripts/tests/test_examples.py checks against the chapter; here it is only compared with
part 2's rows, not restated. The table's script is tested in
scripts/tests/test_exercises.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from model.host.workloads import share_prompt
from model.kv.paged import OutOfPages, PageTable, check_invariants

# ---- share_prompt and pad_to_page (model/) ------------------------------------------------


def test_one_aligned_row_by_hand():
    """Prompt 100 rows, pages of 16, 8 requests of 40 rows each.

    Aligned: the prompt is padded with 112 - 100 = 12 zero rows to 7 full pages, shared by
    all 8. Each request's own 40 rows are rows 112..151: 16 + 16 + 8, so 3 pages each, and
    none of them is shared. 7 + 8 x 3 = 31 pages, no copy.
    Unaligned (part 2): 6 full shared pages; each request copies the 4-row tail page (rows
    96..99) and writes 12 rows into the copy, then 28 more rows in 2 pages: 3 pages each,
    and the original tail page is freed with the prompt. 6 + 8 x 3 = 30 pages, 8 copies.
    So alignment costs one page here: saved = -1.
    """
    part2 = {"sharers": 8, "own_rows": 40, "n_pages": 400}
    aligned = share_prompt(100, 16, **part2, align=True)
    assert (aligned.pages, aligned.cow_copies, aligned.padding_rows) == (31, 0, 12)
    unaligned = share_prompt(100, 16, **part2)
    assert (unaligned.pages, unaligned.cow_copies, unaligned.padding_rows) == (30, 8, 0)
    assert unaligned.pages - aligned.pages == -1  # pages saved


def test_share_prompt_pads_96_rows_to_three_pages_of_40():
    """24 padding rows make 3 shared pages; each request's 40 rows fill one page of its own."""
    result = share_prompt(96, 40, sharers=8, own_rows=40, n_pages=400, align=True)
    assert (result.pages, result.cow_copies, result.padding_rows) == (3 + 8, 0, 24)


def filled(n_rows: int, page_size: int = 4, n_pages: int = 4) -> PageTable:
    table = PageTable(n_pages, page_size, row_shape=(2,))
    table.new("a")
    for i in range(n_rows):
        table.append("a", [i + 1, -(i + 1)])
    return table


@pytest.mark.parametrize(("n_rows", "padding"), [(0, 0), (1, 3), (3, 1), (4, 0), (5, 3)])
def test_pad_to_page_appends_zero_rows_to_the_boundary(n_rows, padding):
    table = filled(n_rows)
    pages_before = table.used()
    assert table.pad_to_page("a") == padding
    assert table.length("a") == n_rows + padding
    assert table.length("a") % table.page_size == 0
    assert table.used() == pages_before  # padding fills the last page, never takes a new one
    rows = table.rows("a", 0, table.length("a"))
    assert rows[:n_rows, 0].tolist() == list(range(1, n_rows + 1))
    assert not rows[n_rows:].any()
    check_invariants(table)


def test_pad_to_page_copies_a_shared_tail_once():
    table = filled(5)
    table.fork("a", "b")
    assert table.pad_to_page("b") == 3
    assert table.cow_copies == 1
    assert table.block_table("a")[0] == table.block_table("b")[0]  # the full page stays shared
    assert table.block_table("a")[1] != table.block_table("b")[1]
    assert table.rows("a", 0, 5).tolist() == table.rows("b", 0, 5).tolist()
    check_invariants(table)


def test_pad_to_page_out_of_pages_leaves_the_table_unchanged():
    table = filled(5, n_pages=2)  # both pages in use
    table.fork("a", "b")
    before = (table.block_table("b"), table.length("b"), table.pool.copy())
    with pytest.raises(OutOfPages):
        table.pad_to_page("b")
    assert (table.block_table("b"), table.length("b")) == before[:2]
    assert np.array_equal(table.pool, before[2])
    check_invariants(table)
