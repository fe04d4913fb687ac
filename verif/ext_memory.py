"""The testbench's copy of external memory, so that a load touches only the words that change.

Backdoor writes cost microseconds per word. The driver and the page-table agent both write
through one mirror: the program and the weights are written once per program, the gathered
rows once per step, and a word that already holds the wanted value is never written again.
"""

from __future__ import annotations

import numpy as np

from model.machine import words
from verif.chip_bfm import ChipBfm


class ExtMemoryMirror:
    """What the testbench last wrote to each word of the chip's external memory."""

    def __init__(self, bfm: ChipBfm, size: int):
        self.bfm = bfm
        self.shadow = np.zeros(size, dtype=np.uint32)
        # A word never written is unknown (an earlier test may have left anything there).
        self.known = np.zeros(size, dtype=bool)
        self.words_written = 0

    def write(self, base: int, values: np.ndarray) -> int:
        """Write `values` at `base`, skipping words that already hold them; returns the count."""
        wanted = words(values).reshape(-1)
        end = base + wanted.size
        stale = (self.shadow[base:end] != wanted) | ~self.known[base:end]
        for offset in np.flatnonzero(stale).tolist():
            self.bfm.mem[base + offset].value = int(wanted[offset])
        self.shadow[base:end] = wanted
        self.known[base:end] = True
        count = int(stale.sum())
        self.words_written += count
        return count

    def read(self, base: int, count: int) -> np.ndarray:
        """Read words back from the chip's memory; they become the known contents."""
        got = self.bfm.read_words(base, count)
        self.shadow[base : base + count] = got
        self.known[base : base + count] = True
        return got
