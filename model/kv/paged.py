"""The paged KV cache: each request's rows in fixed-size pages from one shared pool.

A request takes a page when it needs one, not a reservation for its longest length (vLLM's
block pool, nano-vllm's block manager). ``CachingPageTable`` adds keyed pages for the prefix
cache; ``check_invariants`` re-derives the bookkeeping from scratch.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from model.chip.geometry import opens_page, page_of, pages_for, slot_of


class PageTableError(Exception):
    """Base class of the errors a caller can provoke; the table is left unchanged."""


class UnknownRequest(PageTableError, KeyError):
    """The request id is not live (never created, or already released)."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class DuplicateRequest(PageTableError, ValueError):
    """``new`` or ``fork`` named a request id that is already live."""


class InvalidArgument(PageTableError, ValueError):
    """A size, row range, trim point, page number or row that does not fit the table."""


class OutOfPages(PageTableError):
    """No free page is left for an append (a new page or a copy-on-write copy)."""


class InvariantError(AssertionError):
    """The page table's bookkeeping is inconsistent: a bug, never bad input."""


@dataclass
class _Request:
    """What the table knows about one live request."""

    pages: list[int] = field(default_factory=list)  # block table: physical page per logical page
    length: int = 0  # rows appended so far, dropped ones included
    dropped: int = 0  # logical pages released from the front by trim
    # the pool row of every slot of ``pages``, rebuilt by the first gather after the block
    # table changes, so a gather is one index; a cache, not state: left out of == and repr
    slots: np.ndarray | None = field(default=None, compare=False, repr=False)


class PageTable:
    """Pages of ``page_size`` rows in a shared pool: block tables, refcounts, copy-on-write.

    The free list is a stack starting as ``[n-1, ..., 1, 0]``: page 0 is handed out first and a
    freed page is reused first (this order is part of the specification). A page shared by
    ``fork`` goes back with its last owner; appending into a shared, partly filled last page
    copies it first. A failed call (bad input or ``OutOfPages``) leaves the table as it was.
    """

    def __init__(
        self,
        n_pages: int,
        page_size: int,
        row_shape: tuple[int, ...] = (),
        dtype: DTypeLike = np.int64,
    ) -> None:
        for name, value in (("n_pages", n_pages), ("page_size", page_size)):
            if not isinstance(value, (int, np.integer)) or value <= 0:
                raise InvalidArgument(f"{name} must be a positive integer, got {value!r}")
        self.n_pages = int(n_pages)
        self.page_size = int(page_size)
        self.row_shape = tuple(int(n) for n in row_shape)
        self.dtype = np.dtype(dtype)
        self.pool = np.zeros((self.n_pages, self.page_size, *self.row_shape), dtype=self.dtype)
        self.cow_copies = 0  # pages copied by copy-on-write since construction
        self._refcounts = [0] * self.n_pages
        self._free = list(range(self.n_pages - 1, -1, -1))  # pop() hands out page 0 first
        self._requests: dict[Hashable, _Request] = {}

    # ---- requests -------------------------------------------------------------------------

    def new(self, rid: Hashable) -> None:
        """Start an empty request; it takes no page until its first append."""
        if rid in self._requests:
            raise DuplicateRequest(
                f"request {rid!r} already exists (length {self._requests[rid].length}); "
                "release it first or use another id"
            )
        self._requests[rid] = _Request()

    def fork(self, src: Hashable, dst: Hashable) -> None:
        """Make ``dst`` share every page of ``src``: a common prefix stored once, nothing copied."""
        source = self._get(src)
        if dst in self._requests:
            raise DuplicateRequest(
                f"cannot fork {src!r} onto {dst!r}: request {dst!r} already exists; "
                "release it first or fork onto a new id"
            )
        for page in source.pages:
            self._refcounts[page] += 1
        self._requests[dst] = _Request(list(source.pages), source.length, source.dropped)

    def release(self, rid: Hashable) -> None:
        """Drop every page of the request and forget it; pages with no other owner become free."""
        request = self._get(rid)
        del self._requests[rid]
        for page in request.pages:
            self._unref(page)

    # ---- rows -----------------------------------------------------------------------------

    def append(self, rid: Hashable, row: ArrayLike) -> None:
        """Write the request's next row; take a new page, or privately copy a shared one, first."""
        request = self._get(rid)
        value = self._as_row(rid, row)
        if opens_page(request.length, self.page_size):
            request.pages.append(self._allocate(rid, f"row {request.length} (a new page)"))
            request.slots = None
        elif self._refcounts[request.pages[-1]] > 1:
            self._copy_on_write(rid, request)
        self.pool[request.pages[-1], slot_of(request.length, self.page_size), ...] = value
        request.length += 1

    def rows(self, rid: Hashable, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo <= i < hi`` as an array ``(hi - lo, *row_shape)``, in one vectorised gather."""
        request = self._get(rid)
        lo, hi = _as_index(rid, "lo", lo), _as_index(rid, "hi", hi)
        first = request.dropped * self.page_size
        if not first <= lo <= hi <= request.length:
            raise InvalidArgument(
                f"request {rid!r}: rows({lo}, {hi}) is outside the readable rows "
                f"[{first}, {request.length}) (need first_row <= lo <= hi <= length)"
            )
        if request.slots is None:
            request.slots = self._slots(request.pages)
        start = self._position(request, lo)
        pool_rows = self.pool.reshape(-1, *self.row_shape)  # a view: (pages * slots, *row_shape)
        # take along one axis is several times faster than fancy indexing with [ ]
        return pool_rows.take(request.slots[start : start + hi - lo], axis=0)

    def write(self, rid: Hashable, index: int, row: ArrayLike) -> None:
        """Overwrite appended row ``index`` (chip gather records what the chip wrote); a shared
        page is refused, since its other owners would see the change."""
        request = self._get(rid)
        value = self._as_row(rid, row)
        index = _as_index(rid, "index", index)
        if not request.dropped * self.page_size <= index < request.length:
            raise InvalidArgument(
                f"request {rid!r}: write({index}) is outside the readable rows "
                f"[{request.dropped * self.page_size}, {request.length})"
            )
        page = request.pages[self._table_index(request, index)]
        if self._refcounts[page] > 1:
            raise InvalidArgument(
                f"request {rid!r}: row {index} lies in page {page}, which "
                f"{self._refcounts[page]} requests share; append (copy-on-write) first"
            )
        self.pool[page, slot_of(index, self.page_size), ...] = value

    def trim(self, rid: Hashable, keep_from: int) -> None:
        """Release the request's pages lying entirely below logical row ``keep_from`` (a window)."""
        request = self._get(rid)
        keep_from = _as_index(rid, "keep_from", keep_from)
        if not 0 <= keep_from <= request.length:
            raise InvalidArgument(
                f"request {rid!r}: trim(keep_from={keep_from}) is outside [0, {request.length}] "
                "(the request's length)"
            )
        n_release = page_of(keep_from, self.page_size) - request.dropped
        if n_release <= 0:
            return
        released = request.pages[:n_release]
        del request.pages[:n_release]
        request.dropped += n_release
        if request.slots is not None:  # the released pages' slots were the first ones
            request.slots = request.slots[n_release * self.page_size :]
        for page in released:  # oldest first: the newest freed page is reused first
            self._unref(page)

    def pad_to_page(self, rid: Hashable) -> int:
        """Append zero rows up to the next page boundary and return how many: padding a prompt
        before ``fork`` spares its sharers a copy-on-write (a model must mask the padding)."""
        length = self._get(rid).length
        n_padding = pages_for(length, self.page_size) * self.page_size - length
        zero_row = np.zeros(self.row_shape, dtype=self.dtype)
        for _ in range(n_padding):
            self.append(rid, zero_row)
        return n_padding

    # ---- queries --------------------------------------------------------------------------

    def length(self, rid: Hashable) -> int:
        """Rows appended to the request so far, released ones included."""
        return self._get(rid).length

    def first_row(self, rid: Hashable) -> int:
        """The first logical row still readable: everything below was released by ``trim``."""
        return self._get(rid).dropped * self.page_size

    def block_table(self, rid: Hashable) -> list[int]:
        """A copy of the request's block table: the physical page of each live logical page."""
        return list(self._get(rid).pages)

    def refcount(self, page: int) -> int:
        """How many block-table entries name physical ``page``."""
        if not isinstance(page, (int, np.integer)) or not 0 <= page < self.n_pages:
            raise InvalidArgument(
                f"page {page!r} is not a page of this pool (0..{self.n_pages - 1})"
            )
        return self._refcounts[page]

    def requests(self) -> list[Hashable]:
        """The live request ids, in creation order."""
        return list(self._requests)

    def free_pages(self) -> list[int]:
        """A copy of the free list; its last element is the next page handed out."""
        return list(self._free)

    def used(self) -> int:
        """Pages held by at least one request."""
        return self.n_pages - len(self._free)

    def free_count(self) -> int:
        return len(self._free)

    # ---- internals ------------------------------------------------------------------------

    def _get(self, rid: Hashable) -> _Request:
        try:
            return self._requests[rid]
        except KeyError:
            raise UnknownRequest(
                f"request {rid!r} is not live: it was never created with new()/fork() "
                "or has already been released"
            ) from None

    def _slots(self, pages: list[int]) -> np.ndarray:
        """The pool rows of every slot of ``pages``, page after page: a gather's index."""
        first_slots = np.asarray(pages, dtype=np.intp) * self.page_size
        return (first_slots[:, None] + np.arange(self.page_size)).reshape(-1)

    def _table_index(self, request: _Request, logical: int) -> int:
        """The place of logical row ``logical``'s page in the block table (trim drops its front)."""
        return page_of(logical, self.page_size) - request.dropped

    def _position(self, request: _Request, logical: int) -> int:
        """Where logical row ``logical`` sits in ``request.slots``."""
        return (self._table_index(request, logical) * self.page_size
                + slot_of(logical, self.page_size))

    def _as_row(self, rid: Hashable, row: ArrayLike) -> np.ndarray:
        """Convert ``row`` to the row shape and dtype, refusing changes to its values."""
        value = np.asarray(row, dtype=object if self.dtype == object else None)
        if value.shape != self.row_shape:
            raise InvalidArgument(
                f"request {rid!r}: row of shape {value.shape} does not match "
                f"row_shape {self.row_shape}"
            )
        if value.dtype == self.dtype:
            return value
        if not _castable(value.dtype, self.dtype):
            raise InvalidArgument(
                f"request {rid!r}: row of dtype {value.dtype} cannot be stored as "
                f"{self.dtype}; convert it first"
            )
        converted = value.astype(self.dtype)
        if self.dtype.kind in "iu" and not np.array_equal(converted, value):
            raise InvalidArgument(f"request {rid!r}: row {row!r} does not fit in {self.dtype}")
        return converted

    def _copy_on_write(self, rid: Hashable, request: _Request) -> None:
        shared = request.pages[-1]
        private = self._allocate(rid, f"the copy-on-write copy of shared page {shared}")
        self.pool[private] = self.pool[shared]
        self._unref(shared)
        request.pages[-1] = private
        request.slots = None
        self.cow_copies += 1

    def _allocate(self, rid: Hashable, purpose: str) -> int:
        if not self._free:
            raise OutOfPages(
                f"request {rid!r}: no free page for {purpose}; all {self.n_pages} pages are in use "
                "(release or trim a request, or use a larger pool)"
            )
        page = self._free.pop()
        self._refcounts[page] = 1
        return page

    def _unref(self, page: int) -> None:
        count = self._refcounts[page]
        if count <= 0:
            raise InvariantError(f"double free: page {page} already has reference count {count}")
        self._refcounts[page] = count - 1
        if count == 1:
            self._free.append(page)


def _as_index(rid: Hashable, name: str, value: int) -> int:
    try:
        return operator.index(value)
    except TypeError:
        message = f"request {rid!r}: {name} must be an integer, got {value!r}"
        raise InvalidArgument(message) from None


def _castable(source: np.dtype, target: np.dtype) -> bool:
    """Integers fit any integer pool (the range is checked apart); else numpy's same-kind rule."""
    if source.kind in "biu" and target.kind in "iu":
        return True
    return bool(np.can_cast(source, target, casting="same_kind"))


def check_invariants(table: PageTable) -> None:
    """Re-derive the bookkeeping from the block tables; raise ``InvariantError`` on any mismatch
    (refcounts, a duplicate or leaked free page, counts, a block table's length)."""
    expected_shape = (table.n_pages, table.page_size, *table.row_shape)
    _require(
        table.pool.shape == expected_shape,
        lambda: f"pool has shape {table.pool.shape}, expected {expected_shape}",
    )
    refcounts = np.asarray(table._refcounts, dtype=np.intp)
    named = np.fromiter(chain.from_iterable(r.pages for r in table._requests.values()),
                        dtype=np.intp)
    free = np.asarray(table._free, dtype=np.intp)
    _check_refcounts(refcounts, _occurrences(named, table.n_pages, "a block table"))
    _check_free_list(refcounts, _occurrences(free, table.n_pages, "the free list"))
    n_referenced = int((refcounts > 0).sum())
    _require(
        table.used() == n_referenced and table.free_count() == table.n_pages - n_referenced,
        lambda: f"used() {table.used()} and free_count() {table.free_count()}, "
        f"but {n_referenced} of {table.n_pages} pages are referenced",
    )
    for rid, request in table._requests.items():
        _check_request(rid, request, table.page_size)
    if isinstance(table, CachingPageTable):
        _check_cached_pages(table)


def _occurrences(pages: np.ndarray, n_pages: int, where: str) -> np.ndarray:
    """How many times each page appears in ``pages``, after checking every number is a page."""
    bad = pages[(pages < 0) | (pages >= n_pages)]
    _require(bad.size == 0,
             lambda: f"{where} names page(s) {bad.tolist()} outside 0..{n_pages - 1}")
    return np.bincount(pages, minlength=n_pages)


def _check_refcounts(refcounts: np.ndarray, entries: np.ndarray) -> None:
    wrong = np.flatnonzero(entries != refcounts)
    if wrong.size:
        page = wrong[0]
        raise InvariantError(
            f"page {page}: refcount {refcounts[page]} but {entries[page]} block-table entries"
        )


def _check_free_list(refcounts: np.ndarray, on_free: np.ndarray) -> None:
    twice = np.flatnonzero(on_free > 1)
    _require(twice.size == 0, lambda: f"page(s) {twice.tolist()} are on the free list twice")
    both = np.flatnonzero((on_free > 0) & (refcounts > 0))
    _require(both.size == 0, lambda: f"page(s) {both.tolist()} are both free and referenced")
    leaked = np.flatnonzero((on_free == 0) & (refcounts == 0))
    _require(leaked.size == 0,
             lambda: f"page(s) {leaked.tolist()} are neither free nor referenced (leak)")


def _check_request(rid: Hashable, request: _Request, page_size: int) -> None:
    _require(
        request.length >= 0 and 0 <= request.dropped * page_size <= request.length,
        lambda: f"request {rid!r}: length {request.length} with {request.dropped} dropped pages",
    )
    expected = pages_for(request.length, page_size) - request.dropped
    _require(
        len(request.pages) == expected,
        lambda: f"request {rid!r}: block table has {len(request.pages)} pages, length "
        f"{request.length} and {request.dropped} dropped pages need {expected}",
    )


def _require(condition: bool, message: Callable[[], str]) -> None:
    """Raise InvariantError unless ``condition``; the message is built only for a failure."""
    if not condition:
        raise InvariantError(message())


# ---- a page table for a prefix cache -------------------------------------------------------------


class CachingPageTable(PageTable):
    """A PageTable whose full pages can be *cached*: found by a key, kept after their last owner.

    Without owners a cached page is *evictable*: on the free list, but handed out only after
    every plain free page, least recently freed and tail first (vLLM's order: a hit needs every
    page before it), its key dropped first so that no stale key finds another request's rows.
    """

    def __init__(
        self,
        n_pages: int,
        page_size: int,
        row_shape: tuple[int, ...] = (),
        dtype: DTypeLike = np.int64,
    ) -> None:
        super().__init__(n_pages, page_size, row_shape, dtype)
        self.evictions = 0  # cached pages whose key was dropped to hand them out again
        self._keys: dict[int, Hashable] = {}  # cached page -> its key
        self._pages_by_key: dict[Hashable, int] = {}
        self._evictable: dict[int, None] = {}  # unowned cached pages, next evicted first

    # ---- cached pages -----------------------------------------------------------------------

    def cache(self, page: int, key: Hashable) -> bool:
        """Let ``key`` find held ``page``; False, with nothing changed, if ``key`` finds one."""
        if self.refcount(page) == 0:
            raise InvalidArgument(f"page {page} is free: only a page someone holds can be cached")
        if page in self._keys:
            raise InvalidArgument(f"page {page} is already cached under key {self._keys[page]!r}")
        if key in self._pages_by_key:
            return False
        self._keys[page] = key
        self._pages_by_key[key] = page
        return True

    def lookup(self, key: Hashable) -> int | None:
        """The cached page ``key`` finds, held or evictable; None if there is none."""
        return self._pages_by_key.get(key)

    def key_of(self, page: int) -> Hashable | None:
        """The key of a cached page; None for a plain page."""
        return self._keys.get(page)

    def cached_count(self) -> int:
        """Pages a key can find, held or not."""
        return len(self._keys)

    def evictable_count(self) -> int:
        """Cached pages nobody holds: free, but handed out only after every plain free page."""
        return len(self._evictable)

    def allocation_order(self) -> list[int]:
        """The pages the next allocations take, in order: plain free pages (the top of the free
        list first), then evictable pages (least recently freed first)."""
        plain = [page for page in reversed(self._free) if page not in self._keys]
        return plain + list(self._evictable)

    def adopt(self, rid: Hashable, pages: list[int] | tuple[int, ...], skipped: int = 0) -> None:
        """Start request ``rid`` on cached full pages, as its logical pages from ``skipped`` on
        (the first ``skipped`` lie below its window and are not held)."""
        if rid in self._requests:
            raise DuplicateRequest(f"request {rid!r} already exists; cannot adopt pages for it")
        skipped = _as_index(rid, "skipped", skipped)
        pages = [_as_index(rid, "page", page) for page in pages]
        uncached = [page for page in pages if page not in self._keys]
        if skipped < 0 or uncached or len(set(pages)) != len(pages):
            raise InvalidArgument(
                f"request {rid!r}: cannot adopt pages {pages} after {skipped} skipped: pages "
                f"must be distinct cached pages ({uncached} are not cached), skipped >= 0"
            )
        for adopted in pages:
            if self._refcounts[adopted] == 0:  # an evictable page comes back into use
                self._free.remove(adopted)
                del self._evictable[adopted]
            self._refcounts[adopted] += 1
        length = (skipped + len(pages)) * self.page_size
        self._requests[rid] = _Request(list(pages), length, skipped)

    # ---- PageTable, with the cached pages' order --------------------------------------------

    def release(self, rid: Hashable) -> None:
        pages = self.block_table(rid)
        super().release(rid)
        self._queue_tail_first(pages)

    def trim(self, rid: Hashable, keep_from: int) -> None:
        before = self.block_table(rid)
        super().trim(rid, keep_from)
        self._queue_tail_first(before[: len(before) - len(self.block_table(rid))])

    def _queue_tail_first(self, freed: list[int]) -> None:
        """Of the pages one call freed, evict the tail first: it is queued first."""
        for page in reversed(freed):
            if page in self._evictable:
                del self._evictable[page]
                self._evictable[page] = None

    def _unref(self, page: int) -> None:
        super()._unref(page)
        if self._refcounts[page] == 0 and page in self._keys:
            self._evictable[page] = None

    def _allocate(self, rid: Hashable, purpose: str) -> int:
        order = self.allocation_order()
        if order:
            page = order[0]
            if page in self._evictable:
                self._evict(page)
            self._free.remove(page)
            self._free.append(page)  # the top, where PageTable takes its next page
        return super()._allocate(rid, purpose)

    def _evict(self, page: int) -> None:
        """Drop an evictable page's key: from now on no lookup can find it."""
        del self._evictable[page]
        del self._pages_by_key[self._keys.pop(page)]
        self.evictions += 1


def _check_cached_pages(table: CachingPageTable) -> None:
    """The cached pages' bookkeeping: keys and pages map one to one; the evictable pages are
    exactly the cached pages nobody holds; plain free + evictable + owned == total."""
    _require(
        {page: key for key, page in table._pages_by_key.items()} == table._keys,
        lambda: f"keys {table._pages_by_key} and pages {table._keys} do not map one to one",
    )
    unowned = {page for page in table._keys if table._refcounts[page] == 0}
    _require(
        set(table._evictable) == unowned,
        lambda: f"evictable pages {sorted(table._evictable)}, but the unowned cached pages are "
        f"{sorted(unowned)}",
    )
    plain_free = sum(1 for page in table._free if page not in table._keys)
    owned = sum(1 for count in table._refcounts if count > 0)
    _require(
        plain_free + len(table._evictable) + owned == table.n_pages,
        lambda: f"{plain_free} plain free + {len(table._evictable)} evictable + {owned} owned "
        f"pages != {table.n_pages} pages",
    )
