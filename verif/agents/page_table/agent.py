"""The page-table agent: the host's paged KV cache as a UVM agent.

There are no pins: the driver owns the PageTable and the step hosts on it, and the analysis port
publishes every finished operation for coverage.
"""

from __future__ import annotations

from pyuvm import uvm_agent, uvm_sequencer

from verif.agents.page_table.driver import PageTableDriver


class PageTableAgent(uvm_agent):
    """Sequencer and driver for page-table operations; `ap` publishes each one done."""

    def build_phase(self) -> None:
        super().build_phase()
        self.sequencer = uvm_sequencer("sequencer", self)
        self.driver = PageTableDriver("driver", self)

    def connect_phase(self) -> None:
        self.driver.seq_item_port.connect(self.sequencer.seq_item_export)
        self.ap = self.driver.ap
