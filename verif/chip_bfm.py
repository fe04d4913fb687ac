"""The chip's bus-functional model: clock, reset, bulk memory access, one run, the status.

Everything the testbench does to the pins lives here, so drivers, monitors and directed tests
share one implementation. A run pulses `start` and then waits for `done` with a single trigger
raced against the watchdog: no per-cycle Python between start and done.

The watchdog is the harness's own (chip_harness.v built with CHIP_HARNESS_RECORD: a cycle
counter that raises `watchdog_expired`) when it has one, else a cocotb Timer. A Timer pending
through the run slowed every simulated cycle on Verilator: measured 1.86 ms against 1.59 ms a
run of 2,600 cycles (15%). The same harness keeps the memory port's write log
(`write_count`, `read_write_log`; verif/ext_write_monitor.py reads it after each done).

The memory (hw/tb/axi_ram.v) runs the profile the run's plusargs name (sim/mem_profile.py).
After each run the status says what the protocol checker saw (a violation raises
AxiProtocolError, named by cycle, channel and rule), and, under a profile other than the ideal
one, the counters are those of the ideal memory (`ideal_view`: the frozen cycles taken out),
so every comparison with the reference machine stays exact, once the frozen cycles (`wait`)
are checked against the delays the memory inserted during the run (`check_wait`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import First, ReadOnly, RisingEdge, Timer

from model.machine import Counters, counter_fields_at
from model.rtl_defs import AxiChannel, AxiRule
from sim.mem_profile import MemStalls, check_wait, ideal_view, profile_of

CLOCK_NS = 10
EXT_MEM_PATH = ("u_mem", "mem")  # chip_harness: the external memory model's array
COUNTERS_PORT = "counters"  # every counter, packed (hw/ISA.md, "Counters"; model.machine's layout)
ADDRESS_BITS = 16  # a log entry is {mem_addr (16 bits), mem_wdata (32 bits)}
WATCHDOG_MAX = 2**32 - 1  # watchdog_limit's width


class ChipHung(AssertionError):
    """`done` did not rise within the watchdog's limit."""


class AxiProtocolError(AssertionError):
    """The protocol checker on the chip's AXI4 port saw a rule broken (hw/tb/axi_checker.v)."""


class UnknownValue(AssertionError):
    """An output the testbench reads holds X or Z (only Icarus can show this).

    The one exception type for an unknown value anywhere the chip reports (status, counters,
    output words): the monitor reads them once per run and the scoreboard raises this, naming
    the step and the output.
    """


@dataclass
class ChipStatus:
    """What the chip reports after done."""

    error: int
    error_pc: int
    counters: Counters  # on the ideal memory: the frozen cycles taken out (`ideal_view`)
    wait: int = 0  # the cycles the chip was frozen on memory (cnt_wait)


class ChipBfm:
    """Pin-level access to `chip_harness` (the chip plus its external memory model)."""

    def __init__(self, dut):
        self.dut = dut
        self.mem = dut
        for name in EXT_MEM_PATH:
            self.mem = getattr(self.mem, name)
        # A harness built with its own clock (CHIP_HARNESS_CLOCK) needs none from cocotb.
        self._clock_started = hdl_clock(dut)
        self.records = hdl_record(dut)  # write log and cycle watchdog (CHIP_HARNESS_RECORD)
        # The log is a ring of wlog_words entries: small enough that reading it reuses the
        # element handles cocotb caches (making one costs about 10 us, reading one 1.5 us).
        self.wlog_words = int(dut.WLOG_WORDS.value) if self.records else 0
        self.profile = profile_of(cocotb.plusargs)
        self.stalls_before = MemStalls()  # the memory's delays when the run started

    async def reset(self, cycles: int = 3) -> None:
        if not self._clock_started:
            # The clock in C (the GPI), not a Python task: cocotb's default picks the Python
            # clock unless COCOTB_TRUST_INERTIAL_WRITES is set, which costs two Python wake-ups
            # per cycle. Measured: 15% less wall time per decode step on Icarus.
            Clock(self.dut.clk, CLOCK_NS, unit="ns", impl="gpi").start()
            self._clock_started = True
        self.dut.start.value = 0
        self.dut.rst.value = 1
        for _ in range(cycles):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    def write_words(self, base: int, values: Sequence[int] | np.ndarray) -> None:
        """Backdoor write of external memory (lands at the next simulator step)."""
        for offset, value in enumerate(np.asarray(values, dtype=np.int64).tolist()):
            self.mem[base + offset].value = value & 0xFFFFFFFF

    def read_words(self, base: int, count: int) -> np.ndarray:
        """Backdoor read of external memory, as uint32 words; X or Z raises."""
        return _read_array(self.mem, base, count, "external memory word")

    def read_word(self, address: int) -> int:
        """One external memory word; X or Z raises."""
        return _known(self.mem[address].value, f"external memory word {address}")

    async def run(self, max_cycles: int) -> None:
        """Pulse start and wait for done (at most max_cycles); reads nothing.

        The status is read once per run, by whoever watches done: the chip monitor in the
        testbench, `run_and_read` in a directed test that has no monitor.
        """
        await self._start_and_await_done(max_cycles)
        await RisingEdge(self.dut.clk)

    async def run_and_read(self, max_cycles: int) -> ChipStatus:
        """A directed test's run: start, wait for done, read the status once."""
        await self._start_and_await_done(max_cycles)
        await ReadOnly()
        status = self.read_status()
        await RisingEdge(self.dut.clk)
        return status

    async def _start_and_await_done(self, max_cycles: int) -> None:
        max_cycles *= self.profile.slowdown  # max_cycles are the ideal memory's
        await RisingEdge(self.dut.clk)
        if self.records:
            self.dut.watchdog_limit.value = min(max_cycles, WATCHDOG_MAX)
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

    def write_count(self) -> int:
        """Writes the chip has made on its memory port since reset (the harness's log)."""
        return _known(self.dut.wlog_count.value, "output wlog_count")

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
        return MemStalls.from_packed(_known(self.dut.mem_stalls.value, "output mem_stalls"))

    def check_protocol(self) -> None:
        """Raise AxiProtocolError if the checker on the AXI4 port saw a rule broken."""
        violations = _known(self.dut.axi_violations.value, "output axi_violations")
        if violations:
            channel = AxiChannel(_known(self.dut.axi_first_channel.value, "axi_first_channel"))
            rule = AxiRule(_known(self.dut.axi_first_rule.value, "axi_first_rule"))
            cycle = _known(self.dut.axi_first_cycle.value, "axi_first_cycle")
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
            return _known(getattr(self.dut, name).value, f"output {name}")

        bits = str(getattr(self.dut, COUNTERS_PORT).value)  # the bus's top bit first
        if bits.strip("01"):
            unknown = [len(bits) - 1 - i for i, bit in enumerate(bits) if bit not in "01"]
            raise UnknownValue("; ".join(f"output {f.hw_name} is {f.digits(bits)}"
                                         for f in counter_fields_at(unknown)))
        self.check_protocol()
        raw = Counters.from_packed(int(bits, 2))
        counters = raw
        if not self.profile.ideal:
            check_wait(raw.wait, self.read_stalls() - self.stalls_before)
            counters = ideal_view(raw)
        return ChipStatus(error=port("error"), error_pc=port("error_pc"), counters=counters,
                          wait=raw.wait)


def hdl_clock(dut) -> bool:
    """Whether the harness makes its own clock (its HDL_CLOCK localparam, see chip_harness.v)."""
    try:
        return int(dut.HDL_CLOCK.value) == 1
    except AttributeError:  # an older harness, or a simulator that hides localparams
        return False


def hdl_record(dut) -> bool:
    """Whether the harness keeps the write log and the watchdog (its HDL_RECORD localparam)."""
    try:
        return int(dut.HDL_RECORD.value) == 1
    except AttributeError:
        return False


def _known(value, what: str) -> int:
    """The integer of a logic value, or UnknownValue if any bit is X or Z.

    The check parses the value's binary string (what the simulator returned: 0, 1, X, Z), which
    `int(text, 2)` rejects unless every character is 0 or 1; cocotb's `is_resolvable` builds a
    Logic object per bit instead, and was most of the monitor's time (about 20 us a word).
    """
    try:
        return int(str(value), 2)
    except ValueError:
        raise UnknownValue(f"{what} is {value}") from None


def _read_array(array, base: int, count: int, what: str) -> np.ndarray:
    """Words base .. base + count - 1 of an unpacked array handle, as uint32; X or Z raises."""
    texts = [str(array[base + offset].value) for offset in range(count)]
    try:
        return np.array([int(text, 2) for text in texts], dtype=np.uint32)
    except ValueError:
        bad = next(i for i, text in enumerate(texts) if text.strip("01"))
        raise UnknownValue(f"{what} {base + bad} is {texts[bad]}") from None
