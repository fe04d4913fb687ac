"""The chip agent's sequence items for chip-gather runs: a decode step, and a serving step.

A host-gather StepItem carries the rows the host gathered; in chip gather the program reads them
through the block table, so the item carries what the chip's memory holds instead: the step's
block table, the copy pair (on copy-on-write) and both pools as they are before the step. Its
image is then the chip's whole external memory for the step, and the scoreboard's one
prediction (model.machine on that image) follows the rows through the table as the chip does.

A serving step in chip gather (``ChipBatchStepItem``) is a BatchStepItem whose plan is a
model.batch_paged_programs.ChipBatchPlan: B requests, each with its own block table, one
batched chip-gather program; the plan's image holds the tables and the pools.
"""

from __future__ import annotations

import numpy as np

from model.batch_paged_programs import ChipBatchPlan
from model.compiler import CompiledStep
from model.paged_programs import PoolLayout, image
from model.step_rule import StepPlan
from verif.page_op_item import PageOpResult
from verif.step_item import BatchStepItem, StepItem


class ChipStepItem(StepItem):
    """One chip-gather decode step: the program for its context and the step's block table."""

    def __init__(self, name: str, decode: str, plan: StepPlan, token: int,
                 program: CompiledStep, x: np.ndarray, view: PageOpResult, pool: PoolLayout,
                 window: int | None = None, page_size: int = 0,
                 outputs_before: np.ndarray | None = None):
        no_rows = np.zeros((0, pool.dim), dtype=np.int64)  # the host gathers none
        super().__init__(name, decode, plan, token, program, x, no_rows, no_rows, window,
                         page_size)
        self.table, self.pair, self.pool_words = view.table, view.pair, view.pool_words
        self.pool = pool
        # the output region as the last run left it: a step stopped by BAD_PAGE overwrites none
        self.outputs_before = outputs_before

    def image(self) -> np.ndarray:
        ext = image(self.program, self.pool, self.x, self.table, self.pair, self.pool_words)
        if self.outputs_before is not None:
            start, end = self.program.layout.outputs
            ext[start:end] = self.outputs_before
        return ext


class ChipBatchStepItem(BatchStepItem):
    """One serving step in chip gather: the batched chip-gather program and its tables."""

    def __init__(self, name: str, decode: str, plan: ChipBatchPlan):
        super().__init__(name, decode, plan)
        self.program = plan.chip_program  # the driver loads it; outputs read through it
