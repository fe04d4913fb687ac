"""One command of a block test: run it, and report what it got wrong where it happened.

`run_command()` raises a unit's strobe, waits for its `done` with one trigger (no per-cycle
Python) and measures the unit's busy cycles from simulation time: the cycle after the strobe
up to and including the one `done` is high in (hw/ISA.md's EXEC). Cycle 0 is the cycle after
the edge that samples the strobe, as the harnesses' write logs count (hw/tb/write_log.v).

A failure of the command (`Command.fail`) names the seed, the case and the instruction first, as
every block failure does, then where it happened: the unit, the cycle within the command and the
simulation time that cycle starts at (for the waveform viewer). It raises a LocatedError and
leaves the point in the run folder (the cocotb test's working directory), where the waves
tooling finds it. `Command.check_writes` names the first word written wrong, from the write log:
a different value, a stray write or a missing one, with the cycle it was written in and the
inputs it was made from (verif/tests/blocks/provenance.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NoReturn

import numpy as np
from cocotb.triggers import First, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time

from model.chip.isa import UNIT_OF, ChipConfig, Instr, Op, exec_cycles
from model.chip.machine import RunResult
from sim.runner import CLOCK_NS
from verif.kit.compare import first_memory_difference
from verif.kit.failure_point import FailurePoint, LocatedError, write_point
from verif.tests.blocks.block_tb import failure, seed
from verif.tests.blocks.provenance import Memories, inputs_of
from verif.tests.blocks.write_log import Write, first_logged_difference

DONE_MARGIN = 100  # cycles past its documented count before a test gives up on a unit's done


@dataclass(frozen=True)
class MemoryWrites:
    """What a command wrote to one memory (its write log) and what it should have."""

    memory: str  # "sram", "ext": names the words in reports
    expected: Mapping[int, int]  # address -> final value (the reference's writes)
    logged: Sequence[Write]  # the harness's write log of the command, in order


@dataclass(frozen=True)
class Command:
    """A command a block test runs, and what its failures name."""

    unit: str  # model.chip.isa.UNIT_OF's name of the unit ("vec"), else the module's
    case: str  # the vector: "case 3 (ties inputs)"
    instruction: str = ""  # the command as an instruction listing, when it is one
    start_ns: float = 0.0  # the edge that sampled the strobe, where cycle 0 starts
    cycles: int = 0  # busy cycles, once run: `done` was high in cycle cycles - 1

    @classmethod
    def of(cls, instr: Instr, case: str) -> Command:
        """The command of a unit that runs instructions: its unit is model.chip.isa.UNIT_OF's."""
        return cls(UNIT_OF[Op(instr.op)], case, str(instr))

    def time_ns(self, cycle: int) -> float:
        """When cycle ``cycle`` of the command starts."""
        return self.start_ns + cycle * CLOCK_NS

    def point(self, cycle: int | None = None) -> FailurePoint:
        return FailurePoint(unit=self.unit, instruction=self.instruction or None, cycle=cycle,
                            time_ns=None if cycle is None else self.time_ns(cycle),
                            where=f"seed {seed()}: {self.case}")

    def fail(self, what: str, cycle: int | None = None, details: Sequence[str] = ()) -> NoReturn:
        """Raise LocatedError: 'seed S: case: instruction: what', then 'at: unit U, cycle C (at
        T ns)' and ``details``; the point goes into the run folder."""
        point = self.point(cycle)
        write_point(Path.cwd(), point)
        command = ": ".join(part for part in (self.case, self.instruction) if part)
        lines = [failure(f"{command}: {what}"), f"at: {replace(point, where='').summary()}",
                 *details]
        raise LocatedError("\n  ".join(lines), point)

    def check(self, holds: bool, what: str, cycle: int | None = None) -> None:
        """An assertion of the command: fail with ``what`` unless ``holds``."""
        if not holds:
            self.fail(what, cycle)

    def check_cycles(self, expected: int, rule: str) -> None:
        """The unit was busy ``expected`` cycles, as ``rule`` (where the count comes from) says."""
        self.check(self.cycles == expected, f"busy {self.cycles} cycles, {rule} says {expected}",
                   self.cycles - 1)

    def check_memory(self, memory: str, expected: np.ndarray, got: np.ndarray,
                     base: int = 0) -> None:
        """Words of ``memory`` from ``base`` on, read back afterwards: the writes were checked
        already, so a difference here is a word the write log did not see change."""
        difference = first_memory_difference(expected, got, base, what=f"{memory} word")
        self.check(difference is None, f"{difference}")

    def check_writes(self, instr: Instr, before: Memories, *memories: MemoryWrites) -> None:
        """Fail on the first word written otherwise than expected, in time over ``memories``
        (a missing write, which has no time, last), naming its cycle and its inputs (as
        ``before`` held them)."""
        found = [(difference, writes.memory) for writes in memories
                 if (difference := first_logged_difference(writes.expected, writes.logged))]
        if not found:
            return
        difference, memory = min(found, key=lambda pair: (pair[0].cycle is None,
                                                          pair[0].cycle or 0))
        what = difference.describe(f"{memory} word {difference.address}", writer="the unit")
        cycle = difference.cycle
        if cycle is None:  # a missing write: located where the unit ended without it
            cycle = self.cycles - 1
            what += f"; the unit was done in cycle {cycle}"
        inputs = inputs_of(instr, memory, difference.address, before)
        self.fail(what, cycle, [f"inputs: {inputs or 'none: the command writes no such word'}"])


    def check_scratchpad_unit(self, instr: Instr, before: Memories, want: RunResult,
                              writes: list[Write], sram_now: np.ndarray, cfg: ChipConfig) -> None:
        """A scratchpad unit's command (matrix, vector, softmax) against the reference
        machine's run of ``instr``: the words written, then the whole scratchpad read back,
        then the busy cycles."""
        self.check_writes(instr, before, MemoryWrites("sram", want.sram_writes(), writes))
        self.check_memory("sram", want.sram, sram_now)
        self.check_cycles(exec_cycles(instr, cfg), "model.chip.isa.exec_cycles")


async def run_command(dut, strobe: str, expected: int, command: Command) -> Command:
    """Raise `strobe` for one cycle, wait for `done`; return the command with its start time
    and busy cycles.

    The command is sampled at edge E0; cycle 0 is the one after E0. `done` rises just after the
    edge that starts its cycle X, so the unit was busy for X + 1 cycles. `done` is combinational:
    a rise counts only if it is still high once the time step settles (Icarus shows zero-time
    glitches). A `done` that has not risen DONE_MARGIN cycles after the `expected` busy cycles
    fails the command at that cycle. Checks that `done` falls after one cycle.
    """
    limit = expected + DONE_MARGIN
    getattr(dut, strobe).value = 1
    await RisingEdge(dut.clk)
    command = replace(command, start_ns=get_sim_time(unit="ns"))
    getattr(dut, strobe).value = 0
    if not await settled_rise(dut.done, command.time_ns(limit)):
        command.fail(f"{strobe}: done did not rise by cycle {limit}", limit)
    command = replace(command, cycles=int((get_sim_time(unit="ns") - command.start_ns)
                                          // CLOCK_NS) + 1)
    await RisingEdge(dut.clk)
    await ReadOnly()
    command.check(int(dut.done.value) == 0, f"{strobe}: done is high for more than one cycle",
                  command.cycles)
    await RisingEdge(dut.clk)
    return command


async def settled_rise(signal, deadline_ns: float) -> bool:
    """Wait until `signal` rises and is still high in the ReadOnly phase of that time step;
    False if it has not by `deadline_ns`."""
    while True:
        left = deadline_ns - get_sim_time(unit="ns")
        watchdog = Timer(max(left, 1), unit="ns")
        if left <= 0 or await First(RisingEdge(signal), watchdog) is watchdog:
            return False
        await ReadOnly()
        if int(signal.value):
            return True
