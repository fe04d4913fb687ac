"""The chip agent: sequencer, driver and the two monitors of one chip_harness.

The monitors are always built, the sequencer and the driver only when the agent is active, so
that a passive agent observes a chip someone else drives.
"""

from __future__ import annotations

from pyuvm import uvm_agent, uvm_sequencer

from verif.agents.chip.driver import ChipDriver
from verif.agents.chip.monitor import ChipMonitor
from verif.agents.chip.write_monitor import ExtWriteMonitor


class ChipAgent(uvm_agent):
    """Drives chip runs and publishes what the chip reports after each done."""

    def build_phase(self) -> None:
        super().build_phase()
        self.monitor = ChipMonitor("monitor", self)
        self.write_monitor = ExtWriteMonitor("write_monitor", self)
        if self.active():
            self.sequencer = uvm_sequencer("sequencer", self)
            self.driver = ChipDriver("driver", self)

    def connect_phase(self) -> None:
        self.monitor.write_monitor = self.write_monitor
        if self.active():
            self.driver.seq_item_port.connect(self.sequencer.seq_item_export)
            self.monitor.ap.connect(self.driver.observations.analysis_export)
