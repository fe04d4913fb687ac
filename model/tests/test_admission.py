"""Admission rules and the admission loop (model/kv/admission.py), through exercise 2's
simulation (model/kv/admission_sim.py).

The counts are checked exactly on a case small enough to follow by hand, step by step (worked
below); the pool's bookkeeping at the end of every simulated step (there and on example B's
400 requests); and the errors come out instead of a loop that never ends.
"""

from __future__ import annotations

import pytest

from model.chip.geometry import pages_for
from model.host.workloads import sample_lengths
from model.kv.admission import (
    PLANNED,
    REACTIVE,
    AdmissionStalled,
    CoversExpected,
    OnePageFree,
    Request,
    RequestTooLong,
    StepLimitExceeded,
    Watermark,
)
from model.kv.admission_sim import AdmissionResult, AdmissionSim, simulate
from model.kv.paged import check_invariants

NAMES = "ABC"
HAND_LENGTHS = [4, 7, 3]
HAND_POOL = {"n_pages": 4, "page_size": 2}


def check_pool(sim: AdmissionSim) -> None:
    """Conservation at the end of a step: no page leaked, lost or owned twice."""
    table = sim.table
    check_invariants(table)  # every refcount equals its block-table owners; free list exact
    assert table.free_count() + table.used() == table.n_pages
    assert table.requests() == sim.running()  # the pool holds exactly the running requests
    held = sum(pages_for(table.length(rid), table.page_size) for rid in sim.running())
    assert table.used() == held  # nothing is shared here: pages in use = pages of the runners
    assert all(0 < table.length(rid) < sim.lengths[rid] for rid in sim.running())


def trace(lengths: list[int], rule, net_of_running: bool = False, preemption: str = REACTIVE):
    """Run the hand pool, checking it every step; return the per-step lines and the result."""
    lines = []

    def on_step(sim: AdmissionSim) -> None:
        check_pool(sim)
        running = " ".join(f"{NAMES[rid]}{sim.table.length(rid)}" for rid in sim.running())
        queue = "".join(NAMES[rid] for rid in sim.queued())
        lines.append((sim.step, running, queue, sim.table.free_count()))

    sim = AdmissionSim(lengths, rule, **HAND_POOL, net_of_running=net_of_running,
                       preemption=preemption)
    return lines, sim.run(on_step)


def counts(result: AdmissionResult) -> tuple[int, ...]:
    """(peak, OutOfPages, requests hit, preemptions, rows recomputed, completed, steps)."""
    return (result.peak_running, result.out_of_pages, result.requests_hit, result.preemptions,
            result.rows_recomputed, result.completed, result.steps)  # fmt: skip


# ---- the hand case, worked by hand ---------------------------------------------------------
#
# A pool of 4 pages of 2 rows; requests A, B, C (ids 0, 1, 2) of 4, 7 and 3
# rows, needing 2, 4 and 2 pages. Each line is the state at the end of a step: running
# requests with their rows, the queue, the free pages. "OOM" is an OutOfPages on an append.
#
# One page free (the chapter's rule: admit while free >= 1):
#
#     1  A1 B1 C1  |    | free 1   all three admitted, one page each
#     2  A2 B2 C2  |    | free 1
#     3  A3 B3     | C  | free 0   A takes a page; B3 hits OOM (1): C (latest) preempted, its
#                                  2 rows to recompute; B retries and takes C's page
#     4  B4 C1     |    | free 1   A finishes (frees 2); C readmitted (free 2 >= 1)
#     5  B5 C2     |    | free 0   B takes the last page
#     6  B6 C1     |    | free 0   C3 hits OOM (2): C is the latest, preempted (2 more rows);
#                                  free 1, so C is readmitted at once and takes it again
#     7  C1        |    | free 3   B7 hits OOM (3): C preempted (1 row); B takes a page,
#                                  finishes (frees 4); C readmitted
#     8  C2        |    | free 3
#     9            |    | free 4   C finishes
#     peak 3, OOM 3, requests hit 2 (B, C), preemptions 3, rows recomputed 2+2+1 = 5, steps 9
#
# Free pages cover the expected length (exercise 2: free >= pages(length); A 2, B 4, C 2):
#
#     1  A1        | BC | free 3   A admitted; B needs 4 > 3: refused, C waits behind it
#     2  A2        | BC | free 3
#     3  A3        | BC | free 2
#     4  B1 C1     |    | free 2   A finishes (free 4): B admitted (4 >= 4), then C (3 >= 2)
#     5  B2 C2     |    | free 2
#     6  B3        |    | free 2   B takes a page (free 1), C takes the last, finishes (frees 2)
#     7  B4        |    | free 2
#     8  B5        |    | free 1
#     9  B6        |    | free 1
#     10           |    | free 4   B takes the last page it needs and finishes
#     peak 2, no OOM, no preemption, steps 10
#
# Watermark, 1 page reserved (free - 1 first page >= 1, i.e. free >= 2):
#
#     1-5 as the chapter's rule (C readmitted at step 4 with free 2 >= 2)
#     6  B6        | C  | free 1   C3 hits OOM (2): C preempted (2 rows); free 1 < 2: C waits
#     7  C1        |    | free 3   B takes a page and finishes (frees 4); C readmitted
#     8  C2        |    | free 3
#     9            |    | free 4
#     peak 3, OOM 2, requests hit 2, preemptions 2, rows recomputed 2+2 = 4, steps 9
#
# Free pages cover the expected length, net of running (told 4 - pages expected by runners):
#
#     1  A1        | BC | free 3   told 4 >= 2: A admitted; then told 4 - 2 = 2 < 4: B refused
#     4  B1        | C  | free 3   A finishes: told 4 >= 4, B admitted; told 0 < 2: C waits
#     5-9 B2 .. B6 | C  |          told 0 all along
#     10 C1        |    | free 3   B finishes; told 4 >= 2, C admitted
#     12           |    | free 4   C finishes
#     peak 1, no OOM, steps 12
#
# One page free, planned preemption (admit, then preempt the latest admitted until every running
# request's row fits, then write the rows):
#
#     1-2 as the chapter's rule
#     3  A3 B3     | C  | free 0   A, B, C all open a page, 1 free: C preempted (2 rows)
#     4  B4        | C  | free 2   C refused (free 0) before A finishes and frees 2
#     5  B5 C1     |    | free 0
#     7            | C  | free 4   B and C open a page, none free: C preempted (2 rows); B ends
#     10           |    | free 4   C readmitted at 8, finishes at 10
#     peak 3, no OOM, preemptions 2, rows recomputed 4, steps 10
#
# Why not lengths 5, 3, 4 (also worked below): every rule that sees only the free pages admits
# all three at step 1 (1 page each, 4 free), so the three rules take the same decisions there.

CHAPTER_RULE_TRACE = [
    (1, "A1 B1 C1", "", 1),
    (2, "A2 B2 C2", "", 1),
    (3, "A3 B3", "C", 0),
    (4, "B4 C1", "", 1),
    (5, "B5 C2", "", 0),
    (6, "B6 C1", "", 0),
    (7, "C1", "", 3),
    (8, "C2", "", 3),
    (9, "", "", 4),
]
COVERS_EXPECTED_TRACE = [
    (1, "A1", "BC", 3),
    (2, "A2", "BC", 3),
    (3, "A3", "BC", 2),
    (4, "B1 C1", "", 2),
    (5, "B2 C2", "", 2),
    (6, "B3", "", 2),
    (7, "B4", "", 2),
    (8, "B5", "", 1),
    (9, "B6", "", 1),
    (10, "", "", 4),
]
WATERMARK_TRACE = [
    *CHAPTER_RULE_TRACE[:5],
    (6, "B6", "C", 1),
    (7, "C1", "", 3),
    (8, "C2", "", 3),
    (9, "", "", 4),
]
NET_OF_RUNNING_TRACE = (
    [(step, f"A{step}", "BC", free) for step, free in ((1, 3), (2, 3), (3, 2))]
    + [(4, "B1", "C", 3)]
    + [(step, f"B{step - 3}", "C", 4 - pages_for(step - 3, 2)) for step in range(5, 10)]
    + [(10, "C1", "", 3), (11, "C2", "", 3), (12, "", "", 4)]
)


@pytest.mark.parametrize(
    ("rule", "net_of_running", "expected_trace", "expected_counts"),
    [
        (OnePageFree(), False, CHAPTER_RULE_TRACE, (3, 3, 2, 3, 5, 3, 9)),
        (CoversExpected(), False, COVERS_EXPECTED_TRACE, (2, 0, 0, 0, 0, 3, 10)),
        (Watermark(1), False, WATERMARK_TRACE, (3, 2, 2, 2, 4, 3, 9)),
        (CoversExpected(), True, NET_OF_RUNNING_TRACE, (1, 0, 0, 0, 0, 3, 12)),
    ],
    ids=["one-page-free", "covers-expected", "watermark-1", "covers-expected-net"],
)
def test_hand_case_step_by_step(rule, net_of_running, expected_trace, expected_counts):
    lines, result = trace(HAND_LENGTHS, rule, net_of_running)
    assert lines == expected_trace
    assert counts(result) == expected_counts


PLANNED_TRACE = [
    *CHAPTER_RULE_TRACE[:3],
    (4, "B4", "C", 2),
    (5, "B5 C1", "", 0),
    (6, "B6 C2", "", 0),
    (7, "", "C", 4),
    (8, "C1", "", 3),
    (9, "C2", "", 3),
    (10, "", "", 4),
]


def test_planned_preemption_makes_room_before_the_rows_are_written():
    lines, result = trace(HAND_LENGTHS, OnePageFree(), preemption=PLANNED)
    assert lines == PLANNED_TRACE
    assert counts(result) == (3, 0, 0, 2, 4, 3, 10)
    assert result.rule == "one page free (chapter), planned preemption"


def test_rules_blind_to_running_requests_agree_when_every_first_page_fits():
    """Lengths 5, 3, 4 on the same pool, worked by hand (A, B, C: 3, 2, 2 pages).

    Step 1: every rule admits A, B and C (free 4, 3, 2 before each; the watermark needs 2,
    the expected lengths need 3, 2, 2), leaving 1 page. Step 2: rows 2. Step 3: A takes the
    last page; B hits OOM, C (2 rows) is preempted, B takes its page and finishes (frees 2);
    C is readmitted (free 2: all three rules agree). Step 5: A finishes; C takes a page.
    Step 6: C finishes. Peak 3, OOM 1, 1 request hit, 1 preemption, 2 rows recomputed.
    Net of running, A (3 pages) leaves 1 untold page: B waits until A finishes at step 5,
    then B and C run together (2 + 2 pages) until C finishes at step 8.
    """
    for rule in (OnePageFree(), CoversExpected(), Watermark(1)):
        assert counts(trace([5, 3, 4], rule)[1]) == (3, 1, 1, 1, 2, 3, 6)
    assert counts(trace([5, 3, 4], CoversExpected(), net_of_running=True)[1]) == (
        2, 0, 0, 0, 0, 3, 8,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "net_of_running", "preemption"),
    [
        (OnePageFree(), False, REACTIVE),
        (CoversExpected(), False, REACTIVE),
        (Watermark.of_pool(512), False, REACTIVE),
        (CoversExpected(), True, REACTIVE),
        (OnePageFree(), False, PLANNED),
    ],
    ids=["one-page-free", "covers-expected", "watermark-1%", "covers-expected-net",
         "one-page-free-planned"],
)
def test_example_b_pool_conserves_pages_every_step(rule, net_of_running, preemption):
    lengths = sample_lengths()
    if preemption == PLANNED:  # checked every step, a slower loop: a third of the queue suffices
        lengths = lengths[:130]
    sim = AdmissionSim(lengths, rule, n_pages=512, page_size=16, net_of_running=net_of_running,
                       preemption=preemption)
    steps_checked = []

    def on_step(sim: AdmissionSim) -> None:
        check_pool(sim)
        steps_checked.append(sim.step)

    result = sim.run(on_step)
    assert result.completed == len(lengths) == (130 if preemption == PLANNED else 400)
    assert steps_checked == list(range(1, result.steps + 1))
    assert sim.table.used() == 0 and not sim.queued()
    if preemption == PLANNED:  # room made before the rows are written: no append fails
        assert result.out_of_pages == 0 and result.preemptions > 0
    else:
        assert result.preemptions == result.out_of_pages  # each OOM cured by one preemption
    if net_of_running:  # exact expected lengths, no page promised twice: never out of pages
        assert result.out_of_pages == 0


# ---- the rules on their own ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "refused", "admitted"),
    [
        (OnePageFree(), 0, 1),
        (CoversExpected(), 2, 3),  # 5 rows in pages of 2: 3 pages
        (Watermark(1), 1, 2),  # the first row's page, then 1 page left over
        (Watermark(0), 0, 1),
    ],
    ids=lambda value: getattr(value, "name", str(value)),
)
def test_rule_boundaries(rule, refused, admitted):
    request = Request(rid="r", expected_rows=5)
    assert not rule.admits(refused, request, 2)
    assert rule.admits(admitted, request, 2)


def test_watermark_first_pages_come_from_the_first_rows():
    prompt = Request(rid="r", expected_rows=50, first_rows=5)  # 3 pages of 2 at admission
    assert not Watermark(1).admits(3, prompt, 2)
    assert Watermark(1).admits(4, prompt, 2)


def test_watermark_of_pool_rounds_one_percent_down():
    assert Watermark.of_pool(512) == Watermark(5)
    assert Watermark.of_pool(99) == Watermark(0)
    with pytest.raises(ValueError, match="reserve_pages"):
        Watermark(-1)


# ---- errors instead of loops --------------------------------------------------------------


def test_a_request_longer_than_the_pool_is_refused_up_front():
    with pytest.raises(RequestTooLong, match=r"request 1: 9 rows need 5 pages .* pool's 4"):
        AdmissionSim([3, 9], OnePageFree(), **HAND_POOL)
    assert counts(simulate([8], OnePageFree(), **HAND_POOL)) == (1, 0, 0, 0, 0, 1, 8)


@pytest.mark.parametrize("length", [0, -1, 2.5])
def test_a_request_with_no_rows_is_refused(length):
    with pytest.raises(ValueError, match="length must be an integer >= 1"):
        AdmissionSim([3, length], OnePageFree(), **HAND_POOL)


def test_a_rule_that_never_admits_on_an_empty_pool_stalls_loudly():
    with pytest.raises(AdmissionStalled, match=r"refuses request 0 although nothing runs \(4 of 4"):
        simulate([3], Watermark(4), **HAND_POOL)  # 4 - 1 first page < 4 reserved, always


def test_the_step_limit_stops_a_run_that_has_not_drained():
    sim = AdmissionSim(HAND_LENGTHS, OnePageFree(), **HAND_POOL)
    with pytest.raises(StepLimitExceeded, match="after the step limit of 8 steps"):
        sim.run(max_steps=8)
