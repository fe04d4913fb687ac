"""The softmax unit (hw/tb/softmax_unit_harness.v: softmax_unit + sram) against the model.

Each SOFTMAX (len 1, 2, SM_MAX and random; inputs all equal, spanning the whole int8 range, or
random; destination apart from, equal to or overlapping the source; operand words with noise
above their int8 byte) is predicted by `model.machine.Machine` (its SOFTMAX:
`model.arith.softmax_int`) on the same scratchpad image. Checked: every SRAM write (the
harness's write log: the first wrong one is named with its cycle, its element and the vector's
extremes), the whole SRAM afterwards, the number of SRAM writes (len), the exp-table lookups
(len) and their largest index (the machine's `ev_sm_range`), and the busy cycles
(`model.isa.exec_cycles`, hw/ISA.md's SOFTMAX cost).
"""

from __future__ import annotations

import random

import cocotb
import numpy as np

from model import isa
from model.isa import ChipConfig, Instr
from model.machine import run_instruction
from verif.blocks.block_tb import (
    block_rng,
    int8_words,
    random_layout,
    sram_backdoor,
    sram_writes,
    start_clock_and_reset,
)
from verif.blocks.command import Command, run_command
from verif.kit.memory import Backdoor
from verif.kit.provenance import Memories
from verif.kit.write_log import WriteLog

RANDOM_CASES = 12


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
    """Operand words: random, all one value, or the whole int8 range (-128 and 127 included)."""
    words = int8_words(rng, length)
    if kind == "equal":
        words = (words & 0xFFFFFF00) | (rng.getrandbits(8))
    elif kind == "full range" and length >= 2:
        low, high = rng.sample(range(length), 2)
        words[low] = (words[low] & 0xFFFFFF00) | 0x80
        words[high] = (words[high] & 0xFFFFFF00) | 0x7F
    return words.astype(np.uint32)


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
    """Directed lengths and spreads, then random SOFTMAXes: SRAM, events and cycles."""
    rng = block_rng(dut)
    cfg = config_of(dut)
    await start_clock_and_reset(dut, {"cmd_softmax": 0, "cmd_a": 0, "cmd_c": 0, "cmd_len": 0})
    sram = sram_backdoor(dut, cfg.sram_words)
    log = sram_writes(dut)
    sram.write(0, [rng.getrandbits(32) for _ in range(cfg.sram_words)])
    cases = [(1, "random"), (2, "equal"), (2, "full range"), (cfg.sm_max, "full range"),
             (17, "equal")]
    cases += [(rng.choice([rng.randint(1, 8), rng.randint(1, 40)]),
               rng.choice(["random", "random", "full range"])) for _ in range(RANDOM_CASES)]
    for index, (length, kind) in enumerate(cases):
        instr = softmax_instr(rng, cfg, length)
        await check_softmax(dut, cfg, sram, log, rng, index, instr, kind)
    dut._log.info("%d SOFTMAXes match the reference machine", len(cases))
