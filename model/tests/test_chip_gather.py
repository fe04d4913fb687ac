"""Chip gather on the reference machine: the chip reads the KV pool through the block table.

Against host gather (the chapter's flow): identical tokens, logits, new K/V rows, pages and
programs compiled, for the chapter's windows, teacher-forced random models and every page size
of exercise 1; cycles flat once the window fills. The pools in external memory equal the page
table's pool word for word after every step (pool conservation), a fork's copy-on-write is a
copy the chip makes, and the host writes only block-table words.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from model import isa, machine
from model.compiler import PROGRAM_WORDS, Layout, calibrate
from model.host import (
    ChipGatherHost,
    ChipProgramCache,
    PagedHost,
    ProgramCache,
    decode,
    paged_cache,
)
from model.isa import ChipConfig, Op
from model.paged import PageTable
from model.paged_programs import (
    PoolLayout,
    page_shift_of,
    pool_differences,
    pool_words,
    step_table,
)
from model.step_rule import pages_held
from model.tiny_lm import make_model, random_model, structured_model

STEPS = 32


def both_modes(model, window, page_size, **kwargs):
    return (decode(model, STEPS, 0, window, page_size=page_size, **kwargs),
            decode(model, STEPS, 0, window, page_size=page_size, gather="chip", **kwargs))


def assert_same_decode(host, chip) -> None:
    assert chip.tokens == host.tokens
    assert chip.programs_compiled == host.programs_compiled
    assert [r.pages for r in chip.records] == [r.pages for r in host.records]
    assert (chip.peak_pages, chip.final_pages) == (host.peak_pages, host.final_pages)
    for h, c in zip(host.records, chip.records, strict=True):
        assert np.array_equal(c.logits_int, h.logits_int), f"step {h.step}"
        assert np.array_equal(c.result.k_new, h.result.k_new), f"step {h.step}"
        assert np.array_equal(c.result.v_new, h.result.v_new), f"step {h.step}"


@pytest.mark.parametrize("window", [None, 8, 4])
def test_chip_gather_decodes_the_chapter_as_host_gather_does(window):
    host, chip = both_modes(structured_model(), window, 4)
    assert_same_decode(host, chip)
    totals = [r.cycles[0] for r in chip.records]
    full = window or STEPS
    assert all(a < b for a, b in pairwise(totals[:full]))
    assert len(set(totals[full - 1 :])) == 1, "cycles are not flat once the window is full"


# The chapter's totals (W = none, 8, 4) on the ideal port the chip had before its AXI4 port
CHAPTER_TOTALS = {None: 84638, 8: 60722, 4: 52312}


def test_host_gather_keeps_the_chapter_totals():
    """The chapter's totals, plus what the AXI4 port's ideal memory adds (hw/ISA.md, "Cycle
    costs"): 2 cycles per FETCH (the AR register and the read buffer), 2 per LOAD, 3 per STORE
    (the fence): 86,486 / 62,570 / 54,160."""
    decodes = {window: decode(structured_model(), STEPS, 0, window, page_size=4).records
               for window in (None, 8, 4)}
    totals = {window: sum(r.cycles[0] for r in records) for window, records in decodes.items()}
    for window, records in decodes.items():
        ops = np.sum([r.result.counters.ops for r in records], axis=0)
        added = 2 * int(ops.sum()) + 2 * int(ops[Op.LOAD]) + 3 * int(ops[Op.STORE])
        assert totals[window] == CHAPTER_TOTALS[window] + added, f"W = {window}"
    assert totals == {None: 86486, 8: 62570, 4: 54160}


@pytest.mark.parametrize("page_size", [1, 2, 4, 8, 16])
def test_every_page_size_gives_the_same_decode(page_size):
    host, chip = both_modes(structured_model(), 8, page_size, n_pages=32)
    assert_same_decode(host, chip)


@pytest.mark.parametrize(("seed", "window", "page_size"), [(1, 6, 2), (2, 3, 1), (3, None, 1)])
def test_teacher_forced_random_models_give_the_same_rows(seed, window, page_size):
    rng = np.random.default_rng(seed)
    force = [0, *rng.integers(0, 16, STEPS).tolist()]
    host, chip = both_modes(random_model(seed), window, page_size, force=force)
    assert_same_decode(host, chip)


def test_the_host_writes_only_block_table_words():
    host, chip = both_modes(structured_model(), 8, 4)
    steady = STEPS - 1
    assert host.records[steady].inputs.host_words == 2 * 7 * 8  # 7 rows of keys and values
    # the block table: a header and the pages of rows L-8 .. L-1 (two or three pages of 4)
    assert {r.inputs.host_words for r in chip.records[8:]} == {3, 4}


def chip_host(model, window, page_size, n_pages=16):
    calibration = calibrate(model, STEPS, window)
    programs = ChipProgramCache(ProgramCache(model, calibration), page_size, n_pages)
    return ChipGatherHost(programs, paged_cache(model.dim, page_size, n_pages), 0, window)


def assert_pool_conserved(host: ChipGatherHost) -> None:
    problems = pool_differences(host.device.layout, host.device.words, host.cache.table)
    assert not problems, problems


@pytest.mark.parametrize(("window", "page_size"), [(None, 4), (8, 4), (4, 2), (5, 1)])
def test_the_pools_hold_exactly_the_page_tables_rows_after_every_step(window, page_size):
    host = chip_host(structured_model(), window, page_size)
    for step in range(1, STEPS + 1):
        host.step()
        assert_pool_conserved(host)
        assert host.cache.pages_in_use() == pages_held(step, window, page_size)


def test_a_write_to_a_freed_page_is_named():
    host = chip_host(structured_model(), 4, 2)
    for _ in range(12):
        host.step()
    free = host.cache.table.free_pages()[-1]
    layout = host.device.layout
    host.device.words[free * layout.page_size * layout.dim] ^= 1
    (problem,) = pool_differences(layout, host.device.words, host.cache.table)
    assert f"key pool, page {free} (free), slot 0, word 0" in problem


def test_a_fork_copies_its_shared_page_on_the_chip():
    model = random_model(4)
    parent = chip_host(model, 8, 4)
    for _ in range(10):  # row 10 falls in the middle of page 2: the page is shared after a fork
        parent.step()
    child = parent.fork("child")
    record = parent.step()
    assert record.inputs.pair is not None
    program = isa.disassemble(record.inputs.program.words)
    assert [i.op for i in program[:2]] == [Op.PCOPY, Op.PCOPY]
    assert record.result.counters.op_count(Op.PCOPY) == 2
    assert_pool_conserved(parent)
    for _ in range(6):
        for host in (child, parent):
            record = host.step()
            assert record.inputs.pair is None  # after the one copy nothing is shared to write
            assert_pool_conserved(host)


def test_a_fork_in_chip_gather_gives_the_rows_of_host_gather():
    model, force = random_model(4), [1, *np.random.default_rng(4).integers(0, 16, 20).tolist()]
    calibration = calibrate(model, 20, 8)
    host_parent = PagedHost(ProgramCache(model, calibration), paged_cache(model.dim, 4, 16), 1, 8)
    programs = ChipProgramCache(ProgramCache(model, calibration), 4, 16)
    chip_parent = ChipGatherHost(programs, paged_cache(model.dim, 4, 16), 1, 8)
    for _ in range(10):
        host_parent.step(force), chip_parent.step(force)
    host_child = PagedHost(host_parent.programs, host_parent.cache.fork("child"),
                           host_parent.token, 8)
    host_child.done_steps = host_parent.done_steps
    chip_child = chip_parent.fork("child")
    for _ in range(10):
        for host_side, chip_side in ((host_parent, chip_parent), (host_child, chip_child)):
            want, got = host_side.step(force), chip_side.step(force)
            assert got.token == want.token
            assert np.array_equal(got.result.k_new, want.result.k_new)
            assert np.array_equal(got.result.v_new, want.result.v_new)
    assert host_parent.cache.table.cow_copies == chip_parent.cache.table.cow_copies == 1


def test_a_step_table_starts_at_the_first_rows_slot():
    table = PageTable(8, 4, row_shape=(2, 1), dtype=np.int8)
    table.new("r")
    for row in range(14):
        table.append("r", np.full((2, 1), row))
    table.trim("r", 5)  # page 0 (rows 0 .. 3) released
    pages = table.block_table("r")
    assert step_table(table, "r", 6, 13).tolist() == [2, pages[0], pages[1], pages[2]]
    assert step_table(table, "r", 8, 9).tolist() == [0, pages[1]]


def test_the_program_swaps_the_cache_loads_for_paged_ones():
    model = structured_model()
    programs = ChipProgramCache(ProgramCache(model, calibrate(model, 8, 8)), 4, 16)
    for context in (1, 8):
        host_ops = [i.op for i in isa.disassemble(programs.programs.get(context).words)]
        ops = [i.op for i in isa.disassemble(programs.get(context).words)]
        assert ops.count(Op.PLOAD) == (2 if context > 1 else 0)
        assert ops.count(Op.LOAD) == 2 and ops.count(Op.PSTORE) == 2
        assert len(ops) == len(host_ops) + 2 and ops[-3:] == [Op.PSTORE, Op.PSTORE, Op.HALT]
        copy = isa.disassemble(programs.get(context, copy=True).words)
        assert [i.op for i in copy[2:]] == ops and copy[0].op == Op.PCOPY
        assert programs.get(context, copy=True).words.size <= PROGRAM_WORDS
    assert len(programs) == 2


def test_page_sizes_must_be_powers_of_two_and_the_pool_must_fit():
    with pytest.raises(ValueError, match="2\\^k rows"):
        page_shift_of(3)
    layout = Layout.for_model(8, 16, 64)
    with pytest.raises(ValueError, match="external words"):
        PoolLayout.after(layout, 16, 64).check_fits(ChipConfig())
    assert PoolLayout.after(layout, 4, 64).end <= ChipConfig().ext_words


def test_pool_words_are_the_tables_rows_sign_extended():
    table = PageTable(2, 2, row_shape=(2, 3), dtype=np.int8)
    table.new(0)
    table.append(0, np.array([[1, -2, 3], [-4, 5, -128]]))
    words = pool_words(table)
    assert words[:3].tolist() == machine.words([1, -2, 3]).tolist()  # key pool, page 0 slot 0
    assert words[12:15].tolist() == machine.words([-4, 5, -128]).tolist()  # value pool


def test_a_chip_gather_step_is_one_machine_run_of_its_image():
    host = chip_host(make_model("structured", 0), 8, 4)
    for _ in range(9):
        inputs = host.prepare_step()
        run = machine.run(inputs.image(), host.programs.cfg)
        pools, outputs = host.chip_programs.pool.pools, inputs.program.layout.outputs
        assert run.error == isa.ErrorCode.OK
        written = set(run.written)
        assert written >= set(range(*outputs))  # the outputs, and two rows into the pools
        assert len(written - set(range(*outputs))) == 2 * 8
        assert all(pools[0] <= a < pools[1] for a in written - set(range(*outputs)))
        result = inputs.program.read_result(run.ext, run.counters)
        host.device.words = run.ext[pools[0] : pools[1]].copy()
        host.finish_step(inputs.plan, result.k_new, result.v_new, result.token)
        assert_pool_conserved(host)
