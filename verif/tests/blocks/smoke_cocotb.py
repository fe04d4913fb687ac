"""A smoke test of the whole chip: one hand-assembled program, results and counters by hand.

The program uses every unit (LOAD, MATMUL, SOFTMAX, VADD, ARGMAX, STORE, HALT). The expected
memory is computed here with numpy from hw/ISA.md's definitions, and the counters from ISA.md's
cycle formulas written out for this program, independently of `model/`; only the layout of the
counters bus (which bits hold which counter) is the model's, as the RTL's header is. A second
run starts the chip again on an illegal instruction: the counters restart and the error is
reported.
"""

from __future__ import annotations

import math
import os
import random

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import First, ReadOnly, RisingEdge, Timer

from model.chip.isa import N_OPCODES
from model.chip.machine import Counters
from sim.runner import CLOCK_NS

WATCHDOG_CYCLES = 20_000

# the encoding (hw/ISA.md, "Instruction word")
HALT, LOAD, STORE, MATMUL, VADD, VMAX, ARGMAX, SOFTMAX = range(8)
FLAG_BT, FLAG_RAW = 1, 2

# the program's layout
DATA_EXT = 256       # input words in external memory
OUT_EXT = 1024       # where STORE puts the results
A_SRAM, B_SRAM, X_SRAM, Y_SRAM = 0, 15, 45, 63
DATA_WORDS = 81      # A (3 x 5) + B (5 x 6) + x (18) + y (18)
C_SRAM, P_SRAM, S_SRAM, I_SRAM = 100, 200, 300, 400
OUT_WORDS = I_SRAM + 1 - C_SRAM
M, K, N = 3, 5, 6
VEC = 18
MULT, SHIFT = 1518500250, 6   # about 0.7071 * 2^-6


def instr(op, *, m=0, k=0, n=0, length=None, a=0, b=0, c=0, flags=0, shift=0, mult=0):
    if length is not None:
        k, n = length >> 8, length & 0xFF
    return [(op << 24) | (m << 16) | (k << 8) | n, (a << 16) | b,
            (c << 16) | (flags << 8) | shift, mult & 0xFFFFFFFF]


PROGRAM = [
    instr(LOAD, length=DATA_WORDS, a=DATA_EXT, b=A_SRAM),
    instr(MATMUL, m=M, k=K, n=N, a=A_SRAM, b=B_SRAM, c=C_SRAM, shift=SHIFT, mult=MULT),
    instr(SOFTMAX, length=M * N, a=C_SRAM, c=P_SRAM),
    instr(VADD, length=VEC, a=X_SRAM, b=Y_SRAM, c=S_SRAM),
    instr(ARGMAX, length=M * N, a=C_SRAM, c=I_SRAM),
    instr(STORE, length=OUT_WORDS, a=OUT_EXT, b=C_SRAM),
    instr(HALT),
]


# --- the expected results, from ISA.md ---------------------------------------------------------


def requant(x: int, mult: int, shift: int) -> tuple[int, bool]:
    if x == mult == -(2**31):
        high = 2**31 - 1
    else:
        total = x * mult + ((1 << 30) if x * mult >= 0 else 1 - (1 << 30))
        high = (abs(total) >> 31) * (1 if total >= 0 else -1)
    mask = (1 << shift) - 1
    r = (high >> shift) + (1 if (high & mask) > (mask >> 1) + (high < 0) else 0)
    return max(-128, min(127, r)), not -128 <= r <= 127


def softmax(x: list[int]) -> list[int]:
    table = [math.floor(65535 * math.exp(-d / 16) + 0.5) for d in range(256)]
    e = [table[max(x) - v] for v in x]
    s = sum(e)
    return [(v * 127 + (s >> 1)) // s for v in e]


def expected_outputs(a, b, x, y) -> tuple[dict[int, int], int]:
    """SRAM words C_SRAM .. I_SRAM after the program, and the number of saturations."""
    acc = a.astype(np.int64) @ b.astype(np.int64)
    c, saturations = [], 0
    for value in acc.reshape(-1).tolist():
        out, clamped = requant(value, MULT, SHIFT)
        c.append(out)
        saturations += clamped
    sums = (x + y).tolist()
    saturations += sum(1 for v in sums if not -128 <= v <= 127)
    words = {C_SRAM + i: v for i, v in enumerate(c)}
    words.update({P_SRAM + i: v for i, v in enumerate(softmax(c))})
    words.update({S_SRAM + i: max(-128, min(127, v)) for i, v in enumerate(sums)})
    words[I_SRAM] = c.index(max(c))
    return words, saturations


def expected_counters(ext_lat: int, array_n: int) -> dict[str, int]:
    """ISA.md's cycle formulas for this program (on the ideal memory: the harness's default)."""
    overhead = (4 + ext_lat + 2) + 1
    dma = (DATA_WORDS + ext_lat + 2) + (OUT_WORDS + 4)
    mat = 1
    for i0 in range(0, M, array_n):
        rows = min(array_n, M - i0)
        for j0 in range(0, N, array_n):
            cols = min(array_n, N - j0)
            # A's rows a chunk of array_n words a read, then B's (row-major) k tile rows
            mat += rows * -(-K // array_n) + K + 1 + (K + 2 * array_n - 1) + rows * cols
    vec = (VEC + 1) + (M * N + 1)
    sm = 2 * (M * N + 1) + (M * N + 7)  # divisions enter one a cycle, each leaves 7 later
    total = len(PROGRAM) * overhead + dma + mat + vec + sm
    return {"total": total, "dma": dma, "mat": mat, "vec": vec, "sm": sm, "instr": len(PROGRAM)}


# --- the run ------------------------------------------------------------------------------------


async def run_program(dut) -> None:
    await RisingEdge(dut.clk)
    dut.start.value = 1
    await RisingEdge(dut.clk)
    dut.start.value = 0
    await ReadOnly()
    assert int(dut.busy.value) == 1 and int(dut.done.value) == 0
    watchdog = Timer(WATCHDOG_CYCLES * CLOCK_NS, unit="ns")
    if await First(RisingEdge(dut.done), watchdog) is watchdog:
        raise AssertionError(f"done did not rise within {WATCHDOG_CYCLES} cycles")
    await ReadOnly()
    assert int(dut.busy.value) == 0


def read_port(dut, name: str) -> int:
    return int(getattr(dut, name).value)


def read_counters(dut) -> Counters:
    """The counters bus, one read, unpacked by the model's layout (hw/rtl/chip_defs.vh's)."""
    return Counters.from_packed(read_port(dut, "counters"))


@cocotb.test()
async def chip_runs_a_hand_assembled_program(dut):
    """Every unit once; memory, error, error_pc and every counter as ISA.md says."""
    dut._log.info("RANDOM_SEED=%s", os.environ.get("RANDOM_SEED", "(cocotb's own)"))
    rng = random.Random(random.getrandbits(32))
    ext_lat, array_n = int(dut.EXT_LAT.value), int(dut.ARRAY_N.value)

    a = np.array([rng.choice((-128, 127, rng.randint(-128, 127))) for _ in range(M * K)])
    b = np.array([rng.choice((-128, 127, rng.randint(-128, 127))) for _ in range(K * N)])
    x = np.array([rng.choice((-128, 127, rng.randint(-128, 127))) for _ in range(VEC)])
    y = np.array([rng.choice((-128, 127, rng.randint(-128, 127))) for _ in range(VEC)])
    data = np.concatenate([a, b, x, y])
    # the upper 24 bits of an int8 operand word are ignored: fill them with noise
    data_words = [((rng.getrandbits(24) << 8) | (int(v) & 0xFF)) for v in data]

    Clock(dut.clk, CLOCK_NS, unit="ns").start()
    dut.start.value = 0
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    await ReadOnly()
    assert int(dut.done.value) == 0 and int(dut.busy.value) == 0, "idle after reset"
    await RisingEdge(dut.clk)

    program_words = [w for words in PROGRAM for w in words]
    for address, word in enumerate(program_words):
        dut.u_mem.mem[address].value = word
    for offset, word in enumerate(data_words):
        dut.u_mem.mem[DATA_EXT + offset].value = word

    await run_program(dut)
    want_sram, saturations = expected_outputs(a.reshape(M, K), b.reshape(K, N), x, y)
    for address in range(C_SRAM, I_SRAM + 1):
        want = want_sram.get(address, 0) & 0xFFFFFFFF    # the gaps between results stay 0
        got = int(dut.u_mem.mem[OUT_EXT + address - C_SRAM].value)
        where = f"sram[{address}] (ext {OUT_EXT + address - C_SRAM})"
        assert got == want, f"{where}: want {want:#x}, got {got:#x}"
    want_counters = expected_counters(ext_lat, array_n) | {"sat": saturations}
    counters = read_counters(dut)
    got_counters = {name: getattr(counters, name) for name in want_counters}
    assert got_counters == want_counters
    assert read_port(dut, "error") == 0
    assert read_port(dut, "error_pc") == 4 * (len(PROGRAM) - 1)
    if (ext_lat, array_n) == (2, 4):
        # the same counters worked out by hand from ISA.md's table, for the default sizes: the
        # chip's earlier ideal port gave (1227, 385, ..); the AXI4 port's ideal memory adds 2
        # cycles to each of the 7 fetches, 2 to the LOAD and 3 to the STORE; the pipelined
        # divider makes the SOFTMAX of 18 elements 2 * 19 + 18 + 7 = 63 cycles instead of
        # 2 * 19 + 18 * 34 = 650; the wide SRAM reads make the MATMUL's two tiles load A in
        # 3 * 2 reads and B in 5 (3 * 5 + 4 * 5 and 3 * 5 + 2 * 5 before): 67 cycles, not 105
        assert counters.cycles() == (1227 + 14 + 5 - 650 + 63 - 105 + 67, 385 + 5, 67, 38, 63)
    dut._log.info("counters %s", got_counters)
    # the event counters of what ran: one of each opcode but VMAX; LOAD's and STORE's words;
    # the SOFTMAX over the M x N requantized products, whose spread is max - min of C
    c_values = [want_sram[C_SRAM + i] for i in range(M * N)]
    assert counters.ops == (1, 1, 1, 1, 1, 0, 1, 1) + (0,) * (N_OPCODES - 8)    # no paged op
    assert counters.dma_words == DATA_WORDS + OUT_WORDS
    assert counters.sm_max_len == M * N
    assert counters.sm_range == max(c_values) - min(c_values)

    # a second run: start clears the counters; an illegal opcode stops the chip at once
    await RisingEdge(dut.clk)
    for address, word in enumerate(instr(LOAD, length=1, a=DATA_EXT) + instr(0x42)):
        dut.u_mem.mem[address].value = word
    await run_program(dut)
    overhead = (4 + ext_lat + 2) + 1
    assert read_port(dut, "error") == 1 and read_port(dut, "error_pc") == 4
    counters = read_counters(dut)
    assert counters.total == 2 * overhead + 1 + ext_lat + 2
    assert counters.dma == 1 + ext_lat + 2
    assert (counters.instr, counters.sat) == (1, 0)
    assert counters.ops == (0, 1) + (0,) * (N_OPCODES - 2)    # the illegal opcode counts nowhere
    assert (counters.dma_words, counters.sm_max_len, counters.sm_range) == (1, 0, 0)
