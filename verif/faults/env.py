"""The fault campaign's env: a chip agent whose driver injects (verif.faults.injector) and
whose monitor reports the protocol checker instead of raising; the sequence classifies."""

from __future__ import annotations

from pyuvm import ConfigDB, uvm_agent, uvm_env, uvm_sequencer

from verif.agents.chip.config import CHIP_CFG
from verif.agents.chip.write_monitor import ExtWriteMonitor
from verif.env.config import CFG_KEY, EnvConfig
from verif.faults.injector import FaultDriver, FaultMonitor


class FaultAgent(uvm_agent):
    """The chip agent with the injecting driver."""

    def build_phase(self) -> None:
        self.monitor = FaultMonitor("monitor", self)
        self.write_monitor = ExtWriteMonitor("write_monitor", self)
        self.sequencer = uvm_sequencer("sequencer", self)
        self.driver = FaultDriver("driver", self)

    def connect_phase(self) -> None:
        self.driver.seq_item_port.connect(self.sequencer.seq_item_export)
        self.monitor.ap.connect(self.driver.observations.analysis_export)
        self.write_monitor.ap.connect(self.driver.writes.analysis_export)
        self.driver.write_monitor = self.write_monitor


class FaultEnv(uvm_env):
    def build_phase(self) -> None:
        self.cfg: EnvConfig = ConfigDB().get(self, "", CFG_KEY)
        ConfigDB().set(self, "*", CHIP_CFG, self.cfg.chip_agent)
        self.agent = FaultAgent("chip_agent", self)
