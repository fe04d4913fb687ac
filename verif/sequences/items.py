"""The sequence items: a chip run for the chip agent, a page-table operation for the other.

A chip run item (`ChipRunItem`) carries what the chip's memory must hold and never an expected
value: the scoreboard predicts each run from `image()`, once. A `StepItem` is one decode or
serving step (model.compiler.inputs.StepInputs: one program for B requests, either gather
mode); a `ProgramItem` a bare program and its memory image (random programs, error paths). The
driver answers with a `ChipResponse` linked to the request by `set_id_info`.

A `PageOpItem` is one operation of the step interface every host shares (model.host,
model.serving): PREPARE a step's inputs, FINISH it with the chip's results; around them the
pool's set-up and a request's life (NEW, FORK, RELEASE, SERVE). The driver fills in `result`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from enum import Enum

import numpy as np
from pyuvm import uvm_sequence_item

from model.compiler.inputs import StepInputs
from model.compiler.program import StepResult
from model.isa import WORDS_PER_INSTR, Instr, disassemble
from model.machine import Counters, words


class ChipRunItem(uvm_sequence_item):
    """One run of the chip: what its memory holds, and what a report calls it."""

    def image(self) -> np.ndarray:
        """The whole external memory the run starts from: the reference machine runs this."""
        raise NotImplementedError

    def loads(self) -> dict[int, np.ndarray]:
        """What the chip driver writes before the run, {address: words} (the page-table agent
        wrote the rest of the image)."""
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
                 window: int | None = None, page_size: int = 0, serving: bool = False):
        super().__init__(name)
        self.serving = serving  # a serving run's step: a report names its requests, even one
        self.label = label  # the decode's or the serving run's label
        self.step = step  # 1-based
        self.inputs = inputs
        self.window = window
        self.page_size = page_size
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
        """The program and the weights (the mirror skips them when unchanged) and the x rows;
        the page-table agent wrote the cached rows or block tables."""
        program, layout = self.inputs.program, self.layout
        return {layout.program: program.words, layout.weights: program.weight_words,
                **self.inputs.x_writes()}

    def read_results(self, outputs: np.ndarray, counters: Counters,
                     read: Callable[[int, int], np.ndarray]) -> list[StepResult]:
        """Each request's outputs, from the observed output region and, in chip gather, its
        new key and value rows from the pools (``read(address, count)``: the chip's external
        memory)."""
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


# ---- the page-table agent -----------------------------------------------------------------


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
