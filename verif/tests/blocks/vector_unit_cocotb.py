"""The vector unit (hw/tb/vector_unit_harness.v: vector_unit + sram) against the reference machine.

Each VADD, VMAX and ARGMAX (a VADD of known inputs first, then len 1, 2 and random up to 300; VADD
apart or in place, `c == a` or `c == b`, with sums beyond both int8 ends; VMAX and ARGMAX with ties
for the maximum, the maximum first or last, all elements equal, the destination inside the source;
operand words with noise above their int8 byte) is predicted by `model.chip.machine.Machine` (VADD:
`model.chip.arith.sat8` of the sum; VMAX, ARGMAX: numpy's max and first argmax) on the same
scratchpad image. Checked: every SRAM write (the harness's write log: the first wrong one is named
with its cycle and its inputs), the whole SRAM afterwards, the number of SRAM writes (len for VADD,
one otherwise), the clamped VADD outputs (`sat` pulses: the machine's `ev_sat`) and the busy cycles
(`model.chip.isa.exec_cycles`).
"""

from __future__ import annotations

import random

import cocotb
import numpy as np

from model.chip import isa
from model.chip.isa import ChipConfig, Instr, Op
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

STROBE = {Op.VADD: "cmd_vadd", Op.VMAX: "cmd_vmax", Op.ARGMAX: "cmd_argmax"}
RANDOM_CASES = 24
# The first case of every run, whatever the seed: a fault is located against known operands
# there (the negative test in verif/tests/test_blocks.py).
KNOWN_VADD = isa.vadd(64, 320, 576, 12)


def known_operands(length: int) -> tuple[np.ndarray, np.ndarray]:
    """KNOWN_VADD's a and b: a[i] = 10 i - 60 and b[i] = 3 - 4 i in the low byte (no sum
    clamps), a fixed noise pattern above it."""
    index = np.arange(length, dtype=np.int64)
    noise = np.int64(0x5A5A5A00)
    return ((noise | ((10 * index - 60) & 0xFF)).astype(np.uint32),
            (noise | ((3 - 4 * index) & 0xFF)).astype(np.uint32))


def random_length(rng: random.Random) -> int:
    return rng.choice([1, 2, rng.randint(1, 16), rng.randint(1, 64), rng.randint(1, 300)])


def vadd_instr(rng: random.Random, cfg: ChipConfig, length: int) -> Instr:
    """Sources and destination apart, or the destination on one of the sources (in place)."""
    a, b, c = random_layout(rng, [length] * 3, cfg.sram_words)
    placement = rng.choice(["apart", "apart", "c == a", "c == b"])
    if placement != "apart":
        c = a if placement == "c == a" else b
    return isa.vadd(a, b, c, length)


def reduce_instr(rng: random.Random, cfg: ChipConfig, op: Op, length: int) -> Instr:
    """VMAX or ARGMAX; the destination word apart from the source or inside it."""
    a, c = random_layout(rng, [length, 1], cfg.sram_words)
    if rng.random() < 0.25:
        c = a + rng.randrange(length)
    return (isa.vmax if op == Op.VMAX else isa.argmax)(a, c, length)


def inputs(rng: random.Random, length: int, kind: str) -> np.ndarray:
    """Operand words: random, all one value, or with the maximum at several, first or last."""
    words = int8_words(rng, length)
    low = words & 0xFF
    if kind == "equal":
        low[:] = rng.getrandbits(8)
    elif kind in ("ties", "first", "last"):
        peak = rng.randint(-60, 127) & 0xFF
        low[:] = [rng.randint(-128, -61) & 0xFF for _ in range(length)]
        where = {"first": [0], "last": [length - 1],
                 "ties": rng.sample(range(length), min(length, rng.randint(2, 5)))}[kind]
        low[where] = peak
    return ((words & 0xFFFFFF00) | low).astype(np.uint32)


def operands(rng: random.Random, instr: Instr, kind: str) -> dict[int, np.ndarray]:
    """The source words to write, by address: a's, and b's when a VADD's b is apart from a."""
    if kind == "known":
        return dict(zip((instr.a, instr.b), known_operands(instr.length), strict=True))
    sources = [instr.a] + ([instr.b] if instr.op == Op.VADD and instr.b != instr.a else [])
    return {address: inputs(rng, instr.length, kind) for address in sources}


async def check(dut, cfg: ChipConfig, sram: Backdoor, log: WriteLog, rng: random.Random,
                index: int, instr: Instr, kind: str) -> int:
    """Fill the sources, run, compare; return the clamped outputs."""
    for address, words in operands(rng, instr, kind).items():
        sram.write(address, words)
    before = Memories(sram.shadow.copy())
    want = run_instruction(instr, before.sram, cfg)
    dut.cmd_a.value = instr.a
    dut.cmd_b.value = instr.b
    dut.cmd_c.value = instr.c
    dut.cmd_len.value = instr.length
    command = await run_command(dut, STROBE[Op(instr.op)], isa.exec_cycles(instr, cfg),
                                Command.of(instr, f"case {index} ({kind} inputs)"))
    writes = log.new_writes()
    command.check_scratchpad_unit(instr, before, want, writes, sram.read_all(), cfg)
    want_writes = instr.length if instr.op == Op.VADD else 1
    command.check(len(writes) == want_writes, f"{len(writes)} SRAM writes, not {want_writes}")
    clamped = int(dut.n_sat.value)
    command.check(clamped == want.counters.sat,
                  f"{clamped} sat pulses, the model clamped {want.counters.sat}")
    return clamped


def random_case(rng: random.Random, cfg: ChipConfig) -> tuple[Instr, str]:
    op = rng.choice(list(STROBE))
    length = random_length(rng)
    if op == Op.VADD:
        return vadd_instr(rng, cfg, length), rng.choice(["random", "random", "ties"])
    kind = rng.choice(["random", "ties", "first", "last", "equal"])
    return reduce_instr(rng, cfg, op, length), kind


@cocotb.test()
async def vector_unit_matches_the_reference_machine(dut):
    """Directed lengths and ties, then random VADD, VMAX, ARGMAX: SRAM, sat, writes, cycles."""
    rng = block_rng(dut)
    cfg = ChipConfig(sram_words=int(dut.SRAM_WORDS.value))
    await start_clock_and_reset(dut, {"cmd_vadd": 0, "cmd_vmax": 0, "cmd_argmax": 0,
                                      "cmd_a": 0, "cmd_b": 0, "cmd_c": 0, "cmd_len": 0})
    sram = sram_backdoor(dut, cfg.sram_words)
    log = sram_writes(dut)
    sram.write(0, [rng.getrandbits(32) for _ in range(cfg.sram_words)])
    cases = [(KNOWN_VADD, "known")]
    cases += [(vadd_instr(rng, cfg, length), "random") for length in (1, 2, 300)]
    for op in (Op.VMAX, Op.ARGMAX):
        cases += [(reduce_instr(rng, cfg, op, 1), "random")]
        cases += [(reduce_instr(rng, cfg, op, 9), kind)
                  for kind in ("ties", "first", "last", "equal")]
    cases += [random_case(rng, cfg) for _ in range(RANDOM_CASES)]
    clamped = 0
    for index, (instr, kind) in enumerate(cases):
        clamped += await check(dut, cfg, sram, log, rng, index, instr, kind)
    dut._log.info("%d vector instructions match the reference machine (%d outputs clamped)",
                  len(cases), clamped)
