"""Serving many requests on one chip: continuous batching over a shared page pool.

``Scheduler`` runs the admission loop (model.kv.admission) over a ``CachingPageTable`` with a
prefix cache and lays each step out as one chip run of up to B requests (``BatchPlan``), which a
testbench runs on the RTL before committing what the chip returned.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from model.chip.geometry import opens_page, page_of, pages_for, slot_of
from model.compiler.cache import ProgramCache
from model.compiler.gather import KEY, VALUE, gather_for, pool_words, step_table
from model.compiler.inputs import RequestInputs, StepInputs, run_reference
from model.compiler.layout import BATCH_MAX, Pool, max_context
from model.compiler.program import StepResult
from model.host.decode import ListCache, PagedHost, StepRecord, check_pools
from model.kv.admission import (
    PLANNED,
    AdmissionLoop,
    AdmissionRule,
    AdmissionStats,
    InvalidRequest,
    Query,
    RequestTooLong,
)
from model.kv.admission import Request as AdmissionQuery
from model.kv.paged import CachingPageTable, InvariantError, PageTable, check_invariants
from model.kv.prefix_cache import CacheStats, PrefixCache, PrefixHit
from model.kv.step_rule import check_window, next_input, plan_step


class EmptyPrompt(InvalidRequest):
    """A request must bring at least one token: its first step's input."""


class DuplicateRequestId(InvalidRequest):
    """The request id was submitted before."""


class ArrivalInPast(InvalidRequest):
    """The arrival step is earlier than the step the scheduler plans next."""


class RecomputeMismatch(RuntimeError):
    """A recomputed step gave another token than the earlier life did: the chip is not
    deterministic, or a readmitted request read rows that are not its own."""


# ---- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One request: at step ``arrival`` it may start; its first steps are fed ``prompt``."""

    rid: Hashable
    arrival: int
    prompt: tuple[int, ...]
    output_len: int  # tokens generated: the chip's tokens of steps len(prompt) .. steps

    @property
    def steps(self) -> int:
        """Chip steps a complete decode takes: the last generated token is never fed back."""
        return len(self.prompt) + self.output_len - 1


def forced(known: Sequence[int], step: int) -> Sequence[int] | None:
    """``next_input``'s ``force`` after ``step``: the known tokens while the next input is one."""
    return known if step < len(known) else None


def peak_pages(steps: int, window: int | None, page_size: int) -> int:
    """The most pages a request of ``steps`` steps holds: during step L (its row appended, the
    rows below the step's lowest read row already trimmed)."""
    return max(pages_for(step, page_size) - page_of(plan_step(step, window).lo, page_size)
               for step in range(1, steps + 1))


@dataclass
class _Progress:
    """What survives a preemption: the request, its generated tokens, its counts."""

    request: Request
    generated: list[int] = field(default_factory=list)
    computed_rows: int = 0  # the most rows any of its lives computed
    preemptions: int = 0

    @property
    def tokens(self) -> list[int]:
        """The known inputs: the prompt, then the tokens generated so far."""
        return [*self.request.prompt, *self.generated]


@dataclass
class _Life:
    """A running request's state in this life; dropped when it is preempted."""

    progress: _Progress
    start_rows: int  # rows its prefix-cache hit gave it at admission
    counted: CacheStats  # what its admission's lookup counted (withdrawn if it never runs)
    computed: list[Computed] = field(default_factory=list)  # the steps computed this life

    @property
    def rid(self) -> Hashable:
        return self.progress.request.rid


@dataclass(frozen=True, kw_only=True)
class RequestStep(RequestInputs):
    """One request's part of a scheduler step: its inputs, and where its new row goes."""

    first_page: int  # the logical page of block_table[0] (pages below lie outside the window)
    block_table: tuple[int, ...]  # physical pages of the live logical pages, at plan time
    slot: tuple[int, int]  # (physical page, row offset) the step's new row is written to


@dataclass(frozen=True, kw_only=True)
class BatchPlan(StepInputs):
    """One scheduler step: the requests the chip runs (oldest admission first) and why."""

    requests: tuple[RequestStep, ...] = ()  # empty: an idle step (nothing runs, nothing arrived)
    step: int  # the scheduler step, from 0
    admitted: tuple[Hashable, ...]  # in admission order; room may preempt them at once
    preempted: tuple[Hashable, ...]  # latest admitted first


@dataclass(frozen=True)
class Computed:
    """One step of one request as the chip ran it: what went in, what came out."""

    inputs: RequestStep
    result: StepResult


@dataclass
class Finished:
    """A completed request: its generated tokens and the steps of its last life."""

    request: Request
    generated: list[int]
    computed: list[Computed]  # the steps its last life computed (prefix-cache hits excluded)
    preemptions: int
    step: int  # the scheduler step that completed it


@dataclass
class ServingStats(AdmissionStats):
    """Counts over a whole run (the admission loop's: peak running, preemptions; and these)."""

    steps: int = 0  # scheduler steps committed, idle ones included
    chip_runs: int = 0
    rows_computed: int = 0  # request steps run on the chip
    rows_recomputed: int = 0  # of those, steps an earlier life of the request had run


# ---- the scheduler -----------------------------------------------------------------------------


class Scheduler(AdmissionLoop[_Life]):
    """Continuous batching of requests over one page pool (README, "Serving and admission").

    Steps compile in one layout of ``BATCH_MAX`` requests whatever the batch size, in either
    ``gather`` mode (same scheduling, same tokens).
    """

    def __init__(self, programs: ProgramCache, *, n_pages: int, page_size: int,
                 batch_size: int, rule: AdmissionRule, window: int | None = None,
                 prefix_caching: bool = True, gather: str = "host"):
        check_window(window)
        if not 1 <= batch_size <= BATCH_MAX:
            raise ValueError(f"batch_size must be in 1..{BATCH_MAX}, got {batch_size}")
        dim = programs.model.dim
        table = CachingPageTable(n_pages, page_size, row_shape=(2, dim), dtype=np.int8)
        super().__init__(table, rule, PLANNED, batch_size, ServingStats())
        self.cache = PrefixCache(self.table, window)
        pool = Pool(page_size, n_pages, dim) if gather == "chip" else None
        self.programs = ProgramCache(programs.model, programs.calibration, programs.cfg,
                                     gather_for(gather), BATCH_MAX, pool)
        self.window = window
        self.prefix_caching = prefix_caching
        self.finished: dict[Hashable, Finished] = {}
        self._progress: dict[Hashable, _Progress] = {}  # every request submitted
        self._arrivals: list[Request] = []  # submitted, not yet arrived
        self._pending: BatchPlan | None = None

    # ---- requests -------------------------------------------------------------------------

    def submit(self, request: Request) -> None:
        """Accept a request, or refuse it with a clear error and change nothing."""
        self._check_request(request)
        self._progress[request.rid] = _Progress(request)
        self._arrivals.append(request)
        self._arrivals.sort(key=lambda r: r.arrival)  # stable: submission order breaks ties

    def _check_request(self, request: Request) -> None:
        rid, vocab = request.rid, self.programs.model.vocab
        if rid in self._progress:
            raise DuplicateRequestId(f"request {rid!r} was already submitted")
        if not request.prompt:
            raise EmptyPrompt(f"request {rid!r} has an empty prompt: its first step needs a token")
        if any(not isinstance(t, int) or not 0 <= t < vocab for t in request.prompt):
            raise InvalidRequest(f"request {rid!r}: prompt {request.prompt} has tokens outside "
                                 f"0..{vocab - 1}")
        if not isinstance(request.output_len, int) or request.output_len < 1:
            raise InvalidRequest(f"request {rid!r}: output_len must be an integer >= 1, got "
                                 f"{request.output_len!r}")
        if not isinstance(request.arrival, int) or request.arrival < self.step:
            raise ArrivalInPast(f"request {rid!r}: arrival {request.arrival!r} is before step "
                                f"{self.step}, the next one planned")
        self._check_fits(request)

    def _check_fits(self, request: Request) -> None:
        """A request the chip or the pool can never hold is refused now, not stalled later."""
        longest = max_context(self.programs.cfg)
        context = plan_step(request.steps, self.window).context
        if context > longest:
            raise RequestTooLong(f"request {request.rid!r}: {request.steps} steps reach context "
                                 f"{context}, the chip attends at most {longest} (use a window)")
        pages = peak_pages(request.steps, self.window, self.table.page_size)
        if pages > self.table.n_pages:
            raise RequestTooLong(f"request {request.rid!r}: {request.steps} steps hold up to "
                                 f"{pages} pages, the pool has {self.table.n_pages}: it could "
                                 "never finish")

    @property
    def gather(self) -> str:
        """The gather mode of the scheduler's steps: "host" or "chip"."""
        return self.programs.gather.mode

    @property
    def done(self) -> bool:
        """Every request submitted has finished."""
        return len(self.finished) == len(self._progress)

    # ---- plan -----------------------------------------------------------------------------

    def prepare_step(self) -> BatchPlan:
        """The plan of this step's chip run: arrivals, admission, room, the batch."""
        if self._pending is not None:
            raise RuntimeError(f"step {self._pending.step} is planned: commit it first")
        self._arrive()  # 1. arrivals join the queue
        admitted, preempted = self.schedule()  # 2. admission, then 3. room (preemption)
        requests = tuple(self._request_steps())  # 4. the batch: every running request
        chip_gather = self.gather == "chip"
        program = self.programs.get([r.plan.context for r in requests]) if requests else None
        self._pending = BatchPlan(
            program=program, requests=requests, step=self.step, admitted=tuple(admitted),
            preempted=tuple(preempted),
            pool_words=pool_words(self.table) if chip_gather and requests else None)
        return self._pending

    def _arrive(self) -> None:
        """Arrivals whose step has come join the queue: by arrival step, then submission."""
        while self._arrivals and self._arrivals[0].arrival <= self.step:
            self._queue.append(self._arrivals.pop(0).rid)

    def _query(self, rid: Hashable) -> Query:
        """The queue's head with its prefix-cache hit: free pages once the hit's unowned pages are
        taken, and the rows it still writes (at most what its window lets it hold)."""
        request = self._progress[rid].request
        hit = self._lookup(self._progress[rid])
        size = self.table.page_size
        held = peak_pages(request.steps, self.window, size) * size
        query = AdmissionQuery(rid, min(request.steps - hit.rows, held))
        return Query(self.table.free_count() - hit.unowned, query, hit)

    def _lookup(self, progress: _Progress) -> PrefixHit:
        if self.prefix_caching:
            return self.cache.lookup(progress.tokens)
        return PrefixHit((), 0, 0, 0, self.table.page_size)

    def _start(self, rid: Hashable, query: Query) -> _Life:
        """Admitted: its block table built anew, from the hit's pages, and counted."""
        progress = self._progress[rid]
        counted = self.cache.adopt(rid, query.hit, progress.computed_rows)
        return _Life(progress, query.hit.rows, counted)

    def preempt(self) -> Hashable:
        """Preempt the latest admitted running request: release its pages, queue it first."""
        if self._pending is not None:
            raise RuntimeError(f"step {self._pending.step} is planned: commit it first")
        return super().preempt()

    def _preempting(self, rid: Hashable) -> None:
        """Withdraw the prefix-cache counts of an admission preempted before it ran a step."""
        life = self._running[rid]
        if not life.computed:
            self.cache.withdraw(life.counted)
        life.progress.preemptions += 1

    def _request_steps(self) -> list[RequestStep]:
        """Every running request, oldest admission first, with the slot its row will take."""
        new_pages = iter(self.table.allocation_order())  # the pages the appends will take
        return [self._request_step(life, new_pages) for life in self._running.values()]

    def _request_step(self, life: _Life, new_pages: Iterator[int]) -> RequestStep:
        """Its plan, token, slot, and its rows (host gather) or step block table (chip gather)."""
        rid, size = life.rid, self.table.page_size
        length = self.table.length(rid)
        plan = plan_step(length + 1, self.window)
        block_table = tuple(self.table.block_table(rid))
        slot = ((next(new_pages), 0) if opens_page(length, size)
                else (block_table[-1], slot_of(length, size)))
        token = life.progress.tokens[plan.step - 1]
        step = RequestStep(rid=rid, plan=plan, token=token, x=self.programs.x_table[token],
                           first_page=page_of(self.table.first_row(rid), size),
                           block_table=block_table, slot=slot)
        if self.gather == "chip":
            return replace(step, table=planned_table(self.table, step))
        rows = self.table.rows(rid, plan.lo, plan.hi)
        return replace(step, kc=rows[:, KEY], vc=rows[:, VALUE])

    # ---- commit ---------------------------------------------------------------------------

    def finish_step(self, plan: BatchPlan, results: Sequence[StepResult]) -> None:
        """Commit the chip's outputs: every append, then every trim, then every next input, so no
        page freed this step is written this step."""
        if plan is not self._pending:
            raise ValueError(f"step {plan.step} is not the step planned")
        if len(results) != len(plan.requests):
            raise ValueError(f"step {plan.step} ran {len(plan.requests)} requests, got "
                             f"{len(results)} results")
        for step, result in zip(plan.requests, results, strict=True):  # 1. every append
            self._append(step, result)
        for step in plan.requests:  # 2. every trim to the window
            if step.plan.keep_from is not None:
                self.table.trim(step.rid, step.plan.keep_from)
        for step, result in zip(plan.requests, results, strict=True):  # 3. next inputs
            self._advance(step, result)
        self._pending = None
        self.step += 1
        self.stats.steps += 1
        self.stats.chip_runs += bool(plan.requests)

    def _append(self, step: RequestStep, result: StepResult) -> None:
        life = self._running[step.rid]
        self.table.append(step.rid, np.stack([result.k_new, result.v_new]))
        if self.table.block_table(step.rid)[-1] != step.slot[0]:
            raise InvariantError(f"request {step.rid!r}: row {step.plan.step - 1} went to page "
                                 f"{self.table.block_table(step.rid)[-1]}, planned {step.slot}")
        if self.prefix_caching:
            self.cache.register(step.rid, life.progress.tokens)

    def _advance(self, step: RequestStep, result: StepResult) -> None:
        """Move to the next input (forced while known, else the chip's token); finish if done."""
        life = self._running[step.rid]
        progress, request = life.progress, life.progress.request
        life.computed.append(Computed(step, result))
        self._count_row(progress, step.plan.step)
        known = progress.tokens
        token = next_input(step.plan.step, result.token, forced(known, step.plan.step))
        if step.plan.step >= len(known):
            progress.generated.append(token)
        elif step.plan.step >= len(request.prompt) and token != result.token:
            raise RecomputeMismatch(f"request {step.rid!r} step {step.plan.step}: the chip "
                                    f"gave {result.token}, an earlier life {token}")
        if step.plan.step == request.steps:
            self._finish(life)

    def _count_row(self, progress: _Progress, step: int) -> None:
        self.stats.rows_computed += 1
        self.stats.rows_recomputed += step <= progress.computed_rows
        progress.computed_rows = max(progress.computed_rows, step)

    def _finish(self, life: _Life) -> None:
        self._stop(life.rid)
        progress = life.progress
        self.finished[life.rid] = Finished(progress.request, list(progress.generated),
                                           life.computed, progress.preemptions, self.step)

    # ---- running it -----------------------------------------------------------------------

    def run_on_reference(self, max_steps: int | None = None) -> dict[Hashable, Finished]:
        """Plan, run on the reference machine and commit until every request has finished
        (``max_steps`` defaults to the last arrival plus every request's steps)."""
        if max_steps is None:
            requests = [p.request for p in self._progress.values()]
            max_steps = max((r.arrival for r in requests), default=0) + sum(
                r.steps for r in requests) + 1
        self._drain(self._step_on_reference, max_steps)
        return self.finished

    def _step_on_reference(self) -> None:
        plan = self.prepare_step()
        run = run_reference(plan) if plan.requests else None
        self.finish_step(plan, run.results if run else [])
        if run and self.gather == "chip":
            check_pools(self.programs, run.ext, self.table)

    def check_invariants(self) -> None:
        """Between steps: the table's invariants; exactly the running requests hold pages, as
        many rows as this life made; running requests share cached pages only."""
        check_invariants(self.table)
        if set(self.table.requests()) != set(self._running):
            raise InvariantError(f"the table holds {self.table.requests()}, but "
                                 f"{self.running()} run")
        owners: dict[int, int] = {}
        for rid, life in self._running.items():
            if self.table.length(rid) != life.start_rows + len(life.computed):
                raise InvariantError(f"request {rid!r} holds {self.table.length(rid)} rows, its "
                                     f"life made {life.start_rows} + {len(life.computed)}")
            for page in self.table.block_table(rid):
                owners[page] = owners.get(page, 0) + 1
        shared = [p for p, n in owners.items() if n > 1 and self.table.key_of(p) is None]
        if shared:
            raise InvariantError(f"pages {shared} are shared by running requests, uncached")
        waiting = set(self.queued()) | {r.rid for r in self._arrivals}
        if waiting & (set(self._running) | set(self.finished)):
            raise InvariantError("a request is both waiting and running or finished")


def planned_table(table: PageTable, step: RequestStep) -> np.ndarray:
    """Chip gather: a planned step's block table, with the planned slot's page if the new row
    opens one; refused if it would put the new row anywhere else."""
    plan, (page, slot), size = step.plan, step.slot, table.page_size
    words = step_table(table, step.rid, plan.lo, plan.step - 2)
    if slot == 0:
        words = np.append(words, page)
    new_row = int(words[0]) + plan.context - 1  # table row context - 1, as the PSTORE reads it
    if (int(words[1 + page_of(new_row, size)]), slot_of(new_row, size)) != (page, slot):
        raise InvariantError(f"request {step.rid!r}: its table puts row {plan.step - 1} "
                             f"elsewhere than the planned slot {step.slot}")
    return words


# ---- the solo reference ------------------------------------------------------------------------


def solo_decode(programs: ProgramCache, request: Request,
                window: int | None = None) -> list[StepRecord]:
    """The request decoded alone (host gather, list cache): every batched, shared, preempted or
    cached run of it must give the same integers at every step."""
    solo = ProgramCache(programs.model, programs.calibration, programs.cfg)
    host = PagedHost(solo, ListCache(programs.model.dim), request.prompt[0], window)
    records = []
    for _ in range(request.steps):
        host.force = forced(request.prompt, host.plan.step)
        records.append(host.step())
    return records
