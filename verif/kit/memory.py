"""Bulk backdoor access to a memory array, through a mirror of what the testbench put there.

Backdoor writes cost microseconds a word, so the mirror remembers each word's last known value
and a bulk write touches only the words that change. Any unpacked array of 32-bit words works."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from model.chip.machine import words


class UnknownValue(AssertionError):
    """A value the testbench reads holds X or Z (only Icarus can show this), anywhere."""


def known(value, what: str) -> int:
    """The integer of a logic value, or UnknownValue if any bit is X or Z (``int(text, 2)``
    rejects them itself; cocotb's ``is_resolvable`` costs about 20 us a word)."""
    try:
        return int(str(value), 2)
    except ValueError:
        raise UnknownValue(f"{what} is {value}") from None


class Backdoor:
    """One memory array of the design, and what the testbench knows it holds; ``put`` writes
    words into the simulator (one VPI write each unless a bulk load is given)."""

    def __init__(self, array, size: int, name: str = "memory word",
                 put: Callable[[np.ndarray, np.ndarray], None] | None = None):
        self.array = array
        self.name = name
        self.put = put or self.put_each
        self.shadow = np.zeros(size, dtype=np.uint32)
        # A word never written is unknown (an earlier test may have left anything there).
        self.known = np.zeros(size, dtype=bool)
        self.words_written = 0

    @property
    def size(self) -> int:
        return self.shadow.size

    def write(self, base: int, values) -> int:
        """Write ``values`` at ``base``, skipping words that hold them; returns how many changed."""
        wanted = words(values).reshape(-1)
        end = base + wanted.size
        stale = np.flatnonzero((self.shadow[base:end] != wanted) | ~self.known[base:end])
        if stale.size:
            self.put(base + stale, wanted[stale])
        self.shadow[base:end] = wanted
        self.known[base:end] = True
        self.words_written += stale.size
        return stale.size

    def put_each(self, addresses: np.ndarray, values: np.ndarray) -> None:
        """Word ``addresses[i]`` becomes ``values[i]``, one VPI write each."""
        for address, value in zip(addresses.tolist(), values.tolist(), strict=True):
            self.array[address].value = value

    def cleared(self) -> None:
        """The design has just set every word to zero by itself (not through this mirror)."""
        self.shadow[:] = 0
        self.known[:] = True

    def load(self, image: np.ndarray) -> int:
        """The whole memory becomes ``image`` followed by zeros."""
        padded = np.zeros(self.size, dtype=np.uint32)
        padded[: len(image)] = words(image)
        return self.write(0, padded)

    def read(self, base: int, count: int) -> np.ndarray:
        """Words base .. base + count - 1 as uint32, read from the simulator into the mirror."""
        self.fetch(np.arange(base, base + count))
        return self.shadow[base : base + count].copy()

    def fetch(self, addresses: np.ndarray) -> None:
        """Read the words at ``addresses`` from the simulator into the mirror."""
        texts = [str(self.array[address].value) for address in addresses.tolist()]
        try:
            got = np.array([int(text, 2) for text in texts], dtype=np.uint32)
        except ValueError:
            bad = next(i for i, text in enumerate(texts) if text.strip("01"))
            raise UnknownValue(f"{self.name} {addresses[bad]} is {texts[bad]}") from None
        self.shadow[addresses] = got
        self.known[addresses] = True

    def read_all(self) -> np.ndarray:
        return self.read(0, self.size)
