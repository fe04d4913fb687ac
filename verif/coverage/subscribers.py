"""The coverage collectors: one uvm_subscriber per covergroup family, feeding verif.coverage.points
(which holds the points themselves, one decorated function each)."""

from __future__ import annotations

from pyuvm import uvm_subscriber

from verif.agents.chip.items import ChipRunItem, StepItem
from verif.agents.chip.monitor import ChipObservation
from verif.agents.page_table.items import PageOp, PageOpItem
from verif.coverage import points
from verif.kit.profiling import PROFILE


def _sample(registered, sample) -> None:
    with PROFILE.section("coverage"):
        for point in registered:
            point(sample)


class StepCoverage(uvm_subscriber):
    """serving.batch_cg: each serving step (several requests) as the chip driver started it
    (a decode step is PageTableCoverage's, which knows its plan and page size)."""

    def write(self, item: ChipRunItem) -> None:
        if isinstance(item, StepItem) and item.layout.max_batch > 1:
            _sample(points.BATCH_POINTS, points.BatchSample.of(item))


class PageTableCoverage(uvm_subscriber):
    """decode.page_cg: each page-table operation the agent finished; decode.step_cg: each decode
    step it prepared (the step's plan, the page size CONFIGURE set); serving.pool_cg: each
    serving step the scheduler prepared or finished."""

    def build_phase(self) -> None:
        self.page_size, self.gather = 0, "host"

    def write(self, item: PageOpItem) -> None:
        if item.kind == PageOp.CONFIGURE:
            self.page_size, self.gather = item.page_size, item.gather
        if item.result.serving is not None:
            _sample(points.SERVING_POINTS, points.ServingSample.of(item))
            return
        _sample(points.PAGE_POINTS, points.PageSample.of(item, self.gather, self.page_size))
        if item.kind == PageOp.PREPARE:
            _sample(points.STEP_POINTS, points.StepSample.of(item.result.inputs, self.page_size))


class ChipCoverage(uvm_subscriber):
    """decode.chip_cg: each chip run the monitor observed (runs with X or Z are skipped)."""

    def write(self, observation: ChipObservation) -> None:
        if observation.status is not None:
            _sample(points.CHIP_POINTS, points.ChipSample.of(observation))
