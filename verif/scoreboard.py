"""The scoreboard: every chip run predicted once by the reference machine and compared exactly.

The chip driver publishes each StepItem as it starts it; the write monitor publishes each word
the chip writes on its memory port as it is written; the monitor publishes what the chip
reported after done. The observation's `write` pairs it with the oldest unpaired item and with
every write received since the previous run ended (a run writes only between its start and its
done, at least a cycle before done rises, so all of its writes have arrived and none of the
next run's can have), runs the item's program on the item's memory image through model.machine
(the only prediction of that run) and compares at once, in the monitor's own call: the error
code, every word of the output region (logits, token, k_new, v_new, by name), the words written
(every address the chip wrote and the reference machine's STOREs wrote, the same set, each with
the same final value: a stray write anywhere in memory is named by its address) and every
counter. The first difference is raised with the step, the address or counter, expected and
got, the seed and the waveform path, before anything else sees the run: pyuvm's logger.error
would not fail the test. An X or Z on any output, or on the address or data of a write, is
raised as UnknownValue. check_phase refuses a run that compared nothing, left an item unpaired
or saw the chip write after its last run ended.
"""

from __future__ import annotations

import numpy as np
from pyuvm import ConfigDB, uvm_subscriber, uvm_tlm_analysis_fifo

from model import machine
from model.batch_compiler import BatchLayout
from model.compiler import Layout
from verif.chip_bfm import UnknownValue
from verif.chip_monitor import ChipObservation
from verif.compare import counter_differences, first_named_difference, first_write_difference
from verif.env_config import CFG_KEY, DecodeEnvConfig
from verif.ext_write_monitor import MemWrite, final_values, unknown_write
from verif.profiling import PROFILE
from verif.run_record import CheckedStep
from verif.step_item import StepItem


class ScoreboardMismatch(AssertionError):
    """The chip and the reference machine disagree; the message is the first difference."""


def output_name(layout: Layout | BatchLayout, address: int) -> str:
    """The output-region word at `address`, by name: logits[i], token, k_new[i] or v_new[i];
    in a batch layout with the request's slot first: logits[r2][i], token[r2], ..."""
    batch = getattr(layout, "max_batch", 0)
    tokens = layout.tokens if batch else layout.token
    for name, base, size in (("logits", layout.logits, layout.vocab), ("token", tokens, 1),
                             ("k_new", layout.k_new, layout.dim),
                             ("v_new", layout.v_new, layout.dim)):
        request, offset = divmod(address - base, size)
        if 0 <= request < max(batch, 1) and address >= base:
            slot = f"[r{request}]" if batch else ""
            return f"{name}{slot}" + ("" if size == 1 else f"[{offset}]")
    return "outside the outputs"


class DecodeScoreboard(uvm_subscriber):
    """Subscribes to the monitor; items and writes queue up until their run ends.

    The driver's items wait in `items`, the write monitor's writes in `writes`.
    """

    def build_phase(self) -> None:
        self.cfg: DecodeEnvConfig = ConfigDB().get(self, "", CFG_KEY)
        self.items = uvm_tlm_analysis_fifo("items", self)
        self.item_export = self.items.analysis_export
        self.writes = uvm_tlm_analysis_fifo("writes", self)
        self.write_export = self.writes.analysis_export
        self.steps_checked = 0

    def write(self, observation: ChipObservation) -> None:
        """One chip run ended: compare it with its item's prediction now."""
        ok, item = self.items.try_get()
        assert ok, f"scoreboard: the chip ran with no step driven\n{self.cfg.where()}"
        self.check(item, observation, self.run_writes())

    def run_writes(self) -> list[MemWrite]:
        """Every write received since the previous run ended, in bus order: this run's."""
        writes = []
        ok, write = self.writes.try_get()
        while ok:
            writes.append(write)
            ok, write = self.writes.try_get()
        return writes

    def check_phase(self) -> None:
        assert self.items.used() == 0, (
            f"scoreboard: {self.items.used()} steps were driven but their runs never ended\n"
            + self.cfg.where())
        ok, stray = self.writes.try_peek()
        assert not ok, (
            f"scoreboard: the chip wrote {self.writes.used()} words after its last run ended,"
            f" the first: {stray}\n" + self.cfg.where())
        assert self.steps_checked > 0, (
            "scoreboard: no decode step was compared: the test checked nothing\n"
            + self.cfg.where())

    def check(self, item: StepItem, observation: ChipObservation,
              writes: list[MemWrite]) -> None:
        unknown = observation.unknown or unknown_write(writes)
        if unknown:
            self.record(item, observation, mismatches=1)
            raise UnknownValue(f"{item.where()}: {unknown}\n{self.cfg.where()}")
        with PROFILE.section("scoreboard"):
            problems = self.differences(item, observation, writes)
        self.record(item, observation, mismatches=len(problems))
        if problems:
            raise ScoreboardMismatch(self.report(item, problems))
        self.steps_checked += 1

    def differences(self, item: StepItem, observation: ChipObservation,
                    writes: list[MemWrite]) -> list[str]:
        """Every difference, most telling first; empty when the chip matches exactly."""
        expected = machine.run(item.image(), self.cfg.chip)
        got = observation.status
        problems = []
        if (got.error, got.error_pc) != (int(expected.error), expected.error_pc):
            problems.append(f"error code: expected {expected.error.name} at {expected.error_pc},"
                            f" got {got.error} at {got.error_pc}")
        layout = self.cfg.layout

        def name_of(address: int) -> str:
            return output_name(layout, address)

        memory = first_named_difference(self.expected_outputs(expected, observation),
                                        observation.outputs, layout.logits, name_of)
        written = first_write_difference(expected.writes(), final_values(writes), name_of)
        problems += [line for line in (memory, written) if line]
        return problems + counter_differences(expected.counters, got.counters)

    def expected_outputs(self, expected: machine.RunResult,
                         observation: ChipObservation) -> np.ndarray:
        """The output region as the reference machine left it, where its program stored.

        A batch smaller than the layout's leaves the slots it does not use as an earlier run
        left them, in the chip as in the image's zeros: those words are not this run's to
        compare (the write check still sees every word the chip wrote).
        """
        base, end = self.cfg.layout.logits, self.cfg.layout.end
        stored = np.zeros(end - base, dtype=bool)
        stored[[a - base for a in expected.written if base <= a < end]] = True
        return np.where(stored, expected.ext[base:end], observation.outputs)

    def report(self, item: StepItem, problems: list[str]) -> str:
        lines = [f"scoreboard: {item.where()} differs from the reference machine",
                 f"  first difference: {problems[0]}"]
        lines += [f"  also: {problem}" for problem in problems[1:]]
        return "\n".join(lines) + "\n" + self.cfg.where()

    def record(self, item: StepItem, observation: ChipObservation, mismatches: int) -> None:
        """Keep the step for the result file; a differing step keeps its count of differences."""
        status = observation.status  # None when a status port was X (Icarus)
        outputs = item.read_outputs(observation) if status else None
        token_out = getattr(outputs, "token", -1)
        self.cfg.recorder.steps.append(CheckedStep(
            decode=item.decode, step=item.step, context=item.context, token_in=item.token,
            token_out=token_out,
            counters=(status.counters.as_dict() | {"wait": status.wait}) if status else {},
            outputs=observation.outputs.tolist(), mismatches=mismatches))
