"""The chip agent's monitor: after each done, what the chip reports, onto an analysis port.

One trigger per run (the rising edge of done), then backdoor reads of the status ports, the
cycle and event counters (ev_ops, ev_dma_words, ev_sm_max_len, ev_sm_range among them: what the
chip-side coverage samples) and the output region. An X or Z is not raised here but carried in
the observation, so the scoreboard reports it with the step it belongs to.
"""

from __future__ import annotations

import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge
from cocotb.utils import get_sim_time
from pyuvm import ConfigDB, uvm_analysis_port, uvm_monitor

from verif.chip_bfm import UnknownValue
from verif.chip_observation import ChipObservation
from verif.env_config import CFG_KEY, DecodeEnvConfig
from verif.failures import recording_failures
from verif.profiling import PROFILE


class ChipMonitor(uvm_monitor):
    """Publishes one ChipObservation per rising edge of done."""

    def build_phase(self) -> None:
        self.cfg: DecodeEnvConfig = ConfigDB().get(self, "", CFG_KEY)
        self.ap = uvm_analysis_port("ap", self)
        self.runs = 0

    @recording_failures
    async def run_phase(self) -> None:
        done = self.cfg.bfm.dut.done
        while True:
            await RisingEdge(done)
            await ReadOnly()
            with PROFILE.section("chip_monitor"):
                observation = self.observe()
            self.runs += 1
            self.ap.write(observation)

    def observe(self) -> ChipObservation:
        bfm, layout = self.cfg.bfm, self.cfg.layout
        try:
            status = bfm.read_status()
            outputs = bfm.read_words(layout.logits, layout.end - layout.logits)
        except UnknownValue as err:
            return ChipObservation(None, layout.logits, np.zeros(0, np.uint32), unknown=str(err))
        return ChipObservation(status, layout.logits, outputs,
                               sim_time_ns=int(get_sim_time("ns")))
