"""The memory interface unit (hw/tb/mem_if_harness.v) against cocotbext-axi's AxiRam.

An implementation of AXI4 that was not written here, with a pause generator on every channel
(seeded from the test's seed, so a seed replays the same stalls), and the protocol checker on
the port. The test drives the unit side as the chip's units do, one advancing cycle at a time
(a cycle with `stall` high repeats), and checks hw/ISA.md's contract in advancing cycles,
exactly: word i of a read stream commanded in cycle c arrives in cycle
max(c + EXT_LAT + 2, the previous stream's last + 1) + i with the memory's word (0 for an error
response), and nowhere else; a fence completes exactly 3 cycles after it is asked; after it,
the memory holds every word written but those it refused; `bus_err` rises after an error
response on a read and on a write, and `clear` drops it.

Stimulus: streams of 1, 2 .. 15, 16 .. 255 and 600 words (bursts of 256), streams across 4 KB
boundaries, one-word streams commanded in consecutive cycles (back-to-back bursts), write
streams back to back with one fence (a paged store's rows), random streams; write streams back
to back while AW is held for 30 cycles (the command queue, full); a stream of 5 bursts and
one-word streams while R is held for 40 cycles (the most reads outstanding: the build declares
READS_MAX = 4, and the checker holds the unit to it). The AR and AW handshakes are sampled to
show the bursts covered each case.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain, pairwise, repeat
from pathlib import Path

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge, Timer
from cocotbext.axi import AxiBus, AxiRam

from verif.coverage import axi_points
from verif.coverage import points as coverage
from verif.coverage.axi_points import PAGE_WORDS
from verif.kit.clock import reset, start_clock
from verif.runs.record import RunRecorder
from verif.tests.blocks.block_tb import block_rng, failure

WORDS = 1 << 16  # the AxiRam: 256 KB, every address the unit can name
FENCE_CYCLES = 3
PAUSE = 0.3  # a channel is paused in about this share of cycles
IDLE = {"rd_cmd": 0, "rd_addr": 0, "rd_len": 0, "wr_cmd": 0, "wr_addr": 0, "wr_len": 0,
        "wr_push": 0, "wr_data": 0, "fence": 0, "clear": 0}


def pauses(rng: random.Random) -> Iterator[bool]:
    """A channel's pause pattern: short random pauses, and now and then a long one."""
    while True:
        if rng.random() < 0.01:
            yield from [True] * rng.randint(20, 60)
        yield rng.random() < PAUSE


@dataclass
class Plan:
    """The unit side's inputs, one dict per advancing cycle, and what must come back when."""

    latency: int
    cycles: list[dict[str, int]] = field(default_factory=list)
    reads: dict[int, int] = field(default_factory=dict)  # advancing cycle -> word expected
    fences: set[int] = field(default_factory=set)  # advancing cycles of fence_done
    last_due: int = -1
    mirror: dict[int, int] = field(default_factory=dict)  # what memory holds, where known

    def idle(self, count: int) -> None:
        self.cycles += [dict(IDLE) for _ in range(count)]

    def read(self, address: int, length: int, errors: set[int], gap: int = 0) -> None:
        """A read stream, commanded as a unit does: no more than L + 2 cycles before the
        previous stream's last word is due (hw/ISA.md, the unit side's one rule)."""
        self.idle(max(0, self.last_due - self.latency - 2 - len(self.cycles)))
        now = len(self.cycles)
        self.cycles.append(IDLE | {"rd_cmd": 1, "rd_addr": address, "rd_len": length})
        first = max(now + self.latency + 2, self.last_due + 1)
        for i in range(length):
            word = address + i
            self.reads[first + i] = 0 if word in errors else self.mirror[word]
        self.last_due = first + length - 1
        self.idle(gap)

    def write(self, address: int, data: list[int], refused: set[int],
              fence: bool = True) -> None:
        """A write stream, its command with the first push; with `fence`, the fence with the
        last push (and idle cycles until it completes, before anything reads the words)."""
        now = len(self.cycles)
        for i, value in enumerate(data):
            self.cycles.append(IDLE | {"wr_push": 1, "wr_data": value,
                                       "fence": int(fence and i == len(data) - 1)})
            if address + i not in refused:
                self.mirror[address + i] = value
        self.cycles[now] |= {"wr_cmd": 1, "wr_addr": address, "wr_len": len(data)}
        if fence:
            self.fences.add(now + len(data) - 1 + FENCE_CYCLES)
            self.idle(FENCE_CYCLES)


@dataclass
class BusLog:
    """The bursts seen on the port: AR and AW (address in words, beats), outstanding reads."""

    reads: list[tuple[int, int, int]] = field(default_factory=list)  # (cycle, address, beats)
    writes: list[tuple[int, int]] = field(default_factory=list)
    ids: set[int] = field(default_factory=set)  # every arid and awid handshaken: hw/ISA.md says 0
    outstanding: int = 0
    most_outstanding: int = 0
    error_responses: set[str] = field(default_factory=set)  # "read", "write": SLVERR or DECERR

    def sample(self, dut, cycle: int) -> None:
        if int(dut.axi_arvalid.value) and int(dut.axi_arready.value):
            self.reads.append((cycle, int(dut.axi_araddr.value) >> 2, int(dut.axi_arlen.value) + 1))
            self.ids.add(int(dut.axi_arid.value))
            self.outstanding += 1
        if int(dut.axi_awvalid.value) and int(dut.axi_awready.value):
            self.writes.append((int(dut.axi_awaddr.value) >> 2, int(dut.axi_awlen.value) + 1))
            self.ids.add(int(dut.axi_awid.value))
        self.most_outstanding = max(self.most_outstanding, self.outstanding)
        if int(dut.axi_rvalid.value) and int(dut.axi_rready.value):
            if int(dut.axi_rresp.value):
                self.error_responses.add("read")
            if int(dut.axi_rlast.value):
                self.outstanding -= 1
        if int(dut.axi_bvalid.value) and int(dut.axi_bready.value) and int(dut.axi_bresp.value):
            self.error_responses.add("write")

    def cover(self, reads_max: int) -> None:
        """Sample the port's coverage (verif.coverage.axi_points) from the whole log."""
        for _, address, beats in self.reads:
            axi_points.cover_burst(address, beats)
        for address, beats in self.writes:
            axi_points.cover_burst(address, beats)
        for (first, _, _), (second, _, _) in pairwise(self.reads):
            axi_points.cover_read_gap(second - first)
        axi_points.cover_outstanding(self.most_outstanding, reads_max)
        for kind in sorted(self.error_responses):
            axi_points.cover_error_response(kind)


READ_ERROR = 0x7800  # no stream of the first phase reads it ..
WRITE_ERROR = 0x7C00  # .. or writes this one


def first_phase(rng: random.Random, latency: int, mirror: dict[int, int]) -> Plan:
    """Every burst case, then random streams; no error address touched."""
    plan = Plan(latency, mirror=mirror)
    cases = [(rng.randrange(0x4000), 1), (rng.randrange(0x4000), rng.randint(2, 15)),
             (rng.randrange(0x4000), rng.randint(16, 255)), (2 * PAGE_WORDS, 600),
             (3 * PAGE_WORDS - 5, 20)]
    for address, length in cases:
        plan.read(address, length, set(), gap=rng.choice([0, 1, 30]))
    for i in range(12):  # one-word streams a cycle: back-to-back bursts
        plan.read(0x100 + 7 * i, 1, set())
    written = 0x8000  # writes from here up, each read back after its fence
    for length in (1, rng.randint(2, 15), rng.randint(16, 255), 600, 20):
        start = written if length != 20 else (written // PAGE_WORDS + 1) * PAGE_WORDS - 7
        plan.write(start, [rng.getrandbits(32) for _ in range(length)], set())
        plan.read(start, length, set(), gap=rng.randint(0, 3))
        written = start + length + rng.randint(0, 50)
    for rows in range(8):  # rows of a paged store: write streams back to back, one fence
        starts = rng.sample(range(0xC000, 0xD000, 8), rng.randint(2, 6))
        for index, start in enumerate(starts):
            plan.write(start, [rng.getrandbits(32) for _ in range(rng.randint(1, 4))], set(),
                       fence=index == len(starts) - 1)
        plan.read(starts[rows % len(starts)], 4, set())
    for _ in range(20):
        length = rng.randint(1, 300)
        if rng.random() < 0.5:
            plan.read(rng.randrange(0x7000), length, set(), gap=rng.choice([0, 0, 1, 5]))
        else:
            start = rng.randrange(0x9000, WORDS - length)
            plan.write(start, [rng.getrandbits(32) for _ in range(length)], set())
    return plan


async def run_plan(dut, plan: Plan, log: BusLog) -> tuple[dict[int, int], set[int]]:
    """Drive the plan's cycles, repeating a frozen one; what arrived and when (advancing)."""
    got_reads: dict[int, int] = {}
    got_fences: set[int] = set()
    index = cycle = 0
    limit = 60 * len(plan.cycles) + 20000
    end = max([len(plan.cycles), *plan.reads, *plan.fences]) + 1
    while index < end:
        inputs = plan.cycles[index] if index < len(plan.cycles) else IDLE
        for name, value in inputs.items():
            getattr(dut, name).value = value
        await ReadOnly()
        log.sample(dut, cycle)
        if not int(dut.stall.value):
            if int(dut.rd_valid.value):
                got_reads[index] = int(dut.rd_data.value)
            if int(dut.fence_done.value):
                got_fences.add(index)
            index += 1
        await RisingEdge(dut.clk)
        cycle += 1
        assert cycle < limit, failure(f"the unit froze for good at advancing cycle {index}")
    for name, value in IDLE.items():
        getattr(dut, name).value = value
    return got_reads, got_fences


def schedule_problems(plan: Plan, reads: dict[int, int], fences: set[int]) -> list[str]:
    problems = []
    for when in sorted(plan.reads.keys() | reads.keys()):
        want, got = plan.reads.get(when), reads.get(when)
        if want != got:
            problems.append(f"advancing cycle {when}: expected "
                            f"{'nothing' if want is None else hex(want)}, got "
                            f"{'nothing' if got is None else hex(got)}")
    if fences != plan.fences:
        problems.append(f"fence_done in cycles {sorted(fences ^ plan.fences)[:5]} "
                        f"differ from the schedule")
    return problems[:8]


def inject_errors(ram: AxiRam, read_words: set[int], write_words: set[int]) -> None:
    """Make the AxiRam answer SLVERR on these words (its slaves turn an exception into one)."""
    read, write = ram.read_if._read, ram.write_if._write

    async def faulty_read(address: int, length: int) -> bytes:
        if address // 4 in read_words:
            raise OSError(f"injected read error at word {address // 4}")
        return await read(address, length)

    async def faulty_write(address: int, data: bytes) -> None:
        if address // 4 in write_words:
            raise OSError(f"injected write error at word {address // 4}")
        await write(address, data)

    ram.read_if._read = faulty_read
    ram.write_if._write = faulty_write


async def start(dut) -> None:
    """The kit's clock and reset, with reset high and every input idle a nanosecond before the
    clock's first edge: cocotbext-axi's RAM samples its channels from that edge on unless its
    reset is high, and Icarus shows an input not driven yet as Z."""
    dut.rst.value = 1
    for name, value in IDLE.items():
        getattr(dut, name).value = value
    await Timer(1, unit="ns")
    start_clock(dut)
    await reset(dut)  # the inputs hold their idle values already


def new_ram(dut, rng: random.Random) -> AxiRam:
    ram = AxiRam(AxiBus.from_prefix(dut, "axi"), dut.clk, dut.rst, size=4 * WORDS)
    channels = (ram.write_if.aw_channel, ram.write_if.w_channel, ram.write_if.b_channel,
                ram.read_if.ar_channel, ram.read_if.r_channel)
    for channel in channels:
        channel.set_pause_generator(pauses(random.Random(rng.getrandbits(32))))
    return ram


def most_outstanding(latency: int, mirror: dict[int, int]) -> Plan:
    """A stream of 5 bursts (1,100 words from a 4 KB boundary), then one-word streams a cycle:
    while R is held, the unit must stop at READS_MAX (4) reads outstanding."""
    plan = Plan(latency, mirror=mirror)
    plan.read(2 * PAGE_WORDS, 1100, set())
    for i in range(3 * (latency + 3)):
        plan.read(0x300 + 5 * i, 1, set())
    return plan


def stream_behind_a_held_ar(latency: int, mirror: dict[int, int]) -> Plan:
    """A one-word stream, then at once one of 70 words: while AR is held, the second becomes the
    current stream with its AR unable to leave, and must later be cut from what was kept."""
    plan = Plan(latency, mirror=mirror)
    plan.read(0x680, 1, set())
    plan.read(0x700, 70, set())
    return plan


def queued_writes(rng: random.Random, latency: int, mirror: dict[int, int]) -> Plan:
    """Write streams back to back, one fence: while AW is held, they wait in the command queue.
    The first six are of one word, so the queue fills (and freezes the unit) before the write
    buffer does; then streams of 1 .. 4 words."""
    plan = Plan(latency, mirror=mirror)
    starts = rng.sample(range(0xD000, 0xE000, 8), 10)
    for index, start in enumerate(starts):
        length = 1 if index < 6 else rng.randint(1, 4)
        plan.write(start, [rng.getrandbits(32) for _ in range(length)], set(),
                   fence=index == len(starts) - 1)
    return plan


def hold(channel, cycles: int, rng: random.Random) -> None:
    """Pause a channel for the next `cycles` cycles, then at random again."""
    channel.set_pause_generator(chain(repeat(True, cycles), pauses(rng)))


async def bus_err_after(dut, plan: Plan, log: BusLog, want: int) -> list[str]:
    """Run a plan; its schedule, and bus_err afterwards, must be as expected."""
    reads, fences = await run_plan(dut, plan, log)
    await ReadOnly()
    got = int(dut.bus_err.value)
    await RisingEdge(dut.clk)
    problems = schedule_problems(plan, reads, fences)
    return problems + ([f"bus_err {got} after the phase, expected {want}"] if got != want else [])


async def clear(dut) -> list[str]:
    """Pulse `clear`; bus_err must be low after it."""
    dut.clear.value = 1
    await RisingEdge(dut.clk)
    dut.clear.value = 0
    await ReadOnly()
    got = int(dut.bus_err.value)
    await RisingEdge(dut.clk)
    return [f"bus_err {got} after clear"] if got else []


@cocotb.test()
async def mem_if_keeps_the_ideal_schedule_on_a_pausing_axi_ram(dut):
    """Every word on its ideal cycle, every fence 3 cycles on, memory as written, bursts legal;
    an error response on a read and on a write raises bus_err."""
    rng = block_rng(dut)
    latency = int(dut.EXT_LAT.value)
    ram = new_ram(dut, rng)
    inject_errors(ram, {READ_ERROR}, {WRITE_ERROR})
    image = [rng.getrandbits(32) for _ in range(WORDS)]
    ram.write(0, b"".join(w.to_bytes(4, "little") for w in image))
    mirror = dict(enumerate(image))
    await start(dut)
    log = BusLog()
    problems = await bus_err_after(dut, first_phase(rng, latency, mirror), log, 0)
    hold(ram.write_if.aw_channel, 30, random.Random(rng.getrandbits(32)))
    problems += await bus_err_after(dut, queued_writes(rng, latency, mirror), log, 0)
    hold(ram.read_if.r_channel, 40, random.Random(rng.getrandbits(32)))
    problems += await bus_err_after(dut, most_outstanding(latency, mirror), log, 0)
    hold(ram.read_if.ar_channel, 10, random.Random(rng.getrandbits(32)))
    problems += await bus_err_after(dut, stream_behind_a_held_ar(latency, mirror), log, 0)
    read_error = Plan(latency, mirror=mirror)
    read_error.read(READ_ERROR - 16, 40, {READ_ERROR})
    problems += await bus_err_after(dut, read_error, log, 1)
    problems += await clear(dut)
    write_error = Plan(latency, mirror=mirror)
    write_error.write(WRITE_ERROR - 8, [rng.getrandbits(32) for _ in range(20)], {WRITE_ERROR})
    problems += await bus_err_after(dut, write_error, log, 1)
    problems += memory_problems(ram, mirror) + checker_problems(dut)
    if log.ids != {0}:
        problems.append(f"AR and AW IDs {sorted(log.ids)}, not only 0")
    log.cover(int(dut.READS_MAX.value))
    coverage.export(Path.cwd())  # the run folder: the regression's report merges it
    assert not problems, failure("\n  ".join(["mem_if differs from its contract:", *problems]))
    missed = axi_points.holes()
    assert not missed, failure(f"the stimulus did not cover: {', '.join(missed)}")
    RunRecorder(Path.cwd(), "mem_if").write("passed")  # its coverage counts in the reports
    dut._log.info("%d read and %d write bursts, %d reads outstanding at most", len(log.reads),
                  len(log.writes), log.most_outstanding)


def memory_problems(ram: AxiRam, mirror: dict[int, int]) -> list[str]:
    data = ram.read(0, 4 * WORDS)
    words = [int.from_bytes(data[4 * i:4 * i + 4], "little") for i in range(WORDS)]
    bad = [a for a, want in mirror.items() if words[a] != want]
    return [f"memory word {bad[0]}: expected {mirror[bad[0]]:#x}, got {words[bad[0]]:#x} "
            f"({len(bad)} words differ)"] if bad else []


def checker_problems(dut) -> list[str]:
    if int(dut.axi_violations.value) == 0:
        return []
    return [f"the protocol checker: rule {int(dut.axi_first_rule.value)} on channel "
            f"{int(dut.axi_first_channel.value)} in cycle {int(dut.axi_first_cycle.value)}"]
