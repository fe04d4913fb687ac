"""The injector: the chip agent's driver for FaultItems, which flips one bit while a run runs.

A flip-flop or array word is read in the chosen cycle (2 ns after its edge, where nothing
changes), one bit flipped and deposited back; the next edge computes from it. A memory word
flips the same way; an AXI read fault flips the word the memory is returning on the first read
beat at or after the cycle, for that beat only. Each run starts from power-up (a cleared
scratchpad, a reset); its end state (registers, arrays, touched memory) is kept for latency.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge, Timer
from pyuvm import uvm_tlm_analysis_fifo

from sim.runner import CLOCK_NS
from verif.agents.chip.driver import ChipDriver
from verif.agents.chip.monitor import ChipMonitor, ChipObservation
from verif.agents.chip.write_monitor import WriteLogOverflow, final_values
from verif.faults.classify import Observed
from verif.faults.items import Fault, FaultItem, memory_key
from verif.faults.sites import Register
from verif.kit.bfm import AxiProtocolError, ChipHung

QUIET_NS = 2  # after a clock edge: no edge, no update until the next one


def handle_of(root, path: str):
    """The simulator handle of a path below ``root`` (``name[i]`` indexes a generate or array)."""
    node = root
    for part in path.split("."):
        match = re.fullmatch(r"(.+?)((?:\[\d+\])*)", part)
        node = getattr(node, match.group(1))
        for index in re.findall(r"\[(\d+)\]", match.group(2)):
            node = node[int(index)]
    return node


@dataclass
class FaultObservation(ChipObservation):
    protocol: str | None = None  # the protocol checker's report, when it fired


class FaultMonitor(ChipMonitor):
    """The chip monitor, reporting the protocol checker's verdict instead of raising it."""

    def observe(self) -> ChipObservation:
        try:
            return super().observe()
        except AxiProtocolError as error:
            return FaultObservation(None, np.zeros(0, np.uint32), protocol=str(error))


class FaultDriver(ChipDriver):
    """Runs each FaultItem from power-up, flips its bit, and answers with what the run showed
    (classify.Observed) and the state it ended in."""

    def build_phase(self) -> None:
        super().build_phase()
        self.writes = uvm_tlm_analysis_fifo("writes", self)
        self.write_monitor = None  # the agent's, set in its connect_phase
        self.registers: tuple[Register, ...] = ()  # what the end state holds (the test's)

    async def run_phase(self) -> None:
        while True:
            item = await self.seq_item_port.get_next_item()
            item.observed, item.end_state = await self.drive(item)
            self.seq_item_port.item_done()

    async def drive(self, item: FaultItem) -> tuple[Observed, dict[str, str]]:
        bfm = self.cfg.bfm
        self.zero_state()
        await bfm.power_up()
        self.write_monitor.published = 0  # the reset restarted the write log
        for address, words in item.loads().items():
            bfm.memory.write(address, words)
        if item.fault is not None and item.fault.model == "external":
            bfm.memory.known[item.fault.index] = False  # the flip below goes past the mirror
        limit = self.budget(item) + self.cfg.watchdog_margin
        injection = cocotb.start_soon(self.inject(item.fault)) if item.fault else None
        hung = False
        try:
            await bfm.run(limit)
        except ChipHung:
            hung = True
        if injection is not None and not injection.done():
            injection.cancel()
        return self.observed(hung), self.end_state(item)

    def observed(self, hung: bool) -> Observed:
        overflow = False
        try:
            self.write_monitor.publish_run()
        except WriteLogOverflow:
            overflow = True
        writes = []
        ok, write = self.writes.try_get()
        while ok:
            writes.append(write)
            ok, write = self.writes.try_get()
        ok, observation = self.observations.try_get()  # the monitor's, at done
        if hung or not ok:
            return Observed(True, None, None, None, None, {}, overflow)
        status = observation.status
        if status is None:
            return Observed(False, getattr(observation, "protocol", None) or observation.unknown,
                            None, None, None, final_values(writes), overflow)
        return Observed(False, None, status.error, status.error_pc, status.counters,
                        final_values(writes), overflow)

    def zero_state(self) -> None:
        """Every register and array word to 0, as a new Verilator process holds them, so that
        no run sees what an earlier (faulty) run left in state that reset does not clear."""
        chip = self.cfg.bfm.dut.u_chip
        for register in self.registers:
            handle = handle_of(chip, register.path)
            for word in ([handle[i] for i in range(register.depth)] if register.depth
                         else [handle]):
                word.value = 0

    def end_state(self, item: FaultItem) -> dict[str, str]:
        """Every register and array word, and the memory words a fault may have left flipped."""
        chip = self.cfg.bfm.dut.u_chip
        state = {}
        for register in self.registers:
            handle = handle_of(chip, register.path)
            if register.depth:
                for index in range(register.depth):
                    state[f"{register.path}[{index}]"] = str(handle[index].value)
            else:
                state[register.path] = str(handle.value)
        fault = item.fault
        if fault is not None and fault.model in ("scratchpad", "external"):
            state[memory_key(fault)] = str(value_of(self.memory_handle(fault)[fault.index]))
        return state

    def memory_handle(self, fault: Fault):
        dut = self.cfg.bfm.dut
        return (handle_of(dut.u_chip, fault.site) if fault.model == "scratchpad"
                else dut.u_mem.mem)

    async def inject(self, fault: Fault) -> None:
        """Wait for the edge that samples start, then for the fault's cycle, and flip."""
        dut = self.cfg.bfm.dut
        await RisingEdge(dut.clk)  # the run's first edge (start rises after it)
        await RisingEdge(dut.clk)  # the edge that samples start: cycle 0 begins
        await Timer(fault.cycle * CLOCK_NS + QUIET_NS, unit="ns")
        if fault.model == "axi-read":
            await self.flip_read_beat(fault)
        elif fault.model in ("flip-flop", "array"):
            handle = handle_of(dut.u_chip, fault.site)
            flip(handle[fault.index] if fault.model == "array" else handle, fault.bit)
        else:
            flip(self.memory_handle(fault)[fault.index], fault.bit)

    async def flip_read_beat(self, fault: Fault) -> None:
        """Flip the word under the memory's read data while a beat is on the port, then put it
        back once the chip has taken it."""
        dut = self.cfg.bfm.dut
        while not (int(dut.rvalid.value) and int(dut.rready.value)):
            await Timer(CLOCK_NS, unit="ns")
        word = dut.u_mem.mem[int(dut.u_mem.r_addr.value)]
        original = value_of(word)
        word.value = original ^ (1 << fault.bit)
        await RisingEdge(dut.clk)
        await Timer(QUIET_NS, unit="ns")
        word.value = original


def value_of(handle) -> int:
    """A register's value, its unknown bits (Icarus's X before a first write) read as 0, as
    Verilator holds them."""
    return int(re.sub("[^01]", "0", str(handle.value)), 2)


def flip(handle, bit: int) -> None:
    """Read a register, flip one bit, deposit it back."""
    handle.value = value_of(handle) ^ (1 << bit)
