"""What a host hands the chip for one step, and the reference machine's run of it.

``StepInputs`` is the one record of a step's inputs, for B requests in either gather mode, that
the reference host, the serving scheduler and the testbench exchange. ``image()`` is the run's
whole external memory: what the reference machine runs and the scoreboard predicts from.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from model.chip import machine
from model.compiler.gather import new_row_addresses
from model.compiler.program import StepProgram, StepResult
from model.kv.step_rule import StepPlan


@dataclass(frozen=True, kw_only=True)
class RequestInputs:
    """One request's part of a step."""

    rid: Hashable
    plan: StepPlan  # the step rule's plan: step, context, rows read, trim point
    token: int  # the input token
    x: np.ndarray  # (dim,) int8 embedding of the input token
    kc: np.ndarray | None = None  # host gather: (context - 1, dim) int8 keys of the rows read
    vc: np.ndarray | None = None  # host gather: the values
    table: np.ndarray | None = None  # chip gather: its block table, header then pages

    def __post_init__(self) -> None:
        rows = self.plan.context - 1
        for name in ("kc", "vc"):
            got = getattr(self, name)
            if got is not None and np.shape(got) != (rows, np.shape(self.x)[0]):
                raise ValueError(f"request {self.rid!r} at context {self.plan.context} takes "
                                 f"{rows} cached rows, got {name} of shape {np.shape(got)}")

    @property
    def host_words(self) -> int:
        """Words the host writes for this request's cached rows (the rows, or its block table)."""
        if self.table is not None:
            return int(self.table.size)
        return int(self.kc.size + self.vc.size)


@dataclass(frozen=True, kw_only=True)
class StepInputs:
    """One chip run: a program and its requests' inputs (the module docstring)."""

    program: StepProgram | None  # None: an idle serving step, nothing runs
    requests: tuple[RequestInputs, ...] = ()
    pair: tuple[int, int] | None = None  # chip gather: the page copy the chip makes first
    pool_words: np.ndarray | None = field(default=None, repr=False)  # chip gather: the pools

    @property
    def contexts(self) -> tuple[int, ...]:
        return tuple(r.plan.context for r in self.requests)

    def x_writes(self) -> dict[int, np.ndarray]:
        """The x rows, {address: words}: the program's own inputs."""
        return {self.program.layout.x: machine.words(np.concatenate([r.x for r in
                                                                      self.requests]))}

    def cache_writes(self) -> dict[int, np.ndarray]:
        """What the host writes for the cached rows, {address: words}."""
        layout, writes = self.program.layout, {}
        for i, request in enumerate(self.requests):
            if request.table is not None:
                writes[layout.table(i)] = machine.words(request.table)
            elif request.plan.context > 1:
                writes[layout.kc_slot(i)] = machine.words(request.kc.reshape(-1))
                writes[layout.vc_slot(i)] = machine.words(request.vc.reshape(-1))
        if self.pair is not None:
            writes[layout.pair] = machine.words(np.asarray(self.pair))
        return writes

    @property
    def host_words(self) -> int:
        """Words the host writes for the cached rows this step."""
        return sum(r.host_words for r in self.requests) + (2 if self.pair else 0)

    def image(self) -> np.ndarray:
        """The whole external memory of the run: program, weights, inputs, chip gather's pools."""
        if self.program is None:
            raise ValueError("an idle step has no chip run")
        layout = self.program.layout
        ext = np.zeros(layout.end, dtype=np.uint32)
        ext[: self.program.words.size] = self.program.words
        ext[layout.weights : layout.weights + layout.weight_words] = self.program.weight_words
        for address, words in (self.x_writes() | self.cache_writes()).items():
            ext[address : address + words.size] = words
        if self.pool_words is not None:
            start, end = layout.pools
            ext[start:end] = self.pool_words
        return ext

    def new_row_addresses(self) -> list[tuple[int, int]] | None:
        """Chip gather: where each request's new rows land in the pools; None in host gather."""
        if self.program.gather != "chip":
            return None
        return [new_row_addresses(self.program.layout, request.table, request.plan.context)
                for request in self.requests]

    def read_results(self, ext: np.ndarray, counters: machine.Counters) -> list[StepResult]:
        """Every request's outputs from the final external memory."""
        return self.program.read_results(ext, counters, self.new_row_addresses())


@dataclass
class ReferenceRun:
    """The reference machine's run of a step: each request's outputs, the final memory."""

    results: list[StepResult]
    ext: np.ndarray


def run_reference(inputs: StepInputs) -> ReferenceRun:
    """Run one step's image on the reference machine; an error stop raises MachineError."""
    run = machine.run(inputs.image(), inputs.program.cfg, raise_on_error=True)
    return ReferenceRun(inputs.read_results(run.ext, run.counters), run.ext)
