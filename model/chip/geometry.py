"""Page geometry, defined once: which page and slot a row is in, how many pages rows take.

Logical row ``r`` lies in logical page ``r // P`` at slot ``r % P``; every user of pages takes
this arithmetic from here.
"""

from __future__ import annotations

import numpy as np

from model.chip.isa import PAGE_SHIFT_MAX


def page_of(row: int, page_size: int) -> int:
    """The logical page holding logical row ``row``."""
    return row // page_size


def slot_of(row: int, page_size: int) -> int:
    """Where logical row ``row`` sits in its page."""
    return row % page_size


def opens_page(row: int, page_size: int) -> bool:
    """Row ``row`` is the first of its page: appending it takes a new page."""
    return slot_of(row, page_size) == 0


def pages_for(n_rows: int, page_size: int) -> int:
    """Pages that rows 0 .. n_rows-1 occupy: ceil(n_rows / page_size)."""
    return -(-n_rows // page_size)


def pages_spanned(lo: int, hi: int, page_size: int) -> int:
    """Pages that rows lo .. hi-1 touch (0 for an empty range)."""
    return 0 if hi <= lo else page_of(hi - 1, page_size) - page_of(lo, page_size) + 1


def page_shift_of(page_size: int) -> int:
    """log2 of the page size: the chip's pages are powers of two, up to 2^PAGE_SHIFT_MAX rows."""
    shift = page_size.bit_length() - 1
    if page_size < 1 or page_size != 1 << shift or shift > PAGE_SHIFT_MAX:
        raise ValueError(f"the chip's pages hold 2^k rows, k <= {PAGE_SHIFT_MAX}; "
                         f"got {page_size}")
    return shift


def pool_rows(table: np.ndarray, row: int, length: int, page_shift: int) -> np.ndarray:
    """The pool rows (page * P + slot) of table rows ``row`` .. ``row + length - 1``: table row v
    lies in entry (first + v) >> page_shift, at slot (first + v) & (P - 1)."""
    position = int(table[0]) + row + np.arange(length)
    pages = np.asarray(table)[1 + (position >> page_shift)].astype(np.int64)
    return (pages << page_shift) | (position & ((1 << page_shift) - 1))
