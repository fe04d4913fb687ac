"""What the block tests share beyond the checking kit: the seed, stimulus, one command's timing.

The clock and reset, the memory backdoors and the first-difference report are the kit's
(verif.kit), as every checker's; a unit's prediction is the reference machine's
(`model.machine.run_instruction`: one instruction on the harness's scratchpad image), so the
expected words and event counts come from `model/`, never from arithmetic written again in a
test. `run_command()` measures a unit's busy cycles (the cycle after its command up to and
including the cycle its `done` is high: hw/ISA.md's EXEC) from simulation time, with one
trigger per command, no per-cycle Python.
"""

from __future__ import annotations

import os
import random

import numpy as np
from cocotb.triggers import First, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time

from sim.runner import CLOCK_NS
from verif.kit.clock import reset, start_clock
from verif.kit.memory import Backdoor


def seed() -> str:
    """The run's seed (cocotb seeds `random` from it), for every failure message."""
    return os.environ.get("RANDOM_SEED", "(cocotb's own)")


def log_seed(dut) -> None:
    """Log the run's seed, so a failure can be re-run with it."""
    dut._log.info("RANDOM_SEED=%s", seed())


def block_rng(dut) -> random.Random:
    """A generator of its own, drawn from cocotb's seeded `random`; logs the seed once."""
    log_seed(dut)
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


def random_view(rng: random.Random, row: int, length: int, page_shift: int, pages: int,
                first: int | None = None, repeat: bool = False) -> list[int]:
    """A block table (hw/ISA.md, "Paged instructions") for table rows row .. row+length-1:
    the header (`first`, random unless given), the entries the rows use in the pool (random,
    or with `repeat` one page for all), the entries read but not used full of noise."""
    page_rows = 1 << page_shift
    first = rng.randrange(page_rows) if first is None else first
    last = (page_rows - 1 + row + length - 1) >> page_shift
    used = range((first + row) >> page_shift, ((first + row + length - 1) >> page_shift) + 1)
    page = rng.randrange(pages)
    return [first, *((page if repeat else rng.randrange(pages)) if j in used
                     else rng.getrandbits(32) for j in range(last + 1))]


def sram_backdoor(dut, words: int) -> Backdoor:
    """The harness's scratchpad (`u_sram.mem`, powers up to zero) behind a mirror."""
    return Backdoor(dut.u_sram.mem, words, "sram word")


# --- running one command ------------------------------------------------------------------------


async def run_command(dut, strobe: str, limit: int) -> int:
    """Raise `strobe` for one cycle, wait for `done`; return the unit's busy cycles.

    The command is sampled at edge E0; cycle 0 is the one after E0. `done` rises just after the
    edge that starts its cycle X, so the unit was busy for X + 1 cycles. `done` is combinational:
    a rise counts only if it is still high once the time step settles (Icarus shows zero-time
    glitches). Checks that `done` falls after one cycle.
    """
    getattr(dut, strobe).value = 1
    await RisingEdge(dut.clk)
    start = get_sim_time(unit="ns")
    getattr(dut, strobe).value = 0
    await settled_rise(dut.done, start + limit * CLOCK_NS, f"{strobe}: done")
    cycles = int((get_sim_time(unit="ns") - start) // CLOCK_NS) + 1
    await RisingEdge(dut.clk)
    await ReadOnly()
    assert int(dut.done.value) == 0, failure(f"{strobe}: done is high for more than one cycle")
    await RisingEdge(dut.clk)
    return cycles


async def settled_rise(signal, deadline_ns: float, what: str) -> None:
    """Wait until `signal` rises and is still high in the ReadOnly phase of that time step."""
    while True:
        left = deadline_ns - get_sim_time(unit="ns")
        watchdog = Timer(max(left, 1), unit="ns")
        if left <= 0 or await First(RisingEdge(signal), watchdog) is watchdog:
            raise AssertionError(failure(f"{what} did not rise by {deadline_ns} ns"))
        await ReadOnly()
        if int(signal.value):
            return

