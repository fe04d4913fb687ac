"""The scratchpad (`sram`, the toplevel itself) against a Python memory with its documented ports.

The SRAM has no arithmetic in `model/` (the reference machine's scratchpad is a numpy array of
words): the expectation is such an array, `mirror`, updated the way sram.v's header specifies:
two synchronous read ports (data one cycle after the address), port A LANES words wide (lane i:
the word at the address + i, 0 past the last word), one write port, read-first (a read of the
word written in the same cycle returns the old word), zero at power-up.
Checked: every word reads zero after power-up; then random traffic, one command a cycle, with
the three addresses colliding often (same word on both read ports and the write port) and the
edge addresses 0 and SRAM_WORDS-1; then the whole array through the backdoor the unit tests use.
"""

from __future__ import annotations

import random

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

from sim.runner import CLOCK_NS
from verif.kit.compare import first_memory_difference
from verif.tests.blocks.block_tb import block_rng, failure

RANDOM_CYCLES = 3000


class Traffic:
    """Random addresses that often hit a small hot set, the last write, and the two ends."""

    def __init__(self, rng: random.Random, words: int):
        self.rng = rng
        self.words = words
        self.hot = [0, words - 1, *rng.sample(range(1, words - 1), 6)]

    def address(self, recent: int) -> int:
        pick = self.rng.random()
        if pick < 0.3:
            return recent
        if pick < 0.7:
            return self.rng.choice(self.hot)
        return self.rng.randrange(self.words)

    def data(self) -> int:
        return self.rng.choice([self.rng.getrandbits(32), self.rng.getrandbits(32), 0,
                                0xFFFFFFFF, 0x80000000, 0x7FFFFFFF])


def drive(dut, read_a: int, read_b: int, write: tuple[int, int] | None) -> None:
    dut.rd_a_addr.value = read_a
    dut.rd_b_addr.value = read_b
    dut.wr_en.value = int(write is not None)
    if write is not None:
        dut.wr_addr.value, dut.wr_data.value = write


def port_a_lanes(mirror: np.ndarray, address: int, lanes: int) -> list[int]:
    """Port A's words: lane i is the word at address + i, 0 past the last word."""
    return [int(mirror[address + i]) if address + i < mirror.size else 0 for i in range(lanes)]


def check_reads(dut, want: tuple[list[int], int], cycle: int, command: str) -> None:
    lanes = len(want[0])
    wide = int(dut.rd_a_data.value)
    got = ([(wide >> (32 * i)) & 0xFFFFFFFF for i in range(lanes)], int(dut.rd_b_data.value))
    assert got == want, failure(
        f"cycle {cycle}, after {command}: read data (A lanes, B) want "
        f"({[hex(w) for w in want[0]]}, {want[1]:#010x}), "
        f"got ({[hex(w) for w in got[0]]}, {got[1]:#010x})")


@cocotb.test()
async def sram_reads_first_and_keeps_every_word(dut):
    """Zero at power-up; random reads and writes, read-first on collisions; backdoor agrees."""
    rng = block_rng(dut)
    words, lanes = int(dut.SRAM_WORDS.value), int(dut.LANES.value)
    mirror = np.zeros(words, dtype=np.uint32)
    drive(dut, 0, 0, None)
    Clock(dut.clk, CLOCK_NS, unit="ns").start()
    # inputs change at the falling edge; the data of the rising edge in between is checked at
    # the next falling edge
    commands = [(a, a + 1, None) for a in range(0, words, 2)]       # power-up: every word
    traffic = Traffic(rng, words)
    recent = traffic.hot[0]
    for _ in range(RANDOM_CYCLES):
        write = (traffic.address(recent), traffic.data()) if rng.random() < 0.6 else None
        recent = write[0] if write else recent
        commands.append((traffic.address(recent), traffic.address(recent), write))
    await FallingEdge(dut.clk)
    for cycle, (read_a, read_b, write) in enumerate(commands):
        drive(dut, read_a, read_b, write)
        want = (port_a_lanes(mirror, read_a, lanes), int(mirror[read_b]))  # before the write
        if write is not None:
            mirror[write[0]] = write[1]
        await FallingEdge(dut.clk)
        check_reads(dut, want, cycle, f"read A {read_a}, read B {read_b}, write {write}")
    drive(dut, 0, 0, None)
    await FallingEdge(dut.clk)
    got = np.array([int(dut.mem[i].value) for i in range(words)], dtype=np.uint32)
    difference = first_memory_difference(mirror, got, what="sram word")
    assert difference is None, failure(f"backdoor after the traffic: {difference}")
    dut._log.info("%d cycles of SRAM traffic checked", len(commands))
