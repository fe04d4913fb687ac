"""The chip agent's sequence items: one chip run in, the chip's answer out.

A `StepItem` (one request's decode step) or a `BatchStepItem` (a serving step: B requests in
one batched program) carries the program and the run's inputs, never an expected value: the
scoreboard predicts from `image()`. Both tell the driver which words the host writes
(`host_inputs`) and how to read the chip's outputs (`read_outputs`). The driver answers with a
`StepResponse` linked to the request by `set_id_info`, so the sequence can pick its own.
"""

from __future__ import annotations

import numpy as np
from pyuvm import uvm_sequence_item

from model.batch_compiler import BatchResult
from model.compiler import CompiledStep
from model.serving import BatchPlan
from model.step_rule import StepPlan
from verif.chip_monitor import ChipObservation, DecodedOutputs, decode_outputs


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

    def host_inputs(self) -> dict[int, np.ndarray]:
        """The words the chip driver writes each run: x (the page-table agent writes kc/vc)."""
        return {self.program.layout.x: np.asarray(self.x)}

    def read_outputs(self, observation: ChipObservation) -> DecodedOutputs:
        return decode_outputs(self.program.layout, observation)

    def where(self) -> str:
        return f"decode {self.decode} step {self.step} (context {self.context})"

    def __str__(self) -> str:
        return f"StepItem({self.where()}, token {self.token})"


class BatchStepItem(uvm_sequence_item):
    """One serving step for the chip: B requests' decode steps in one batched program."""

    def __init__(self, name: str, decode: str, plan: BatchPlan):
        super().__init__(name)
        self.decode = decode  # the serving run's label, for reports
        self.plan = plan  # model.serving's plan of the step (requests, program, inputs)
        self.program = plan.program
        self.token = -1  # a batch has one input token per request (see plan.requests)

    @property
    def step(self) -> int:
        return self.plan.step + 1  # scheduler steps count from 0

    @property
    def context(self) -> int:
        return max(self.program.contexts)

    @property
    def batch(self) -> int:
        return len(self.program.contexts)

    def image(self) -> np.ndarray:
        return self.plan.image()

    def host_inputs(self) -> dict[int, np.ndarray]:
        """The x rows (the page-table agent wrote each request's cached rows, or its block
        table in chip gather)."""
        return self.program.x_words(self.plan.inputs()[0])

    def read_outputs(self, observation: ChipObservation) -> BatchResult:
        layout = self.program.layout
        ext = np.zeros(layout.end, dtype=np.uint32)
        ext[observation.out_base : observation.out_base + observation.outputs.size] = (
            observation.outputs)
        return self.program.read_result(ext, observation.status.counters)

    def where(self) -> str:
        return (f"serving {self.decode} step {self.step} (batch of {self.batch}, contexts "
                f"{list(self.program.contexts)})")

    def __str__(self) -> str:
        return f"BatchStepItem({self.where()})"


class StepResponse(uvm_sequence_item):
    """The chip's answer to one StepItem: what the monitor observed, decoded."""

    def __init__(self, name: str, observation: ChipObservation,
                 outputs: DecodedOutputs | BatchResult | None):
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
        return f"StepResponse(error {self.error}, {self.counters})"
