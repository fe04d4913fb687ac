"""The page-table agent's sequence item: PREPARE a step's inputs, FINISH it with the chip's
results, and around them the pool's set-up and a request's life. The driver fills in `result`.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from enum import Enum

from pyuvm import uvm_sequence_item

from model.compiler.inputs import StepInputs
from model.compiler.program import StepResult

SERVING = "serving"  # the rid of a serving run's one host, its scheduler


class PageOp(Enum):
    CONFIGURE = "configure"  # a fresh pool of n_pages pages of page_size rows (no live request)
    NEW = "new"  # a request decoded by a host of its own (spec)
    PREPARE = "prepare"  # a host's next step: its inputs, its cached rows written to the chip
    FINISH = "finish"  # the chip's results written back: the new row, the trim, the next input
    FORK = "fork"  # a second request sharing every page of src
    RELEASE = "release"
    SERVE = "serve"  # serving: a scheduler, with the spec's workload, owns the pool


@dataclass
class ServingEvent:
    """What the scheduler did in one PREPARE or FINISH, as coverage sees it."""

    batch: int = 0  # requests the step runs
    admitted: int = 0
    preempted: int = 0
    refused: bool = False  # a request waited although the batch had room: the rule said no
    prefix_hits: int = 0  # pages served from the prefix cache (this operation)
    evictions: int = 0  # cached pages taken back for reuse (this operation)
    free_pages: int = 0  # afterwards


@dataclass
class PageOpResult:
    """What the operation did, for the sequence and for coverage."""

    pages_used: int  # pages in use in the pool afterwards
    inputs: StepInputs | None = None  # PREPARE: the step's inputs (None: serving has finished)
    token: int = 0  # FINISH: the request's next input token
    programs_compiled: int = 0  # PREPARE: the host's distinct programs so far
    words_written: int = 0  # PREPARE: backdoor writes into the chip's memory for the rows
    rows: int = 0  # PREPARE: cached rows the step reads
    ranges: int = 0  # PREPARE: row ranges they come in (2: the sinks apart)
    pages_spanned: int = 0  # PREPARE: pages the rows lie in
    new_page: bool = False  # FINISH (host gather) or PREPARE (chip gather): a new page opened
    cow_copy: bool = False  # the step's row went to a private copy of a shared page
    released: int = 0  # FINISH, RELEASE: pages given back to the free list
    table: tuple[int, ...] = ()  # PREPARE in chip gather: the block table (header, pages)
    reused_pages: int = 0  # PREPARE in chip gather: table pages freed once and held again
    serving: ServingEvent | None = None  # PREPARE, FINISH of a serving run


class PageOpItem(uvm_sequence_item):
    """One page-table operation on request `rid`; the fields a kind does not use stay unset."""

    def __init__(self, kind: PageOp, rid: Hashable = 0, *, spec=None, src: Hashable = None,
                 page_size: int = 0, n_pages: int = 0, gather: str = "host",
                 results: list[StepResult] | None = None, corrupt: bool = False):
        super().__init__(f"page_{kind.value}")
        self.kind = kind
        self.rid = rid
        self.spec = spec  # NEW: the decode's DecodeSpec; SERVE: the ServingSpec
        self.src = src  # FORK
        self.page_size, self.n_pages, self.gather = page_size, n_pages, gather  # CONFIGURE
        self.results = results  # FINISH: each request's StepResult, in the inputs' order
        self.corrupt = corrupt  # PREPARE in chip gather: a table page outside the pool
        self.result: PageOpResult | None = None

    def __str__(self) -> str:
        return f"PageOpItem({self.kind.value}, rid={self.rid!r})"
