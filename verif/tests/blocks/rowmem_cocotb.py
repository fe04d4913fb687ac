"""The row memory (`rowmem`, the toplevel itself) against a Python memory with its documented ports.

The row memory has no arithmetic in `model/`: the expectation is a list of words, `mirror`,
updated the way rowmem.v's header specifies: a synchronous write port and a combinational read
port (a read of the word being written shows the old word until the edge, the new one after
it), every word zero at power-up, WIDTH bits a word. Built with the softmax unit's shape
(16 x SM_MAX); the matrix unit's tile buffers (8 x K_MAX) are exercised by its own test.
"""

from __future__ import annotations

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer

from sim.runner import CLOCK_NS
from verif.tests.blocks.block_tb import block_rng, failure

RANDOM_CYCLES = 3000


def check_read(dut, mirror: list[int], address: int, when: str) -> None:
    got, want = int(dut.rd_data.value), mirror[address]
    assert got == want, failure(f"{when}: rd_data at {address} want {want:#x}, got {got:#x}")


@cocotb.test()
async def rowmem_reads_combinationally_and_writes_on_the_edge(dut):
    """Zero at power-up; random writes; a read sees the old word before the edge, the new after."""
    rng = block_rng(dut)
    width, depth = int(dut.WIDTH.value), int(dut.DEPTH.value)
    mirror = [0] * depth
    dut.wr_en.value = 0
    dut.wr_addr.value = 0
    dut.wr_data.value = 0
    dut.rd_addr.value = 0
    Clock(dut.clk, CLOCK_NS, unit="ns").start()
    await FallingEdge(dut.clk)
    for address in range(depth):                        # power-up: every word (wr_en is low)
        dut.rd_addr.value = address
        await Timer(1, unit="ns")
        check_read(dut, mirror, address, "after power-up")
    hot = [0, depth - 1, *rng.sample(range(1, depth - 1), 4)]
    write_address = 0
    for cycle in range(RANDOM_CYCLES):
        await FallingEdge(dut.clk)
        read_address = dut.rd_addr.value.to_unsigned()
        check_read(dut, mirror, read_address, f"cycle {cycle}, after the edge")
        writing = rng.random() < 0.6
        write_address = rng.choice([write_address, rng.choice(hot), rng.randrange(depth)])
        read_address = rng.choice([write_address, rng.choice(hot), rng.randrange(depth)])
        data = rng.choice([rng.getrandbits(width), (1 << width) - 1, 0])
        dut.wr_en.value = int(writing)
        dut.wr_addr.value = write_address
        dut.wr_data.value = data
        dut.rd_addr.value = read_address
        await Timer(1, unit="ns")
        command = f"cycle {cycle}: write {data:#x} to {write_address} ({writing}), read"
        check_read(dut, mirror, read_address, f"{command}, before the edge")
        if writing:
            mirror[write_address] = data
    dut._log.info("%d cycles of row memory traffic checked (%d x %d bits)",
                  RANDOM_CYCLES, depth, width)
