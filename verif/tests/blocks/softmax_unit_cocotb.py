"""The softmax unit (hw/tb/softmax_unit_harness.v: softmax_unit + sram) against the model.

Each SOFTMAX (len 1, 2, SM_MAX and random; inputs all equal, spanning the whole int8 range, or
random; destination apart from, equal to or overlapping the source; operand words with noise
above their int8 byte) is predicted by `model.chip.machine.Machine` (its SOFTMAX:
`model.chip.arith.softmax_int`) on the same scratchpad image. Checked: every SRAM write (the
harness's write log: the first wrong one is named with its cycle, its element and the vector's
extremes), the whole SRAM afterwards, the number of SRAM writes (len), the exp-table lookups
(len) and their largest index (the machine's `ev_sm_range`), and the busy cycles
(`model.chip.isa.exec_cycles`, hw/ISA.md's SOFTMAX cost). Two cases have scores whose outputs change
if the sum is one lower, or one higher. Then the unit is reset once in each of its three passes:
it must stay idle (no write, no done) until its next command, which must run as usual.
"""

from __future__ import annotations

import random

import cocotb
import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge

from model.chip import isa
from model.chip.exp_table import EXP
from model.chip.isa import ChipConfig, Instr
from model.chip.machine import run_instruction
from verif.kit.memory import Backdoor
from verif.tests.blocks.block_tb import (
    block_rng,
    failure,
    int8_words,
    random_layout,
    sram_backdoor,
    sram_writes,
    start_clock_and_reset,
)
from verif.tests.blocks.command import Command, run_command
from verif.tests.blocks.provenance import Memories
from verif.tests.blocks.write_log import WriteLog

RANDOM_CASES = 12
SUM_CHANGES = {"sum one lower matters": -1, "sum one higher matters": 1}
# A reset in each pass of a SOFTMAX of RESET_LENGTH elements: cycles of the maximum pass, the
# exponentials pass and the division pass (hw/ISA.md, "Cycle costs").
RESET_LENGTH = 12
RESET_WINDOWS = [(1, RESET_LENGTH), (RESET_LENGTH + 2, 2 * RESET_LENGTH + 1),
                 (2 * RESET_LENGTH + 2, isa.softmax_cycles(RESET_LENGTH) - 2)]


def config_of(dut) -> ChipConfig:
    return ChipConfig(sram_words=int(dut.SRAM_WORDS.value), sm_max=int(dut.SM_MAX.value))


def softmax_instr(rng: random.Random, cfg: ChipConfig, length: int) -> Instr:
    """SOFTMAX of `length` elements: destination apart (half the time), in place, or shifted."""
    placement = rng.choice(["apart", "apart", "in place", "overlapping"])
    if placement == "apart":
        a, c = random_layout(rng, [length, length], cfg.sram_words)
    else:
        shift = 0 if placement == "in place" else rng.randint(-length + 1, length - 1)
        a = rng.randint(max(0, -shift), cfg.sram_words - length - max(0, shift))
        c = a + shift
    return isa.softmax(a, c, length)


def inputs(rng: random.Random, length: int, kind: str) -> np.ndarray:
    """Operand words: random, all one value, the whole int8 range (-128 and 127 included), or
    scores whose probabilities change if the sum is one lower or one higher (`sum_exact`)."""
    words = int8_words(rng, length)
    if kind == "equal":
        words = (words & 0xFFFFFF00) | (rng.getrandbits(8))
    elif kind == "full range" and length >= 2:
        low, high = rng.sample(range(length), 2)
        words[low] = (words[low] & 0xFFFFFF00) | 0x80
        words[high] = (words[high] & 0xFFFFFF00) | 0x7F
    elif kind in SUM_CHANGES:
        words = (words & 0xFFFFFF00) | (sum_exact(rng, length, SUM_CHANGES[kind]) & 0xFF)
    return words.astype(np.uint32)


def probabilities(scores: list[int], total_change: int = 0) -> list[int]:
    """hw/ISA.md's SOFTMAX, written out again, with its sum s changed by ``total_change``."""
    e = [EXP[max(scores) - x] for x in scores]
    s = sum(e) + total_change
    return [(ei * 127 + (s >> 1)) // s for ei in e]


def sum_exact(rng: random.Random, length: int, change: int) -> np.ndarray:
    """Scores whose outputs differ from those computed with the sum changed by ``change``
    (about one random vector in 700): a unit whose sum is off by that much fails on them."""
    while True:
        scores = [rng.randint(-128, 127) for _ in range(length)]
        if probabilities(scores, change) != probabilities(scores):
            return np.array(scores, dtype=np.int64)


async def check_softmax(dut, cfg: ChipConfig, sram: Backdoor, log: WriteLog,
                        rng: random.Random, index: int, instr: Instr, kind: str) -> None:
    sram.write(instr.a, inputs(rng, instr.length, kind))
    before = Memories(sram.shadow.copy())
    want = run_instruction(instr, before.sram, cfg)
    dut.cmd_a.value = instr.a
    dut.cmd_c.value = instr.c
    dut.cmd_len.value = instr.length
    command = await run_command(dut, "cmd_softmax", isa.exec_cycles(instr, cfg),
                                Command.of(instr, f"case {index} ({kind} inputs)"))
    writes = log.new_writes()
    command.check_scratchpad_unit(instr, before, want, writes, sram.read_all(), cfg)
    got = {"writes": len(writes), "lookups": int(dut.n_lookups.value),
           "largest index": int(dut.max_index.value)}
    expected = {"writes": instr.length, "lookups": instr.length,
                "largest index": want.counters.sm_range}
    command.check(got == expected, f"events {got}, expected {expected}")


@cocotb.test()
async def softmax_unit_matches_the_reference_machine(dut):
    """Directed lengths and spreads, then random SOFTMAXes: SRAM, events and cycles; then a
    reset in each pass."""
    rng = block_rng(dut)
    cfg = config_of(dut)
    await start_clock_and_reset(dut, {"cmd_softmax": 0, "cmd_a": 0, "cmd_c": 0, "cmd_len": 0})
    sram = sram_backdoor(dut, cfg.sram_words)
    log = sram_writes(dut)
    sram.write(0, [rng.getrandbits(32) for _ in range(cfg.sram_words)])
    cases = [(1, "random"), (2, "equal"), (2, "full range"), (cfg.sm_max, "full range"),
             (17, "equal"), *((rng.randint(2, 6), kind) for kind in SUM_CHANGES)]
    cases += [(rng.choice([rng.randint(1, 8), rng.randint(1, 40)]),
               rng.choice(["random", "random", "full range"])) for _ in range(RANDOM_CASES)]
    for index, (length, kind) in enumerate(cases):
        instr = softmax_instr(rng, cfg, length)
        await check_softmax(dut, cfg, sram, log, rng, index, instr, kind)
    dut._log.info("%d SOFTMAXes match the reference machine", len(cases))
    for phase, (first, last) in enumerate(RESET_WINDOWS):
        log = await reset_mid_run(dut, cfg, sram, rng, (first, last), phase)
        instr = softmax_instr(rng, cfg, rng.randint(1, 40))
        await check_softmax(dut, cfg, sram, log, rng, len(cases) + phase, instr, "random")
    dut._log.info("a reset in each pass leaves the unit idle until its next command")


async def reset_mid_run(dut, cfg: ChipConfig, sram: Backdoor, rng: random.Random,
                        window: tuple[int, int], phase: int) -> WriteLog:
    """Start a SOFTMAX, reset the unit in a cycle of ``window``, then watch it for longer than
    a whole SOFTMAX: it must neither write nor raise done before its next command. Returns a
    reader of the write log from the reset on (a reset clears the log)."""
    instr = softmax_instr(rng, cfg, RESET_LENGTH)
    sram.write(instr.a, inputs(rng, RESET_LENGTH, "random"))
    dut.cmd_a.value, dut.cmd_c.value, dut.cmd_len.value = instr.a, instr.c, instr.length
    dut.cmd_softmax.value = 1
    await RisingEdge(dut.clk)
    dut.cmd_softmax.value = 0
    at = rng.randint(*window)
    for _ in range(at):
        await RisingEdge(dut.clk)
    dut.rst.value = 1
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    log = sram_writes(dut)
    for cycle in range(isa.softmax_cycles(RESET_LENGTH) + 8):
        await ReadOnly()
        assert int(dut.done.value) == 0, failure(
            f"reset in cycle {at} of a SOFTMAX (pass {phase + 1}): done rose {cycle} cycles "
            "later, with no command")
        await RisingEdge(dut.clk)
    writes = log.new_writes()
    assert not writes, failure(f"reset in cycle {at} of a SOFTMAX (pass {phase + 1}): "
                               f"{len(writes)} SRAM writes after it, with no command: "
                               f"{writes[0]}")
    sram.read(instr.c, instr.length)  # what the interrupted SOFTMAX wrote is now the image
    return log
