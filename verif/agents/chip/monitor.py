"""The chip agent's monitor and its transaction: what the chip reports after each run.

After each done, after the write monitor has published the run's writes, one backdoor read of the
status, the counters and the outputs: all from the RTL, never from the reference model."""

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
    """One run of the chip, as observed after done; an X or Z travels in ``unknown`` to the
    scoreboard, which knows the step."""

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
