"""What the block tests share beyond the checking kit: the seed, the stimulus, the set-up.

The clock and reset, the memory backdoors and the first-difference report are the kit's
(verif.kit), as every checker's; a unit's prediction is the reference machine's
(`model.chip.machine.run_instruction`: one instruction on the harness's scratchpad image), so the
expected words and event counts come from `model/`, never from arithmetic written again in a
test. Running one command and reporting its failures is verif/tests/blocks/command.py's.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np

from model.chip import isa
from model.chip.geometry import page_of
from model.chip.isa import Instr, Op
from verif.kit.clock import reset, start_clock
from verif.kit.failure_point import POINT_FILE
from verif.kit.memory import Backdoor
from verif.tests.blocks.write_log import WriteLog

PAGED_ASSEMBLERS = {Op.PLOAD: isa.pload, Op.PSTORE: isa.pstore, Op.PCOPY: isa.pcopy}
# a paged instruction's fields, named and ordered as its assembler's arguments
PAGED_ARGUMENTS = ("table", "sram", "pool", "row_words", "length", "page_shift", "pages", "row")


def seed() -> str:
    """The run's seed (cocotb seeds `random` from it), for every failure message."""
    return os.environ.get("RANDOM_SEED", "(cocotb's own)")


def begin(dut) -> None:
    """What every block test does first: log the run's seed, so a failure can be re-run with
    it, and drop the failure point an earlier run left in this run folder (the cocotb test's
    working directory), which this run's failure would replace and its pass must not keep."""
    dut._log.info("RANDOM_SEED=%s", seed())
    Path(POINT_FILE).unlink(missing_ok=True)


def block_rng(dut) -> random.Random:
    """A generator of its own, drawn from cocotb's seeded `random`; begins the test."""
    begin(dut)
    return random.Random(random.getrandbits(32))


def failure(what: str) -> str:
    """A failure message that names the seed first."""
    return f"seed {seed()}: {what}"


async def start_clock_and_reset(dut, idle_inputs: dict[str, int], cycles: int = 2) -> None:
    """Start the clock and reset, with the block's inputs at their idle values."""
    start_clock(dut)
    await reset(dut, cycles, idle_inputs)


def int8_words(rng: random.Random, count: int) -> np.ndarray:
    """Operand words: an int8 in the low byte (one in four an extreme), noise above it."""
    low = [rng.choice((-128, 127)) if rng.random() < 0.25 else rng.randint(-128, 127)
           for _ in range(count)]
    noise = [rng.getrandbits(24) << 8 for _ in range(count)]
    return np.array([(n | (v & 0xFF)) for n, v in zip(noise, low, strict=True)], dtype=np.uint32)


def random_layout(rng: random.Random, sizes: list[int], words: int,
                  at_top: int | None = None) -> list[int]:
    """Start addresses of non-overlapping regions of `sizes` words in random order and gaps.

    With `at_top = i` region i ends at the top of the memory (`words`); without, the last region
    does one time in four.
    """
    order = list(range(len(sizes)))
    rng.shuffle(order)
    if at_top is not None:
        order.remove(at_top)
        order.append(at_top)
    slack = words - sum(sizes)
    assert slack >= 0, f"regions of {sizes} words do not fit {words}"
    cuts = sorted(rng.randint(0, slack) for _ in sizes)
    if at_top is not None or rng.random() < 0.25:
        cuts[-1] = slack
    starts = [0] * len(sizes)
    placed = 0    # words of the regions before this one
    for position, index in enumerate(order):
        starts[index] = cuts[position] + placed
        placed += sizes[index]
    return starts


def paged_again(instr: Instr, **changes: int) -> Instr:
    """The paged instruction ``instr`` assembled again by model.chip.isa with some of its
    PAGED_ARGUMENTS changed: the fields packed together (len; row and pages) stay the model's."""
    unknown = set(changes) - set(PAGED_ARGUMENTS)
    if unknown:
        raise TypeError(f"a paged instruction has no field {', '.join(sorted(unknown))}")
    now = (instr.a, instr.b, instr.c, instr.m, instr.length, instr.shift, instr.pages, instr.row)
    fields = dict(zip(PAGED_ARGUMENTS, now, strict=True)) | changes
    return PAGED_ASSEMBLERS[Op(instr.op)](*fields.values())


def random_view(rng: random.Random, instr: Instr, first: int | None = None,
                repeat: bool = False) -> list[int]:
    """A block table (hw/ISA.md, "Paged instructions") for the table rows of the PLOAD or
    PSTORE ``instr``: the header (`first`, random unless given), the entries the rows use in
    the pool (random, or with `repeat` one page for all), the entries read (up to
    model.chip.isa.paged_geometry's last) but not used full of noise."""
    geometry = isa.paged_geometry(instr)
    page_size = geometry.page_size
    first = rng.randrange(page_size) if first is None else first
    start = first + instr.row
    used = range(page_of(start, page_size), page_of(start + instr.length - 1, page_size) + 1)
    page = rng.randrange(instr.pages)
    return [first, *((page if repeat else rng.randrange(instr.pages)) if j in used
                     else rng.getrandbits(32)
                     for j in range(geometry.first_entry + geometry.entries))]


def sram_backdoor(dut, words: int) -> Backdoor:
    """The harness's scratchpad (`u_sram.mem`, powers up to zero) behind a mirror."""
    return Backdoor(dut.u_sram.mem, words, "sram word")


def sram_writes(dut) -> WriteLog:
    """The harness's log of the scratchpad's writes (`u_sram_writes`: hw/tb/write_log.v)."""
    return WriteLog(dut.u_sram_writes, "sram")
