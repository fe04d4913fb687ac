"""Chip gather on the reference machine: the chip reads the KV pool through the block table.

Against host gather (the chapter's flow): identical tokens, logits, new K/V rows, pages and
programs compiled, for the chapter's windows, teacher-forced random models and every page size
of exercise 1; cycles flat once the window fills. The pools in external memory equal the page
table's pool word for word after every step (pool conservation), a fork's copy-on-write is a
copy the chip makes, and the host writes only block-table words.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest

from model.chip import isa, machine
from model.chip.geometry import page_shift_of
from model.chip.isa import ChipConfig, Op
from model.compiler.cache import ProgramCache
from model.compiler.gather import ChipGather, pool_differences, pool_words, step_table
from model.compiler.inputs import run_reference
from model.compiler.layout import Layout, Pool
from model.compiler.quantize import calibrate
from model.host.decode import PagedHost, PoolMismatch, check_pools, decode, paged_cache
from model.kv.paged import PageTable
from model.kv.step_rule import pages_held
from model.lm.tiny_lm import make_model, random_model, structured_model

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
    (the fence): 86,486 / 62,570 / 54,160. Minus what the pipelined divider saves, 33 * len - 7
    per SOFTMAX (36 * len + 2 cycles before, 3 * len + 9 now; a step's one SOFTMAX has its
    context c's length): 69,286 / 55,270 / 50,358. Minus what the wide SRAM reads save a step's
    MATMULs (A rows and transposed B columns ARRAY_N = 4 words a read, row-major B a tile row a
    read): the four 1x8x8 projections 60 each (two tiles, 40 load cycles down to 10), the
    1x8x16 LM head 120, the scores (1 x 8 x c, B transposed) 6 + 6 * cols per tile, the
    weighted sum (1 x c x 8) 4c - ceil(c/4) per tile of two: 360 + 14c + 4 * ceil(c/4) in all.
    Over the 32 steps (sum of c: 528, 228, 122; of ceil(c/4): 144, 60, 32): 49,798 / 40,318 /
    37,002."""
    decodes = {window: decode(structured_model(), STEPS, 0, window, page_size=4).records
               for window in (None, 8, 4)}
    totals = {window: sum(r.cycles[0] for r in records) for window, records in decodes.items()}
    for window, records in decodes.items():
        ops = np.sum([r.result.counters.ops for r in records], axis=0)
        added = 2 * int(ops.sum()) + 2 * int(ops[Op.LOAD]) + 3 * int(ops[Op.STORE])
        assert int(ops[Op.SOFTMAX]) == STEPS
        contexts = [r.result.counters.sm_max_len for r in records]
        divider = sum(33 * c - 7 for c in contexts)
        wide_reads = sum(360 + 14 * c + 4 * -(-c // 4) for c in contexts)
        assert totals[window] == CHAPTER_TOTALS[window] + added - divider - wide_reads, (
            f"W = {window}")
    assert totals == {None: 49798, 8: 40318, 4: 37002}


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


def chip_programs(model, calibration, page_size: int = 4, n_pages: int = 16) -> ProgramCache:
    return ProgramCache(model, calibration, gather=ChipGather(),
                        pool=Pool(page_size, n_pages, model.dim))


def chip_host(model, window, page_size, n_pages=16):
    programs = chip_programs(model, calibrate(model, STEPS, window), page_size, n_pages)
    return PagedHost(programs, paged_cache(model.dim, page_size, n_pages), 0, window)


def step_with_pools(host: PagedHost):
    """One step on the reference machine; the record and the pools the run left."""
    pages = host.pages_in_use()
    inputs = host.prepare_step()
    run = run_reference(inputs)
    host.finish_step(inputs, run.results)
    start, end = host.programs.layout.pools
    return inputs, run.results[0], run.ext[start:end], pages


def assert_pool_conserved(host: PagedHost, pools: np.ndarray) -> None:
    problems = pool_differences(host.programs.layout, pools, host.cache.table)
    assert not problems, problems


@pytest.mark.parametrize(("window", "page_size"), [(None, 4), (8, 4), (4, 2), (5, 1)])
def test_the_pools_hold_exactly_the_page_tables_rows_after_every_step(window, page_size):
    host = chip_host(structured_model(), window, page_size)
    for step in range(1, STEPS + 1):
        *_, pools, _ = step_with_pools(host)
        assert_pool_conserved(host, pools)
        assert host.cache.pages_in_use() == pages_held(step, window, page_size)


def test_a_write_to_a_freed_page_is_named():
    host = chip_host(structured_model(), 4, 2)
    for _ in range(12):
        *_, pools, _ = step_with_pools(host)
    free = host.cache.table.free_pages()[-1]
    pool = host.programs.layout.pool
    pools = pools.copy()
    pools[free * pool.page_size * pool.dim] ^= 1
    (problem,) = pool_differences(host.programs.layout, pools, host.cache.table)
    assert f"key pool, page {free} (free), slot 0, word 0" in problem


def test_a_row_written_to_the_wrong_page_fails_the_pool_check():
    """The check PagedHost.step makes after every chip-gather run: here the step's block table
    sends the new row to a free page instead of its own, as a broken program or table would."""
    host = chip_host(structured_model(), 4, 2)
    for _ in range(3):
        host.step()
    inputs = host.prepare_step()
    (request,) = inputs.requests
    free = host.cache.table.free_pages()[-1]
    table = request.table.copy()
    table[-1] = free  # the page the new row (the last table row) lands in
    run = run_reference(replace(inputs, requests=(replace(request, table=table),)))
    host.finish_step(inputs, run.results)
    with pytest.raises(PoolMismatch, match=r"key pool, page \d+ \(held\), slot 1, .* words differ"):
        check_pools(host.programs, run.ext, host.cache.table)


def test_a_fork_copies_its_shared_page_on_the_chip():
    model = random_model(4)
    parent = chip_host(model, 8, 4)
    for _ in range(10):  # row 10 falls in the middle of page 2: the page is shared after a fork
        parent.step()
    child = parent.fork("child")
    inputs, result, pools, _ = step_with_pools(parent)
    assert inputs.pair is not None
    program = inputs.program.instructions()
    assert [i.op for i in program[:2]] == [Op.PCOPY, Op.PCOPY]
    assert result.counters.op_count(Op.PCOPY) == 2
    assert_pool_conserved(parent, pools)
    for _ in range(6):
        for host in (child, parent):
            inputs, _, pools, _ = step_with_pools(host)
            assert inputs.pair is None  # after the one copy nothing is shared to write
            assert_pool_conserved(host, pools)


def test_a_fork_in_chip_gather_gives_the_rows_of_host_gather():
    model, force = random_model(4), [1, *np.random.default_rng(4).integers(0, 16, 20).tolist()]
    calibration = calibrate(model, 20, 8)
    host_parent = PagedHost(ProgramCache(model, calibration), paged_cache(model.dim, 4, 16), 1,
                            8, force=force)
    chip_parent = PagedHost(chip_programs(model, calibration), paged_cache(model.dim, 4, 16), 1,
                            8, force=force)
    for _ in range(10):
        host_parent.step(), chip_parent.step()
    host_child, chip_child = host_parent.fork("child"), chip_parent.fork("child")
    for _ in range(10):
        for host_side, chip_side in ((host_parent, chip_parent), (host_child, chip_child)):
            want, got = host_side.step(), chip_side.step()
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
    calibration = calibrate(model, 8, 8)
    host, chip = ProgramCache(model, calibration), chip_programs(model, calibration)
    for context in (1, 8):
        host_ops = [i.op for i in host.get(context).instructions()]
        ops = [i.op for i in chip.get(context).instructions()]
        assert ops.count(Op.PLOAD) == (2 if context > 1 else 0)
        assert ops.count(Op.LOAD) == 2 and ops.count(Op.PSTORE) == 2
        assert ops.count(Op.STORE) == host_ops.count(Op.STORE) - 2  # the new rows: pools only
        paged_as_plain = {Op.PLOAD: Op.LOAD, Op.PSTORE: Op.STORE}
        assert [paged_as_plain.get(op, op) for op in ops] == host_ops
        copy = chip.get(context, copy=True)
        assert [i.op for i in copy.instructions()[2:]] == ops
        assert copy.instructions()[0].op == Op.PCOPY
        assert copy.words.size <= copy.layout.program_words
        assert isa.program_cycles(copy.words, chip.cfg) > isa.program_cycles(
            chip.get(context).words, chip.cfg)
    assert len(chip) == 2


def test_page_sizes_must_be_powers_of_two_and_the_pool_must_fit():
    model = structured_model()
    with pytest.raises(ValueError, match="2\\^k rows"):
        page_shift_of(3)
    with pytest.raises(ValueError, match="external words"):
        Layout.for_model(model, ChipConfig(), pool=Pool(16, 64, model.dim))
    assert Layout.for_model(model, ChipConfig(), pool=Pool(4, 64, model.dim)).end <= (
        ChipConfig().ext_words)


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
        pools, outputs = host.programs.layout.pools, inputs.program.layout.outputs
        assert run.error == isa.ErrorCode.OK
        layout = inputs.program.layout
        written = set(run.written)
        # the outputs but the new rows (logits and token), and the new rows into the pools
        assert written & set(range(*outputs)) == set(range(layout.logits, layout.k_new))
        assert len(written - set(range(*outputs))) == 2 * 8
        assert all(pools[0] <= a < pools[1] for a in written - set(range(*outputs)))
        (k_at, v_at), = inputs.new_row_addresses()
        assert {*range(k_at, k_at + 8), *range(v_at, v_at + 8)} == written - set(range(*outputs))
        host.finish_step(inputs, inputs.read_results(run.ext, run.counters))
        assert_pool_conserved(host, run.ext[pools[0] : pools[1]])
