"""The matrix unit (hw/tb/matrix_unit_harness.v: matrix_unit + sram) against the reference machine.

Each MATMUL (shapes from 1 x 1 x 1 to several tiles in both directions, 255 rows or 255 columns,
k up to K_MAX, B plain or
transposed, RAW or requantized with multipliers and shifts from the compiler's range and beyond,
operand words with noise above their int8 byte, ignored flag bits set) is predicted by
`model.chip.machine.Machine` (its MATMUL: numpy product and `model.chip.arith.requant`) on the same
scratchpad image. Checked: every SRAM write (the harness's write log: the first wrong one is
named with its cycle, and its row of A and column of B), the whole SRAM afterwards, the number
of SRAM writes (m * n), the clamped outputs (`sat` pulses: the machine's `ev_sat`) and the busy
cycles (`model.chip.isa.exec_cycles`, hw/ISA.md's MATMUL cost).
"""

from __future__ import annotations

import random

import cocotb

from model.chip import isa
from model.chip.isa import FLAG_BT, FLAG_RAW, ChipConfig, Instr, Op
from model.chip.machine import run_instruction
from verif.kit.memory import Backdoor
from verif.tests.blocks.block_tb import (
    block_rng,
    int8_words,
    random_layout,
    sram_backdoor,
    sram_writes,
    start_clock_and_reset,
)
from verif.tests.blocks.command import Command, run_command
from verif.tests.blocks.provenance import Memories
from verif.tests.blocks.write_log import WriteLog

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
RANDOM_CASES = 20


def config_of(dut) -> ChipConfig:
    return ChipConfig(array_n=int(dut.ARRAY_N.value), k_max=int(dut.K_MAX.value),
                      sram_words=int(dut.SRAM_WORDS.value))


def random_requant(rng: random.Random) -> tuple[int, int]:
    """(mult, shift): mostly the compiler's range, sometimes any int32 and shifts beyond 31."""
    mult = rng.choice([rng.randint(1 << 30, INT32_MAX), rng.randint(1 << 30, INT32_MAX),
                       rng.randint(INT32_MIN, INT32_MAX), INT32_MIN, INT32_MAX, 0])
    shift = rng.choice([rng.randint(0, 12), rng.randint(0, 31), rng.randint(32, 40), 255])
    return mult, shift


def random_shape(rng: random.Random, cfg: ChipConfig) -> tuple[int, int, int]:
    """(m, k, n): up to three tiles each way, partial tiles included; k from 1 to K_MAX."""
    edge = 3 * cfg.array_n
    k = rng.choice([1, cfg.k_max, rng.randint(1, cfg.k_max), rng.randint(1, 16)])
    return rng.randint(1, edge), k, rng.randint(1, edge)


def matmul_instr(rng: random.Random, cfg: ChipConfig, shape=None, flags=None) -> Instr:
    """A legal MATMUL with A, B and C in separate random places (C may end at the top)."""
    m, k, n = shape or random_shape(rng, cfg)
    a, b, c = random_layout(rng, [m * k, k * n, m * n], cfg.sram_words)
    if flags is None:
        flags = rng.randint(0, 3) | (rng.getrandbits(6) << 2 if rng.random() < 0.2 else 0)
    mult, shift = random_requant(rng)
    return Instr(Op.MATMUL, m=m, k=k, n=n, a=a, b=b, c=c, flags=flags, shift=shift, mult=mult)


def directed_instrs(rng: random.Random, cfg: ChipConfig) -> list[Instr]:
    """The smallest, the exact tile, one more than a tile, the longest reduction, and the most
    rows and columns (tile origins up to 252: every bit of the unit's 8-bit tile counters)."""
    size, k_max = cfg.array_n, cfg.k_max
    shapes = [(1, 1, 1), (size, 1, size), (size, k_max, size), (size + 1, 2, size + 1),
              (1, k_max, 2 * size + 1), (2 * size + 1, k_max, 1), (1, 2, 255), (255, 2, 1)]
    return [matmul_instr(rng, cfg, shape, flags) for shape in shapes
            for flags in (0, FLAG_BT | FLAG_RAW)]


def drive(dut, instr: Instr) -> None:
    dut.cmd_a.value = instr.a
    dut.cmd_b.value = instr.b
    dut.cmd_c.value = instr.c
    dut.cmd_m.value = instr.m
    dut.cmd_k.value = instr.k
    dut.cmd_n.value = instr.n
    dut.cmd_flags.value = instr.flags
    dut.cmd_shift.value = instr.shift
    dut.cmd_mult.value = instr.mult & 0xFFFFFFFF


async def check_matmul(dut, cfg: ChipConfig, sram: Backdoor, log: WriteLog, rng: random.Random,
                       index: int, instr: Instr, extreme: int | None = None) -> int:
    """Fill A and B (and C, with noise), run, compare; return the clamped outputs."""
    a_words, b_words = instr.m * instr.k, instr.k * instr.n
    if extreme is None:
        sram.write(instr.a, int8_words(rng, a_words))
        sram.write(instr.b, int8_words(rng, b_words))
    else:
        sram.write(instr.a, [extreme & 0xFF] * a_words)
        sram.write(instr.b, [extreme & 0xFF] * b_words)
    sram.write(instr.c, [rng.getrandbits(32) for _ in range(instr.m * instr.n)])
    before = Memories(sram.shadow.copy())
    want = run_instruction(instr, before.sram, cfg)
    drive(dut, instr)
    command = await run_command(dut, "cmd_matmul", isa.exec_cycles(instr, cfg),
                                Command.of(instr, f"case {index}"))
    writes = log.new_writes()
    command.check_scratchpad_unit(instr, before, want, writes, sram.read_all(), cfg)
    command.check(len(writes) == instr.m * instr.n, f"{len(writes)} SRAM writes")
    clamped = int(dut.n_sat.value)
    command.check(clamped == want.counters.sat,
                  f"{clamped} sat pulses, the model clamped {want.counters.sat}")
    return clamped


@cocotb.test()
async def matrix_unit_matches_the_reference_machine(dut):
    """Directed shapes, the extreme sums, then random MATMULs: SRAM, sat, writes and cycles."""
    rng = block_rng(dut)
    cfg = config_of(dut)
    await start_clock_and_reset(dut, {"cmd_matmul": 0, "cmd_a": 0, "cmd_b": 0, "cmd_c": 0,
                                      "cmd_m": 0, "cmd_k": 0, "cmd_n": 0, "cmd_flags": 0,
                                      "cmd_shift": 0, "cmd_mult": 0})
    sram = sram_backdoor(dut, cfg.sram_words)
    log = sram_writes(dut)
    sram.write(0, [rng.getrandbits(32) for _ in range(cfg.sram_words)])
    cases = [(instr, None) for instr in directed_instrs(rng, cfg)]
    longest = (cfg.array_n, cfg.k_max, cfg.array_n)
    cases += [(matmul_instr(rng, cfg, longest, FLAG_RAW), -128),     # the largest sum
              (matmul_instr(rng, cfg, longest, 0), -128)]            # ... requantized
    cases += [(matmul_instr(rng, cfg), None) for _ in range(RANDOM_CASES)]
    clamped = 0
    for index, (instr, extreme) in enumerate(cases):
        clamped += await check_matmul(dut, cfg, sram, log, rng, index, instr, extreme)
    dut._log.info("%d MATMULs match the reference machine (%d outputs clamped)",
                  len(cases), clamped)
