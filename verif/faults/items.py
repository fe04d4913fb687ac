"""A fault as a sequence item: which bit of which site flips, in which cycle of which run.

The run is a bare program (a random program or a decode step's whole memory image); the chip
agent's FaultDriver (verif.faults.injector) flips the bit while the program runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from verif.agents.chip.items import ChipRunItem, ProgramItem
from verif.faults.sites import SCRATCHPAD_PARITY

# the fault models: a register's flip-flop, a word of a unit's array, a scratchpad word, an
# external-memory word, the read data of one AXI beat
MODELS = ("flip-flop", "array", "scratchpad", "external", "axi-read")
CHIP_MODELS = ("flip-flop", "array", "scratchpad")  # the chip's state; the others lie outside


def stratum(model: str) -> str:
    """The campaign a model's faults are counted in: "chip", "external" or "axi-read"."""
    return "chip" if model in CHIP_MODELS else model


@dataclass(frozen=True)
class Fault:
    """One single-bit upset. ``site``: a register or array path below chip_top, or the memory's
    region; ``index``: the word of an array or memory (0 for a register); ``cycle``: the run's
    cycle (from the edge that samples start) in which the bit flips; for an AXI read fault the
    first read beat at or after it carries the flip."""

    model: str
    site: str
    unit: str
    index: int
    bit: int
    cycle: int
    workload: int  # which of the campaign's runs

    def as_dict(self) -> dict:
        return asdict(self)


def memory_key(fault: Fault) -> str:
    """The end state's name of a flipped memory word (or a scratchpad word's parity bit)."""
    parity = " parity" if fault.site == SCRATCHPAD_PARITY else ""
    return f"{fault.model}{parity}[{fault.index}]"


class FaultItem(ChipRunItem):
    """A run of ``run`` with ``fault`` injected (``fault`` None: the golden run)."""

    def __init__(self, name: str, run: ProgramItem, fault: Fault | None):
        super().__init__(name)
        self.run = run
        self.fault = fault

    def image(self) -> np.ndarray:
        return self.run.image()

    def loads(self) -> dict[int, np.ndarray]:
        return self.run.loads()

    def program(self) -> np.ndarray:
        return self.run.program()

    def where(self) -> str:
        return f"{self.run.where()} with {self.fault or 'no fault'}"
