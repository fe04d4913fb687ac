"""Admission on a shared page pool: requests queue, grow a row per step, get preempted, finish.

The simulation behind the chapter's exercise 2. The pool is a ``model.kv.paged.PageTable``; an
admission rule (model/kv/admission.py) decides when the request at the head of the queue may
start. Time runs in steps 1, 2, 3, ...

Arrival: every request is queued at step 0, in the order given (first come, first served).

Each step, in this order:

1. Grow. Every running request, oldest admission first, appends one row. If the append raises
   ``OutOfPages``, the latest admitted running request is preempted (production servers'
   choice): its pages are released, its rows count as recomputed, and it goes back to the
   front of the queue, to restart from 0 rows when readmitted. The append is then retried,
   unless the request that hit ``OutOfPages`` was itself the one preempted. A request that
   reaches its length finishes and releases its pages at once.
2. Admit. While the queue is not empty and the rule admits its head, the head starts and
   writes its first row (it may finish at once if its length is 1). The first refusal ends
   admission for the step: no request overtakes the head.

The rule is told the pool's free pages. With ``net_of_running=True`` it is told the pages
left once every running request has grown to its expected length instead
(``n_pages - sum(pages_for(expected))`` over the running requests, as no page is shared
here): the free pages a rule counts are then not also promised to a request already running.

The rules are told each request's expected length; here that is its true length (an oracle:
a server would know a prediction or the request's max_tokens at best).

The run ends when the queue is empty and nothing runs; every request then has completed.
It always ends: the oldest running request is never the victim unless it runs alone, and
alone it fits the pool (checked up front), so every step writes at least one row that is
never recomputed, and ``sum(lengths)`` steps bound the run. A rule that refuses the head on
an empty pool would wait forever: that is an ``AdmissionStalled`` error instead.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from model.chip.geometry import pages_for
from model.kv.admission import AdmissionRule, InvalidRequest, Request
from model.kv.paged import OutOfPages, PageTable

__all__ = [
    "AdmissionError",
    "AdmissionResult",
    "AdmissionSim",
    "AdmissionStalled",
    "RequestTooLong",
    "StepLimitExceeded",
    "simulate",
]


class AdmissionError(Exception):
    """Base class of the simulation's errors."""


class RequestTooLong(AdmissionError, InvalidRequest):
    """A request needs more pages than the whole pool: it could never finish."""


class AdmissionStalled(AdmissionError, RuntimeError):
    """The rule refuses the head of the queue although nothing runs: it would wait forever."""


class StepLimitExceeded(AdmissionError, RuntimeError):
    """The run did not drain within the step limit given."""


@dataclass(frozen=True)
class AdmissionResult:
    """The counts of one run of one rule."""

    rule: str
    n_pages: int
    page_size: int
    peak_running: int  # most requests running at the end of a step
    out_of_pages: int  # appends that raised OutOfPages
    requests_hit: int  # distinct requests whose own append raised OutOfPages
    preemptions: int
    rows_recomputed: int  # rows held by requests when they were preempted
    completed: int
    steps: int  # steps until the queue was empty and nothing ran


class AdmissionSim:
    """One run: a queue, the running requests (in admission order) and the page pool."""

    def __init__(
        self,
        lengths: Sequence[int],
        rule: AdmissionRule,
        n_pages: int,
        page_size: int,
        net_of_running: bool = False,
    ) -> None:
        self.table = PageTable(n_pages, page_size)
        _check_lengths(lengths, n_pages, page_size)
        self.lengths = list(lengths)
        self.rule = rule
        self.net_of_running = net_of_running
        self.step = 0
        self.queue: deque[int] = deque(range(len(self.lengths)))
        self.running: dict[int, None] = {}  # insertion order = admission order
        self._peak = self._out_of_pages = self._preemptions = 0
        self._recomputed = self._completed = 0
        self._hit: set[int] = set()
        self._expected_pages = 0  # sum of pages_for(expected length) over the running requests

    def run(
        self,
        on_step: Callable[[AdmissionSim], None] | None = None,
        max_steps: int | None = None,
    ) -> AdmissionResult:
        """Step until drained; ``on_step(self)`` is called at the end of every step."""
        limit = sum(self.lengths) if max_steps is None else max_steps
        while self.queue or self.running:
            if self.step >= limit:
                raise StepLimitExceeded(
                    f"{self.rule.name}: {len(self.queue)} queued and {len(self.running)} "
                    f"running after the step limit of {limit} steps"
                )
            self.step += 1
            self._grow()
            self._admit()
            self._peak = max(self._peak, len(self.running))
            if on_step is not None:
                on_step(self)
        return self.result()

    def result(self) -> AdmissionResult:
        name = f"{self.rule.name}, net of running" if self.net_of_running else self.rule.name
        return AdmissionResult(
            name, self.table.n_pages, self.table.page_size, self._peak,
            self._out_of_pages, len(self._hit), self._preemptions, self._recomputed,
            self._completed, self.step,
        )  # fmt: skip

    def free_pages_told(self) -> int:
        """The free pages the rule is told: the pool's, or net of the running requests' growth."""
        if self.net_of_running:
            return self.table.n_pages - self._expected_pages
        return self.table.free_count()

    # ---- one step ---------------------------------------------------------------------------

    def _grow(self) -> None:
        for rid in list(self.running):
            if rid in self.running:  # not preempted earlier in this step
                self._append(rid)

    def _admit(self) -> None:
        while self.queue:
            rid = self.queue[0]
            request = Request(rid, expected_rows=self.lengths[rid])
            if not self.rule.admits(self.free_pages_told(), request, self.table.page_size):
                if not self.running:
                    raise AdmissionStalled(
                        f"{self.rule.name} refuses request {rid} (length {self.lengths[rid]}) "
                        f"on an empty pool of {self.table.n_pages} pages: it would wait forever"
                    )
                return
            self.queue.popleft()
            self.table.new(rid)
            self._start(rid)
            self._append(rid)
            if self.queue and self.queue[0] == rid:  # preempted at once: the pool is full
                return

    def _append(self, rid: int) -> None:
        """One row for ``rid``; on OutOfPages preempt the latest admitted and retry."""
        while True:
            try:
                self.table.append(rid, 0)
                break
            except OutOfPages:
                self._out_of_pages += 1
                self._hit.add(rid)
                victim = next(reversed(self.running))
                self._preempt(victim)
                if victim == rid:
                    return
        if self.table.length(rid) == self.lengths[rid]:
            self._finish(rid)

    def _preempt(self, rid: int) -> None:
        self._recomputed += self.table.length(rid)
        self._preemptions += 1
        self._stop(rid)
        self.queue.appendleft(rid)

    def _finish(self, rid: int) -> None:
        self._stop(rid)
        self._completed += 1

    def _start(self, rid: int) -> None:
        self.running[rid] = None
        self._expected_pages += pages_for(self.lengths[rid], self.table.page_size)

    def _stop(self, rid: int) -> None:
        self.table.release(rid)
        del self.running[rid]
        self._expected_pages -= pages_for(self.lengths[rid], self.table.page_size)


def simulate(
    lengths: Sequence[int],
    rule: AdmissionRule,
    n_pages: int,
    page_size: int,
    net_of_running: bool = False,
    on_step: Callable[[AdmissionSim], None] | None = None,
) -> AdmissionResult:
    """Run ``lengths`` through a pool of ``n_pages`` pages of ``page_size`` rows under ``rule``."""
    return AdmissionSim(lengths, rule, n_pages, page_size, net_of_running).run(on_step)


def _check_lengths(lengths: Sequence[int], n_pages: int, page_size: int) -> None:
    for rid, length in enumerate(lengths):
        if not isinstance(length, int) or length < 1:
            raise ValueError(f"request {rid}: length must be an integer >= 1, got {length!r}")
        if pages_for(length, page_size) > n_pages:
            raise RequestTooLong(
                f"request {rid}: {length} rows need {pages_for(length, page_size)} pages of "
                f"{page_size} rows, more than the pool's {n_pages}: it could never finish"
            )
