"""The serving scheduler (model.host.serving) on the reference machine, in both gather modes.

Every finished request must equal its solo decode integer for integer, at every step its last
life computed: batched, sharing prompt pages, after a preemption, with a window. After every
step the pool is conserved and only running requests hold pages; in chip gather the pools the
chip left equal the page table's pool, word for word.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from model.chip import machine
from model.chip.geometry import pages_for
from model.chip.isa import ChipConfig
from model.compiler.cache import ProgramCache
from model.compiler.gather import GATHER_MODES
from model.compiler.inputs import run_reference
from model.compiler.layout import max_context
from model.compiler.quantize import calibrate, shared_context_scales
from model.host.decode import check_pools
from model.host.serving import (
    ArrivalInPast,
    DuplicateRequestId,
    EmptyPrompt,
    Request,
    Scheduler,
    peak_pages,
    solo_decode,
)
from model.host.workloads import serving_requests
from model.kv.admission import (
    AdmissionStalled,
    CoversExpected,
    InvalidRequest,
    OnePageFree,
    RequestTooLong,
    Watermark,
)
from model.kv.paged import PageTable
from model.kv.prefix_cache import CacheStats, page_keys
from model.kv.step_rule import plan_step
from model.lm.tiny_lm import random_model

LONGEST = max_context(ChipConfig())
SYSTEM = (3, 1, 4, 1, 5, 9)  # a system prompt of three pages of 2


@pytest.fixture(scope="module")
def programs() -> ProgramCache:
    """The random model (attention changes its tokens), calibrated over every context."""
    model = random_model(2)
    return ProgramCache(model, calibrate(model, LONGEST, None, starts=[0]))


_SOLO: dict[tuple, list] = {}


def solo(programs: ProgramCache, request: Request, window: int | None) -> list:
    key = (request.prompt, request.output_len, window)
    if key not in _SOLO:
        _SOLO[key] = solo_decode(programs, request, window)
    return _SOLO[key]


def assert_equals_solo(programs: ProgramCache, scheduler: Scheduler) -> None:
    """Every finished request: its tokens, and every step's inputs and outputs, as solo."""
    for rid, finished in scheduler.finished.items():
        records = solo(programs, finished.request, scheduler.window)
        prompt = len(finished.request.prompt)
        assert finished.generated == [r.token for r in records[prompt - 1 :]], rid
        for computed in finished.computed:
            step, result = computed.inputs, computed.result
            expected = records[step.plan.step - 1]
            assert step.token == expected.request.token, (rid, step.plan.step)
            if step.kc is not None:  # host gather: the rows it copied (chip gather copies none)
                assert (step.kc.tolist(), step.vc.tolist()) == (
                    expected.request.kc.tolist(), expected.request.vc.tolist()), (
                    rid, step.plan.step)
            assert (result.logits_int.tolist(), result.token, result.k_new.tolist(),
                    result.v_new.tolist()) == (
                expected.logits_int.tolist(), expected.token, expected.result.k_new.tolist(),
                expected.result.v_new.tolist()), (rid, step.plan.step)


def make(programs: ProgramCache, *, n_pages: int = 24, page_size: int = 2, batch_size: int = 4,
         rule=None, window: int | None = None, prefix_caching: bool = True,
         gather: str = "host") -> Scheduler:
    return Scheduler(programs, n_pages=n_pages, page_size=page_size, batch_size=batch_size,
                     rule=rule or OnePageFree(), window=window, prefix_caching=prefix_caching,
                     gather=gather)


@pytest.fixture(params=list(GATHER_MODES))
def gather(request) -> str:
    return request.param


def run_checked(scheduler: Scheduler, on_plan=None) -> None:
    """run_on_reference, one step at a time, checking the invariants after every step (and in
    chip gather the pools the chip left)."""
    while not scheduler.done:
        plan = scheduler.prepare_step()
        if on_plan is not None:
            on_plan(scheduler, plan)
        run = run_reference(plan) if plan.requests else None
        scheduler.finish_step(plan, run.results if run else [])
        scheduler.check_invariants()
        if run is not None and scheduler.gather == "chip":
            check_pools(scheduler.programs, run.ext, scheduler.table)


def run_on_machine(plan):
    """What a testbench does: the plan's image on a chip, its outputs read back."""
    result = machine.run(plan.image(), plan.program.cfg, raise_on_error=True)
    return plan.read_results(result.ext, result.counters)


def assert_pool_drained(scheduler: Scheduler) -> None:
    table = scheduler.table
    assert table.requests() == [] and table.free_count() == table.n_pages
    assert table.evictable_count() == table.cached_count()


# ---- whole runs --------------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "window"), [(OnePageFree(), None), (CoversExpected(), 8),
                                              (Watermark(2), None)])
def test_the_workload_drains_and_every_request_equals_its_solo_decode(programs, rule, window,
                                                                     gather):
    scheduler = make(programs, gather=gather, n_pages=24, page_size=4, batch_size=8, rule=rule,
                     window=window)
    for request in serving_requests():
        scheduler.submit(request)
    run_checked(scheduler)
    assert len(scheduler.finished) == 24
    assert_equals_solo(programs, scheduler)
    assert scheduler.cache.stats.hits > 0  # the system prompts were shared
    assert scheduler.stats.peak_running == 8
    assert_pool_drained(scheduler)


def test_a_small_pool_preempts_the_latest_admitted_and_recomputes(programs, gather):
    scheduler = make(programs, gather=gather, n_pages=6, batch_size=4)
    for i in range(6):
        scheduler.submit(Request(i, i, (i % 3, 7, i), 5 + i))
    admitted_at: dict = {}
    order = itertools.count()

    def victims_are_the_latest_admitted(scheduler, plan):
        for rid in plan.admitted:
            admitted_at[rid] = next(order)
        for victim in plan.preempted:
            assert all(admitted_at[rid] < admitted_at[victim] for rid in scheduler.running())

    run_checked(scheduler, victims_are_the_latest_admitted)
    assert scheduler.stats.preemptions > 0 and scheduler.stats.rows_recomputed > 0
    assert_equals_solo(programs, scheduler)
    assert_pool_drained(scheduler)


def test_prefix_caching_changes_no_token_and_saves_rows(programs, gather):
    requests = [Request(i, arrival, (*SYSTEM, i), 3) for i, arrival in enumerate([0, 7, 8, 9])]
    rows = {}
    for caching in (True, False):
        scheduler = make(programs, gather=gather, prefix_caching=caching)
        for request in requests:
            scheduler.submit(request)
        run_checked(scheduler)
        assert_equals_solo(programs, scheduler)
        rows[caching] = scheduler.stats.rows_computed
    assert rows[True] == rows[False] - 3 * len(SYSTEM)  # three later requests hit the prompt


def test_idle_steps_wait_for_arrivals(programs):
    scheduler = make(programs)
    scheduler.submit(Request("late", 3, (1, 2), 2))
    plans = []
    while not scheduler.done:
        plan = scheduler.prepare_step()
        plans.append(plan)
        scheduler.finish_step(plan, run_on_machine(plan) if plan.requests else [])
    assert [len(p.requests) for p in plans] == [0, 0, 0, 1, 1, 1]
    assert scheduler.stats.chip_runs == 3 and scheduler.stats.steps == 6


# ---- the traps, with whole decodes -------------------------------------------------------------


def test_a_readmitted_request_holds_no_page_of_its_earlier_life(programs, gather):
    """Trap: a preempted request's table kept a freed page id. "new" (the latest admitted) is
    preempted when both outgrow the pool; "old" takes one of its pages; "new" comes back with
    an empty block table and never shares a page with "old"."""
    scheduler = make(programs, gather=gather, n_pages=6, prefix_caching=False)
    scheduler.submit(Request("old", 0, (1, 2, 3), 9))  # 11 steps: 6 pages
    scheduler.submit(Request("new", 0, (4, 5, 6), 6))  # 8 steps: 4 pages
    last: dict = {}  # pages of "new" in the last plan it ran in
    earlier: set = set()
    taken_over: set = set()

    def watch(scheduler, plan):
        pages = {step.rid: {*step.block_table, step.slot[0]} for step in plan.requests}
        if "new" in plan.preempted:
            earlier.update(last.get("new", set()))
        if "new" in plan.admitted and "new" in pages:
            step = next(step for step in plan.requests if step.rid == "new")
            assert step.block_table == () and step.plan.step == 1
        if "old" in pages:
            taken_over.update(earlier & pages["old"])
            assert not pages["old"] & pages.get("new", set())
        last.update(pages)

    run_checked(scheduler, watch)
    assert scheduler.finished["new"].preemptions >= 1 and taken_over
    assert_equals_solo(programs, scheduler)


def test_recomputed_tokens_are_not_prefix_hits(programs):
    """Trap: a readmitted request re-finding its own cached pages resumes, it does not hit."""
    scheduler = make(programs, n_pages=12)
    scheduler.submit(Request("a", 0, (*SYSTEM, 2), 6))
    for _ in range(8):
        scheduler.finish_step(plan := scheduler.prepare_step(), run_on_machine(plan))
    scheduler.preempt()
    run_checked(scheduler)
    stats = scheduler.cache.stats
    assert (stats.hits, stats.resumed) == (0, 4)  # 8 rows computed: 4 full pages re-found
    assert scheduler.stats.rows_recomputed == 0  # the hit covered every row computed before
    assert_equals_solo(programs, scheduler)


def test_admission_counts_the_free_pages_a_hit_takes(programs):
    """Trap: a hit on a page nobody holds takes it off the free list. "c" would hit the two
    evictable pages "a" left, the only free ones: told 0 free pages, it waits for "b"."""
    told = []

    @dataclass(frozen=True)
    class Spy:
        inner: OnePageFree = field(default_factory=OnePageFree)
        name: str = "spy"

        def admits(self, free_pages, request, page_size):
            told.append((request.rid, free_pages))
            return self.inner.admits(free_pages, request, page_size)

    scheduler = make(programs, n_pages=3, rule=Spy())
    scheduler.submit(Request("a", 0, (1, 2, 3, 4, 5), 1))  # 5 steps, 3 pages; 2 stay cached
    run_checked(scheduler)
    scheduler.submit(Request("b", scheduler.step, (7, 7), 1))  # 2 steps in its one page
    scheduler.finish_step(plan := scheduler.prepare_step(), run_on_machine(plan))
    scheduler.submit(Request("c", scheduler.step, (1, 2, 3, 4, 6), 1))
    run_checked(scheduler)
    assert ("c", 0) in told  # 2 free pages, both evictable and both taken by its hit
    assert scheduler.stats.preemptions == 0  # admitted, it would have been preempted at once
    assert scheduler.finished["c"].step > scheduler.finished["b"].step
    assert scheduler.cache.stats.hits == 2
    assert_equals_solo(programs, scheduler)


def test_a_reused_page_never_gives_a_stale_hit(programs, gather):
    """Trap: after "a" finishes its pages are cached; other requests take them back (their
    keys dropped first); a later request with "a"'s prompt must compute its own rows."""
    scheduler = make(programs, gather=gather, n_pages=6)
    scheduler.submit(Request("a", 0, SYSTEM, 2))
    run_checked(scheduler)
    keys = page_keys(SYSTEM, 2)
    assert all(scheduler.table.lookup(key) is not None for key in keys)
    for i in range(2):
        scheduler.submit(Request(f"filler{i}", scheduler.step, (8, 8, 8, 8, 8, i), 2))
    run_checked(scheduler)
    assert any(scheduler.table.lookup(key) is None for key in keys)  # reused, keys dropped
    scheduler.submit(Request("again", scheduler.step, SYSTEM, 2))
    run_checked(scheduler)
    assert_equals_solo(programs, scheduler)


def test_with_a_window_a_hit_serves_only_the_window(programs, gather):
    """Window 3, pages of 2: "b"'s first computed step (7) reads rows 4, 5: page 2 only,
    although "a" left pages 0..2 cached."""
    scheduler = make(programs, gather=gather, window=3)
    scheduler.submit(Request("a", 0, (*SYSTEM, 2), 2))
    run_checked(scheduler)
    scheduler.submit(Request("b", scheduler.step, (*SYSTEM, 5), 2))
    first_steps = {}

    def record(scheduler, plan):
        for step in plan.requests:
            first_steps.setdefault(step.rid, step)

    run_checked(scheduler, record)
    b = first_steps["b"]
    assert (b.plan.step, b.first_page, len(b.block_table)) == (7, 2, 1)
    assert scheduler.cache.stats.hits == 1
    assert_equals_solo(programs, scheduler)


# ---- plan and commit ---------------------------------------------------------------------------


def test_plan_and_commit_must_alternate(programs):
    scheduler = make(programs)
    scheduler.submit(Request("a", 0, (1, 2), 3))
    plan = scheduler.prepare_step()
    with pytest.raises(RuntimeError, match="commit it first"):
        scheduler.prepare_step()
    with pytest.raises(RuntimeError, match="commit it first"):
        scheduler.preempt()
    with pytest.raises(ValueError, match="got 0 results"):
        scheduler.finish_step(plan, [])
    scheduler.finish_step(plan, run_on_machine(plan))
    with pytest.raises(ValueError, match="not the step planned"):
        scheduler.finish_step(plan, run_on_machine(plan))


def test_a_new_row_goes_to_its_planned_slot_never_to_a_page_being_read(programs):
    """The plan names each new row's page before the run (the chip-gather flow needs it): a
    page started this step is not in any block table the step reads."""
    scheduler = make(programs, n_pages=10)
    for i in range(4):
        scheduler.submit(Request(i, i, (*SYSTEM[: i + 1], i), 4))
    while not scheduler.done:
        plan = scheduler.prepare_step()
        read = {page for step in plan.requests for page in step.block_table}
        for step in plan.requests:
            page, offset = step.slot
            assert (page not in read) == (offset == 0)
        results = run_on_machine(plan)
        scheduler.finish_step(plan, results)
        for step, result in zip(plan.requests, results, strict=True):
            page, offset = step.slot
            row = scheduler.table.pool[page, offset]
            assert (row[0].tolist(), row[1].tolist()) == (result.k_new.tolist(),
                                                          result.v_new.tolist())
    assert_equals_solo(programs, scheduler)


def test_a_rule_that_never_admits_stalls_loudly(programs):
    @dataclass(frozen=True)
    class Never:
        name: str = "never"

        def admits(self, free_pages, request, page_size):
            return False

    scheduler = make(programs, rule=Never())
    scheduler.submit(Request("a", 0, (1,), 1))
    with pytest.raises(AdmissionStalled, match="wait forever"):
        scheduler.prepare_step()


# ---- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("request_", "error", "match"), [
    (Request("long", 2, (1,) * 8, 2), RequestTooLong, "pool has 4"),
    (Request("huge", 2, (1,) * 60, 6), RequestTooLong, "attends at most 64"),
    (Request("empty", 2, (), 3), EmptyPrompt, "empty prompt"),
    (Request("vocab", 2, (16,), 3), InvalidRequest, "outside 0..15"),
    (Request("none", 2, (1,), 0), InvalidRequest, "output_len"),
    (Request("past", 1, (1,), 1), ArrivalInPast, "before step 2"),
    (Request("a", 5, (1,), 1), DuplicateRequestId, "already submitted"),
])
def test_bad_requests_are_refused_and_nothing_leaks(programs, request_, error, match):
    scheduler = make(programs, n_pages=4)
    scheduler.submit(Request("a", 0, (1, 2), 2))
    for _ in range(2):
        scheduler.finish_step(plan := scheduler.prepare_step(), run_on_machine(plan))
    with pytest.raises(error, match=match):
        scheduler.submit(request_)
    run_checked(scheduler)
    assert list(scheduler.finished) == ["a"]
    assert_pool_drained(scheduler)


def test_every_refused_request_is_an_invalid_request(programs):
    """submit's promise: whatever it refuses raises InvalidRequest, a request too long for
    the chip or the pool included."""
    assert issubclass(RequestTooLong, InvalidRequest)
    scheduler = make(programs, n_pages=4)
    for request in (Request("long", 0, (1,) * 8, 2), Request("huge", 0, (1,) * 60, 6)):
        with pytest.raises(InvalidRequest):
            scheduler.submit(request)


def test_a_window_admits_what_the_pool_or_the_chip_could_not_hold_whole(programs):
    scheduler = make(programs, n_pages=4, window=3)
    scheduler.submit(Request("long", 0, (1, 2, 3, 4, 5, 6, 7, 8), 2))
    scheduler.submit(Request("huge", 0, tuple(range(16)) * 4, 6))
    run_checked(scheduler)
    assert_equals_solo(programs, scheduler)


@pytest.mark.parametrize(("window", "page_size"), [(None, 2), (3, 2), (4, 4), (5, 2), (1, 1)])
def test_peak_pages_is_what_a_request_holds_during_its_busiest_step(window, page_size):
    steps = 13
    table = PageTable(pages_for(steps, page_size), page_size)
    table.new("r")
    held = []
    for step in range(1, steps + 1):
        table.append("r", 0)
        held.append(table.used())
        keep_from = plan_step(step, window).keep_from
        if keep_from is not None:
            table.trim("r", keep_from)
    assert peak_pages(steps, window, page_size) == max(held)


def test_an_admission_its_own_plan_preempts_is_not_counted():
    """The serving workload at B = 8 (16 pages of 4, W = 8) admits requests that the same
    plan's room-making preempts at once. Such a life never ran: its lookup's hits, misses and
    resumed pages must not count, or its next admission counts them again. The counts are
    rebuilt here from what each adoption counted and whether its request ran in its plan."""
    model = random_model(1)
    scheduler = make(ProgramCache(model, shared_context_scales(calibrate(model, LONGEST, 8))),
                     n_pages=16, page_size=4, batch_size=8, window=8)
    for request in serving_requests():
        scheduler.submit(request)
    adoptions, adopt = [], scheduler.cache.adopt

    def counting_adopt(rid, hit, computed_rows=0):
        adoptions.append((rid, counted := adopt(rid, hit, computed_rows)))
        return counted

    scheduler.cache.adopt = counting_adopt
    ran, withdrawn = CacheStats(), 0

    def tally(_, plan) -> None:
        nonlocal withdrawn
        for rid, counted in adoptions:
            if rid in plan.preempted:
                withdrawn += 1
            else:
                ran.add(counted)
        adoptions.clear()

    run_checked(scheduler, tally)
    assert withdrawn > 0, "the workload no longer preempts an admission in its own plan"
    assert scheduler.cache.stats == ran


# ---- chip gather against host gather -----------------------------------------------------------


def outputs(result) -> tuple:
    return (result.logits_int.tolist(), result.token, result.k_new.tolist(),
            result.v_new.tolist())


@pytest.mark.parametrize("batch_size", [1, 2, 4, 8])
def test_chip_gather_serves_the_workload_as_host_gather_does(batch_size):
    """The serving workload as the testbench runs it (16 pages of 4, W = 8, shared scales;
    B = 8 preempts and evicts), scheduled by run_on_reference in both modes: every token,
    every computed step's integers and the scheduler's counts are the same."""
    model = random_model(1)
    calibration = shared_context_scales(calibrate(model, LONGEST, 8))
    finished, stats = {}, {}
    for gather in GATHER_MODES:
        scheduler = make(ProgramCache(model, calibration), n_pages=16, page_size=4,
                         batch_size=batch_size, window=8, gather=gather)
        for request in serving_requests():
            scheduler.submit(request)
        finished[gather] = scheduler.run_on_reference()
        stats[gather] = scheduler.stats
    assert stats["chip"] == stats["host"]
    assert stats["host"].preemptions > 0 or batch_size < 8
    for rid, by_host in finished["host"].items():
        by_chip = finished["chip"][rid]
        assert by_chip.generated == by_host.generated, rid
        assert [outputs(c.result) for c in by_chip.computed] == [
            outputs(c.result) for c in by_host.computed], rid


# ---- random runs -------------------------------------------------------------------------------


class ServingMachine(RuleBasedStateMachine):
    """Arrivals, steps, preemptions and finishes in any order, on small pools."""

    programs: ProgramCache  # set by the test below

    @initialize(n_pages=st.integers(4, 10), page_size=st.sampled_from([1, 2, 4]),
                batch_size=st.integers(1, 4), window=st.sampled_from([None, None, 3, 6]),
                caching=st.booleans(), gather=st.sampled_from(list(GATHER_MODES)))
    def setup(self, n_pages, page_size, batch_size, window, caching, gather):
        self.scheduler = make(self.programs, n_pages=n_pages, page_size=page_size,
                              batch_size=batch_size, window=window, prefix_caching=caching,
                              gather=gather)
        self.next_id = 0

    @rule(system=st.sampled_from([SYSTEM, SYSTEM, SYSTEM[:3], ()]),  # shared prompts often
          own=st.lists(st.integers(0, 2), min_size=1, max_size=3),  # and equal prompts too
          output_len=st.integers(1, 5), delay=st.integers(0, 4))
    def arrive(self, system, own, output_len, delay):
        request = Request(self.next_id, self.scheduler.step + delay, (*system, *own), output_len)
        try:
            self.scheduler.submit(request)
        except RequestTooLong:
            return  # a pool too small for it: refused, as it should be
        self.next_id += 1

    @rule()
    def step(self):
        scheduler = self.scheduler
        plan = scheduler.prepare_step()
        hits = scheduler.cache.stats.hits
        run = run_reference(plan) if plan.requests else None
        scheduler.finish_step(plan, run.results if run else [])
        if run is not None and scheduler.gather == "chip":
            check_pools(scheduler.programs, run.ext, scheduler.table)
        for name, happened in (("out of pages: preempted", plan.preempted),
                               ("batch of several", len(plan.requests) > 1),
                               ("prefix hit", self.scheduler.cache.stats.hits > hits),
                               ("eviction", self.scheduler.cache.evictions)):
            if happened:
                event(name)

    @precondition(lambda self: self.scheduler.running())
    @rule()
    def preempt(self):
        latest = self.scheduler.running()[-1]
        assert self.scheduler.preempt() == latest

    @invariant()
    def pool_is_conserved(self):
        self.scheduler.check_invariants()

    def teardown(self):
        run_checked(self.scheduler)
        assert_equals_solo(self.programs, self.scheduler)
        assert_pool_drained(self.scheduler)


def test_random_serving_runs(programs):
    ServingMachine.programs = programs
    run_state_machine_as_test(
        ServingMachine, settings=settings(max_examples=15, stateful_step_count=25, deadline=None)
    )
