"""Cocotb tests of the chip's blocks, each against an independent Python computation.

Run through `verif/tests/test_blocks.py`, one simulation per block and simulator. The expected
values here are computed from hw/ISA.md's definitions written out again in this file (numpy,
Python integers, `math.exp`), not with the reference machine in `model/`, so a shared mistake
in the model cannot hide a bug in the RTL. Python's `random` is seeded by cocotb from
RANDOM_SEED; every test logs the seed it ran with.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import cocotb
import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge, Timer

from model.chip import isa
from model.chip.isa import Instr, Op
from verif.kit.memory import Backdoor
from verif.tests.blocks.block_tb import begin, sram_backdoor, sram_writes, start_clock_and_reset
from verif.tests.blocks.command import Command, MemoryWrites, run_command
from verif.tests.blocks.provenance import Memories
from verif.tests.blocks.write_log import WriteLog

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
WORD_MASK = 0xFFFFFFFF


# --- helpers ------------------------------------------------------------------------------------


def signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def pack(values, bits: int) -> int:
    """Element i of `values` at bits [bits*i +: bits] of one integer."""
    word = 0
    for i, value in enumerate(values):
        word |= (int(value) & ((1 << bits) - 1)) << (bits * i)
    return word


def random_int8(rng: random.Random, size) -> np.ndarray:
    """int8 values, one in four of them an extreme (-128 or 127)."""
    values = np.array([rng.randint(-128, 127) for _ in range(int(np.prod(size)))], dtype=np.int64)
    extremes = np.array([rng.random() < 0.25 for _ in range(values.size)])
    values[extremes] = [rng.choice((-128, 127)) for _ in range(int(extremes.sum()))]
    return values.reshape(size)


# --- systolic array -----------------------------------------------------------------------------


async def systolic_product(dut, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Clear the array, feed A (n x k) and B (k x n) skewed, return the n x n accumulators
    (read one at a time on acc_rd, as the matrix unit reads them)."""
    k = a.shape[1]
    dut.clear.value = 1
    dut.en.value = 0
    await RisingEdge(dut.clk)
    dut.clear.value = 0
    for beat in range(k + 2 * n - 2):
        # row i carries A[i][beat - i], column j carries B[beat - j][j]
        rows = [a[i, beat - i] if 0 <= beat - i < k else 0 for i in range(n)]
        cols = [b[beat - j, j] if 0 <= beat - j < k else 0 for j in range(n)]
        dut.a_in.value = pack(rows, 8)
        dut.b_in.value = pack(cols, 8)
        dut.en.value = 1
        await RisingEdge(dut.clk)
    dut.en.value = 0
    dut.a_in.value = pack([0x5A] * n, 8)    # noise: ignored while en = 0
    dut.b_in.value = pack([0xA5] * n, 8)
    await RisingEdge(dut.clk)
    accumulators = [await accumulator(dut, p) for p in range(n * n)]
    assert await accumulator(dut, n * n) == 0, "an index past the last PE must read 0"
    return np.array(accumulators).reshape(n, n)


async def accumulator(dut, index: int) -> int:
    """PE index's accumulator (i*n + j), signed, from the combinational read port."""
    dut.acc_idx.value = index
    await Timer(1, unit="ns")
    return signed(int(dut.acc_rd.value), 32)


@cocotb.test()
async def systolic_array_matches_numpy(dut):
    """Random A x B (k = 1 .. 64, int8 extremes included) equals numpy's int64 product."""
    begin(dut)
    n = int(dut.ARRAY_N.value)
    rng = random.Random(random.getrandbits(32))
    await start_clock_and_reset(dut, {"clear": 0, "en": 0, "a_in": 0, "b_in": 0, "acc_idx": 0})
    shapes = [1, 2, n, 64] + [rng.randint(1, 40) for _ in range(12)]
    cases = [(np.full((n, 64), -128), np.full((64, n), -128)),      # the largest sum
             (np.full((n, 64), -128), np.full((64, n), 127))]       # the smallest
    cases += [(random_int8(rng, (n, k)), random_int8(rng, (k, n))) for k in shapes]
    for index, (a, b) in enumerate(cases):
        got = await systolic_product(dut, n, a, b)
        want = a.astype(np.int64) @ b.astype(np.int64)
        assert np.array_equal(got, want), (
            f"case {index}, k={a.shape[1]}:\nA=\n{a}\nB=\n{b}\nwant\n{want}\ngot\n{got}")
        await RisingEdge(dut.clk)
    dut._log.info("%d products of a %dx%d array checked", len(cases), n, n)


# --- requantizer --------------------------------------------------------------------------------


def requant_expected(x: int, mult: int, shift: int) -> tuple[int, bool]:
    """ISA.md's requantization on Python integers: (sat8(r), r was clamped)."""
    if x == mult == INT32_MIN:
        high = INT32_MAX
    else:
        product = x * mult
        nudge = (1 << 30) if product >= 0 else 1 - (1 << 30)
        total = product + nudge
        high = abs(total) >> 31          # trunc(total / 2^31): toward zero
        if total < 0:
            high = -high
    mask = (1 << shift) - 1
    remainder = high & mask
    threshold = (mask >> 1) + (1 if high < 0 else 0)
    r = (high >> shift) + (1 if remainder > threshold else 0)
    return max(-128, min(127, r)), not -128 <= r <= 127


def requant_edge_vectors() -> list[tuple[int, int, int]]:
    """Rounding ties, saturation edges and the extremes of every field."""
    vectors = []
    # x * mult exactly half-way between two multiples of 2^31 (both signs)
    for x in (1, -1, 3, -3, 5, -5, (1 << 20) + 1, -(1 << 20) - 1):
        for mult in (1 << 30, -(1 << 30)):
            vectors.append((x, mult, 0))
    # high exactly half-way for each shift: mult = -2^31 makes high = -x exactly
    for shift in range(1, 32):
        for odd in (1, 3, 7, -1, -3, -7):
            high = odd << (shift - 1)
            if INT32_MIN < -high <= INT32_MAX:
                vectors.append((-high, INT32_MIN, shift))
                vectors.append((-high - 1, INT32_MIN, shift))
                vectors.append((-high + 1, INT32_MIN, shift))
    # saturation edges: r = 127, 128, -128, -129 (high = r << shift, exactly)
    for shift in (0, 1, 5, 17, 23):
        for r in (126, 127, 128, 129, -127, -128, -129, -130):
            vectors.append((-(r << shift), INT32_MIN, shift))
    # the single overflow case and the extremes of x and mult
    for shift in (0, 1, 30, 31):
        for x in (INT32_MIN, INT32_MAX, 0, 1, -1):
            for mult in (INT32_MIN, INT32_MAX, 0, 1, -1, 1 << 30):
                vectors.append((x, mult, shift))
    # shift beyond 31: the same formula on unbounded integers (the field is 8 bits)
    for shift in (32, 33, 62, 63, 64, 65, 128, 255):
        for x in (INT32_MIN, INT32_MAX, -1, 1, 123456789):
            for mult in (INT32_MIN, INT32_MAX, 1 << 30):
                vectors.append((x, mult, shift))
    return vectors


def requant_random_vectors(rng: random.Random, count: int) -> list[tuple[int, int, int]]:
    vectors = []
    for _ in range(count):
        x = rng.choice([rng.randint(INT32_MIN, INT32_MAX), rng.randint(-(1 << 20), 1 << 20),
                        rng.randint(-1000, 1000)])
        mult = rng.choice([rng.randint(1 << 30, INT32_MAX), rng.randint(INT32_MIN, INT32_MAX)])
        shift = rng.randint(0, 31)
        vectors.append((x, mult, shift))
    return vectors


@cocotb.test()
async def requant_matches_the_formula(dut):
    """Random vectors and every rounding tie and saturation edge, one vector per 1 ns."""
    begin(dut)
    rng = random.Random(random.getrandbits(32))
    vectors = requant_edge_vectors() + requant_random_vectors(rng, 3000)
    saturated = 0
    for x, mult, shift in vectors:
        dut.x.value = x & WORD_MASK
        dut.mult.value = mult & WORD_MASK
        dut.shift.value = shift
        await Timer(1, unit="ns")
        want_y, want_sat = requant_expected(x, mult, shift)
        got_y, got_sat = dut.y.value.to_signed(), int(dut.sat.value)
        assert (got_y, got_sat) == (want_y, int(want_sat)), (
            f"requant(x={x}, mult={mult}, shift={shift}): want y={want_y} sat={int(want_sat)}, "
            f"got y={got_y} sat={got_sat}")
        saturated += want_sat
    dut._log.info("%d vectors checked, %d of them saturating", len(vectors), saturated)


# --- exp table ----------------------------------------------------------------------------------


@cocotb.test()
async def exp_lut_matches_math_exp(dut):
    """All 256 entries equal floor(65535 * exp(-d / 16) + 0.5) and model.chip.exp_table.EXP, in
    order and each again right after an entry of another value."""
    from model.chip.exp_table import EXP

    begin(dut)
    want = [math.floor(65535 * math.exp(-d / 16) + 0.5) for d in range(256)]
    assert list(EXP) == want, "model/chip/exp_table.py disagrees with the formula"
    for d in range(256):
        dut.d.value = d
        await Timer(1, unit="ns")
        assert int(dut.e.value) == want[d], f"EXP[{d}]: want {want[d]}, got {int(dut.e.value)}"
    # each entry again, straight after one of another value (0 after 255, the others after 0):
    # a table that kept its last output for some index (a latch) shows here
    for d in range(256):
        dut.d.value = 255 if d == 0 else 0
        await Timer(1, unit="ns")
        dut.d.value = d
        await Timer(1, unit="ns")
        assert int(dut.e.value) == want[d], (
            f"EXP[{d}] after EXP[{255 if d == 0 else 0}]: want {want[d]}, got {int(dut.e.value)}")


# --- divider ------------------------------------------------------------------------------------


def divider_result(numerator: int, denominator: int, quotient_bits: int) -> tuple[int, int]:
    """hw/ISA.md's divider: exact when the quotient fits its bits, else every step subtracts."""
    ones = (1 << quotient_bits) - 1
    if numerator < denominator * (ones + 1):
        return numerator // denominator, numerator % denominator
    return ones, numerator - denominator * ones


def divider_groups(rng: random.Random, width: int, quotient_bits: int
                   ) -> list[tuple[int, list[int]]]:
    """(divisor, its dividends): edges of the exact range and beyond it, a zero divisor,
    SOFTMAX's operands (e * 127 + (s >> 1), s) with e <= s, and random ones."""
    top, limit = (1 << width) - 1, 1 << quotient_bits

    def near_the_limit(d: int) -> list[int]:
        """0, the largest exact dividend, the first beyond the range, random exact ones."""
        exact_top = min(d * limit - 1, top)
        return [0, exact_top, *(x for x in (d * limit, top) if exact_top < x <= top),
                *(rng.randint(0, exact_top) for _ in range(6))]

    groups = [(d, near_the_limit(d)) for d in (1, 2, 7, 255, 1 << (width - quotient_bits - 1),
                                               top >> quotient_bits, top)]
    groups.append((0, [0, 1, 12345, top]))
    for _ in range(12):
        d = rng.getrandbits(rng.randint(1, width)) or 1
        groups.append((d, near_the_limit(d)))
    for _ in range(8):  # SOFTMAX's rows: one sum, the dividends of its elements
        s = rng.randint(65535, 256 * 65535)
        groups.append((s, [rng.randint(0, 65535) * 127 + (s >> 1) for _ in range(12)]))
    return groups


@cocotb.test()
async def divu_matches_python(dut):
    """Streams of divisions into the pipeline, one divisor per stream (held until its last
    result leaves, as the header asks), entering back to back or with idle cycles between:
    every result leaves exactly QUO_W cycles after its division entered, equal to hw/ISA.md's
    definition (exact quotient and remainder when the quotient fits QUO_W bits, all ones
    beyond, a zero divisor included), and out_valid is low in every other cycle."""
    begin(dut)
    width, quotient_bits = int(dut.DIV_W.value), int(dut.QUO_W.value)
    rng = random.Random(random.getrandbits(32))
    await start_clock_and_reset(dut, {"in_valid": 0, "dividend": 0, "divisor": 0})
    in_flight: list[tuple[int, int] | None] = [None] * quotient_bits  # entered 1 .. QUO_W ago
    checked = 0

    async def cycle(entering: tuple[int, int] | None) -> None:
        """One clock cycle: drive `entering` (or idle, with noise on the dividend), check what
        leaves, and let the edge come."""
        nonlocal checked
        dut.in_valid.value = int(entering is not None)
        dut.dividend.value = entering[0] if entering else rng.getrandbits(width)
        await ReadOnly()
        leaving = in_flight.pop()
        out_valid = int(dut.out_valid.value)
        assert out_valid == int(leaving is not None), (
            f"out_valid {out_valid}, but {'a' if leaving else 'no'} division entered "
            f"{quotient_bits} cycles ago")
        if leaving is not None:
            want = divider_result(*leaving, quotient_bits)
            got = (int(dut.quotient.value), int(dut.remainder.value))
            assert got == want, f"{leaving[0]} / {leaving[1]}: want {want}, got {got}"
            checked += 1
        in_flight.insert(0, entering)
        await RisingEdge(dut.clk)

    for divisor, dividends in divider_groups(rng, width, quotient_bits):
        dut.divisor.value = divisor
        for dividend in dividends:
            for _ in range(rng.choice((0, 0, 0, 1, 2))):
                await cycle(None)
            await cycle((dividend, divisor))
        for _ in range(quotient_bits):  # the stream drains before the divisor changes
            await cycle(None)
    dut._log.info("%d divisions checked", checked)


# --- DMA ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Transfer:
    """One DMA command and what it must do: the words it moves and where they land."""

    instr: Instr  # LOAD or STORE, for its strobe, fields and listing
    words: np.ndarray  # the words moved, in order
    cycles: int  # its busy cycles by hw/ISA.md, written out again here
    rule: str  # where that count comes from

    @property
    def store(self) -> bool:
        return self.instr.op == Op.STORE

    @property
    def destination(self) -> tuple[str, int]:
        """The memory written and the first address: STORE ext[a ..], LOAD sram[b ..]."""
        return ("ext", self.instr.a) if self.store else ("sram", self.instr.b)


class DmaHarness:
    """dma_harness's two memories behind the kit's backdoors, and their write logs."""

    def __init__(self, dut, sram_words: int, ext_words: int):
        self.dut = dut
        self.memories = {"sram": sram_backdoor(dut, sram_words),
                         "ext": Backdoor(dut.u_ext.u_mem.mem, ext_words, "ext word")}
        self.logs = {"sram": sram_writes(dut), "ext": WriteLog(dut.u_ext_writes, "ext")}

    async def run(self, transfer: Transfer, what: str) -> None:
        """Run one command; check both memories' writes, the destination and the cycles."""
        instr = transfer.instr
        before = Memories(self.memories["sram"].shadow.copy(), self.memories["ext"].shadow.copy())
        self.dut.cmd_ext_addr.value = instr.a
        self.dut.cmd_sram_addr.value = instr.b
        self.dut.cmd_len.value = instr.length
        command = await run_command(self.dut, "cmd_store" if transfer.store else "cmd_load",
                                    transfer.cycles, Command.of(instr, what))
        memory, start = transfer.destination
        moved = {start + i: int(word) for i, word in enumerate(transfer.words)}
        command.check_writes(instr, before, *(  # the destination's words, nothing in the other
            MemoryWrites(name, moved if name == memory else {}, log.new_writes())
            for name, log in self.logs.items()))
        command.check_memory(memory, transfer.words,
                             self.memories[memory].read(start, instr.length), start)
        command.check_cycles(transfer.cycles, transfer.rule)


@cocotb.test()
async def dma_moves_words_in_the_documented_cycles(dut):
    """On the ideal memory LOAD takes len + EXT_LAT + 2 cycles, STORE len + 4 (hw/ISA.md, written
    out again here); lengths 1, 2, random and the whole SRAM, each loaded and stored back
    elsewhere; every word written lands where it should and nowhere else (the write logs); the
    AXI port keeps every rule."""
    begin(dut)
    sram_words = int(dut.SRAM_WORDS.value)
    ext_words = int(dut.EXT_WORDS.value)
    latency = int(dut.EXT_LAT.value)
    rng = random.Random(random.getrandbits(32))
    await start_clock_and_reset(dut, {"cmd_load": 0, "cmd_store": 0, "cmd_ext_addr": 0,
                                      "cmd_sram_addr": 0, "cmd_len": 0})
    harness = DmaHarness(dut, sram_words, ext_words)
    ext_image = np.array([rng.getrandbits(32) for _ in range(sram_words + 64)], dtype=np.uint32)
    harness.memories["ext"].write(0, ext_image)
    lengths = [1, 2, 3, rng.randint(4, 300), rng.randint(4, 300), sram_words]
    for length in lengths:
        ext = 0 if length == sram_words else rng.randint(0, 64)
        sram = 0 if length == sram_words else rng.randint(0, sram_words - length)
        words = ext_image[ext:ext + length]
        await harness.run(Transfer(isa.load(ext, sram, length), words, length + latency + 2,
                                   "hw/ISA.md's LOAD (len + EXT_LAT + 2)"), f"LOAD of {length}")
        dest = rng.randint(sram_words + 65, ext_words - length - 1)
        await harness.run(Transfer(isa.store(sram, dest, length), words, length + 4,
                                   "hw/ISA.md's STORE (len + 4)"), f"STORE of {length}")
    assert int(dut.axi_violations.value) == 0, (
        f"the AXI port broke rule {int(dut.axi_first_rule.value)} on channel "
        f"{int(dut.axi_first_channel.value)} in cycle {int(dut.axi_first_cycle.value)}")
    dut._log.info("lengths %s moved both ways", lengths)
