"""Functional coverage of the decode environment: every coverage point of the testbench.

Three covergroups (cocotb-coverage trie nodes), each sampled by one subscriber:

* ``decode.step_cg``   host side, one sample per chip step as driven (context, window, ...)
* ``decode.page_cg``   the paged cache, one sample per page-table operation
* ``decode.chip_cg``   chip side, one sample per run, from what the RTL reported after done:
                       its status and its event counters (hw/ISA.md, "Counters"), nothing else

Adding a coverage point is one decorated function here: stack the sampler's registration
(`on_step`, `on_page_op` or `on_chip_run`) on a CoverPoint or CoverCross whose `xf` reads the
sample. See verif/TESTPLAN.md, "Adding a coverage point".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cocotb_coverage.coverage import CoverCross, CoverPoint, coverage_db

from model.isa import Op
from verif.chip_monitor import ChipObservation
from verif.page_op_item import PageOp, PageOpItem
from verif.step_item import StepItem

STEP_POINTS: list[Callable] = []
PAGE_POINTS: list[Callable] = []
CHIP_POINTS: list[Callable] = []


def on_step(point: Callable) -> Callable:
    """Register a sampler called with every StepSample (in registration order)."""
    STEP_POINTS.append(point)
    return point


def on_page_op(point: Callable) -> Callable:
    PAGE_POINTS.append(point)
    return point


def on_chip_run(point: Callable) -> Callable:
    CHIP_POINTS.append(point)
    return point


def in_range(value, bounds: tuple[int, int]) -> bool:
    """Bin relation for (low, high) bins, both ends included; None never matches."""
    return value is not None and bounds[0] <= value <= bounds[1]


def any_in_range(values, bounds: tuple[int, int]) -> bool:
    return any(in_range(value, bounds) for value in values)


def ranges(*bounds: tuple[int, int]) -> dict:
    """CoverPoint arguments for range bins, labelled 'lo..hi' (or 'lo' for one value)."""
    labels = [f"{lo}" if lo == hi else f"{lo}..{hi}" for lo, hi in bounds]
    return {"bins": list(bounds), "bins_labels": labels, "rel": in_range}


# ---- samples -------------------------------------------------------------------------------


@dataclass
class StepSample:
    """One decode step as the host drove it."""

    step: int
    context: int
    window: int  # 0: full attention
    page_size: int
    token: int

    @classmethod
    def of(cls, item: StepItem) -> StepSample:
        return cls(item.step, item.context, item.window or 0, item.page_size, item.token)


@dataclass
class PageSample:
    """One page-table operation and what it did."""

    kind: str
    page_size: int
    pages_used: int
    new_page: bool
    cow_copy: bool
    released: int
    pages_spanned: int
    rows: int  # GATHER: rows gathered
    ranges: int  # GATHER: row ranges read (2: the sinks apart from the recent rows)

    @classmethod
    def of(cls, item: PageOpItem, page_size: int) -> PageSample:
        r = item.result
        return cls(item.kind.value, page_size, r.pages_used, r.new_page, r.cow_copy, r.released,
                   r.pages_spanned, item.rows if item.kind == PageOp.GATHER else 0,
                   len(item.ranges))


@dataclass
class ChipSample:
    """One chip run as the RTL reported it: its error code and event counters, nothing else."""

    error: int
    ev_sat: int
    ops: tuple[int, ...]  # ev_ops: instructions run per opcode
    dma_words: int  # ev_dma_words
    softmax_max_len: int | None  # ev_sm_max_len; None when no SOFTMAX ran
    softmax_range: int | None  # ev_sm_range: the widest exp-table index range; None: no SOFTMAX

    @classmethod
    def of(cls, obs: ChipObservation) -> ChipSample:
        status = obs.status
        c = status.counters
        ran_softmax = c.ops[Op.SOFTMAX] > 0
        return cls(status.error, c.sat, tuple(c.ops), c.dma_words,
                   c.sm_max_len if ran_softmax else None, c.sm_range if ran_softmax else None)


# ---- decode.step_cg: the host's steps ------------------------------------------------------


@on_step
@CoverPoint("decode.step_cg.context", xf=lambda s: s.context,
            **ranges((1, 1), (2, 2), (3, 3), (4, 4), (5, 6), (7, 8), (9, 16), (17, 32)))
def cover_context(sample: StepSample) -> None:
    """Context sizes (tokens attended), from a lone token to the chapter's 32."""


@on_step
@CoverPoint("decode.step_cg.window", xf=lambda s: s.window, bins=[0, 3, 4, 6, 8],
            bins_labels=["full", "3", "4", "6", "8"])
def cover_window(sample: StepSample) -> None:
    """The chapter's windows (none, 8, 4) and the odd ones (6 with pages of 2, 3 with 1)."""


@on_step
@CoverPoint("decode.step_cg.page_size", xf=lambda s: s.page_size, bins=[1, 2, 4, 8, 16])
def cover_page_size(sample: StepSample) -> None:
    """Pages of one row up to sixteen (the chapter's four, and exercise 1's others)."""


# The chapter's decodes, the random-model plan and exercise 1's page sizes (verif/plans.py).
WINDOW_PAGE_PAIRS = {("full", 4), ("4", 4), ("3", 1), ("6", 2),
                     *(("8", p) for p in (1, 2, 4, 8, 16))}


@on_step
@CoverCross("decode.step_cg.window_x_page", items=["decode.step_cg.window",
                                                   "decode.step_cg.page_size"],
            ign_bins=[(w, p) for w in ("full", "3", "4", "6", "8") for p in (1, 2, 4, 8, 16)
                      if (w, p) not in WINDOW_PAGE_PAIRS])
def cover_window_x_page(sample: StepSample) -> None:
    """The (window, page) pairs the testplan asks for."""


@on_step
@CoverPoint("decode.step_cg.token", xf=lambda s: s.token, bins=list(range(16)))
def cover_token(sample: StepSample) -> None:
    """Every input token of the vocabulary."""


@on_step
@CoverPoint("decode.step_cg.window_full", xf=lambda s: s.window > 0 and s.step > s.window,
            bins=[True, False], bins_labels=["after the window filled", "before"])
def cover_window_full(sample: StepSample) -> None:
    """Steps after the window filled (the flat part of the cycle curve), and earlier ones."""


# ---- decode.page_cg: the paged cache -------------------------------------------------------


@on_page_op
@CoverPoint("decode.page_cg.op", xf=lambda s: s.kind, bins=[op.value for op in PageOp])
def cover_page_op(sample: PageSample) -> None:
    """Every operation: configure, new, gather, append, trim, fork, release."""


@on_page_op
@CoverPoint("decode.page_cg.pages_in_use", xf=lambda s: s.pages_used,
            **ranges((0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 8), (9, 32)))
def cover_pages_in_use(sample: PageSample) -> None:
    """Pages held in the pool after an operation."""


@on_page_op
@CoverPoint("decode.page_cg.boundary_crossing",
            xf=lambda s: s.new_page if s.kind == "append" else None, bins=[True, False],
            bins_labels=["append opens a page", "append fills a page"])
def cover_boundary_crossing(sample: PageSample) -> None:
    """Appends that cross a page boundary (take a new page) and appends inside a page."""


@on_page_op
@CoverPoint("decode.page_cg.gather_pages",
            xf=lambda s: s.pages_spanned if s.kind == "gather" else None,
            **ranges((0, 0), (1, 1), (2, 2), (3, 4), (5, 31)))
def cover_gather_pages(sample: PageSample) -> None:
    """Gathers reading no row, one page, and several pages (crossing page boundaries)."""


@on_page_op
@CoverPoint("decode.page_cg.gather_ranges",
            xf=lambda s: s.ranges if s.kind == "gather" and s.rows else None, bins=[1, 2],
            bins_labels=["one range", "sinks and recent rows apart"])
def cover_gather_ranges(sample: PageSample) -> None:
    """Gathers of one contiguous range, and of the sink rows apart from the recent ones."""


@on_page_op
@CoverPoint("decode.page_cg.trim_released",
            xf=lambda s: s.released if s.kind == "trim" else None, **ranges((0, 0), (1, 1)))
def cover_trim_released(sample: PageSample) -> None:
    """Trims that release nothing and trims that release a page."""


@on_page_op
@CoverPoint("decode.page_cg.cow_copy", xf=lambda s: s.cow_copy if s.kind == "append" else None,
            bins=[True], bins_labels=["copy-on-write"])
def cover_cow_copy(sample: PageSample) -> None:
    """An append into a shared page, copied first."""


# ---- decode.chip_cg: what the RTL reported -------------------------------------------------


@on_chip_run
@CoverPoint("decode.chip_cg.opcode", xf=lambda s: s.ops, rel=lambda ops, op: ops[op] > 0,
            bins=[int(op) for op in Op], bins_labels=[op.name for op in Op], inj=False)
def cover_opcode(sample: ChipSample) -> None:
    """Opcodes the chip ran: ev_ops's count for the opcode is not zero."""


@on_chip_run
@CoverPoint("decode.chip_cg.dma_words", xf=lambda s: s.dma_words,
            **ranges((1, 255), (256, 511), (512, 767), (768, 1023), (1024, (1 << 32) - 1)))
def cover_dma_words(sample: ChipSample) -> None:
    """ev_dma_words: words LOAD and STORE moved in a run (a decode step: 409 + 16 x context)."""


@on_chip_run
@CoverPoint("decode.chip_cg.requant_saturations", xf=lambda s: s.ev_sat,
            **ranges((0, 0), (1, 3), (4, 15), (16, 1 << 31)))
def cover_requant_saturations(sample: ChipSample) -> None:
    """ev_sat: outputs of a run that the requantizer or VADD clamped to int8."""


@on_chip_run
@CoverPoint("decode.chip_cg.softmax_max_len", xf=lambda s: s.softmax_max_len,
            **ranges((1, 1), (2, 4), (5, 8), (9, 16), (17, 32)))
def cover_softmax_max_len(sample: ChipSample) -> None:
    """ev_sm_max_len: the longest SOFTMAX of a run (a decode step's one: the context)."""


@on_chip_run
@CoverPoint("decode.chip_cg.softmax_range", xf=lambda s: s.softmax_range,
            **ranges((0, 0), (1, 15), (16, 63), (64, 127), (128, 255)))
def cover_softmax_range(sample: ChipSample) -> None:
    """ev_sm_range: max - min of a SOFTMAX input, the exp-table index range the chip used."""


@on_chip_run
@CoverPoint("decode.chip_cg.error", xf=lambda s: s.error, bins=[0], bins_labels=["OK"])
def cover_error(sample: ChipSample) -> None:
    """Decode programs end on HALT (error paths are covered by verif/tests/test_chip.py)."""


# ---- the database --------------------------------------------------------------------------


def summary() -> dict[str, dict[str, float]]:
    """Coverage of each covergroup and point: covered bins, size and percentage."""
    return {name: {"covered": item.coverage, "size": item.size,
                   "percent": round(item.cover_percentage, 1)}
            for name, item in sorted(coverage_db.items())}


def export(run_dir) -> dict[str, str]:
    """Write the database into the run folder (YAML and XML), for merging across runs."""
    yaml_file, xml_file = run_dir / "coverage.yml", run_dir / "coverage.xml"
    coverage_db.export_to_yaml(str(yaml_file))
    coverage_db.export_to_xml(str(xml_file))
    return {"yaml": str(yaml_file), "xml": str(xml_file)}
