"""Chip-level cocotb tests: constrained-random programs on the RTL against the reference machine.

Run through `verif/tests/test_chip.py`. Every program's final external memory, error code and
all counters (cycle and event) must equal the reference machine's, bit for bit. The seed of each
program is derived from the run's seed, so a failing program is named by a number anyone can replay.
Each run also samples the chip-side covergroup (`decode.chip_cg`, from what the RTL reported)
into the run folder, so `make coverage` merges what random programs reach (VMAX, saturations,
short and long DMA runs, wide softmax ranges) with the decodes' coverage.
"""

from __future__ import annotations

import os
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


def describe(program: randprog.RandomProgram) -> str:
    return "\n".join(f"    {4 * i:5d}: {instr}" for i, instr in enumerate(program.instrs))


@cocotb.test()
async def random_programs(dut):
    """Random legal programs: memory, error code and counters equal the reference machine's."""
    cfg = ChipConfig()
    run_seed = int(os.environ["RANDOM_SEED"])
    count = int(os.environ.get("PROGRAMS", "200"))
    bfm = ChipBfm(dut)
    await bfm.reset()
    memory = ExtMemoryMirror(bfm, cfg.ext_words)
    for index in range(count):
        program = randprog.generate(program_seed(run_seed, index), cfg)
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
            f"program {index} (program seed {program.seed}) differs from the reference machine:\n  "
            + "\n  ".join(problems) + "\n  program:\n" + describe(program)
        )
        sample_chip_coverage(status)
    run_dir = Path(os.getcwd())
    recorder = RunRecorder(run_dir, "random_programs")
    recorder.extra["coverage"] = {"files": coverage.export(run_dir),
                                  "summary": coverage.summary()}
    recorder.write("passed")  # reached only when every program matched
    dut._log.info("%d random programs match the reference machine", count)


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


@cocotb.test()
async def error_paths(dut):
    """Each bad instruction stops the chip with ISA.md's error code, at its address."""
    cfg = ChipConfig()
    bfm = ChipBfm(dut)
    await bfm.reset()
    memory = ExtMemoryMirror(bfm, cfg.ext_words)
    for name, bad in ERROR_CASES:
        image = np.zeros(256, dtype=np.int64)
        words = isa.assemble([isa.load(100, 0, 4), bad, isa.store(0, 200, 4)])
        image[: len(words)] = words
        image[100:104] = [1, 2, 3, 4]
        expected = machine.run(image, cfg)
        assert expected.error != 0, f"{name}: the reference machine accepted it"
        load_image(memory, image)
        status = await bfm.run_and_read(expected.counters.total + WATCHDOG_MARGIN)
        problems = counter_differences(expected.counters, status.counters)
        if (status.error, status.error_pc) != (expected.error, expected.error_pc):
            problems.append(f"expected error {expected.error.name} at {expected.error_pc}, "
                            f"got {status.error} at {status.error_pc}")
        if memory.read(200, 4).any():
            problems.append("the instruction after the error ran")
        assert not problems, f"{name}: " + "; ".join(problems)
