"""The scoreboard: every chip run predicted once by the reference machine and compared exactly.

A run's observation is paired with the oldest unpaired item and the writes since the previous run,
and compared at once: error code and pc, every written word (a stray write is named by address),
the named outputs, every counter. The first difference is raised, not logged: pyuvm's logger.error
would not fail the test. check_phase refuses a run that compared nothing."""

from __future__ import annotations

import numpy as np
from pyuvm import ConfigDB, uvm_subscriber, uvm_tlm_analysis_fifo

from model.chip import machine
from model.chip.machine import counter_differences
from model.compiler.layout import Layout
from verif.agents.chip.config import CHIP_CFG, ChipAgentConfig
from verif.agents.chip.items import ChipRunItem, StepItem
from verif.agents.chip.monitor import ChipObservation
from verif.agents.chip.write_monitor import MemWrite, final_values, logged_write, unknown_write
from verif.kit.bfm import PHASE_ENTRY
from verif.kit.compare import (
    FIRST_DIFFERENCE,
    first_memory_difference,
    first_write_difference,
)
from verif.kit.failure_point import FailurePoint, LocatedError
from verif.kit.memory import UnknownValue
from verif.kit.profiling import PROFILE
from verif.runs.record import CheckedStep
from verif.scoreboard.locate import ChipLogs, Located, Phase, locate


class ScoreboardMismatch(LocatedError):
    """The chip and the reference machine disagree: the first difference and wrong instruction."""


def output_name(layout: Layout | None, address: int) -> str:
    """The output word at ``address`` by name, e.g. logits[r2][i] (request 2's; no request in a
    layout of one), 'outside the outputs', or '' for a bare program's memory."""
    if layout is None:
        return ""
    one = layout.max_batch == 1
    for name, base, size in (("logits", layout.logits, layout.vocab), ("tokens", layout.tokens, 1),
                             ("k_new", layout.k_new, layout.dim),
                             ("v_new", layout.v_new, layout.dim)):
        request, offset = divmod(address - base, size)
        if address >= base and request < layout.max_batch:
            label = ("token" if size == 1 else name) if one else f"{name}[r{request}]"
            return label + ("" if size == 1 else f"[{offset}]")
    return "outside the outputs"


class Scoreboard(uvm_subscriber):
    """Subscribes to the monitor; items and writes queue up until their run ends."""

    def build_phase(self) -> None:
        self.cfg: ChipAgentConfig = ConfigDB().get(self, "", CHIP_CFG)
        self.items = uvm_tlm_analysis_fifo("items", self)
        self.item_export = self.items.analysis_export
        self.writes = uvm_tlm_analysis_fifo("writes", self)
        self.write_export = self.writes.analysis_export
        self.runs_checked = 0

    def write(self, observation: ChipObservation) -> None:
        """One chip run ended: compare it with its item's prediction now."""
        ok, item = self.items.try_get()
        assert ok, f"scoreboard: the chip ran with no item driven\n{self.cfg.recorder.where()}"
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
            f"scoreboard: {self.items.used()} runs were driven but never ended\n"
            + self.cfg.recorder.where())
        ok, stray = self.writes.try_peek()
        assert not ok, (
            f"scoreboard: the chip wrote {self.writes.used()} words after its last run ended,"
            f" the first: {stray}\n" + self.cfg.recorder.where())
        assert self.runs_checked > 0, (
            "scoreboard: no chip run was compared: the test checked nothing\n"
            + self.cfg.recorder.where())

    def check(self, item: ChipRunItem, observation: ChipObservation,
              writes: list[MemWrite]) -> None:
        unknown = observation.unknown or unknown_write(writes)
        if unknown:
            self.record(item, observation, mismatches=1)
            image = self.cfg.recorder.keep_image(item.image())
            raise UnknownValue(f"{item.where()}: {unknown}\n  the run's memory image, to replay "
                               f"it: {image}\n{self.cfg.recorder.where()}")
        with PROFILE.section("scoreboard"):
            problems = self.differences(item, observation, writes)
        self.record(item, observation, mismatches=len(problems))
        if problems:
            located = self.locate(item, observation, writes)
            image = self.cfg.recorder.keep_image(item.image())
            located.lines.append(f"the run's memory image, to replay it: {image}")
            raise ScoreboardMismatch(self.report(item, problems, located), located.point)
        self.runs_checked += 1

    def differences(self, item: ChipRunItem, observation: ChipObservation,
                    writes: list[MemWrite]) -> list[str]:
        """Every difference, most telling first; empty when the chip matches exactly."""
        expected = machine.run(item.image(), self.cfg.chip)
        got = observation.status
        problems = []
        if (got.error, got.error_pc) != (int(expected.error), expected.error_pc):
            problems.append(f"error code: expected {expected.error.name} at {expected.error_pc},"
                            f" got {got.error} at {got.error_pc}")
        layout = self.cfg.layout if isinstance(item, StepItem) else None

        def name_of(address: int) -> str:
            return output_name(layout, address)

        if layout is not None:
            start = layout.outputs[0]
            problems.append(first_memory_difference(
                self.expected_outputs(expected, observation), observation.outputs, start,
                name_of))
        problems.append(first_write_difference(expected.writes(), final_values(writes), name_of))
        return [p for p in problems if p] + counter_differences(expected.counters, got.counters)

    def expected_outputs(self, expected: machine.RunResult,
                         observation: ChipObservation) -> np.ndarray:
        """The output region as the reference machine left it where its program stored; the
        words it did not store hold an earlier run's, not this run's to compare."""
        start, end = self.cfg.layout.outputs
        stored = np.zeros(end - start, dtype=bool)
        stored[[a - start for a in expected.written if start <= a < end]] = True
        return np.where(stored, expected.ext[start:end], observation.outputs)

    def locate(self, item: ChipRunItem, observation: ChipObservation,
               writes: list[MemWrite]) -> Located:
        """The first wrong instruction, from the harness's logs if it keeps them; a locator that
        fails says so in the report, which still raises the run's first difference."""
        bfm = self.cfg.bfm
        if not bfm.records:
            return Located(FailurePoint(where=item.where()), [])
        try:
            return self.locate_from_logs(item, observation, writes)
        except Exception as error:  # the mismatch must still be reported
            return Located(FailurePoint(where=item.where()),
                           [f"not located: the locator failed ({type(error).__name__}: {error})"])

    def locate_from_logs(self, item: ChipRunItem, observation: ChipObservation,
                         writes: list[MemWrite]) -> Located:
        bfm = self.cfg.bfm
        sram, phases, complete = bfm.run_logs()
        logs = ChipLogs(sram=[logged_write(entry) for entry in sram], ext=writes,
                        phases=[Phase.of(PHASE_ENTRY.values(entry)) for entry in phases],
                        sram_complete=complete)
        status = observation.status
        return locate(item.image(), self.cfg.chip, logs, (status.error, status.error_pc),
                      status.counters, bfm.time_ns, item.where())

    def report(self, item: ChipRunItem, problems: list[str], located: Located) -> str:
        lines = [f"scoreboard: {item.where()} differs from the reference machine",
                 f"  {FIRST_DIFFERENCE}: {problems[0]}"]
        lines += [f"  also: {problem}" for problem in problems[1:]]
        lines += [f"  located: {line}" for line in located.lines]
        if item.listing():
            lines += ["  program:", item.listing()]
        return "\n".join(lines) + "\n" + self.cfg.recorder.where()

    def record(self, item: ChipRunItem, observation: ChipObservation, mismatches: int) -> None:
        """Keep the step for the result file; of bare programs (hundreds) only the cycles each
        waited on memory (``program_waits``)."""
        status = observation.status  # None when a status port was X (Icarus)
        if not isinstance(item, StepItem):
            if status is not None:
                self.cfg.recorder.extra.setdefault("program_waits", []).append(status.wait)
            return
        results = (item.read_results(observation.outputs, status.counters, self.cfg.bfm.memory.read)
                   if status else None)
        self.cfg.recorder.steps.append(CheckedStep(
            decode=item.label, step=item.step, context=item.context, token_in=item.token,
            token_out=results[0].token if results else -1,
            counters=(status.counters.as_dict() | {"wait": status.wait}) if status else {},
            outputs=observation.outputs.tolist(), mismatches=mismatches,
            new_rows=[results[0].k_new.tolist(), results[0].v_new.tolist()] if results else []))
