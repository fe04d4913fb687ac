"""The chip agent's monitor and its transaction: what the chip reports after each run.

On each rising edge of done, one backdoor read of the status, the counters and the output region,
after the write monitor has published the run's writes, so that the scoreboard holds them all when
the observation arrives. Everything observed comes from the RTL after done, never from the
reference model: a chip-side coverage hole means the hardware did not do it."""

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
    """One run of the chip, as observed at its pins and memory after done.

    An X or Z is not raised here, where the step is unknown: it travels in ``unknown``, and the
    scoreboard raises it as UnknownValue with its step."""

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
