"""The whole chip's pins (chip_harness): start, await done, read the status; its memory.

Everything the testbench does to the chip's pins lives here, so the chip agent's driver and
monitor share one implementation. A run pulses `start` and then waits for `done` with a single
trigger raced against the watchdog: no per-cycle Python between start and done.

The watchdog is the harness's own (chip_harness.v built with CHIP_HARNESS_RECORD: a cycle
counter that raises `watchdog_expired`) when it has one, else a cocotb Timer. A Timer pending
through the run slowed every simulated cycle on Verilator: measured 1.86 ms against 1.59 ms a
run of 2,600 cycles (15%). The same harness keeps the memory port's write log (`write_count`,
`read_write_log`; the agent's write monitor reads it after each done).

The memory (hw/tb/axi_ram.v) runs the profile the run's plusargs name (sim/mem_profile.py).
After each run the status says what the protocol checker saw (a violation raises
AxiProtocolError, named by cycle, channel and rule), and, under a profile other than the ideal
one, the counters are those of the ideal memory (`ideal_view`: the frozen cycles taken out),
so every comparison with the reference machine stays exact, once the frozen cycles (`wait`)
are checked against the delays the memory inserted during the run (`check_wait`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cocotb
import numpy as np
from cocotb.triggers import First, ReadOnly, RisingEdge, Timer

from model.isa import ChipConfig
from model.machine import Counters, counter_fields_at
from model.rtl_defs import AxiChannel, AxiRule
from sim.mem_profile import MemStalls, check_wait, ideal_view, profile_of
from sim.runner import CLOCK_NS
from verif.kit.clock import reset, start_clock
from verif.kit.memory import Backdoor, UnknownValue, known

COUNTERS_PORT = "counters"  # every counter, packed (hw/ISA.md, "Counters"; model.machine)
ADDRESS_BITS = 16  # a write-log entry is {mem_addr (16 bits), mem_wdata (32 bits)}
WATCHDOG_MAX = 2**32 - 1  # watchdog_limit's width


class AxiProtocolError(AssertionError):
    """The protocol checker on the chip's AXI4 port saw a rule broken (hw/tb/axi_checker.v)."""


class ChipHung(AssertionError):
    """`done` did not rise within the watchdog's limit."""


@dataclass
class ChipStatus:
    """What the chip reports after done."""

    error: int
    error_pc: int
    counters: Counters  # on the ideal memory: the frozen cycles taken out (`ideal_view`)
    wait: int = 0  # the cycles the chip was frozen on memory (cnt_wait)
    stalls: MemStalls = field(default_factory=MemStalls)  # the memory's delays in the run


class ChipBfm:
    """Pin-level access to `chip_harness` (the chip plus its external memory model)."""

    def __init__(self, dut, cfg: ChipConfig):
        self.dut = dut
        self.memory = Backdoor(dut.u_mem.mem, cfg.ext_words, "external memory word")
        self.scratchpad = Backdoor(dut.u_chip.u_sram.mem, cfg.sram_words, "scratchpad word")
        # A harness built with its own clock (CHIP_HARNESS_CLOCK) needs none from cocotb.
        self._clock_started = _flag(dut, "HDL_CLOCK")
        self.records = _flag(dut, "HDL_RECORD")  # write log and watchdog (CHIP_HARNESS_RECORD)
        # The log is a ring of wlog_words entries: small enough that reading it reuses the
        # element handles cocotb caches (making one costs about 10 us, reading one 1.5 us).
        self.wlog_words = int(dut.WLOG_WORDS.value) if self.records else 0
        self.profile = profile_of(cocotb.plusargs)
        self.stalls_before = MemStalls()  # the memory's delays when the run started

    async def power_up(self) -> None:
        """The state of a freshly built chip: a zero scratchpad, then a reset.

        Many tests share one simulator process, and the scratchpad keeps its words through
        reset (hw/rtl/sram.v), so each test clears it as a new process would find it; the
        reference machine starts every run from that zero scratchpad. The external memory
        needs nothing: every step loads all of it (`Backdoor` starts out knowing none of it).
        """
        self.scratchpad.load(np.zeros(0, dtype=np.uint32))
        await self.reset()

    async def reset(self) -> None:
        if not self._clock_started:
            start_clock(self.dut)
            self._clock_started = True
        await reset(self.dut, idle={"start": 0})

    async def run(self, max_cycles: int) -> None:
        """Pulse start and wait for done (at most max_cycles); reads nothing: the status is
        read once per run, by the chip monitor. ``max_cycles`` are the ideal memory's."""
        max_cycles *= self.profile.slowdown
        await RisingEdge(self.dut.clk)
        if self.records:
            self.dut.watchdog_limit.value = min(max_cycles, WATCHDOG_MAX)
        if not self.profile.ideal:  # the ideal memory never stalls: nothing to read
            self.stalls_before = self.read_stalls()
        self.dut.start.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.start.value = 0
        done = RisingEdge(self.dut.done)
        if self.records:
            watchdog = RisingEdge(self.dut.watchdog_expired)
        else:
            watchdog = Timer(max_cycles * CLOCK_NS, unit="ns")
        if await First(done, watchdog) is watchdog:
            raise ChipHung(f"done did not rise within {max_cycles} cycles")
        await RisingEdge(self.dut.clk)

    async def settle(self) -> None:
        """Let the values of this time step settle (after done rose), before reading them."""
        await ReadOnly()

    def write_count(self) -> int:
        """Writes the chip has made on its memory port since reset (the harness's log)."""
        return known(self.dut.wlog_count.value, "output wlog_count")

    def read_write_log(self, first: int, count: int) -> list[tuple[str, str]]:
        """Writes first .. first + count - 1 since reset, as (address, data) binary strings.

        The log keeps the last `wlog_words` writes; strings, so that X or Z stays visible.
        """
        log, texts = self.dut.wlog, []
        for index in range(first, first + count):
            text = str(log[index % self.wlog_words].value)
            texts.append((text[:ADDRESS_BITS], text[ADDRESS_BITS:]))
        return texts

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
            raise AxiProtocolError(f"AXI4 port: {violations} cycles break a rule; the first, "
                                   f"cycle {cycle} after reset: channel {channel.name}, rule "
                                   f"{rule.name}")

    def read_status(self) -> ChipStatus:
        """The status ports and the counters bus (one read), unpacked by the model's layout.

        X or Z bits on the bus raise UnknownValue naming each counter that holds some. Checks
        the AXI4 port's rules, and, under a profile other than the ideal one, the frozen
        cycles' bounds; the counters are then the ideal memory's (`ideal_view`).
        """
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


def _flag(dut, name: str) -> bool:
    """A one-bit localparam of the harness (HDL_CLOCK, HDL_RECORD; chip_harness.v), False when
    the harness has none (one built without the define, or a simulator that hides it)."""
    try:
        return int(getattr(dut, name).value) == 1
    except AttributeError:
        return False
