"""The chip agent's monitor and its transaction: what the chip reports after each run.

One trigger per run (the rising edge of done), then one backdoor read of the status, the cycle
and event counters (what the chip-side coverage samples) and, when the env has a step layout,
its output region: the only place the testbench reads the chip's status. Just before it
publishes the run, it has the agent's write monitor publish the run's writes, so that the
scoreboard holds every write of a run when the run's observation arrives. An X or Z is not
raised here, where the step is unknown: it travels in the observation, and the scoreboard
raises it as UnknownValue with its step.

Everything in a ChipObservation comes from the RTL after done; nothing comes from the reference
model or is inferred from the program, so a chip-side coverage hole means the hardware did not
do it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from cocotb.triggers import RisingEdge
from pyuvm import ConfigDB, uvm_analysis_port, uvm_monitor

from verif.agents.chip.config import CHIP_CFG, ChipAgentConfig
from verif.kit.bfm import ChipStatus
from verif.kit.failures import recording_failures
from verif.kit.memory import UnknownValue
from verif.kit.profiling import PROFILE


@dataclass
class ChipObservation:
    """One run of the chip, as observed at its pins and memory after done."""

    status: ChipStatus | None  # None when a status port was X or Z (see `unknown`)
    outputs: np.ndarray  # the step layout's output region, uint32 (empty without a layout)
    unknown: str | None = None  # which output held X or Z (Icarus only)


class ChipMonitor(uvm_monitor):
    """Publishes one ChipObservation per rising edge of done."""

    def build_phase(self) -> None:
        self.cfg: ChipAgentConfig = ConfigDB().get(self, "", CHIP_CFG)
        self.ap = uvm_analysis_port("ap", self)
        self.write_monitor = None  # the agent's ExtWriteMonitor, set in its connect_phase

    @recording_failures
    async def run_phase(self) -> None:
        done = self.cfg.bfm.dut.done
        while True:
            await RisingEdge(done)
            await self.cfg.bfm.settle()
            if self.write_monitor is not None:
                self.write_monitor.publish_run()
            with PROFILE.section("chip_monitor"):
                observation = self.observe()
            self.ap.write(observation)

    def observe(self) -> ChipObservation:
        bfm, layout = self.cfg.bfm, self.cfg.layout
        try:
            status = bfm.read_status()
            outputs = np.zeros(0, np.uint32)
            if layout is not None:
                start, end = layout.outputs
                outputs = bfm.memory.read(start, end - start)
        except UnknownValue as err:
            return ChipObservation(None, np.zeros(0, np.uint32), unknown=str(err))
        return ChipObservation(status, outputs)
