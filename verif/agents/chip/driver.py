"""The chip agent's driver: load, start, await done, with no per-cycle Python between the two.

Memory is loaded through the mirror, which writes only changed words; the watchdog is the
program's closed-form cycle cost plus a margin.
"""

from __future__ import annotations

from dataclasses import replace

from pyuvm import ConfigDB, uvm_analysis_port, uvm_driver, uvm_tlm_analysis_fifo

from model.chip.isa import instruction_at, program_cycles
from verif.agents.chip.config import CHIP_CFG, ChipAgentConfig
from verif.agents.chip.items import ChipResponse, ChipRunItem, StepItem
from verif.kit.bfm import ChipHung
from verif.kit.failures import recording_failures
from verif.kit.profiling import PROFILE


class ChipDriver(uvm_driver):
    """Drives ChipRunItems; answers each with the monitor's observation of that run."""

    def build_phase(self) -> None:
        self.cfg: ChipAgentConfig = ConfigDB().get(self, "", CHIP_CFG)
        self.ap = uvm_analysis_port("ap", self)  # each item as it is started
        self.observations = uvm_tlm_analysis_fifo("observations", self)
        self._costed: tuple[object, int] = (None, 0)  # the last program and its cost

    @recording_failures
    async def run_phase(self) -> None:
        while True:
            item = await self.seq_item_port.get_next_item()
            response = await self.drive(item)
            self.seq_item_port.item_done(response)

    async def drive(self, item: ChipRunItem) -> ChipResponse:
        with PROFILE.section("chip_driver"):
            for address, words in item.loads().items():
                self.cfg.bfm.memory.write(address, words)
            cost = self.budget(item)
        self.ap.write(item)
        await self.start_and_wait(item, cost)
        observation = await self.observations.get()
        with PROFILE.section("chip_driver"):
            results = None
            if isinstance(item, StepItem) and observation.status is not None:
                results = item.read_results(observation.outputs, observation.status.counters,
                                            self.cfg.bfm.memory.read)
            response = ChipResponse(f"{item.get_name()}_rsp", observation, results)
            response.set_id_info(item)
        return response

    def budget(self, item: ChipRunItem) -> int:
        """The program's closed-form cycles, computed once per program (steps repeat one)."""
        program = item.program()
        if program is not self._costed[0]:
            self._costed = (program, program_cycles(program, self.cfg.chip))
        return self._costed[1]

    async def start_and_wait(self, item: ChipRunItem, cost: int) -> None:
        """Pulse start and await done, at most `cost` + margin cycles."""
        limit = cost + self.cfg.watchdog_margin
        try:
            await self.cfg.bfm.run(limit)
        except ChipHung as err:
            self.cfg.recorder.keep_image(item.image())
            point = replace(err.point, instruction=instruction_at(item.program(), err.point.pc),
                            where=item.where())
            raise ChipHung(f"watchdog: {item.where()}: {err} (closed-form cost {cost} + margin "
                           f"{self.cfg.watchdog_margin}); the instruction at pc {point.pc}: "
                           f"{point.instruction}\n{self.cfg.recorder.where()}", point) from None
