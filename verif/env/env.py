"""The env: chip agent, page-table agent, scoreboard and coverage, wired up.

The env hands the chip agent's part of its config to every component below it; every chip run,
whatever sequence started it, goes through the same scoreboard.
"""

from __future__ import annotations

from pyuvm import ConfigDB, uvm_env

from verif.agents.chip.agent import ChipAgent
from verif.agents.chip.config import CHIP_CFG
from verif.agents.page_table.agent import PageTableAgent
from verif.coverage.subscribers import ChipCoverage, PageTableCoverage, StepCoverage
from verif.env.config import CFG_KEY, EnvConfig
from verif.scoreboard.scoreboard import Scoreboard


class ChipEnv(uvm_env):
    """Everything a test needs; a test picks the virtual sequence."""

    def build_phase(self) -> None:
        self.cfg: EnvConfig = ConfigDB().get(self, "", CFG_KEY)
        ConfigDB().set(self, "*", CHIP_CFG, self.cfg.chip_agent)
        self.chip_agent = ChipAgent("chip_agent", self)
        self.pt_agent = PageTableAgent("pt_agent", self)
        self.scoreboard = Scoreboard("scoreboard", self)
        self.step_cov = StepCoverage("step_cov", self)
        self.page_cov = PageTableCoverage("page_cov", self)
        self.chip_cov = ChipCoverage("chip_cov", self)

    def connect_phase(self) -> None:
        driver, monitor = self.chip_agent.driver, self.chip_agent.monitor
        driver.ap.connect(self.scoreboard.item_export)
        monitor.ap.connect(self.scoreboard.analysis_export)
        self.chip_agent.write_monitor.ap.connect(self.scoreboard.write_export)
        driver.ap.connect(self.step_cov.analysis_export)
        monitor.ap.connect(self.chip_cov.analysis_export)
        self.pt_agent.driver.ap.connect(self.page_cov.analysis_export)

    @property
    def chip_sequencer(self):
        return self.chip_agent.sequencer

    @property
    def pt_sequencer(self):
        return self.pt_agent.sequencer
