"""The chip agent's sequence items: one decode step in, the chip's answer out.

A `StepItem` carries the program and the step's inputs, never an expected value: the scoreboard
predicts. The driver answers with a `StepResponse` (outputs, error, counters) linked to the
request by `set_id_info`, so the sequence can pick its own response.
"""

from __future__ import annotations

import numpy as np
from pyuvm import uvm_sequence_item

from model.compiler import CompiledStep
from model.step_rule import StepPlan
from verif.chip_monitor import ChipObservation, DecodedOutputs


class StepItem(uvm_sequence_item):
    """One decode step for the chip: the program for its context and the gathered inputs."""

    def __init__(self, name: str, decode: str, plan: StepPlan, token: int,
                 program: CompiledStep, x: np.ndarray, kc: np.ndarray, vc: np.ndarray,
                 window: int | None = None, page_size: int = 0):
        super().__init__(name)
        self.decode = decode  # the decode's label, for reports
        self.plan = plan  # the step rule's plan this step follows
        self.token = token  # the input token
        self.program = program
        self.x, self.kc, self.vc = x, kc, vc
        self.window = window
        self.page_size = page_size

    @property
    def step(self) -> int:
        return self.plan.step

    @property
    def context(self) -> int:
        return self.program.context

    def image(self) -> np.ndarray:
        """The external memory the chip should see: the reference machine runs exactly this."""
        return self.program.image(self.x, self.kc, self.vc)

    def where(self) -> str:
        return f"decode {self.decode} step {self.step} (context {self.context})"

    def __str__(self) -> str:
        return f"StepItem({self.where()}, token {self.token})"


class StepResponse(uvm_sequence_item):
    """The chip's answer to one StepItem: what the monitor observed, decoded."""

    def __init__(self, name: str, observation: ChipObservation,
                 outputs: DecodedOutputs | None):
        super().__init__(name)
        self.observation = observation
        self.outputs = outputs  # None when an output was X or Z (the scoreboard raised)

    @property
    def error(self) -> int:
        return self.observation.status.error

    @property
    def counters(self):
        return self.observation.status.counters

    def __str__(self) -> str:
        return f"StepResponse(token {self.outputs.token}, error {self.error}, {self.counters})"
