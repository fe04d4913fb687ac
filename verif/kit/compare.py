"""Exact comparison with a prediction, reported as the first difference.

One report for every checker: the scoreboard, the block tests and the replay testbench. Counters
compare with ``model.chip.machine.counter_differences``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

# the label of a report's first-difference line, which `first_error` picks out
FIRST_DIFFERENCE = "first difference"


def first_error(message: str) -> str:
    """The line that says what went wrong: the first difference, else the first line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    telling = [line for line in lines if line.startswith(f"{FIRST_DIFFERENCE}:")]
    return (telling or lines or ["(no message)"])[0]


def unnamed(address: int) -> str:
    return ""


def first_memory_difference(expected: np.ndarray, got: np.ndarray, base: int = 0,
                            name_of: Callable[[int], str] = unnamed,
                            what: str = "memory word") -> str | None:
    """'memory word A (name): expected X, got Y (N words differ)' for the first, or None."""
    expected = np.asarray(expected, dtype=np.uint32)
    got = np.asarray(got, dtype=np.uint32)
    if expected.shape != got.shape:
        return f"memory regions differ in size: expected {expected.size} words, got {got.size}"
    differing = np.flatnonzero(expected != got)
    if differing.size == 0:
        return None
    i = int(differing[0])
    return (f"{_word(what, base + i, name_of)}: expected {int(expected[i]):#010x}, "
            f"got {int(got[i]):#010x} ({differing.size} words differ)")


@dataclass(frozen=True)
class WriteDifference:
    """A word written otherwise than predicted: a stray write, a missing one or another value."""

    address: int
    expected: int | None  # None: the prediction wrote nothing there (a stray write)
    got: int | None  # None: nothing was written there (a missing write)
    differing: int  # the written words that differ, this one included
    cycle: int | None = None  # the cycle of its last write, when a write log says

    @property
    def kind(self) -> str:
        if self.expected is None:
            return "stray write"
        return "missing write" if self.got is None else "different value"

    def describe(self, word: str, writer: str = "the chip") -> str:
        """'kind: word: the reference machine wrote X, {writer} wrote Y (N words differ)'."""
        line = (f"{self.kind}: {word}: the reference machine wrote {_written(self.expected)}, "
                f"{writer} wrote {_written(self.got)}")
        if self.differing > 1:
            line += f" ({self.differing} written words differ)"
        return line


def differing_writes(expected: Mapping[int, int], got: Mapping[int, int]) -> list[int]:
    """The addresses whose final words differ (stray and missing writes included), ascending."""
    return sorted(address for address in expected.keys() | got.keys()
                  if expected.get(address) != got.get(address))


def first_write_difference(expected: Mapping[int, int], got: Mapping[int, int],
                           name_of: Callable[[int], str] = unnamed) -> str | None:
    """The lowest address where the final words written differ, or None when identical."""
    differing = differing_writes(expected, got)
    if not differing:
        return None
    address = differing[0]
    difference = WriteDifference(address, expected.get(address), got.get(address),
                                 len(differing))
    return difference.describe(_word("memory word", address, name_of))


def _written(value: int | None) -> str:
    return "nothing there" if value is None else f"{value:#010x}"


def _word(what: str, address: int, name_of: Callable[[int], str]) -> str:
    name = name_of(address)
    return f"{what} {address}" + (f" ({name})" if name else "")
