"""Admission on a shared page pool: the rules that say who may start, and the one loop that asks.

``AdmissionLoop`` admits while a rule says yes and preempts the latest admitted when the pool
runs short: when an append fails (``REACTIVE``) or before the step (``PLANNED``). Its users are
exercise 2's simulation (model.kv.admission_sim) and the serving scheduler (model.host.serving).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from model.chip.geometry import opens_page, pages_for
from model.kv.paged import InvariantError, OutOfPages, PageTable
from model.kv.prefix_cache import PrefixHit

WATERMARK_FRACTION = 0.01  # vLLM's default watermark: 1% of the pool's pages, rounded down
REACTIVE = "reactive"  # preempt when an append raises OutOfPages, then retry it
PLANNED = "planned"  # preempt before the step until every running request's row fits
PREEMPTIONS = (REACTIVE, PLANNED)


class InvalidRequest(ValueError):
    """A request was refused with nothing changed: the scheduler or simulation is as before."""


class AdmissionError(Exception):
    """Base class of the admission loop's errors."""


class RequestTooLong(AdmissionError, InvalidRequest):
    """A request needs more than the chip or the whole pool holds: it could never finish."""


class AdmissionStalled(AdmissionError, RuntimeError):
    """The rule refuses the head of the queue although nothing runs: it would wait forever."""


class StepLimitExceeded(AdmissionError, RuntimeError):
    """The run did not drain within the step limit given."""


# ---- the rules ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What an admission rule may know about a waiting request."""

    rid: Hashable
    expected_rows: int  # rows it is expected to hold when it finishes
    first_rows: int = 1  # rows written when admitted (a prompt's prefill; 1 = one token)


class AdmissionRule(Protocol):
    """The one question asked before starting the request at the head of the queue. A rule
    sees only the free pages it is told and the request, never the running requests."""

    @property
    def name(self) -> str: ...

    def admits(self, free_pages: int, request: Request, page_size: int) -> bool: ...


@dataclass(frozen=True)
class OnePageFree:
    """The chapter's rule: admit while at least one page is free."""

    @property
    def name(self) -> str:
        return "one page free (chapter)"

    def admits(self, free_pages: int, request: Request, page_size: int) -> bool:
        return free_pages >= 1


@dataclass(frozen=True)
class CoversExpected:
    """Exercise 2: admit only when the free pages cover the request's expected length. It
    reserves nothing: requests already running may still take those pages first."""

    @property
    def name(self) -> str:
        return "free pages cover expected length"

    def admits(self, free_pages: int, request: Request, page_size: int) -> bool:
        return free_pages >= pages_for(request.expected_rows, page_size)


@dataclass(frozen=True)
class Watermark:
    """vLLM's rule: admit when, after the request's first pages, at least ``reserve_pages``
    stay free for the running requests to grow into."""

    reserve_pages: int

    def __post_init__(self) -> None:
        if not isinstance(self.reserve_pages, int) or self.reserve_pages < 0:
            raise ValueError(f"reserve_pages must be an integer >= 0, got {self.reserve_pages!r}")

    @classmethod
    def of_pool(cls, n_pages: int, fraction: float = WATERMARK_FRACTION) -> Watermark:
        """The reserve as a fraction of the pool, rounded down (vLLM: int(0.01 * n_pages))."""
        return cls(int(fraction * n_pages))

    @property
    def name(self) -> str:
        return f"watermark ({self.reserve_pages} pages reserved)"

    def admits(self, free_pages: int, request: Request, page_size: int) -> bool:
        first_pages = pages_for(request.first_rows, page_size)
        return free_pages - first_pages >= self.reserve_pages


# ---- the loop ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """One question to the rule about the head of the queue, and what its start needs."""

    free_pages: int  # the free pages the rule is told
    request: Request
    hit: PrefixHit | None = None  # the prefix-cache hit it would start from, if any


@dataclass
class AdmissionStats:
    """What the loop counts over a run."""

    peak_running: int = 0  # most requests running once a step's admissions are done
    preemptions: int = 0


Life = TypeVar("Life")  # what a user keeps of a running request


class AdmissionLoop(Generic[Life]):
    """The waiting queue and the running requests (oldest admission first) of one page pool.

    A user defines ``_query``, ``_start``, ``_preempting`` and, for ``REACTIVE`` only, ``_write``
    (one row, may raise ``OutOfPages``), and calls ``schedule`` once a step."""

    def __init__(self, table: PageTable, rule: AdmissionRule, preemption: str,
                 batch_size: int | None = None, stats: AdmissionStats | None = None):
        if preemption not in PREEMPTIONS:
            raise ValueError(f"preemption must be one of {PREEMPTIONS}, got {preemption!r}")
        self.table = table
        self.rule = rule
        self.preemption = preemption
        self.batch_size = batch_size  # most requests running at once (None: no limit)
        self.stats = stats or AdmissionStats()
        self.step = 0  # steps done
        self._queue: deque[Hashable] = deque()
        self._running: dict[Hashable, Life] = {}  # insertion order = admission order

    def running(self) -> list[Hashable]:
        """The running requests, oldest admission first."""
        return list(self._running)

    def queued(self) -> list[Hashable]:
        """The requests waiting for admission, head first."""
        return list(self._queue)

    @property
    def done(self) -> bool:
        return not self._queue and not self._running

    # ---- what a user says ------------------------------------------------------------------

    def _query(self, rid: Hashable) -> Query:
        raise NotImplementedError

    def _start(self, rid: Hashable, query: Query) -> Life:
        raise NotImplementedError

    def _preempting(self, rid: Hashable) -> None:
        """``rid`` is about to be preempted (its pages still held)."""

    def _write(self, rid: Hashable) -> None:
        raise NotImplementedError(f"{type(self).__name__} writes its rows itself (planned)")

    def _out_of_pages(self, rid: Hashable) -> None:
        """``rid``'s append raised OutOfPages (reactive preemption)."""

    # ---- one step ---------------------------------------------------------------------------

    def schedule(self) -> tuple[list[Hashable], list[Hashable]]:
        """This step's admissions and preemptions (latest admitted first). Reactive: every
        running request writes its row, then admission; planned: admission, then room."""
        if self.preemption == REACTIVE:
            for rid in list(self._running):
                if rid in self._running:  # not preempted earlier in this step
                    self._grow(rid)
            return self._admit(), []
        admitted = self._admit()
        return admitted, self._make_room()

    def _admit(self) -> list[Hashable]:
        """Admit the head of the queue while the rule says yes and the batch has room; the
        first refusal ends admission: no request overtakes the head."""
        admitted = []
        while self._queue and (self.batch_size is None or len(self._running) < self.batch_size):
            rid = self._queue[0]
            query = self._query(rid)
            if not self.rule.admits(query.free_pages, query.request, self.table.page_size):
                if not self._running:
                    raise AdmissionStalled(
                        f"{self.rule.name} refuses request {rid!r} although nothing runs "
                        f"({query.free_pages} of {self.table.n_pages} pages free): it would "
                        "wait forever")
                break
            self._queue.popleft()
            self._running[rid] = self._start(rid, query)
            admitted.append(rid)
            if self.preemption == REACTIVE:
                self._grow(rid)  # its first row
                if self._queue and self._queue[0] == rid:  # preempted at once: the pool is full
                    break
        self.stats.peak_running = max(self.stats.peak_running, len(self._running))
        return admitted

    def _grow(self, rid: Hashable) -> None:
        """Reactive: one row for ``rid``; on OutOfPages preempt the latest admitted and retry,
        unless ``rid`` was the one preempted."""
        while True:
            try:
                self._write(rid)
                return
            except OutOfPages:
                self._out_of_pages(rid)
                if self.preempt() == rid:
                    return

    def _make_room(self) -> list[Hashable]:
        """Planned: preempt until the free pages cover every page this step's rows open."""
        preempted = []
        while self.table.free_count() < self._pages_needed():
            if len(self._running) == 1:
                raise InvariantError(f"request {self.running()[0]!r} alone does not fit the "
                                     "pool, although it was checked when it came")
            preempted.append(self.preempt())
        return preempted

    def _pages_needed(self) -> int:
        size = self.table.page_size
        return sum(opens_page(self.table.length(rid), size) for rid in self._running)

    def preempt(self) -> Hashable:
        """Preempt the latest admitted: its pages released, it goes back to the queue's head and
        is recomputed when readmitted (production servers' choice)."""
        if not self._running:
            raise RuntimeError("nothing runs: there is no request to preempt")
        rid = next(reversed(self._running))
        self._preempting(rid)
        self._stop(rid)
        self._queue.appendleft(rid)
        self.stats.preemptions += 1
        return rid

    def _stop(self, rid: Hashable) -> Life:
        """``rid`` stops running (finished or preempted): its pages go back to the pool."""
        life = self._running.pop(rid)
        self.table.release(rid)
        return life

    # ---- a whole run ------------------------------------------------------------------------

    def _drain(self, advance: Callable[[], None], max_steps: int) -> None:
        """``advance()`` one step at a time until done; past ``max_steps`` it is an error."""
        while not self.done:
            if self.step >= max_steps:
                raise StepLimitExceeded(
                    f"{self.rule.name}: {len(self._queue)} queued and {len(self._running)} "
                    f"running after the step limit of {max_steps} steps")
            advance()
