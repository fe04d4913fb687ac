"""The chip agent's write monitor: every word the chip writes to its external memory.

`ExtWriteBusMonitor` is a cocotb-bus `BusMonitor` on chip_harness's memory port (the `mem_*`
ports between chip_top and ext_mem: mem_req, mem_we, mem_addr, mem_wdata). A word is written in
each cycle that has both req and we high (hw/tb/ext_mem.v stores it at the rising edge that ends
the cycle); the monitor makes one `MemWrite` of it. `ExtWriteMonitor` is the uvm_monitor around
it: each write goes out of its analysis port to the scoreboard, which takes all the writes it
holds when the run's done arrives (they all happened in earlier cycles) and compares them with
the words the reference machine's STOREs wrote.

Cost. A BusMonitor's Python runs on clock edges; here only while the write strobe is high. The
chip writes only during STORE (hw/rtl/dma.v: one word a cycle, we held high for the whole
transfer), so the monitor sleeps on the rising edge of mem_we, then wakes on each falling clock
edge until we falls: one wake per word written plus two per STORE, none in the other cycles of
a run (a decode step of the tiny model writes 33 words in 4 STOREs, in a run of 1,400 to 3,900
cycles). Measured on the chapter's 96 steps (scripts/bench_tb.py's plan): about 0.65 ms a step
on Verilator (some 14% of its 4.6 ms), nothing measurable on Icarus (about 100 ms a step); the
Python of the samples is the profile's `write_monitor` section, the rest is the wakes. The
falling edge is mid-cycle, where every value has settled on both simulators; a read at the
rising edge sees the values before or after that edge's updates depending on the simulator.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cocotb.triggers import FallingEdge, RisingEdge
from cocotb_bus.monitors import BusMonitor
from pyuvm import ConfigDB, uvm_analysis_port, uvm_monitor

from verif.env_config import CFG_KEY, DecodeEnvConfig
from verif.failures import recording_failures
from verif.profiling import PROFILE

MEM_BUS = "mem"  # chip_harness's memory port: mem_req, mem_we, mem_addr, mem_wdata


@dataclass(frozen=True)
class MemWrite:
    """One word written on the memory port, as seen on the bus."""

    address: int
    value: int  # uint32
    unknown: str | None = None  # the address or data held X or Z (Icarus only): which, and how

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
    """Recovers each write (req && we) of the memory port as a MemWrite and passes it to `_recv`.

    Its callbacks (or its queue, without one) get one MemWrite per word written, in bus order.
    """

    _signals = ("req", "we", "addr", "wdata")  # mem_req, mem_we, mem_addr, mem_wdata

    async def _monitor_recv(self) -> None:
        we, req, clock = self.bus.we, self.bus.req, self.clock
        while True:
            await RisingEdge(we)  # a burst starts: sleep through every cycle that writes nothing
            while True:
                await FallingEdge(clock)  # mid-cycle: the values the next rising edge stores
                if str(we.value) != "1":  # X or Z writes nothing either (ext_mem.v)
                    break
                if str(req.value) == "1":
                    with PROFILE.section("write_monitor"):
                        self._recv(self._sample())

    def _sample(self) -> MemWrite:
        address, data = str(self.bus.addr.value), str(self.bus.wdata.value)
        try:
            return MemWrite(int(address, 2), int(data, 2))
        except ValueError:
            return MemWrite(0, 0, unknown=f"mem_addr {address}, mem_wdata {data}")


class ExtWriteMonitor(uvm_monitor):
    """Publishes one MemWrite per word the chip writes to external memory (analysis port `ap`).

    The cocotb-bus monitor starts in run_phase, before the test's reset ends and long before
    the first STORE, and runs until the simulation ends.
    """

    def build_phase(self) -> None:
        self.cfg: DecodeEnvConfig = ConfigDB().get(self, "", CFG_KEY)
        self.ap = uvm_analysis_port("ap", self)
        self.bus_monitor: ExtWriteBusMonitor | None = None

    @recording_failures
    async def run_phase(self) -> None:
        dut = self.cfg.bfm.dut
        self.bus_monitor = ExtWriteBusMonitor(dut, MEM_BUS, dut.clk, callback=self.ap.write,
                                              case_insensitive=False)
