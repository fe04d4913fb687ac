"""The chip agent's write monitor: every word the chip writes to its external memory.

One `MemWrite` per word, in bus order, from the harness's write log read once after each done,
so nothing runs in Python while the chip writes; without the log, a cocotb-bus monitor."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cocotb.triggers import FallingEdge, RisingEdge
from cocotb_bus.monitors import BusMonitor
from pyuvm import ConfigDB, uvm_analysis_port, uvm_monitor

from verif.agents.chip.config import CHIP_CFG, ChipAgentConfig
from verif.kit.bfm import WRITE_ENTRY, WRITE_STAMP
from verif.kit.failures import recording_failures
from verif.kit.profiling import PROFILE

MEM_BUS = "mem"  # chip_harness's memory port: mem_req, mem_we, mem_addr, mem_wdata
ADDRESS_BITS = dict(WRITE_ENTRY.fields)["address"]  # a logged write's address field


@dataclass(frozen=True)
class MemWrite:
    """One word written on the memory port; ``stamp`` (when, under which pc) is decoded only
    when a failed run's locator asks."""

    address: int
    value: int  # uint32
    unknown: str | None = None  # the address or data held X or Z (Icarus only): which, and how
    stamp: str = ""  # bfm.WRITE_STAMP's bits; empty off the bus

    @property
    def pc(self) -> int | None:
        """The instruction the controller was running."""
        return self._stamped("pc")

    @property
    def run_cycle(self) -> int | None:
        """The cycle of the run, frozen cycles left out."""
        return self._stamped("run_cycle")

    @property
    def bus_cycle(self) -> int | None:
        """The cycle of the run, frozen cycles counted."""
        return self._stamped("bus_cycle")

    def _stamped(self, name: str) -> int | None:
        return WRITE_STAMP.values(self.stamp, "write stamp")[name] if self.stamp else None

    def __str__(self) -> str:
        if self.unknown:
            return f"write with {self.unknown}"
        return f"write {self.value:#010x} to memory word {self.address}"


def final_values(writes: Iterable[MemWrite]) -> dict[int, int]:
    """Each address written and the value it was left holding (the last write wins)."""
    return {write.address: write.value for write in writes}


def unknown_write(writes: Iterable[MemWrite]) -> str | None:
    """The first write whose address or data held X or Z, for an UnknownValue; else None."""
    return next((f"memory port: {write}" for write in writes if write.unknown), None)


class ExtWriteBusMonitor(BusMonitor):
    """Recovers each write (req && we) of the memory port as a MemWrite and passes it to `_recv`."""

    _signals = ("req", "we", "addr", "wdata")  # mem_req, mem_we, mem_addr, mem_wdata

    async def _monitor_recv(self) -> None:
        we, req, clock = self.bus.we, self.bus.req, self.clock
        while True:
            await RisingEdge(we)  # a burst starts: sleep through every cycle that writes nothing
            while True:
                await FallingEdge(clock)  # mid-cycle: the values the next rising edge stores
                if str(we.value) != "1":  # X or Z writes nothing either (chip_harness.v)
                    break
                if str(req.value) == "1":
                    with PROFILE.section("write_monitor"):
                        self._recv(self._sample())

    def _sample(self) -> MemWrite:
        return write_of(str(self.bus.addr.value), str(self.bus.wdata.value))


class WriteLogOverflow(AssertionError):
    """More writes in one run than the harness's log keeps: they cannot all be checked."""


def write_of(address: str, data: str, stamp: str = "") -> MemWrite:
    """A MemWrite from binary strings; an X or Z in the address or data makes it unknown."""
    try:
        return MemWrite(int(address, 2), int(data, 2), stamp=stamp)
    except ValueError:
        return MemWrite(0, 0, unknown=f"mem_addr {address}, mem_wdata {data}")


def logged_write(entry: str) -> MemWrite:
    """A MemWrite from one entry of the harness's write log (bfm.WRITE_ENTRY)."""
    at = WRITE_STAMP.bits
    return write_of(entry[at:at + ADDRESS_BITS], entry[at + ADDRESS_BITS:], entry[:at])


class ExtWriteMonitor(uvm_monitor):
    """Publishes one MemWrite per word the chip writes to external memory (analysis port `ap`):
    from the write log when the chip monitor asks after each done, else from a bus monitor."""

    def build_phase(self) -> None:
        self.cfg: ChipAgentConfig = ConfigDB().get(self, "", CHIP_CFG)
        self.ap = uvm_analysis_port("ap", self)
        self.bus_monitor: ExtWriteBusMonitor | None = None
        self.published = 0  # log entries published so far (the log counts from reset)

    @property
    def reads_log(self) -> bool:
        return self.cfg.bfm.records

    @recording_failures
    async def run_phase(self) -> None:
        if self.reads_log:
            return
        dut = self.cfg.bfm.dut
        self.bus_monitor = ExtWriteBusMonitor(dut, MEM_BUS, dut.clk, callback=self.ap.write,
                                              case_insensitive=False)

    def publish_run(self) -> None:
        """Publish every write logged since the last call (a run has ended: done is high)."""
        if not self.reads_log:
            return
        with PROFILE.section("write_monitor"):
            log = self.cfg.bfm.writes
            count = log.count()
            new = count - self.published
            if new > log.depth:
                raise WriteLogOverflow(
                    f"write monitor: the chip wrote {new} words since the last run ended, more "
                    f"than the harness's log keeps ({log.depth}): they cannot all be checked"
                    f"\n{self.cfg.recorder.where()}")
            writes = [logged_write(entry) for entry in log.read(self.published, new)]
            self.published = count
        for write in writes:
            self.ap.write(write)

    def extract_phase(self) -> None:
        """Writes made after the last run ended (the scoreboard's check_phase refuses them)."""
        self.publish_run()
