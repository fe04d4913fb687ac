"""Functional coverage of the testbench: every coverage point, one decorated function each.

Five covergroups, a section each below, fed by verif/coverage/subscribers.py; bins that depend on
what the tests run (windows, page sizes) come from the plans (verif.runs.plans). Adding a point:
the testplan's "Adding a coverage point".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

from cocotb_coverage.coverage import CoverCross, CoverPoint, coverage_db

from model.chip.isa import ErrorCode, Op
from model.compiler.gather import GATHER_MODES
from model.compiler.inputs import StepInputs
from sim.mem_profile import STALL_FIELDS
from verif.agents.chip.items import StepItem
from verif.agents.chip.monitor import ChipObservation
from verif.agents.page_table.items import PageOp, PageOpItem
from verif.coverage import libyaml
from verif.runs.plans import decode_plans

STEP_POINTS: list[Callable] = []
PAGE_POINTS: list[Callable] = []
CHIP_POINTS: list[Callable] = []
BATCH_POINTS: list[Callable] = []
SERVING_POINTS: list[Callable] = []


def registrar(points: list[Callable]) -> Callable[[Callable], Callable]:
    """A decorator that adds a point to ``points``: the subscriber samples them in this order."""
    def register(point: Callable) -> Callable:
        points.append(point)
        return point

    return register


on_step = registrar(STEP_POINTS)
on_page_op = registrar(PAGE_POINTS)
on_chip_run = registrar(CHIP_POINTS)
on_batch = registrar(BATCH_POINTS)
on_serving = registrar(SERVING_POINTS)


def in_range(value, bounds: tuple[int, int]) -> bool:
    """Bin relation for (low, high) bins, both ends included; None never matches."""
    return value is not None and bounds[0] <= value <= bounds[1]


def ranges(*bounds: tuple[int, int]) -> dict:
    """CoverPoint arguments for range bins, labelled 'lo..hi' (or 'lo' for one value)."""
    labels = [f"{lo}" if lo == hi else f"{lo}..{hi}" for lo, hi in bounds]
    return {"bins": list(bounds), "bins_labels": labels, "rel": in_range}


@dataclass
class StepSample:
    """One decode step as the host planned it: its step rule plan, input token and page size."""

    step: int
    context: int
    window: int  # 0: full attention
    page_size: int
    token: int

    @classmethod
    def of(cls, inputs: StepInputs, page_size: int) -> StepSample:
        (request,) = inputs.requests
        plan = request.plan
        return cls(plan.step, plan.context, plan.window or 0, page_size, request.token)


DECODES = decode_plans()
WINDOWS = sorted({spec.window or 0 for spec in DECODES})  # 0: full attention
PAGE_SIZES = sorted({spec.page_size for spec in DECODES})
WINDOW_PAGE_PAIRS = {(spec.window or 0, spec.page_size) for spec in DECODES}


@dataclass
class PageSample:
    """One page-table operation and what it did (None: not this operation's to say)."""

    kind: str
    gather: str  # the pool's gather mode: "host" or "chip"
    page_size: int
    pages_used: int
    new_page: bool | None  # the step's row opened a page (where the row's slot is taken)
    cow_copy: bool | None  # .. went to a private copy of a shared page
    released: int
    pages_spanned: int  # PREPARE: the pages the step's rows lie in
    rows: int  # PREPARE: cached rows the step reads
    ranges: int  # PREPARE: row ranges read (2: the sinks apart from the recent rows)
    first_slot: int | None = None  # chip gather's PREPARE: the table's header (first slot)
    table_pages: tuple[int, ...] = ()  # chip gather's PREPARE: the table's pages, in order
    reused_pages: int = 0  # chip gather's PREPARE: of them, pages given back and held again

    @classmethod
    def of(cls, item: PageOpItem, gather: str, page_size: int) -> PageSample:
        r = item.result
        takes_slot = item.kind == (PageOp.FINISH if gather == "host" else PageOp.PREPARE)
        return cls(item.kind.value, gather, page_size, r.pages_used,
                   r.new_page if takes_slot else None, r.cow_copy if takes_slot else None,
                   r.released, r.pages_spanned, r.rows, r.ranges,
                   first_slot=r.table[0] if r.table else None, table_pages=r.table[1:],
                   reused_pages=r.reused_pages)

    @property
    def host_gather(self) -> bool:
        return self.kind == PageOp.PREPARE.value and self.gather == "host"


@dataclass
class ChipSample:
    """One chip run as the RTL reported it: its error code and event counters, nothing else."""

    error: int
    ev_sat: int
    ops: tuple[int, ...]  # ev_ops: instructions run per opcode
    dma_words: int  # ev_dma_words
    softmax_max_len: int | None  # ev_sm_max_len; None when no SOFTMAX ran
    softmax_range: int | None  # ev_sm_range: the widest exp-table index range; None: no SOFTMAX
    stalled: tuple[str, ...] = ()  # the memory's delays in the run: channels, "lat" (latency)

    @classmethod
    def of(cls, obs: ChipObservation) -> ChipSample:
        status = obs.status
        c = status.counters
        ran_softmax = c.ops[Op.SOFTMAX] > 0
        stalled = tuple(name for name in STALL_FIELDS if getattr(status.stalls, name))
        return cls(status.error, c.sat, tuple(c.ops), c.dma_words,
                   c.sm_max_len if ran_softmax else None, c.sm_range if ran_softmax else None,
                   stalled)


# ---- decode.step_cg: the host's steps ------------------------------------------------------


@on_step
@CoverPoint("decode.step_cg.context", xf=lambda s: s.context,
            **ranges((1, 1), (2, 2), (3, 3), (4, 4), (5, 6), (7, 8), (9, 16), (17, 32)))
def cover_context(sample: StepSample) -> None:
    """Context sizes (tokens attended), from a lone token to the chapter's 32."""


@on_step
@CoverPoint("decode.step_cg.window", xf=lambda s: s.window, bins=WINDOWS,
            bins_labels=[str(w) if w else "full" for w in WINDOWS])
def cover_window(sample: StepSample) -> None:
    """Every window the plans decode with (verif.runs.plans), full attention included."""


@on_step
@CoverPoint("decode.step_cg.page_size", xf=lambda s: s.page_size, bins=PAGE_SIZES)
def cover_page_size(sample: StepSample) -> None:
    """Every page size the plans decode with."""


@on_step
@CoverCross("decode.step_cg.window_x_page", items=["decode.step_cg.window",
                                                   "decode.step_cg.page_size"],
            ign_bins=[(str(w) if w else "full", p) for w in WINDOWS for p in PAGE_SIZES
                      if (w, p) not in WINDOW_PAGE_PAIRS])
def cover_window_x_page(sample: StepSample) -> None:
    """The (window, page) pairs the plans decode with."""


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
    """Every operation: configure, new, prepare, finish, fork, release, serve (a serving run's
    prepare and finish are serving.pool_cg's samples)."""


@on_page_op
@CoverPoint("decode.page_cg.pages_in_use", xf=lambda s: s.pages_used,
            **ranges((0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 8), (9, 32)))
def cover_pages_in_use(sample: PageSample) -> None:
    """Pages held in the pool after an operation."""


@on_page_op
@CoverPoint("decode.page_cg.boundary_crossing", xf=lambda s: s.new_page, bins=[True, False],
            bins_labels=["the new row opens a page", "the new row fills a page"])
def cover_boundary_crossing(sample: PageSample) -> None:
    """New rows that cross a page boundary (take a new page) and rows inside a page."""


@on_page_op
@CoverPoint("decode.page_cg.gather_pages",
            xf=lambda s: s.pages_spanned if s.host_gather else None,
            **ranges((0, 0), (1, 1), (2, 2), (3, 4), (5, 31)))
def cover_gather_pages(sample: PageSample) -> None:
    """Host gathers reading no row, one page, and several pages (crossing page boundaries)."""


@on_page_op
@CoverPoint("decode.page_cg.gather_ranges",
            xf=lambda s: s.ranges if s.host_gather and s.rows else None, bins=[1, 2],
            bins_labels=["one range", "sinks and recent rows apart"])
def cover_gather_ranges(sample: PageSample) -> None:
    """Gathers of one contiguous range, and of the sink rows apart from the recent ones."""


@on_page_op
@CoverPoint("decode.page_cg.trim_released",
            xf=lambda s: s.released if s.kind == PageOp.FINISH.value else None,
            **ranges((0, 0), (1, 1)))
def cover_trim_released(sample: PageSample) -> None:
    """Steps whose window releases nothing and steps that release a page."""


@on_page_op
@CoverPoint("decode.page_cg.cow_copy", xf=lambda s: s.cow_copy if s.gather == "host" else None,
            bins=[True], bins_labels=["copy-on-write"])
def cover_cow_copy(sample: PageSample) -> None:
    """A host-gather append into a shared page, copied first."""


# ---- decode.chip_cg: what the RTL reported (hw/ISA.md, "Counters") --------------------------


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


def summary() -> dict[str, dict[str, float]]:
    """Coverage of each covergroup and point: covered bins, size and percentage."""
    return {name: {"covered": item.coverage, "size": item.size,
                   "percent": round(item.cover_percentage, 1)}
            for name, item in sorted(coverage_db.items())}


def reset() -> None:
    """Forget every hit: cocotb-coverage keeps one database per process, and each test's run
    folder must show that test's coverage alone."""
    for item in coverage_db.values():
        hits = getattr(item, "_hits", None)
        if hits is not None:
            for key in hits:
                hits[key] = 0
        item._coverage = 0
        item._new_hits = []


def export(run_dir) -> dict[str, str]:
    """Write the database into the run folder (YAML and XML), for merging across runs."""
    yaml_file, xml_file = run_dir / "coverage.yml", run_dir / "coverage.xml"
    with libyaml.in_cocotb_coverage():
        coverage_db.export_to_yaml(str(yaml_file))
    coverage_db.export_to_xml(str(xml_file))
    return {"yaml": str(yaml_file), "xml": str(xml_file)}


# ---- serving.batch_cg and serving.pool_cg: continuous batching over one pool ------------------
# (serving shares full pages only: its appends never copy, page_cg.cow_copy is decode's)


@dataclass
class BatchSample:
    """One batched chip run as driven."""

    batch: int
    gather: str  # model.compiler.gather.GATHER_MODES: who moved the cached rows

    @classmethod
    def of(cls, item: StepItem) -> BatchSample:
        return cls(item.batch, item.inputs.program.gather)


@dataclass
class ServingSample:
    """One serving operation (PREPARE or FINISH) and what the scheduler did."""

    kind: str
    preempted: int
    refused: bool
    prefix_hits: int
    evictions: int
    free_pages: int

    @classmethod
    def of(cls, item: PageOpItem) -> ServingSample:
        e = item.result.serving
        return cls(item.kind.value, e.preempted, e.refused, e.prefix_hits, e.evictions,
                   e.free_pages)


@on_batch
@CoverPoint("serving.batch_cg.batch_size", xf=lambda s: s.batch,
            **ranges((1, 1), (2, 2), (3, 4), (5, 7), (8, 8)))
def cover_batch_size(sample: BatchSample) -> None:
    """Chip runs of one request up to a full batch of eight."""


@on_batch
@CoverPoint("serving.batch_cg.gather_mode", xf=lambda s: s.gather, bins=list(GATHER_MODES),
            bins_labels=["host gather (rows copied)", "chip gather (block tables read)"])
def cover_gather_mode(sample: BatchSample) -> None:
    """Batched runs whose rows the host copied, and runs that read the pool themselves."""


@on_serving
@CoverPoint("serving.pool_cg.preemption", xf=lambda s: s.preempted > 0 if s.kind == "prepare"
            else None, bins=[True], bins_labels=["a request preempted"])
def cover_preemption(sample: ServingSample) -> None:
    """A step that had to preempt the latest admitted request (recomputed later)."""


@on_serving
@CoverPoint("serving.pool_cg.admission_refused", xf=lambda s: s.refused
            if s.kind == "prepare" else None, bins=[True],
            bins_labels=["the rule kept a request waiting"])
def cover_admission_refused(sample: ServingSample) -> None:
    """A request waited although the batch had room: the admission rule refused it."""


@on_serving
@CoverPoint("serving.pool_cg.prefix_hit", xf=lambda s: s.prefix_hits > 0, bins=[True],
            bins_labels=["pages served from the prefix cache"])
def cover_prefix_hit(sample: ServingSample) -> None:
    """A request adopted cached prompt pages instead of computing them."""


@on_serving
@CoverPoint("serving.pool_cg.eviction", xf=lambda s: s.evictions > 0, bins=[True],
            bins_labels=["a cached page taken back for reuse"])
def cover_eviction(sample: ServingSample) -> None:
    """The pool needed a cached page nobody held: its hash dropped, the page reused."""


@on_serving
@CoverPoint("serving.pool_cg.pool_exhausted", xf=lambda s: s.free_pages == 0, bins=[True],
            bins_labels=["no free page left"])
def cover_pool_exhausted(sample: ServingSample) -> None:
    """The pool ran out of free pages (evictable cached pages count as free)."""


# ---- chip gather: the block tables the chip read, the copies and stops it made ----------------


def _view(sample: PageSample, value):
    """A chip-gather PREPARE's value (its block table); None (no sample) for every other."""
    return value if sample.kind == PageOp.PREPARE.value and sample.gather == "chip" else None


def _page_order(pages: tuple[int, ...]) -> str | None:
    if len(pages) < 2:
        return None
    ascending = all(b == a + 1 for a, b in pairwise(pages))
    return "contiguous" if ascending else "non-contiguous"


@on_page_op
@CoverPoint("decode.page_cg.table_pages", xf=lambda s: _view(s, len(s.table_pages)),
            **ranges((1, 1), (2, 2), (3, 4), (5, 64)))
def cover_table_pages(sample: PageSample) -> None:
    """Block tables of one page, and of several: the chip's reads cross page boundaries."""


@on_page_op
@CoverPoint("decode.page_cg.table_first_slot",
            xf=lambda s: _view(s, "page start" if s.first_slot == 0 else "mid-page"),
            bins=["page start", "mid-page"])
def cover_table_first_slot(sample: PageSample) -> None:
    """A step's rows starting at a page's first slot, and mid-page (a window's start)."""


@on_page_op
@CoverPoint("decode.page_cg.table_page_order", xf=lambda s: _view(s, _page_order(s.table_pages)),
            bins=["contiguous", "non-contiguous"])
def cover_table_page_order(sample: PageSample) -> None:
    """Pages in a block table one after another, and out of order (after pages were reused)."""


@on_page_op
@CoverPoint("decode.page_cg.table_reused_page", xf=lambda s: _view(s, s.reused_pages > 0),
            bins=[True], bins_labels=["a page freed once, read again"])
def cover_table_reused_page(sample: PageSample) -> None:
    """A block table naming a page the window gave back and an append took again."""


@on_page_op
@CoverPoint("decode.page_cg.chip_copy", xf=lambda s: _view(s, s.cow_copy), bins=[True],
            bins_labels=["copy-on-write on the chip"])
def cover_chip_copy(sample: PageSample) -> None:
    """A step whose new row lands in a shared page: the chip copies it (PCOPY) first."""


@on_chip_run
@CoverPoint("decode.chip_cg.memory_stall", xf=lambda s: s.stalled, rel=lambda got, b: b in got,
            inj=False, bins=list(STALL_FIELDS),
            bins_labels=[f"{name} held low" for name in STALL_FIELDS[:-1]] + ["read latency"])
def cover_memory_stall(sample: ChipSample) -> None:
    """A run in which the memory (hw/tb/axi_ram.v, under a profile other than the ideal one)
    held each AXI4 channel's ready or valid low, or answered a read later than EXT_LAT."""


@on_chip_run
@CoverPoint("decode.chip_cg.bad_page", xf=lambda s: s.error == ErrorCode.BAD_PAGE, bins=[True],
            bins_labels=["BAD_PAGE: a table named a page outside the pool"])
def cover_bad_page(sample: ChipSample) -> None:
    """A chip run stopped by a block-table entry outside the pool (hw/ISA.md, "Errors")."""

