"""Batched chip gather (model.batch_paged_programs) on the reference machine.

For random batches of requests at random steps over one shared pool (stale rows in its free
pages, windows releasing pages, new rows opening pages or filling them), the chip-gather batch
program, reading every request's rows through its own block table, must give the integers of
the host-gather batch and of each request's solo program (logits, token, new K/V rows), and
leave the pools equal to the page table's once the new rows are appended, word for word.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model import machine
from model.batch_compiler import (
    BATCH_MAX,
    BatchLayout,
    BatchProgramCache,
    run_batch,
    shared_context_scales,
)
from model.batch_paged_programs import (
    BatchPoolLayout,
    ChipBatchPlan,
    PagedBatchProgramCache,
    request_table,
)
from model.compiler import calibrate, max_context, run_step
from model.host import KEY, VALUE, ProgramCache
from model.isa import ChipConfig, Op, disassemble
from model.paged import CachingPageTable, InvariantError, pages_for
from model.paged_programs import pool_differences, pool_words
from model.serving import BatchPlan, RequestStep
from model.step_rule import plan_step
from model.tiny_lm import random_model

CFG = ChipConfig()
LONGEST = max_context(CFG)


@pytest.fixture(scope="module", params=["per-context scales", "shared scales"])
def programs(request) -> BatchProgramCache:
    model = random_model(2)
    calibration = calibrate(model, LONGEST, None, starts=[0])
    if request.param == "shared scales":
        calibration = shared_context_scales(calibration)
    return BatchProgramCache(ProgramCache(model, calibration, CFG))


def pool_of(programs: BatchProgramCache, steps: list[int], window: int | None, page_size: int,
            rng: np.random.Generator) -> tuple[CachingPageTable, list[RequestStep]]:
    """A pool holding one request per entry of ``steps``, each about to run that step: its
    earlier rows random, those below its window released; a released request's stale rows
    first, so that reused pages hold old words. The steps are planned as the scheduler plans
    them (model.serving: slots of new pages in allocation order)."""
    dim, size = programs.solo.model.dim, page_size
    n_pages = sum(pages_for(step, size) for step in steps) + 3
    table = CachingPageTable(n_pages, size, row_shape=(2, dim), dtype=np.int8)

    def fill(rid, rows: int) -> None:
        table.new(rid)
        for _ in range(rows):
            table.append(rid, rng.integers(-128, 128, (2, dim)))

    fill("stale", 3 * size)
    table.release("stale")
    for i, step in enumerate(steps):
        fill(i, step - 1)
        table.trim(i, plan_step(step, window).lo)
    new_pages = iter(table.allocation_order())
    planned = []
    for i, step in enumerate(steps):
        plan, length = plan_step(step, window), step - 1
        pages = table.block_table(i)
        slot = (next(new_pages), 0) if length % size == 0 else (pages[-1], length % size)
        rows = table.rows(i, plan.lo, plan.hi)
        token = int(rng.integers(programs.solo.model.vocab))
        planned.append(RequestStep(i, plan, token, table.first_row(i) // size, tuple(pages),
                                   slot, programs.x_table[token], rows[:, KEY], rows[:, VALUE]))
    return table, planned


def outputs(result) -> tuple:
    return (result.logits_int.tolist(), result.token, result.k_new.tolist(),
            result.v_new.tolist())


@settings(max_examples=25, deadline=None)
@given(steps=st.lists(st.integers(1, 40), min_size=1, max_size=BATCH_MAX),
       window=st.sampled_from([None, 3, 8, 16]), page_size=st.sampled_from([1, 2, 4, 8]),
       seed=st.integers(0, 2**16))
def test_chip_gather_batches_equal_host_gather_and_solo_and_keep_the_pool(
        programs, steps, window, page_size, seed):
    rng = np.random.default_rng(seed)
    table, planned = pool_of(programs, steps, window, page_size, rng)
    contexts = [step.plan.context for step in planned]
    plan = BatchPlan(0, tuple(planned), programs.get(contexts), (), ())
    paged = PagedBatchProgramCache(programs, page_size, table.n_pages)
    chip = ChipBatchPlan.of(plan, table, paged, pool_words(table))
    run = machine.run(chip.image(), CFG, raise_on_error=True)
    got = chip.chip_program.read_result(run.ext, run.counters).steps
    host = run_batch(plan.program, *plan.inputs()).steps
    for i, step in enumerate(planned):
        solo = run_step(programs.solo.get(step.plan.context), step.x, step.kc, step.vc)
        assert outputs(got[i]) == outputs(host[i]) == outputs(solo), f"request {i} of {steps}"
    for step, result in zip(planned, got, strict=True):  # the scheduler's commit: appends
        table.append(step.rid, np.stack([result.k_new, result.v_new]))
    start, end = paged.pool.pool.pools
    assert pool_differences(paged.pool.pool, run.ext[start:end], table) == []


def test_the_program_reads_and_writes_every_request_through_its_own_table(programs):
    contexts = (1, 5, 8, 3)
    paged = PagedBatchProgramCache(programs, 4, 16)
    program = paged.get(contexts)
    instrs = disassemble(program.words)
    layout, pool = program.layout, paged.pool
    loads = [i.a for i in instrs if i.op == Op.LOAD]
    assert loads == [layout.weights, layout.x]  # no cached rows come from the kc/vc slots
    ploads = [(i.a, i.length) for i in instrs if i.op == Op.PLOAD]
    assert ploads == [(pool.table(i), n - 1) for i, n in enumerate(contexts) if n > 1
                      for _ in range(2)]
    pstores = [(i.a, i.row) for i in instrs if i.op == Op.PSTORE]
    assert pstores == [(pool.table(i), n - 1) for i, n in enumerate(contexts) for _ in range(2)]
    first_pstore = next(k for k, i in enumerate(instrs) if i.op == Op.PSTORE)
    assert instrs[first_pstore - 1].op == Op.STORE  # right after the new rows' STOREs
    assert paged.get(list(contexts)) is program  # cached by the tuple of contexts


def test_the_tables_and_pools_lie_after_the_batch_layout():
    layout = BatchLayout.for_model(random_model(2), CFG)
    pool = BatchPoolLayout.after(layout, 4, 16)
    tables = [pool.table(i) for i in range(BATCH_MAX)]
    assert tables[0] == layout.end
    assert all(b - a == pool.pool.table_words for a, b in pairwise(tables))
    assert pool.pool.k_pool >= tables[-1] + pool.pool.table_words
    assert pool.end <= CFG.ext_words
    with pytest.raises(ValueError, match="outside"):
        pool.table(BATCH_MAX)


def test_a_pool_the_chip_cannot_hold_is_refused(programs):
    with pytest.raises(ValueError, match="external words"):
        PagedBatchProgramCache(programs, 4, 1024)


def test_a_table_that_misses_the_planned_slot_is_refused(programs):
    rng = np.random.default_rng(0)
    table, (step,) = pool_of(programs, [6], None, 4, rng)
    wrong = RequestStep(step.rid, step.plan, step.token, step.first_page, step.block_table,
                        (step.slot[0], step.slot[1] + 1), step.x, step.kc, step.vc)
    with pytest.raises(InvariantError, match="planned slot"):
        request_table(table, wrong)
