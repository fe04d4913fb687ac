"""Cocotb tests that exercise the plumbing itself on the smallest RTL block, the requantizer."""

from __future__ import annotations

import cocotb
from cocotb.triggers import Timer

from model.chip import arith


async def apply(dut, x: int, mult: int, shift: int) -> int:
    dut.x.value = x & 0xFFFFFFFF
    dut.mult.value = mult & 0xFFFFFFFF
    dut.shift.value = shift
    await Timer(1, unit="ns")
    return dut.y.value.to_signed()


@cocotb.test()
async def requant_agrees_with_the_model(dut):
    """A handful of vectors: the toolchain builds, runs and checks a real block."""
    for x, mult, shift in [(1000, 1 << 30, 2), (-1000, 1 << 30, 2), (-(2**31), -(2**31), 0),
                           (12345, 1_518_500_250, 7), (3, 1 << 30, 0)]:
        assert await apply(dut, x, mult, shift) == int(arith.requant(x, mult, shift))


@cocotb.test()
async def deliberately_wrong_expectation(dut):
    """Must fail: proves that a failing cocotb test fails the pytest run."""
    assert await apply(dut, 1000, 1 << 30, 2) == 0, "this expectation is wrong on purpose"
