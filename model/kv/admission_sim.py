"""Exercise 2's admission simulation: requests queue, grow a row per step, get preempted, finish.

Requests of known lengths, all queued at step 0, run through the admission loop on a pool whose
rows hold nothing, counting what each rule costs: OutOfPages, preemptions, rows recomputed, steps.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from model.chip.geometry import pages_for
from model.kv.admission import (
    PLANNED,
    REACTIVE,
    AdmissionLoop,
    AdmissionRule,
    Query,
    Request,
    RequestTooLong,
)
from model.kv.paged import PageTable


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


class AdmissionSim(AdmissionLoop[None]):
    """One run: request ``i`` is ``lengths[i]`` rows long, and is queued ``i``-th.

    With ``net_of_running`` the rule is told the pages left once every running request has grown
    to its length, so no page is promised twice; ``sum(lengths)`` steps bound a run."""

    def __init__(self, lengths: Sequence[int], rule: AdmissionRule, n_pages: int,
                 page_size: int, net_of_running: bool = False, preemption: str = REACTIVE):
        _check_lengths(lengths, n_pages, page_size)
        super().__init__(PageTable(n_pages, page_size), rule, preemption)
        self.lengths = list(lengths)
        self.net_of_running = net_of_running
        self._queue.extend(range(len(self.lengths)))
        self._appends_refused = self._recomputed = self._completed = 0
        self._hit: set[Hashable] = set()

    def run(self, on_step: Callable[[AdmissionSim], None] | None = None,
            max_steps: int | None = None) -> AdmissionResult:
        """Step until drained; ``on_step(self)`` is called at the end of every step."""
        def advance() -> None:
            self.step += 1
            self.schedule()
            if self.preemption == PLANNED:  # the rows the plan made room for
                for rid in self.running():
                    self._write(rid)
            if on_step is not None:
                on_step(self)

        self._drain(advance, sum(self.lengths) if max_steps is None else max_steps)
        return self.result()

    def result(self) -> AdmissionResult:
        name = self.rule.name + ", net of running" * self.net_of_running + (
            ", planned preemption" * (self.preemption == PLANNED))
        return AdmissionResult(
            name, self.table.n_pages, self.table.page_size, self.stats.peak_running,
            self._appends_refused, len(self._hit), self.stats.preemptions, self._recomputed,
            self._completed, self.step,
        )  # fmt: skip

    # ---- the loop's questions ---------------------------------------------------------------

    def _query(self, rid: Hashable) -> Query:
        free = self.table.free_count()
        if self.net_of_running:
            free = self.table.n_pages - sum(pages_for(self.lengths[r], self.table.page_size)
                                            for r in self._running)
        return Query(free, Request(rid, expected_rows=self.lengths[rid]))

    def _start(self, rid: Hashable, query: Query) -> None:
        self.table.new(rid)

    def _write(self, rid: Hashable) -> None:
        self.table.append(rid, 0)
        if self.table.length(rid) == self.lengths[rid]:
            self._stop(rid)
            self._completed += 1

    def _out_of_pages(self, rid: Hashable) -> None:
        self._appends_refused += 1
        self._hit.add(rid)

    def _preempting(self, rid: Hashable) -> None:
        self._recomputed += self.table.length(rid)


def simulate(
    lengths: Sequence[int],
    rule: AdmissionRule,
    n_pages: int,
    page_size: int,
    net_of_running: bool = False,
    on_step: Callable[[AdmissionSim], None] | None = None,
    preemption: str = REACTIVE,
) -> AdmissionResult:
    """Run ``lengths`` through a pool of ``n_pages`` pages of ``page_size`` rows under ``rule``."""
    sim = AdmissionSim(lengths, rule, n_pages, page_size, net_of_running, preemption)
    return sim.run(on_step)


def _check_lengths(lengths: Sequence[int], n_pages: int, page_size: int) -> None:
    for rid, length in enumerate(lengths):
        if not isinstance(length, int) or length < 1:
            raise ValueError(f"request {rid}: length must be an integer >= 1, got {length!r}")
        if pages_for(length, page_size) > n_pages:
            raise RequestTooLong(
                f"request {rid}: {length} rows need {pages_for(length, page_size)} pages of "
                f"{page_size} rows, more than the pool's {n_pages}: it could never finish"
            )
