"""The whole chip's pins (chip_harness): start a run, await done, read the status and the memory.

The chip agent's driver and monitor share it. A run pulses `start` and waits for `done` with one
trigger raced against the watchdog, so no Python runs per cycle in between."""

from __future__ import annotations

from dataclasses import dataclass, field

import cocotb
import numpy as np
from cocotb.triggers import First, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time

from model.chip.isa import ChipConfig
from model.chip.machine import Counters, counter_fields_at
from model.chip.rtl_defs import AxiChannel, AxiRule, ControllerState
from sim.mem_profile import MemStalls, check_wait, ideal_view, profile_of
from sim.runner import CLOCK_NS
from verif.kit.clock import reset, start_clock
from verif.kit.event_log import EntryLayout, EventLog
from verif.kit.failure_point import FailurePoint, LocatedError
from verif.kit.file_load import FileLoad, backdoor_path
from verif.kit.memory import Backdoor, UnknownValue, known

COUNTERS_PORT = "counters"  # every counter, packed (hw/ISA.md, "Counters"; model.chip.machine)
WATCHDOG_MAX = 2**32 - 1  # watchdog_limit's width
# chip_harness.v's logs: each entry stamped with the run's cycle, counted with the cycles frozen
# on memory (bus_cycle) and without (run_cycle), and the controller's pc
_STAMP = (("bus_cycle", 32), ("run_cycle", 32))
WRITE_STAMP = EntryLayout((*_STAMP, ("pc", 16)))  # a write entry's bits before its address
WRITE_ENTRY = EntryLayout((*WRITE_STAMP.fields, ("address", 16), ("data", 32)))
PHASE_ENTRY = EntryLayout((*_STAMP, ("check", 1), ("pc", 16)))  # FETCH's first cycle, or CHECK
# hang_units' bits, top first: the unit the controller selected
HANG_UNITS = ("dma", "dma (paged)", "mat", "vec", "sm")


class AxiProtocolError(LocatedError):
    """The protocol checker saw a rule broken on the AXI4 port: the chip's mem_if.v's doing."""


class ChipHung(LocatedError):
    """`done` did not rise within the watchdog's limit; the point is what the chip was doing."""


@dataclass
class ChipStatus:
    """What the chip reports after done."""

    error: int
    error_pc: int
    counters: Counters  # on the ideal memory: the frozen cycles taken out (`ideal_view`)
    wait: int = 0  # the cycles the chip was frozen on memory (cnt_wait)
    stalls: MemStalls = field(default_factory=MemStalls)  # the memory's delays in the run


class BusMemory(Backdoor):
    """The harness's external memory, whose bus writes the harness logs (u_wlog): a read asks
    the simulator only for the words the log shows written since the mirror knew them (a VPI
    read costs about 7 us, and most words the monitors read a run did not touch)."""

    def __init__(self, array, size: int, name: str, writes: EventLog, put=None):
        super().__init__(array, size, name, put)
        self.writes = writes
        self.applied = 0  # log entries whose words the mirror has forgotten

    def read(self, base: int, count: int) -> np.ndarray:
        self.forget_written()
        stale = base + np.flatnonzero(~self.known[base : base + count])
        if stale.size:
            self.fetch(stale)
        return self.shadow[base : base + count].copy()

    def write(self, base: int, values) -> int:
        self.forget_written()  # a word the bus changed is written again, whatever it was
        return super().write(base, values)

    def forget_written(self) -> None:
        """Forget the words the bus wrote since the last call (all, if the ring lost some)."""
        try:
            last = self.writes.count()
        except UnknownValue:  # before the first reset: no log yet, and no bus write either
            return
        if last - self.applied > self.writes.depth:
            self.known[:] = False
        else:
            for entry in self.writes.read(self.applied, last - self.applied):
                address = known(WRITE_ENTRY.split(entry)["address"], "a logged write's address")
                if address < self.size:  # beyond it the memory stores nothing
                    self.known[address] = False
        self.applied = last

    def log_restarts(self) -> None:
        """A reset is about to clear the log's count: take what it holds first."""
        self.forget_written()
        self.applied = 0


class ChipBfm:
    """Pin-level access to `chip_harness` (the chip plus its external memory model)."""

    def __init__(self, dut, cfg: ChipConfig):
        self.dut = dut
        # A harness built with its own clock (CHIP_HARNESS_CLOCK) needs none from cocotb.
        self._clock_started = _flag(dut, "HDL_CLOCK")
        self.records = _flag(dut, "HDL_RECORD")  # logs and watchdog (CHIP_HARNESS_RECORD)
        if self.records:
            self.writes = EventLog(dut.u_wlog, WRITE_ENTRY)
            self.sram_writes = EventLog(dut.u_slog, WRITE_ENTRY)
            self.phases = EventLog(dut.u_ilog, PHASE_ENTRY)
            self.memory = BusMemory(dut.u_mem.mem, cfg.ext_words, "external memory word",
                                    self.writes, FileLoad(dut.u_mem, backdoor_path()))
        else:
            self.memory = Backdoor(dut.u_mem.mem, cfg.ext_words, "external memory word")
        self.scratchpad = Backdoor(dut.u_chip.u_sram.mem, cfg.sram_words, "scratchpad word")
        self.profile = profile_of(cocotb.plusargs)
        self.stalls_before = MemStalls()  # the memory's delays when the run started
        self.run_began = RunStart()  # the last run's start: its time and each log's count
        self.reset_ns = 0.0  # when the last reset ended

    async def power_up(self) -> None:
        """The state of a freshly built chip: a zero scratchpad (it keeps its words through
        reset, and tests share a process), then a reset."""
        if self.records:
            self.start_clock()
            self.dut.sram_clear.value = 1
            await RisingEdge(self.dut.clk)
            self.dut.sram_clear.value = 0
            self.scratchpad.cleared()
        else:
            self.scratchpad.load(np.zeros(0, dtype=np.uint32))
        await self.reset()

    def start_clock(self) -> None:
        """Start the clock from cocotb unless the harness makes its own or it runs already."""
        if not self._clock_started:
            start_clock(self.dut)
            self._clock_started = True

    async def reset(self) -> None:
        self.start_clock()
        if isinstance(self.memory, BusMemory):
            self.memory.log_restarts()
            for log in (self.writes, self.sram_writes, self.phases):
                log.restart()
        await reset(self.dut, idle={"start": 0})
        self.reset_ns = get_sim_time(unit="ns")  # the protocol checker counts cycles from here

    async def run(self, max_cycles: int) -> None:
        """Pulse start and wait for done (at most the ideal memory's max_cycles); reads nothing."""
        max_cycles *= self.profile.slowdown
        await RisingEdge(self.dut.clk)
        if self.records:
            self.dut.watchdog_limit.value = min(max_cycles, WATCHDOG_MAX)
        if not self.profile.ideal:  # the ideal memory never stalls: nothing to read
            self.stalls_before = self.read_stalls()
        self.dut.start.value = 1
        await RisingEdge(self.dut.clk)
        self.run_began = self.run_start()
        self.dut.start.value = 0
        done = RisingEdge(self.dut.done)
        if self.records:
            watchdog = RisingEdge(self.dut.watchdog_expired)
        else:
            watchdog = Timer(max_cycles * CLOCK_NS, unit="ns")
        if await First(done, watchdog) is watchdog:
            raise self.hung(max_cycles)
        await RisingEdge(self.dut.clk)

    def run_start(self) -> RunStart:
        """Now is the edge that samples start: bus cycle 0 of the run begins."""
        if not self.records:
            return RunStart(get_sim_time(unit="ns"))
        return RunStart(get_sim_time(unit="ns"), self.sram_writes.count(), self.phases.count())

    def time_ns(self, bus_cycle: int) -> float:
        """The simulation time at which the last run's bus cycle ``bus_cycle`` begins."""
        return self.run_began.time_ns + bus_cycle * CLOCK_NS

    def run_logs(self) -> tuple[list[str], list[str], bool]:
        """The last run's scratchpad writes and phases, and whether the ring kept all the writes."""
        logs = []
        for log, first in ((self.sram_writes, self.run_began.sram_writes),
                           (self.phases, self.run_began.phases)):
            last = log.count()
            kept = log.kept(first, last)
            logs.append((log.read(kept, last - kept), kept == first))
        (sram, complete), (phases, _) = logs
        return sram, phases, complete

    def hung(self, max_cycles: int) -> ChipHung:
        """The watchdog fired: what the chip was doing (the harness's hang_* and last_*)."""
        message = f"done did not rise within {max_cycles} cycles"
        if not self.records:
            return ChipHung(message, FailurePoint(cycle=max_cycles))
        dut = self.dut

        def port(name: str) -> int:
            return known(getattr(dut, name).value, name)

        state = ControllerState(port("hang_state"))
        units = [u for bit, u in enumerate(HANG_UNITS) if port("hang_units") >> (4 - bit) & 1]
        unit = units[0].split()[0] if len(units) == 1 else "controller"
        cycle = max_cycles - 1
        point = FailurePoint(unit=unit, pc=port("hang_pc"), cycle=cycle,
                             time_ns=self.time_ns(cycle))
        kind = "write" if port("last_write") else "read"
        beats, at = port("last_len") + 1, port("last_cycle")
        last = (f"a {kind} of {beats} words at word {port('last_addr') // 4} (address handshake "
                f"in cycle {at}; its " + ("data and response completed" if port("last_done")
                                          else "data or response never completed") + ")")
        busy = ", ".join(units) if units else "none (no unit selected)"
        return ChipHung(f"{message}: the controller is in {state.name} at pc {point.pc}, unit "
                        f"busy: {busy}; the last memory transaction: {last}", point)

    async def settle(self) -> None:
        """Let the values of this time step settle (after done rose), before reading them."""
        await ReadOnly()

    def read_stalls(self) -> MemStalls:
        """The delays the memory has inserted since reset (axi_ram.v's stall_counts)."""
        return MemStalls.from_packed(known(self.dut.mem_stalls.value, "output mem_stalls"))

    def check_protocol(self) -> None:
        """Raise AxiProtocolError if the checker on the AXI4 port saw a rule broken."""
        violations = known(self.dut.axi_violations.value, "output axi_violations")
        if violations:
            channel = AxiChannel(known(self.dut.axi_first_channel.value, "axi_first_channel"))
            rule = AxiRule(known(self.dut.axi_first_rule.value, "axi_first_rule"))
            cycle = known(self.dut.axi_first_cycle.value, "axi_first_cycle")
            point = FailurePoint(unit="mem_if", cycle=cycle,
                                 time_ns=self.reset_ns + cycle * CLOCK_NS,
                                 where=f"channel {channel.name}, rule {rule.name}")
            raise AxiProtocolError(f"AXI4 port: {violations} cycles break a rule; the first, "
                                   f"cycle {cycle} after reset: channel {channel.name}, rule "
                                   f"{rule.name}", point)

    def read_status(self) -> ChipStatus:
        """The status ports and the counters bus, as on the ideal memory, once the AXI4 port's
        rules and the frozen cycles' bounds are checked (UnknownValue names X or Z counters)."""
        def port(name: str) -> int:
            return known(getattr(self.dut, name).value, f"output {name}")

        bits = str(getattr(self.dut, COUNTERS_PORT).value)  # the bus's top bit first
        if bits.strip("01"):
            unknown = [len(bits) - 1 - i for i, bit in enumerate(bits) if bit not in "01"]
            raise UnknownValue("; ".join(f"output {f.hw_name} is {f.digits(bits)}"
                                         for f in counter_fields_at(unknown)))
        self.check_protocol()
        raw = Counters.from_packed(int(bits, 2))
        stalls, counters = MemStalls(), raw
        if not self.profile.ideal:
            stalls = self.read_stalls() - self.stalls_before
            check_wait(raw.wait, stalls)
            counters = ideal_view(raw)
        return ChipStatus(error=port("error"), error_pc=port("error_pc"), counters=counters,
                          wait=raw.wait, stalls=stalls)


@dataclass(frozen=True)
class RunStart:
    """When a run started (bus cycle 0), and how many entries each log held then."""

    time_ns: float = 0.0
    sram_writes: int = 0
    phases: int = 0


def _flag(dut, name: str) -> bool:
    """A one-bit localparam of the harness (HDL_CLOCK, HDL_RECORD), False when it has none."""
    try:
        return int(getattr(dut, name).value) == 1
    except AttributeError:
        return False
