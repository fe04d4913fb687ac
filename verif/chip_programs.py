"""Chip-level cocotb tests: constrained-random programs on the RTL against the reference machine.

Run through `verif/tests/test_chip.py`. Every program's final external memory, error code and
all counters (cycle and event) must equal the reference machine's, bit for bit. The seed of each
program is derived from the run's seed, so a failing program is named by a number anyone can replay.
After the random programs come directed ones for what random programs do not reach: SOFTMAX of
raw int8 rows as long as SM_MAX whose values span up to the whole int8 range (exp-table indices
64 .. 255; random programs' SOFTMAX inputs are requantized results, close together). Each run
also samples the chip-side covergroup (`decode.chip_cg`, from what the RTL reported) into the
run folder, so `make coverage` merges what these programs reach (VMAX, saturations, short and
long DMA runs, wide softmax ranges) with the decodes' coverage.

The error paths stop the chip with each error code, and with an error at instruction addresses
2^b for every bit b of `error_pc` the external memory can hold, so that each of its bits is set
and cleared (Verilator's toggle coverage, verif/code_coverage.py).
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

import cocotb
import numpy as np

from model import isa, machine, randprog
from model.isa import ChipConfig
from verif import coverage
from verif.chip_bfm import ChipBfm, ChipStatus
from verif.chip_monitor import ChipObservation
from verif.compare import counter_differences, first_memory_difference
from verif.ext_memory import ExtMemoryMirror
from verif.run_record import RunRecorder

WATCHDOG_MARGIN = 1000


def program_seed(run_seed: int, index: int) -> int:
    return run_seed * 1_000_003 + index


def load_image(memory: ExtMemoryMirror, image: np.ndarray) -> None:
    """The whole external memory becomes `image` followed by zeros."""
    padded = np.zeros(memory.shadow.size, dtype=np.int64)
    padded[: image.size] = image
    memory.write(0, padded)


def describe(instrs: tuple[isa.Instr, ...]) -> str:
    return "\n".join(f"    {4 * i:5d}: {instr}" for i, instr in enumerate(instrs))


@dataclass(frozen=True)
class ChipProgram:
    """A program to run and check: its name in failures, its instructions and memory image."""

    name: str
    instrs: tuple[isa.Instr, ...]
    image: np.ndarray  # int64 words, program at address 0
    ext_used: int  # every external word it touches lies below


def random_program(run_seed: int, index: int, cfg: ChipConfig) -> ChipProgram:
    program = randprog.generate(program_seed(run_seed, index), cfg)
    return ChipProgram(f"program {index} (program seed {program.seed})", program.instrs,
                       program.image, program.ext_used)


async def run_checked(bfm: ChipBfm, memory: ExtMemoryMirror, program: ChipProgram,
                      cfg: ChipConfig) -> ChipStatus:
    """Run a program; its memory, error code and counters must equal the reference machine's."""
    expected = machine.run(program.image, cfg)
    load_image(memory, program.image)
    status = await bfm.run_and_read(expected.counters.total + WATCHDOG_MARGIN)
    got = memory.read(0, program.ext_used)
    problems = counter_differences(expected.counters, status.counters)
    if status.error != expected.error:
        problems.insert(0, f"error: expected {expected.error}, got {status.error}")
    difference = first_memory_difference(expected.ext[: program.ext_used], got)
    if difference:
        problems.insert(0, difference)
    assert not problems, (
        f"{program.name} differs from the reference machine:\n  " + "\n  ".join(problems)
        + "\n  program:\n" + describe(program.instrs)
    )
    return status


# SOFTMAX rows: (length, max - min of the values); the lengths set each bit of ev_sm_max_len up
# to SM_MAX's, the spreads fill decode.chip_cg.softmax_range's bins 64..127 and 128..255
WIDE_SOFTMAX = ((64, 64), (128, 127), (192, 128), (255, 200), (256, 255), (1, 0))
WIDE_SOFTMAX_DATA = 64  # the rows' external address; the result follows them


def wide_softmax_program(rng: random.Random, length: int, spread: int,
                         cfg: ChipConfig) -> ChipProgram:
    """LOAD a raw int8 row spanning exactly `spread`, SOFTMAX it, STORE the result.

    The row's low bytes hold the values (both ends present, in random order) and its upper
    bytes noise, which SOFTMAX must ignore.
    """
    length = min(length, cfg.sm_max)
    low = rng.randint(-128, 127 - spread)
    values = [low, low + spread, *(rng.randint(low, low + spread) for _ in range(length - 2))]
    rng.shuffle(values)
    row = [(rng.getrandbits(24) << 8) | (v & 0xFF) for v in values[:length]]
    out = WIDE_SOFTMAX_DATA + length
    instrs = (isa.load(WIDE_SOFTMAX_DATA, 0, length), isa.softmax(0, length, length),
              isa.store(length, out, length))
    image = np.zeros(out + length, dtype=np.int64)
    words = isa.assemble(instrs)
    image[: len(words)] = words
    image[WIDE_SOFTMAX_DATA:out] = row
    return ChipProgram(f"SOFTMAX of {length} values spanning {spread}", instrs, image,
                       image.size)


@cocotb.test()
async def random_programs(dut):
    """Random legal programs, then wide SOFTMAX rows: memory, error code and counters equal the
    reference machine's."""
    cfg = ChipConfig()
    run_seed = int(os.environ["RANDOM_SEED"])
    count = int(os.environ.get("PROGRAMS", "200"))
    bfm = ChipBfm(dut)
    await bfm.reset()
    memory = ExtMemoryMirror(bfm, cfg.ext_words)
    rng = random.Random(run_seed)
    programs = [*(random_program(run_seed, index, cfg) for index in range(count)),
                *(wide_softmax_program(rng, length, spread, cfg)
                  for length, spread in WIDE_SOFTMAX)]
    waits = []  # each program's cnt_wait: 0 on the ideal memory (the counters compare it)
    for program in programs:
        status = await run_checked(bfm, memory, program, cfg)
        sample_chip_coverage(status)
        waits.append(status.wait)
    run_dir = Path(os.getcwd())
    (run_dir / "waits.json").write_text(json.dumps(waits))
    recorder = RunRecorder(run_dir, "random_programs")
    recorder.extra["coverage"] = {"files": coverage.export(run_dir),
                                  "summary": coverage.summary()}
    recorder.write("passed")  # reached only when every program matched
    dut._log.info("%d random and %d directed programs match the reference machine", count,
                  len(WIDE_SOFTMAX))


def sample_chip_coverage(status: ChipStatus) -> None:
    """decode.chip_cg from what the RTL reported for one program (status and event counters)."""
    sample = coverage.ChipSample.of(ChipObservation(status, 0, np.zeros(0, np.uint32)))
    for point in coverage.CHIP_POINTS:
        point(sample)


ERROR_CASES = [
    ("illegal opcode", isa.Instr(0x42)),
    ("external address out of range", isa.load(16380, 0, 8)),
    ("scratchpad address out of range", isa.matmul(0, 0, 4094, 2, 2, 2)),
    ("zero size", isa.vadd(0, 0, 0, 0)),
    ("reduction longer than K_MAX", isa.matmul(0, 0, 0, 1, 65, 1)),
    # the block table at 100 holds the data [1, 2, 3, 4]: its header 1 is no slot of a page of 1
    ("block table outside the pool", isa.pload(100, 8, 300, 1, 1, 0, 4)),
]


ILLEGAL = isa.Instr(0x42)
ERROR_FILLER = isa.vadd(8, 8, 8, 1)  # legal, short, and leaves sram[0 .. 4) alone
ERROR_AFTER = 100  # the STORE that must not run writes this many words past the data


def error_image(bad: isa.Instr, fillers: int = 0) -> tuple[np.ndarray, int]:
    """LOAD [1, 2, 3, 4], `fillers` filler instructions, `bad`, then a STORE of the loaded
    words that must never run; the image and the STORE's external address.

    With no fillers the data sits at 100 (a case's table may point there) and the STORE writes
    200; the bad instruction is at address 4 + 4 * fillers.
    """
    data = max(100, 4 * (fillers + 4))  # past the program and its HALT
    words = isa.assemble([isa.load(data, 0, 4), *([ERROR_FILLER] * fillers), bad,
                          isa.store(0, data + ERROR_AFTER, 4)])
    image = np.zeros(data + ERROR_AFTER + 56, dtype=np.int64)
    image[: len(words)] = words
    image[data : data + 4] = [1, 2, 3, 4]
    return image, data + ERROR_AFTER


def error_address_fillers(cfg: ChipConfig) -> list[int]:
    """Fillers that put an illegal opcode at address 2^b, for b = 3 up to the highest address
    bit whose program fits the external memory (b = 2 is the plain cases' address 4)."""
    fillers = [(1 << b) // 4 - 1 for b in range(3, cfg.ext_words.bit_length())]
    return [f for f in fillers if error_image(ILLEGAL, f)[0].size <= cfg.ext_words]


@cocotb.test()
async def error_paths(dut):
    """Each bad instruction stops the chip with ISA.md's error code, at its address; an illegal
    opcode does so at every power-of-two address the memory holds (each bit of error_pc)."""
    cfg = ChipConfig()
    bfm = ChipBfm(dut)
    await bfm.reset()
    memory = ExtMemoryMirror(bfm, cfg.ext_words)
    cases = [*((name, bad, 0) for name, bad in ERROR_CASES),
             *((f"illegal opcode at address {4 * (f + 1)}", ILLEGAL, f)
               for f in error_address_fillers(cfg))]
    for name, bad, fillers in cases:
        image, after = error_image(bad, fillers)
        expected = machine.run(image, cfg)
        assert expected.error != 0, f"{name}: the reference machine accepted it"
        load_image(memory, image)
        status = await bfm.run_and_read(expected.counters.total + WATCHDOG_MARGIN)
        problems = counter_differences(expected.counters, status.counters)
        if (status.error, status.error_pc) != (expected.error, expected.error_pc):
            problems.append(f"expected error {expected.error.name} at {expected.error_pc}, "
                            f"got {status.error} at {status.error_pc}")
        if memory.read(after, 4).any():
            problems.append("the instruction after the error ran")
        assert not problems, f"{name}: " + "; ".join(problems)
