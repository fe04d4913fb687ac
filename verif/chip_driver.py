"""The chip agent's driver: load, start, await done. No per-cycle Python between the two.

Memory is loaded in bulk through the mirror: the program and the weights only when the program
changes, the input token's x every step (the page-table agent writes the gathered kc/vc rows).
The watchdog is the program's closed-form cycle cost (hw/ISA.md) plus a margin.
"""

from __future__ import annotations

from pyuvm import ConfigDB, uvm_analysis_port, uvm_driver, uvm_tlm_analysis_fifo

from model.compiler import CompiledStep
from model.isa import ChipConfig, disassemble, exec_cycles, overhead_cycles
from verif.chip_bfm import ChipHung
from verif.env_config import CFG_KEY, DecodeEnvConfig
from verif.failures import recording_failures
from verif.profiling import PROFILE
from verif.step_item import BatchStepItem, StepItem, StepResponse


def cycle_budget(program: CompiledStep, cfg: ChipConfig) -> int:
    """The program's cycle count by ISA.md's closed form (no data needed, no simulation)."""
    total = 0
    for instr in disassemble(program.words):
        total += overhead_cycles(cfg)
        try:
            total += exec_cycles(instr, cfg)
        except ValueError:  # an illegal opcode stops the run in its check
            break
    return total


class ChipDriver(uvm_driver):
    """Drives StepItems; answers each with the monitor's observation of that run.

    The scoreboard compares a run inside the monitor's write, so it has done so before this
    driver's fifo hands the observation over; an observation with an unknown value has no
    decoded outputs.
    """

    def build_phase(self) -> None:
        self.cfg: DecodeEnvConfig = ConfigDB().get(self, "", CFG_KEY)
        self.ap = uvm_analysis_port("ap", self)  # each item as it is started
        self.observations = uvm_tlm_analysis_fifo("observations", self)
        self.loaded: CompiledStep | None = None
        self.budget = 0  # cycle_budget of the loaded program

    @recording_failures
    async def run_phase(self) -> None:
        while True:
            item = await self.seq_item_port.get_next_item()
            response = await self.drive(item)
            self.seq_item_port.item_done(response)

    async def drive(self, item: StepItem) -> StepResponse:
        with PROFILE.section("chip_driver"):
            self.load(item)
            cost = self.budget
        self.ap.write(item)
        await self.start_and_wait(item, cost)
        observation = await self.observations.get()
        with PROFILE.section("chip_driver"):
            outputs = (item.read_outputs(observation)
                       if observation.status is not None else None)
            response = StepResponse(f"{item.get_name()}_rsp", observation, outputs)
            response.set_id_info(item)
        return response

    def load(self, item: StepItem | BatchStepItem) -> None:
        """Program and weights when the program changes; the item's host inputs every run."""
        program, memory, layout = item.program, self.cfg.memory, self.cfg.layout
        if program.layout != layout:
            raise ValueError(f"{item.where()}: the program's layout differs from the env's")
        if program is not self.loaded:
            memory.write(layout.program, program.words)
            memory.write(layout.weights, program.weight_words)
            self.loaded = program
            self.budget = cycle_budget(program, self.cfg.chip)
        for address, words in item.host_inputs().items():
            memory.write(address, words)

    async def start_and_wait(self, item: StepItem, cost: int) -> None:
        """Pulse start and await done, at most `cost` + margin cycles."""
        limit = cost + self.cfg.watchdog_margin
        try:
            await self.cfg.bfm.run(limit)
        except ChipHung as err:
            raise ChipHung(f"watchdog: {item.where()}: {err} (closed-form cost {cost} + margin "
                           f"{self.cfg.watchdog_margin})\n{self.cfg.where()}") from None
