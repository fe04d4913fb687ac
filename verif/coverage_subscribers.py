"""The coverage collectors: one uvm_subscriber per covergroup, each feeding verif/coverage.py.

They only turn a transaction into a sample and call the registered coverage points; the points
themselves (bins, crosses) live in verif/coverage.py, one decorated function each.
"""

from __future__ import annotations

from pyuvm import uvm_subscriber

from verif import coverage
from verif.chip_monitor import ChipObservation
from verif.page_op_item import PageOp, PageOpItem
from verif.profiling import PROFILE
from verif.step_item import BatchStepItem, StepItem


def _sample(points, sample) -> None:
    with PROFILE.section("coverage"):
        for point in points:
            point(sample)


class StepCoverage(uvm_subscriber):
    """decode.step_cg: each StepItem as the chip driver started it; serving.batch_cg: each
    BatchStepItem."""

    def write(self, item: StepItem | BatchStepItem) -> None:
        if isinstance(item, BatchStepItem):
            _sample(coverage.BATCH_POINTS, coverage.BatchSample.of(item))
        else:
            _sample(coverage.STEP_POINTS, coverage.StepSample.of(item))


class PageTableCoverage(uvm_subscriber):
    """decode.page_cg: each page-table operation the agent finished; serving.pool_cg: each
    serving step the scheduler planned or committed."""

    def build_phase(self) -> None:
        self.page_size = 0

    def write(self, item: PageOpItem) -> None:
        if item.kind == PageOp.CONFIGURE:
            self.page_size = item.page_size
        if item.result.serving is not None:
            _sample(coverage.SERVING_POINTS, coverage.ServingSample.of(item))
        else:
            _sample(coverage.PAGE_POINTS, coverage.PageSample.of(item, self.page_size))


class ChipCoverage(uvm_subscriber):
    """decode.chip_cg: each chip run the monitor observed (runs with X or Z are skipped)."""

    def write(self, observation: ChipObservation) -> None:
        if observation.status is not None:
            _sample(coverage.CHIP_POINTS, coverage.ChipSample.of(observation))
