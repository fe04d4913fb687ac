"""Exact comparison with a prediction, reported as the first difference.

One report for every checker: the scoreboard (named output words, every write), the block
tests (scratchpad words) and the replay testbench. Counters compare with the reference
machine's own ``model.machine.counter_differences``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

# The label of the line a report names its first difference on ("  first difference: ..."):
# the scoreboard writes it, triage picks that line out (verif/regress/failure_groups.py).
FIRST_DIFFERENCE = "first difference"


def unnamed(address: int) -> str:
    return ""


def first_memory_difference(expected: np.ndarray, got: np.ndarray, base: int = 0,
                            name_of: Callable[[int], str] = unnamed,
                            what: str = "memory word") -> str | None:
    """The first differing word as 'memory word A (name): expected X, got Y (N words
    differ)', or None when the regions are equal."""
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


def first_write_difference(expected: Mapping[int, int], got: Mapping[int, int],
                           name_of: Callable[[int], str] = unnamed) -> str | None:
    """The lowest address where the words written differ, or None when they are identical.

    ``expected`` and ``got`` map each address written to its final value (the reference
    machine's writes, the chip's writes on its memory port). An address in only one of them is
    a stray write (the chip's) or a missing one; in both, the two final values differ.
    """
    differing = sorted(address for address in expected.keys() | got.keys()
                       if expected.get(address) != got.get(address))
    if not differing:
        return None
    address = differing[0]
    word = _word("memory word", address, name_of)
    if address not in expected:
        line = (f"stray write: {word}: the reference machine wrote nothing there, "
                f"the chip wrote {got[address]:#010x}")
    elif address not in got:
        line = (f"missing write: {word}: the reference machine wrote "
                f"{expected[address]:#010x}, the chip wrote nothing there")
    else:
        line = (f"different value: {word}: the reference machine wrote {expected[address]:#010x}, "
                f"the chip wrote {got[address]:#010x}")
    if len(differing) > 1:
        line += f" ({len(differing)} written words differ)"
    return line


def _word(what: str, address: int, name_of: Callable[[int], str]) -> str:
    name = name_of(address)
    return f"{what} {address}" + (f" ({name})" if name else "")
