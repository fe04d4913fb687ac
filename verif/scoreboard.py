"""The scoreboard: every chip step predicted by the reference machine and compared exactly.

The prediction runs the same program on the same memory image (the step item's program and
gathered inputs) through model.machine. Compared: the error code, every word of the output
region (logits, token, k_new, v_new) and all seven counters (five cycle counters, two event
counters). The first difference is raised at once with the step, the address or counter,
expected and got, the seed and the waveform path: pyuvm's logger.error would not fail the test.
check_phase asserts that steps were compared, so a run that checked nothing cannot pass.
"""

from __future__ import annotations

from pyuvm import ConfigDB, uvm_component, uvm_tlm_analysis_fifo

from model import machine
from model.compiler import Layout
from verif.chip_observation import ChipObservation, decode_outputs
from verif.compare import counter_differences, first_named_difference
from verif.env_config import CFG_KEY, DecodeEnvConfig
from verif.failures import recording_failures
from verif.profiling import PROFILE
from verif.run_record import CheckedStep
from verif.step_item import StepItem


class ScoreboardMismatch(AssertionError):
    """The chip and the reference machine disagree; the message is the first difference."""


def output_name(layout: Layout, address: int) -> str:
    """The output-region word at `address`, by name: logits[i], token, k_new[i] or v_new[i]."""
    for name, base, size in (("logits", layout.logits, layout.vocab), ("token", layout.token, 1),
                             ("k_new", layout.k_new, layout.dim),
                             ("v_new", layout.v_new, layout.dim)):
        if base <= address < base + size:
            return name if size == 1 else f"{name}[{address - base}]"
    return "outside the outputs"


class DecodeScoreboard(uvm_component):
    """Pairs each driven StepItem with the monitor's observation of its run, in order."""

    def build_phase(self) -> None:
        self.cfg: DecodeEnvConfig = ConfigDB().get(self, "", CFG_KEY)
        self.items = uvm_tlm_analysis_fifo("items", self)
        self.observations = uvm_tlm_analysis_fifo("observations", self)
        self.item_export = self.items.analysis_export
        self.observation_export = self.observations.analysis_export
        self.steps_checked = 0

    @recording_failures
    async def run_phase(self) -> None:
        while True:
            item = await self.items.get()
            observation = await self.observations.get()
            self.check(item, observation)

    def check_phase(self) -> None:
        self.drain()
        assert self.steps_checked > 0, (
            "scoreboard: no decode step was compared: the test checked nothing\n"
            + self.cfg.where())

    def drain(self) -> None:
        """Compare pairs that arrived after the last objection dropped; none may be unpaired."""
        while self.items.can_get() and self.observations.can_get():
            self.check(self.items.try_get()[1], self.observations.try_get()[1])
        leftover = self.items.used() + self.observations.used()
        assert leftover == 0, (f"scoreboard: {self.items.used()} steps driven and "
                               f"{self.observations.used()} runs observed were never paired")

    def check(self, item: StepItem, observation: ChipObservation) -> None:
        with PROFILE.section("scoreboard"):
            problems = self.differences(item, observation)
        if problems:
            mismatch = ScoreboardMismatch(self.report(item, problems))
            self.record(item, observation, mismatches=len(problems))
            self.cfg.recorder.record_failure(mismatch)
            raise mismatch
        self.steps_checked += 1
        self.record(item, observation)

    def differences(self, item: StepItem, observation: ChipObservation) -> list[str]:
        """Every difference, most telling first; empty when the chip matches exactly."""
        if observation.unknown:
            return [f"X or Z on an output: {observation.unknown}"]
        expected = machine.run(item.image(), self.cfg.chip)
        got = observation.status
        problems = []
        if (got.error, got.error_pc) != (int(expected.error), expected.error_pc):
            problems.append(f"error code: expected {expected.error.name} at {expected.error_pc},"
                            f" got {got.error} at {got.error_pc}")
        layout = self.cfg.layout
        memory = first_named_difference(expected.ext[layout.logits : layout.end],
                                        observation.outputs, layout.logits,
                                        lambda address: output_name(layout, address))
        if memory:
            problems.append(memory)
        return problems + counter_differences(expected.counters, got.counters)

    def report(self, item: StepItem, problems: list[str]) -> str:
        lines = [f"scoreboard: {item.where()} differs from the reference machine",
                 f"  first difference: {problems[0]}"]
        lines += [f"  also: {problem}" for problem in problems[1:]]
        return "\n".join(lines) + "\n" + self.cfg.where()

    def record(self, item: StepItem, observation: ChipObservation, mismatches: int = 0) -> None:
        """Keep the step for the result file; a differing step keeps its count of differences."""
        outputs = decode_outputs(self.cfg.layout, observation)
        status = observation.status  # None when a status port was X (Icarus)
        self.cfg.recorder.steps.append(CheckedStep(
            decode=item.decode, step=item.step, context=item.context, token_in=item.token,
            token_out=outputs.token, counters=status.counters.as_dict() if status else {},
            mismatches=mismatches))
