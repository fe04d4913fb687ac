"""The protocol checker's negative tests: a deliberately broken AXI4 port per rule.

hw/tb/axi_bad_manager.v scripts one clean exchange and, for each rule of
`model.chip.rtl_defs.AxiRule`, the same exchange with that rule broken once, at a documented cycle.
The checker (hw/tb/axi_checker.v) must stay silent on the clean one and name each broken one
exactly: its cycle, its channel and its rule, as its first violation. The expected verdicts
below are the script's header, written out again.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from model.chip.rtl_defs import AxiChannel, AxiRule
from verif.kit.clock import start_clock
from verif.tests.blocks.block_tb import begin, failure

SCRIPT_CYCLES = 12  # every script is over by then

# rule broken: (cycle, channel) the checker must report
BROKEN = {
    AxiRule.VALID_DROPPED: (3, AxiChannel.AR),
    AxiRule.PAYLOAD_CHANGED: (5, AxiChannel.W),
    AxiRule.BURST_SHAPE: (2, AxiChannel.AR),
    AxiRule.CROSSES_4K: (3, AxiChannel.AW),
    AxiRule.WLAST: (5, AxiChannel.W),
    AxiRule.EXTRA_B: (3, AxiChannel.B),
    AxiRule.RLAST: (4, AxiChannel.R),
    AxiRule.EXTRA_R: (1, AxiChannel.R),
    AxiRule.READS_OUTSTANDING: (4, AxiChannel.AR),
}


def verdict(dut) -> str:
    """The checker's first violation in words (what a failing run's message says)."""
    if int(dut.violations.value) == 0:
        return "no violation"
    return (f"cycle {int(dut.first_cycle.value)}: channel "
            f"{AxiChannel(int(dut.first_channel.value)).name}, rule "
            f"{AxiRule(int(dut.first_rule.value)).name}")


async def run_script(dut, fault: AxiRule) -> str:
    dut.fault.value = int(fault)
    dut.rst.value = 1
    for _ in range(2):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    for _ in range(SCRIPT_CYCLES):
        await RisingEdge(dut.clk)
    await ReadOnly()
    found = verdict(dut)
    await RisingEdge(dut.clk)
    return found


@cocotb.test()
async def axi_checker_names_each_broken_rule(dut):
    """The clean exchange passes; each broken one is named with its cycle, channel and rule."""
    begin(dut)
    dut.fault.value = 0
    start_clock(dut)
    clean = await run_script(dut, AxiRule.NONE)
    assert clean == "no violation", failure(f"the clean exchange: {clean}")
    assert set(BROKEN) == set(AxiRule) - {AxiRule.NONE}, "a rule has no negative test"
    for rule, (cycle, channel) in BROKEN.items():
        got = await run_script(dut, rule)
        want = f"cycle {cycle}: channel {channel.name}, rule {rule.name}"
        assert got == want, failure(f"breaking {rule.name}: expected {want}, got {got}")
        dut._log.info("broken %s: %s", rule.name, got)
