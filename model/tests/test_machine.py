"""The reference machine and its arithmetic, against independent plain-Python computations."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.chip import arith, isa, machine, randprog
from model.chip.exp_table import EXP
from model.chip.isa import PARAMETER_RANGES, QUO_W, ChipConfig, ErrorCode, Op

CFG = ChipConfig()
OVERHEAD = (4 + CFG.ext_lat + 2) + 1  # fetch: a stream of 4 words on the ideal memory; check


def op_counts(*counts: int) -> tuple[int, ...]:
    """ev_ops for the first opcodes' counts, every later opcode 0."""
    return tuple(counts) + (0,) * (isa.N_OPCODES - len(counts))


def round_half_up(value: Fraction) -> int:
    """Nearest integer, ties toward plus infinity."""
    return int((value + Fraction(1, 2)).__floor__())


def round_half_away(value: Fraction) -> int:
    """Nearest integer, ties away from zero, from exact rational arithmetic."""
    magnitude = abs(value)
    rounded = int(magnitude + Fraction(1, 2))  # floor of |v| + 1/2
    return rounded if value >= 0 else -rounded


def requant_reference(x: int, mult: int, shift: int) -> int:
    """ISA.md's requantization from its rounding description, without gemmlowp's bit tricks."""
    overflow = x == mult == -(2**31)
    high = 2**31 - 1 if overflow else round_half_up(Fraction(x * mult, 2**31))
    return max(-128, min(127, round_half_away(Fraction(high, 2**shift))))


def image_of(program: list[isa.Instr], data: dict[int, list[int]] | None = None) -> np.ndarray:
    image = np.zeros(2048, dtype=np.int64)
    words = isa.assemble(program)
    image[: len(words)] = words
    for address, values in (data or {}).items():
        image[address : address + len(values)] = values
    return image


@given(st.builds(
    isa.Instr,
    op=st.integers(0, 255), m=st.integers(0, 255), k=st.integers(0, 255), n=st.integers(0, 255),
    a=st.integers(0, 0xFFFF), b=st.integers(0, 0xFFFF), c=st.integers(0, 0xFFFF),
    flags=st.integers(0, 255), shift=st.integers(0, 255), mult=st.integers(-(2**31), 2**31 - 1),
))
def test_encode_decode_round_trip(instr):
    assert isa.decode(isa.encode(instr)) == instr


def test_encode_rejects_a_field_that_does_not_fit():
    with pytest.raises(ValueError, match="field a=65536"):
        isa.encode(isa.Instr(Op.LOAD, a=1 << 16))


def requant_edge_cases():
    rng = random.Random(3)
    cases = [(-(2**31), -(2**31), s) for s in (0, 1, 31)]
    for shift in (0, 1, 2, 5, 31, 32, 33, 63, 64, 255):
        for x in (2**31 - 1, -(2**31), 0, 1, -1, 3, -3, 255, -255):
            cases.append((x, 1 << 30, shift))  # x * 2^30 / 2^31 = x / 2: a tie for odd x
            cases.append((x, 2**31 - 1, shift))
    for _ in range(3000):
        cases.append((rng.randint(-(2**31), 2**31 - 1), rng.randint(-(2**31), 2**31 - 1),
                      rng.randint(0, 31)))
    return cases


def test_requant_matches_the_rounding_description():
    for x, mult, shift in requant_edge_cases():
        got = int(arith.requant(np.int64(x), mult, shift))
        assert got == requant_reference(x, mult, shift), (x, mult, shift)


def test_exp_table_is_the_formula():
    import math

    assert len(EXP) == 256
    assert EXP[0] == 65535
    for d, value in enumerate(EXP):
        assert value == math.floor(65535 * math.exp(-d / 16) + 0.5)


def test_softmax_int_follows_the_spec_step_by_step():
    rng = random.Random(5)
    for _ in range(300):
        x = [rng.randint(-128, 127) for _ in range(rng.randint(1, 40))]
        e = [EXP[max(x) - v] for v in x]
        total = sum(e)
        expected = [(ei * 127 + total // 2) // total for ei in e]
        assert arith.softmax_int(np.array(x)).tolist() == expected


def test_the_divider_divides_exactly_when_the_quotient_fits_its_bits():
    assert arith.divu(17, 5) == (3, 2)
    assert arith.divu(127 * 9 + 8, 9) == (127, 8)  # the largest quotient of 7 bits
    assert arith.divu(128 * 9, 9) == (127, 9)  # one more: every step subtracted, 9 left
    assert arith.divu(17, 0) == (127, 17)  # a zero divisor: all ones, the numerator left


def test_softmax_divisions_fit_the_dividers_quotient_bits():
    """Every SOFTMAX division (e * 127 + s // 2) / s has e <= s, so its quotient is at most 127:
    the divider's QUO_W = 7 bits divide it exactly, whatever the length (up to SM_MAX's
    highest) and the scores."""
    rng = random.Random(11)
    lengths = [1, 2, 3, 255, 256, 4096, PARAMETER_RANGES["SM_MAX"][1]]
    for length in lengths + [rng.randint(1, 300) for _ in range(200)]:
        x = np.array([rng.choice((-128, 127, rng.randint(-128, 127))) for _ in range(length)])
        e = [EXP[int(x.max()) - int(v)] for v in x]
        total = sum(e)
        for ei in set(e):
            numerator = ei * 127 + total // 2
            assert numerator < total << QUO_W
            assert arith.divu(numerator, total) == divmod(numerator, total)


@pytest.mark.parametrize("scale", [0.9999, 0.5, 0.3, 1e-3, 1e-9])
def test_quantize_multiplier_represents_the_scale(scale):
    mult, shift = arith.quantize_multiplier(scale)
    assert 2**30 <= mult < 2**31 and 0 <= shift <= 31
    assert mult / 2 ** (31 + shift) == pytest.approx(scale, rel=1e-8)


def test_quantize_multiplier_rejects_a_scale_of_one_or_more():
    with pytest.raises(ValueError, match="must be in"):
        arith.quantize_multiplier(1.5)


def test_every_instruction_against_plain_python():
    a = [1, -2, 3, 127, -128, 5, 6, 7]
    b = [100, 100, -100, 4, 5, 6, 7, 8]
    program = [
        isa.load(100, 0, 8), isa.load(108, 8, 8),
        isa.matmul(0, 8, 16, 2, 4, 2, mult=1 << 30, shift=1),  # scale 1/4
        isa.matmul(0, 8, 20, 2, 4, 2, b_transposed=True, raw=True),
        isa.vadd(0, 8, 24, 8), isa.vmax(0, 32, 8), isa.argmax(8, 33, 8), isa.softmax(0, 34, 8),
        isa.store(16, 200, 26),
    ]
    result = machine.run(image_of(program, {100: a + b}))
    out = machine.int8_of(result.ext[200:226]).tolist()
    raw = (result.ext[204:208].astype(np.int64) ^ 0x80000000) - 0x80000000
    a2, b_rows, b_cols = [a[:4], a[4:]], [b[0:2], b[2:4], b[4:6], b[6:8]], [b[:4], b[4:]]
    product = [[sum(x * y[j] for x, y in zip(row, b_rows, strict=True)) for j in range(2)]
               for row in a2]
    assert out[0:4] == [requant_reference(v, 1 << 30, 1) for row in product for v in row]
    assert raw.tolist() == [sum(x * y for x, y in zip(row, col, strict=True))
                            for row in a2 for col in b_cols]
    assert out[8:16] == [max(-128, min(127, x + y)) for x, y in zip(a, b, strict=True)]
    assert out[16] == 127 and out[17] == 0  # max of a; first index of b's maximum (100, 100)
    assert out[18:26] == arith.softmax_int(np.array(a)).tolist()
    # LOADs 0 .. 15, MATMULs 16 .. 23, VADD 24 .. 31, VMAX 32, ARGMAX 33, SOFTMAX 34 .. 41
    assert result.sram_written == tuple(range(42))


def test_vadd_and_matmul_count_saturations():
    program = [isa.load(100, 0, 2), isa.vadd(0, 0, 2, 2), isa.matmul(0, 0, 4, 1, 1, 1, mult=0)]
    result = machine.run(image_of(program, {100: [100, -1]}))
    assert result.counters.sat == 1  # 200 clamps, -2 and the zero product do not


def test_cycle_counters_of_a_hand_counted_program():
    # LOAD 30: 30 + L + 2; MATMUL 1x3x6 on a 4x4 array: two tiles, each A's row in one wide
    # read and B's 3 tile rows in 3, then 1+(3+7) and the 4 or 2 writes, plus the set-up
    # cycle; VADD 6: 7; SOFTMAX 3: 2*(3+1) for the maximum and the exponentials, then 3
    # divisions entering one a cycle, the last leaving 7 later; STORE 6: 6 + 4.
    program = [isa.load(100, 0, 30), isa.matmul(0, 0, 40, 1, 3, 6, mult=1 << 30),
               isa.vadd(0, 0, 50, 6), isa.softmax(0, 60, 3), isa.store(40, 300, 6)]
    counters = machine.run(image_of(program)).counters
    mat = 1 + (1 + 3 + 1 + 10 + 4) + (1 + 3 + 1 + 10 + 2)
    assert counters.dma == (30 + 2 + 2) + (6 + 4)
    assert counters.mat == mat
    assert counters.vec == 7
    assert counters.sm == 8 + 3 + 7
    assert counters.instr == 6
    assert counters.total == 6 * OVERHEAD + 44 + mat + 7 + 18


def test_event_counters_of_a_hand_counted_program():
    # x at sram 0..7, y at sram 8..11 (words 100..111 of external memory)
    x = [5, -3, 20, 20, 7, -100, 0, 1]
    y = [-50, 60, 2, 2]
    program = [
        isa.load(100, 0, 8), isa.load(108, 8, 4),
        isa.softmax(0, 20, 5),  # [5, -3, 20, 20, 7]: len 5, range 20 - (-3) = 23
        isa.softmax(8, 30, 3),  # [-50, 60, 2]: len 3, range 60 - (-50) = 110
        isa.vmax(0, 40, 8), isa.vmax(0, 41, 2),
        isa.store(20, 300, 5),
    ]  # then the zero words: HALT
    counters = machine.run(image_of(program, {100: x + y})).counters
    # HALT, LOAD, STORE, MATMUL, VADD, VMAX, ARGMAX, SOFTMAX
    assert counters.ops == op_counts(1, 2, 1, 0, 0, 2, 0, 2)
    assert counters.instr == 8
    assert counters.dma_words == 8 + 4 + 5
    assert counters.sm_max_len == 5  # the first SOFTMAX is the longer one
    assert counters.sm_range == 110  # the second the wider one
    assert counters.as_dict()["ops"] == list(op_counts(1, 2, 1, 0, 0, 2, 0, 2))


def test_softmax_range_spans_the_whole_exp_table_and_no_softmax_leaves_zeros():
    program = [isa.load(100, 0, 3), isa.softmax(0, 10, 3)]
    counters = machine.run(image_of(program, {100: [127, 0, -128]})).counters
    assert (counters.sm_max_len, counters.sm_range) == (3, 255)
    counters = machine.run(image_of([isa.load(100, 0, 3), isa.vmax(0, 10, 3)])).counters
    assert (counters.sm_max_len, counters.sm_range, counters.dma_words) == (0, 0, 3)
    assert counters.ops == op_counts(1, 1, 0, 0, 0, 1)


def test_ev_ops_packs_opcode_i_in_bits_16i():
    ops = op_counts(1, 2, 3, 4, 5, 6, 7, 0xFFFF)
    packed = machine.pack_ops(ops)
    assert packed == sum(v << (16 * i) for i, v in enumerate(ops))
    assert packed >> 112 == 0xFFFF and packed & 0xFFFF == 1
    assert machine.unpack_ops(packed) == ops


def test_counters_wrap_modulo_their_width():
    counters = machine.Counters(total=2**32 + 5, ops=(2**16 + 1,) + (0,) * 7, sm_range=255)
    counters.wrapped()
    assert (counters.total, counters.ops[0], counters.sm_range) == (5, 1, 255)


@pytest.mark.parametrize(("instr", "code"), [
    (isa.Instr(0x42), ErrorCode.ILLEGAL_OPCODE),
    (isa.load(CFG.ext_words - 2, 0, 3), ErrorCode.BAD_ADDRESS),
    (isa.store(CFG.sram_words - 1, 0, 2), ErrorCode.BAD_ADDRESS),
    (isa.matmul(0, 0, CFG.sram_words - 3, 2, 2, 2), ErrorCode.BAD_ADDRESS),
    (isa.vmax(0, CFG.sram_words, 1), ErrorCode.BAD_ADDRESS),
    (isa.load(0, 0, 0), ErrorCode.BAD_SIZE),
    (isa.matmul(0, 0, 0, 1, CFG.k_max + 1, 1), ErrorCode.BAD_SIZE),
    (isa.softmax(0, 0, CFG.sm_max + 1), ErrorCode.BAD_SIZE),
    (isa.softmax(CFG.sram_words, 0, 0), ErrorCode.BAD_SIZE),  # size is checked first
])
def test_errors_stop_the_machine_with_the_documented_code(instr, code):
    program = [isa.load(100, 0, 4), instr, isa.store(0, 200, 4)]
    result = machine.run(image_of(program))
    assert result.error == code
    assert result.error_pc == 4
    assert result.counters.instr == 1
    assert result.counters.ops == op_counts(0, 1)  # the failing one counts nowhere
    assert result.counters.dma_words == 4
    assert result.counters.total == 2 * OVERHEAD + 4 + CFG.ext_lat + 2
    assert not result.ext[200:204].any()  # nothing after the error ran
    with pytest.raises(machine.MachineError, match=f"{code.name} at instruction at 4"):
        machine.run(image_of(program), raise_on_error=True)


def test_running_off_the_end_of_memory_is_a_bad_address():
    image = np.zeros(CFG.ext_words, dtype=np.int64)
    image[0:4] = isa.encode(isa.load(0, 0, 1))
    image[4:] = isa.encode(isa.load(0, 0, 1)) * ((CFG.ext_words - 4) // 4)
    result = machine.run(image)
    assert result.error == ErrorCode.BAD_ADDRESS
    assert result.error_pc == CFG.ext_words


def test_random_programs_are_legal_and_reproducible():
    stopped = 0
    for seed in range(200):
        program = randprog.generate(seed)
        assert np.array_equal(program.image, randprog.generate(seed).image)
        result = machine.run(program.image)
        if program.stops_at is None:
            assert result.error == ErrorCode.OK
            assert sum(result.counters.ops) == result.counters.instr == len(program.instrs) + 1
            assert result.counters.ops[Op.HALT] == 1
        else:  # its last instruction's table names a page outside the pool
            stopped += 1
            assert program.stops_at == len(program.instrs) - 1
            assert (result.error, result.error_pc) == (ErrorCode.BAD_PAGE, 4 * program.stops_at)
            assert result.counters.instr == len(program.instrs)
    assert 0 < stopped < 40


def test_random_programs_use_the_paged_instructions_at_their_edges():
    instrs = [i for seed in range(300) for i in randprog.generate(seed).instrs]
    paged = [i for i in instrs if i.op in isa.PAGED_OPS]
    assert {Op(i.op) for i in paged} == set(isa.PAGED_OPS)
    entries = {isa.paged_geometry(i).entries for i in paged if i.op != Op.PCOPY}
    assert {1, 2, isa.PT_ENTRIES} <= entries
    assert {i.shift for i in paged} >= {0, 1, 2, 3, 4}
    assert any(i.row % (1 << i.shift) for i in paged if i.op != Op.PCOPY), "no start mid-page"


def test_random_programs_never_read_unwritten_scratchpad_words():
    """The RTL keeps its scratchpad between runs: a program must not depend on what was there."""
    rng = np.random.default_rng(0)
    for seed in range(200):
        program = randprog.generate(seed)
        clean = machine.run(program.image)
        dirty = machine.Machine(program.image)
        dirty.sram[:] = rng.integers(0, 2**32, size=dirty.sram.size, dtype=np.uint64)
        result = dirty.run()
        assert np.array_equal(result.ext, clean.ext), f"program seed {seed}"
        assert result.counters == clean.counters, f"program seed {seed}"


# ---- paged instructions (hw/ISA.md, "Paged instructions") ------------------------------------

TABLE, PAIR, POOL = 1000, 1100, 1200  # external addresses of the block table, a PCOPY pair, pool
ROW_WORDS = 3


def paged_image(page_shift: int, pages: int, table: list[int], seed: int = 0,
                row_words: int = ROW_WORDS) -> np.ndarray:
    """Random pool words, the block table at TABLE (header first), zeros elsewhere."""
    rng = np.random.default_rng(seed)
    image = np.zeros(CFG.ext_words, dtype=np.int64)
    pool_words = pages * (1 << page_shift) * row_words
    image[POOL : POOL + pool_words] = rng.integers(0, 2**32, pool_words)
    image[TABLE : TABLE + len(table)] = table
    return image


def pool_addresses(ext: np.ndarray, row: int, length: int, page_shift: int,
                   row_words: int = ROW_WORDS) -> list[int]:
    """Plain Python: the external address of every word of table rows row .. row+length-1."""
    page_size = 2**page_shift
    first = int(ext[TABLE])
    addresses = []
    for v in range(row, row + length):
        page = int(ext[TABLE + 1 + (first + v) // page_size])
        slot = (first + v) % page_size
        addresses += [POOL + (page * page_size + slot) * row_words + w for w in range(row_words)]
    return addresses


def run_with(image: np.ndarray, program: list[isa.Instr]) -> machine.RunResult:
    words = isa.assemble(program)
    image = image.copy()
    image[: len(words)] = words
    return machine.run(image)


# non-contiguous pages, page 5 listed twice (a reused page), header slots 0 .. P-1
@pytest.mark.parametrize(("page_shift", "first", "row", "length"), [
    (0, 0, 0, 7), (1, 1, 0, 5), (2, 3, 0, 7), (2, 0, 2, 9), (3, 6, 1, 12), (4, 15, 0, 3),
])
def test_pload_reads_table_rows_from_their_pages(page_shift, first, row, length):
    table = [first, 5, 2, 5, 7, 0, 3, 1, 4, 6, 5, 2, 7, 0]
    image = paged_image(page_shift, 8, table, seed=page_shift)
    program = [isa.pload(TABLE, 40, POOL, ROW_WORDS, length, page_shift, 8, row=row)]
    result = run_with(image, program)
    assert result.error == ErrorCode.OK
    want = image[pool_addresses(image, row, length, page_shift)]
    assert result.sram[40 : 40 + length * ROW_WORDS].tolist() == (want & 0xFFFFFFFF).tolist()
    assert result.written == ()
    assert result.sram_written == tuple(range(40, 40 + length * ROW_WORDS))
    reads, writes = machine.Machine(image).data_addresses(program[0])  # word k to sram 40 + k
    assert reads.tolist() == pool_addresses(image, row, length, page_shift) and writes.size == 0


def test_pstore_writes_rows_into_their_slots_and_a_page_named_twice_keeps_the_later_row():
    page_shift, length = 1, 6  # pages of 2 rows; table rows 1 .. 6 from slot 1
    table = [1, 4, 3, 0, 3, 6]  # table pages 4, 3, 0, 3 (page 3 twice), 6; from slot 1
    image = paged_image(page_shift, 8, table)
    data = list(range(101, 101 + length * ROW_WORDS))
    image[300 : 300 + len(data)] = data
    program = [isa.load(300, 10, len(data)),
               isa.pstore(TABLE, 10, POOL, ROW_WORDS, length, page_shift, 8, row=1)]
    result = run_with(image, program)
    assert result.error == ErrorCode.OK
    expected = image.copy()
    for address, value in zip(pool_addresses(image, 1, length, page_shift), data, strict=True):
        expected[address] = value  # in order: the later row wins
    pool_end = POOL + 8 * 2 * ROW_WORDS
    assert result.ext[POOL:pool_end].tolist() == (expected[POOL:pool_end] & 0xFFFFFFFF).tolist()
    assert set(result.written) == set(pool_addresses(image, 1, length, page_shift))


def test_pcopy_copies_slots_between_two_pages_through_the_scratchpad():
    page_shift = 2
    image = paged_image(page_shift, 6, [0])
    image[PAIR : PAIR + 2] = [4, 1]  # copy page 4 to page 1
    program = [isa.pcopy(PAIR, 20, POOL, ROW_WORDS, 3, page_shift, 6, row=1)]  # slots 1 .. 3
    result = run_with(image, program)
    page_words = 4 * ROW_WORDS
    src = POOL + 4 * page_words + ROW_WORDS
    dst = POOL + 1 * page_words + ROW_WORDS
    copied = image[src : src + 3 * ROW_WORDS].tolist()
    assert result.ext[dst : dst + 3 * ROW_WORDS].tolist() == copied
    assert result.ext[dst - ROW_WORDS : dst].tolist() == image[dst - ROW_WORDS : dst].tolist()
    assert result.sram[20 : 20 + 3 * ROW_WORDS].tolist() == copied
    assert result.written == tuple(range(dst, dst + 3 * ROW_WORDS))


def test_paged_cycle_costs_and_counters_by_hand():
    # ISA.md with L = 2, rows of 8 words. PLOAD 7 rows from row 0, pages of 4: entries 0 .. 2
    # (E = 3), (E + L + 3) + (56 + L + 2) = 68. PSTORE 1 row at row 7: entries 1 .. 2 (E = 2),
    # (E + L + 3) + (8 + 3) = 18. PCOPY 4 rows: 2 * 32 + 2L + 10 = 78. PLOAD with pages of one
    # row: E = 7, 12 + 60 = 72.
    image = paged_image(2, 16, [2, 3, 9, 4, 4], row_words=8)
    image[PAIR : PAIR + 2] = [3, 7]
    program = [isa.pload(TABLE, 0, POOL, 8, 7, 2, 16), isa.pstore(TABLE, 0, POOL, 8, 1, 2, 16, 7),
               isa.pcopy(PAIR, 100, POOL, 8, 4, 2, 16)]
    counters = run_with(image, program).counters
    assert counters.dma == 68 + 18 + 78
    assert counters.total == 4 * OVERHEAD + 68 + 18 + 78
    assert counters.ops == op_counts(1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1)
    assert counters.pt_words == 4 + 3 + 2
    assert counters.dma_words == 56 + 8 + 32
    table = [0, *range(7)]
    one_row_pages = run_with(paged_image(0, 16, table, row_words=8),
                             [isa.pload(TABLE, 0, POOL, 8, 7, 0, 16)]).counters
    assert (one_row_pages.dma, one_row_pages.pt_words) == (72, 8)


def test_paged_cycles_do_not_depend_on_the_table():
    """The same PLOAD and PSTORE under every header and different pages: identical counters;
    and the block table costs a PLOAD E + L + 3 cycles more than a LOAD of the same words
    (hw/ISA.md: PLOAD (E + L + 3) + (n + L + 2), LOAD n + L + 2, PSTORE (E + L + 3) + (n + 3)),
    E the entries its rows may need whatever the header is."""
    program = [isa.pload(TABLE, 0, POOL, ROW_WORDS, 7, 2, 8),
               isa.pstore(TABLE, 0, POOL, ROW_WORDS, 1, 2, 8, row=7)]
    tables = [[first, *pages] for first in range(4)
              for pages in ([1, 6, 3, 0], [7, 7, 7, 7], [0, 1, 2, 5])]
    runs = [run_with(paged_image(2, 8, table, seed=i), program).counters
            for i, table in enumerate(tables)]
    assert all(counters == runs[0] for counters in runs), "the table changed the counters"
    load = run_with(paged_image(2, 8, [0, 1, 2, 3]),
                    [isa.load(POOL, 0, 7 * ROW_WORDS)]).counters
    pload_table = 3 + CFG.ext_lat + 3  # rows 0..6 from any slot of pages of 4: entries 0..2
    pstore = (2 + CFG.ext_lat + 3) + (ROW_WORDS + 3)  # row 7 from any slot: entries 1..2
    assert runs[0].dma == load.dma + pload_table + pstore


def test_entries_read_but_not_used_are_not_checked():
    # 3 rows from slot 0 of pages of 4 rows: entries 0 and 1 are read, only entry 0 is used
    image = paged_image(2, 4, [0, 2, 0xFFFFFFFF])
    result = run_with(image, [isa.pload(TABLE, 0, POOL, ROW_WORDS, 3, 2, 4)])
    assert result.error == ErrorCode.OK
    assert result.counters.pt_words == 3


BAD_TABLES = [  # (instruction, table at TABLE, pair at PAIR): each names a page outside the pool
    (isa.pload(TABLE, 8, POOL, ROW_WORDS, 5, 2, 6), [4, 1, 2, 3], None),  # first >= P
    (isa.pload(TABLE, 8, POOL, ROW_WORDS, 5, 2, 6), [3, 1, 6, 3], None),  # a used entry = pages
    (isa.pstore(TABLE, 0, POOL, ROW_WORDS, 2, 1, 6, 1), [0, 1, 0xFFFFFFFF], None),
    (isa.pstore(TABLE, 0, POOL, ROW_WORDS, 1, 0, 6), [0, 0x10000], None),  # beyond 16 bits
    (isa.pcopy(PAIR, 8, POOL, ROW_WORDS, 4, 2, 6), [0], (6, 1)),  # the source
    (isa.pcopy(PAIR, 8, POOL, ROW_WORDS, 4, 2, 6), [0], (1, 9)),  # the destination
]


@pytest.mark.parametrize(("instr", "table", "pair"), BAD_TABLES)
def test_a_page_outside_the_pool_stops_the_run_and_writes_nothing(instr, table, pair):
    image = paged_image(2, 6, table)
    image[100:104] = [11, 12, 13, 14]
    if pair:
        image[PAIR : PAIR + 2] = pair
    program = [isa.load(100, 0, 4), instr, isa.store(0, 200, 4)]
    result = run_with(image, program)
    assert (result.error, result.error_pc) == (ErrorCode.BAD_PAGE, 4)
    fault = isa.table_phase_cycles(instr, CFG)
    assert fault == (CFG.ext_lat + 4 if instr.op == Op.PCOPY
                     else isa.paged_geometry(instr).entries + CFG.ext_lat + 3)
    assert result.counters.instr == 2 and result.counters.ops[instr.op] == 1
    assert result.counters.total == 2 * OVERHEAD + 4 + CFG.ext_lat + 2 + fault
    assert result.counters.dma == 4 + CFG.ext_lat + 2 + fault
    assert result.counters.pt_words == isa.paged_geometry(instr).table_words
    assert result.counters.dma_words == 4
    words = isa.assemble(program)
    expected_ext = (image & 0xFFFFFFFF).astype(np.uint32)
    expected_ext[: len(words)] = words
    assert np.array_equal(result.ext, expected_ext), "the faulting instruction wrote memory"
    assert result.written == ()
    assert result.sram[:4].tolist() == [11, 12, 13, 14] and not result.sram[4:].any()
    with pytest.raises(machine.MachineError, match="BAD_PAGE at instruction at 4"):
        machine.Machine(result.ext).run(raise_on_error=True)


@pytest.mark.parametrize(("instr", "code"), [
    (isa.pload(TABLE, 0, POOL, ROW_WORDS, 0, 2, 4), ErrorCode.BAD_SIZE),  # len 0
    (isa.pload(TABLE, 0, POOL, 0, 4, 2, 4), ErrorCode.BAD_SIZE),  # row_words 0
    (isa.pstore(TABLE, 0, POOL, ROW_WORDS, 4, 2, 0), ErrorCode.BAD_SIZE),  # pages 0
    (isa.pload(TABLE, 0, POOL, 1, 4, isa.PAGE_SHIFT_MAX + 1, 1), ErrorCode.BAD_SIZE),
    (isa.pload(TABLE, 0, POOL, 1, isa.PT_ENTRIES + 1, 0, 4), ErrorCode.BAD_SIZE),  # E = 65
    (isa.pcopy(PAIR, 0, POOL, ROW_WORDS, 3, 2, 4, row=2), ErrorCode.BAD_SIZE),  # slots 2 .. 4
    (isa.pload(TABLE, CFG.sram_words - 8, POOL, ROW_WORDS, 3, 2, 4), ErrorCode.BAD_ADDRESS),
    (isa.pstore(CFG.ext_words - 2, 0, POOL, ROW_WORDS, 5, 2, 4), ErrorCode.BAD_ADDRESS),  # j_hi 1
    (isa.pload(TABLE, 0, CFG.ext_words - 47, ROW_WORDS, 1, 2, 4), ErrorCode.BAD_ADDRESS),  # pool
    (isa.pcopy(CFG.ext_words - 1, 0, POOL, ROW_WORDS, 1, 2, 4), ErrorCode.BAD_ADDRESS),
])
def test_paged_size_and_address_checks(instr, code):
    result = run_with(paged_image(2, 4, [0, 0, 1]), [instr])
    assert (result.error, result.error_pc) == (code, 0)
    assert result.counters.instr == 0 and result.counters.pt_words == 0


def test_the_table_and_pool_may_end_at_the_top_of_memory():
    top = CFG.ext_words
    image = np.zeros(top, dtype=np.int64)
    image[top - 3 : top] = [0, 1, 0]  # header, two entries (5 rows of pages of 4: j_hi = 1)
    program = [isa.pload(top - 3, 0, top - 48, ROW_WORDS, 5, 2, 4),
               isa.pcopy(top - 2, 0, top - 48, ROW_WORDS, 4, 2, 4)]
    assert run_with(image, program).error == ErrorCode.OK


# --- bus errors (hw/ISA.md, "BUS_ERROR"), worked out by hand ---------------------------------


def test_a_read_error_zeroes_the_word_and_stops_after_the_instruction():
    program = [isa.load(100, 0, 4), isa.store(0, 200, 4), isa.store(0, 300, 4)]
    errors = machine.BusErrors(read=frozenset({101}))
    result = machine.run(image_of(program, {100: [5, 6, 7, 8]}), bus_errors=errors)
    assert (result.error, result.error_pc) == (ErrorCode.BUS_ERROR, 0)
    assert result.sram[:4].tolist() == [5, 0, 7, 8]  # the LOAD ran to its end
    assert not result.ext[200:204].any()  # the STORE after it never ran
    assert result.counters.total == OVERHEAD + 4 + CFG.ext_lat + 2
    assert (result.counters.instr, result.counters.dma_words) == (1, 4)


def test_a_refused_write_keeps_the_old_word_and_the_others_land():
    program = [isa.load(100, 0, 4), isa.store(0, 200, 4), isa.store(0, 300, 4)]
    image = image_of(program, {100: [5, 6, 7, 8], 202: [99]})
    result = machine.run(image, bus_errors=machine.BusErrors(write=frozenset({202})))
    assert (result.error, result.error_pc) == (ErrorCode.BUS_ERROR, 4)
    assert result.ext[200:204].tolist() == [5, 6, 99, 8]
    assert result.written == (200, 201, 203)
    assert not result.ext[300:304].any()
    assert result.counters.total == 2 * OVERHEAD + (4 + CFG.ext_lat + 2) + (4 + 4)


def test_a_fetch_error_stops_after_fetch_uncounted():
    program = [isa.load(100, 0, 4), isa.halt()]
    result = machine.run(image_of(program), bus_errors=machine.BusErrors(read=frozenset({6})))
    assert (result.error, result.error_pc) == (ErrorCode.BUS_ERROR, 4)
    assert result.counters.total == OVERHEAD + (4 + CFG.ext_lat + 2) + (4 + CFG.ext_lat + 2)
    assert result.counters.instr == 1  # the LOAD; the HALT was fetched, never checked


def test_an_erring_header_reads_as_slot_0_and_a_bad_page_stops_it_as_a_bus_error():
    # header 3 would be a bad slot for pages of 2 rows; read as 0 it is good, entry 1 is 9
    image = paged_image(1, 4, [3, 0, 9])
    program = [isa.load(100, 0, 4), isa.pload(TABLE, 0, POOL, ROW_WORDS, 3, 1, 4)]
    errors = machine.BusErrors(read=frozenset({TABLE}))
    result = machine.run(_with_program(image, program), bus_errors=errors)
    assert (result.error, result.error_pc) == (ErrorCode.BUS_ERROR, 4)
    table = 2 + CFG.ext_lat + 3  # E = 2 entries: the table phase alone
    assert result.counters.dma == (4 + CFG.ext_lat + 2) + table
    assert result.counters.pt_words == 3


def _with_program(image: np.ndarray, program: list[isa.Instr]) -> np.ndarray:
    words = isa.assemble(program)
    image = image.copy()
    image[: len(words)] = words
    return image
