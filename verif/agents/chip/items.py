"""The chip agent's sequence items: a chip run, and the chip's response to it.

An item carries what the chip's memory must hold, never an expected value: the scoreboard
predicts each run from `image()`, once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from pyuvm import uvm_sequence_item

from model.chip.isa import WORDS_PER_INSTR, Instr, disassemble
from model.chip.machine import Counters, words
from model.compiler.inputs import StepInputs
from model.compiler.program import StepResult


class ChipRunItem(uvm_sequence_item):
    """One run of the chip: what its memory holds, and what a report calls it."""

    def image(self) -> np.ndarray:
        """The whole external memory the run starts from: the reference machine runs this."""
        raise NotImplementedError

    def loads(self) -> dict[int, np.ndarray]:
        """What the chip driver writes before the run, {address: words}."""
        raise NotImplementedError

    def program(self) -> np.ndarray:
        """The program's words (address 0 on): the watchdog's closed-form cost comes from it."""
        raise NotImplementedError

    def where(self) -> str:
        """The run as a failure report names it."""
        raise NotImplementedError

    def listing(self) -> str:
        """The run's instructions, for a report, when they are not a compiled step's."""
        return ""


class StepItem(ChipRunItem):
    """One decode or serving step: its program for B requests and their inputs."""

    def __init__(self, name: str, label: str, step: int, inputs: StepInputs,
                 serving: bool = False):
        super().__init__(name)
        self.serving = serving  # a serving run's step: a report names its requests, even one
        self.label = label  # the decode's or the serving run's label
        self.step = step  # 1-based
        self.inputs = inputs  # each request's plan (model.kv.step_rule.StepPlan) among them
        self._image: np.ndarray | None = None

    @property
    def layout(self):
        return self.inputs.program.layout

    @property
    def context(self) -> int:
        return self.inputs.program.context

    @property
    def batch(self) -> int:
        return self.inputs.program.batch

    @property
    def token(self) -> int:
        """The input token of a solo step (-1 in a batch: one per request)."""
        return self.inputs.requests[0].token if self.batch == 1 else -1

    def image(self) -> np.ndarray:
        if self._image is None:
            self._image = self.inputs.image()
        return self._image

    def program(self) -> np.ndarray:
        return self.inputs.program.words

    def loads(self) -> dict[int, np.ndarray]:
        """The program, the weights and the x rows (the page-table agent writes the rest)."""
        program, layout = self.inputs.program, self.layout
        return {layout.program: program.words, layout.weights: program.weight_words,
                **self.inputs.x_writes()}

    def read_results(self, outputs: np.ndarray, counters: Counters,
                     read: Callable[[int, int], np.ndarray]) -> list[StepResult]:
        """Each request's outputs, from the observed output region and, in chip gather, the new
        rows ``read(address, count)`` from the pools."""
        layout = self.layout
        ext = np.zeros(layout.end, dtype=np.uint32)
        start, end = layout.outputs
        ext[start:end] = outputs
        for address in itertools.chain(*(self.inputs.new_row_addresses() or [])):
            ext[address : address + layout.dim] = read(address, layout.dim)
        return self.inputs.read_results(ext, counters)

    def where(self) -> str:
        contexts = list(self.inputs.contexts)
        if self.batch == 1 and not self.serving:
            return f"{self.label} step {self.step} (context {contexts[0]})"
        slots = ", ".join(f"r{slot} = request {r.rid} at context {r.plan.context}"
                          for slot, r in enumerate(self.inputs.requests))
        return f"{self.label} step {self.step} (batch of {self.batch}: {slots})"

    def __str__(self) -> str:
        return f"StepItem({self.where()})"


class ProgramItem(ChipRunItem):
    """A bare program and its memory image: the whole memory is loaded before it runs."""

    def __init__(self, name: str, description: str, image: np.ndarray, ext_words: int):
        super().__init__(name)
        self.description = description
        self._image = np.zeros(ext_words, dtype=np.uint32)
        self._image[: len(image)] = words(image)

    def image(self) -> np.ndarray:
        return self._image

    def loads(self) -> dict[int, np.ndarray]:
        return {0: self._image}

    def program(self) -> np.ndarray:
        return self._image

    def instructions(self) -> list[Instr]:
        return disassemble(self._image)

    def where(self) -> str:
        return self.description

    def listing(self) -> str:
        return "\n".join(f"    {WORDS_PER_INSTR * i:5d}: {instr}"
                         for i, instr in enumerate(self.instructions()))

    def __str__(self) -> str:
        return f"ProgramItem({self.description})"


class ChipResponse(uvm_sequence_item):
    """The chip's answer to one run: what the monitor observed, and each request's results
    when the run was a step (None when an output held X or Z: the scoreboard raised)."""

    def __init__(self, name: str, observation, results: list[StepResult] | None):
        super().__init__(name)
        self.observation = observation
        self.results = results

    @property
    def error(self) -> int:
        return self.observation.status.error

    @property
    def counters(self) -> Counters:
        return self.observation.status.counters

    def __str__(self) -> str:
        return f"ChipResponse(error {self.error}, {self.counters})"
