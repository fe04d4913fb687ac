"""The clock and the reset every harness gets: one period, one reset sequence."""

from __future__ import annotations

from collections.abc import Mapping

from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from sim.runner import CLOCK_NS


def start_clock(dut) -> None:
    """Drive ``dut.clk`` from the GPI (C), not a Python task: cocotb's Python clock wakes
    Python twice a cycle, which cost 15% of a decode step's wall time on Icarus."""
    Clock(dut.clk, CLOCK_NS, unit="ns", impl="gpi").start()


async def reset(dut, cycles: int = 3, idle: Mapping[str, int] | None = None) -> None:
    """Hold ``rst`` for ``cycles`` rising edges (inputs at ``idle``), release it, wait one more."""
    for name, value in (idle or {}).items():
        getattr(dut, name).value = value
    dut.rst.value = 1
    for _ in range(cycles):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)
