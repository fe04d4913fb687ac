"""The runs a campaign injects into: random programs, chapter decode steps, a directed program.

A decode step is the chapter's decode with chip gather (the chip reads the KV pool through the
block table), built by the reference host up to the step, its whole memory image loaded as one
run. Each workload names its external-memory regions from its own layout.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from model.chip import isa
from model.chip.isa import WORDS_PER_INSTR, ChipConfig, disassemble
from model.compiler.inputs import StepInputs
from model.host.decode import PagedHost, paged_cache
from verif.agents.chip.items import ProgramItem
from verif.runs.plans import chapter_spec
from verif.sequences.program_seqs import random_program

KINDS = ("program", "decode", "directed")
# the directed program: LOAD two rows, add them, STORE the sum (verif/tests/test_faults.py)
DIRECTED_DATA, DIRECTED_OUT, DIRECTED_LEN = 256, 512, 16


@dataclass(frozen=True)
class Region:
    """External words [start, end) of one kind."""

    name: str  # "program", "weights", "block table", "kv pool" or "other data"
    start: int
    end: int

    @property
    def words(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Workload:
    """A run by its description, so any process builds it again: a random program (``seed``,
    ``index``), the chapter's decode (window ``seed``, 0 for full attention) at step ``index``,
    or the directed program."""

    kind: str
    seed: int = 0
    index: int = 0

    def item(self, cfg: ChipConfig) -> ProgramItem:
        if self.kind == "program":
            return random_program(self.seed, self.index, cfg)
        image = (directed_program() if self.kind == "directed"
                 else decode_step(self.seed, self.index, cfg).image())
        return ProgramItem(f"{self.kind}{self.seed}-{self.index}", self.describe(), image,
                           cfg.ext_words)

    def describe(self) -> str:
        if self.kind == "decode":
            return f"chapter decode (W={self.seed or None}, chip gather) step {self.index}"
        return "the directed program" if self.kind == "directed" else f"program {self.index}"

    def regions(self, cfg: ChipConfig) -> tuple[Region, ...]:
        """The external words the run starts from, by region (outputs excluded: the chip
        writes them before anything reads them)."""
        if self.kind != "decode":
            image = self.item(cfg).image()
            program = WORDS_PER_INSTR * len(disassemble(image))
            nonzero = np.flatnonzero(image)
            extent = max(program, int(nonzero[-1]) + 1 if nonzero.size else 0)
            return (Region("program", 0, program), Region("other data", program, extent))
        layout = decode_step(self.seed, self.index, cfg).program.layout
        return (Region("program", 0, layout.program_words),
                Region("weights", layout.weights, layout.weights + layout.weight_words),
                Region("other data", layout.x, layout.x + layout.max_batch * layout.dim),
                Region("block table", layout.tables, layout.pair),
                Region("other data", layout.pair, layout.k_pool),
                Region("kv pool", layout.k_pool, layout.end))


def directed_program() -> np.ndarray:
    """LOAD two rows of DIRECTED_LEN words to scratchpad 0 and DIRECTED_LEN, VADD them (the
    first read on the scratchpad's port A, the second on port B), STORE the sum."""
    rows = 2 * DIRECTED_LEN
    words = isa.assemble((isa.load(DIRECTED_DATA, 0, rows),
                          isa.vadd(0, DIRECTED_LEN, rows, DIRECTED_LEN),
                          isa.store(rows, DIRECTED_OUT, DIRECTED_LEN), isa.halt()))
    image = np.zeros(DIRECTED_OUT, dtype=np.int64)
    image[: len(words)] = words
    image[DIRECTED_DATA : DIRECTED_DATA + rows] = np.arange(rows) - DIRECTED_LEN
    return image


@cache
def decode_step(window: int, step: int, cfg: ChipConfig) -> StepInputs:
    """Step ``step`` of the chapter's decode at ``window`` (0: full) with chip gather, its pool
    and block table as the reference host leaves them after the steps before."""
    spec = replace(chapter_spec(window or None), gather="chip")
    programs = spec.programs(cfg)
    host = PagedHost(programs, paged_cache(programs.layout.dim, spec.page_size, spec.n_pages),
                     spec.start, spec.window)
    for _ in range(step - 1):
        host.step()
    return host.prepare_step()
