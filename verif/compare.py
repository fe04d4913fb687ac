"""Exact comparison of a chip run with its prediction, reported as the first difference."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from model.isa import Op
from model.machine import Counters


def first_memory_difference(expected: np.ndarray, got: np.ndarray, base: int = 0) -> str | None:
    """The first differing word as 'address: expected X, got Y', or None when equal."""
    expected = np.asarray(expected, dtype=np.uint32)
    got = np.asarray(got, dtype=np.uint32)
    if expected.shape != got.shape:
        return f"memory regions differ in size: expected {expected.size} words, got {got.size}"
    differing = np.flatnonzero(expected != got)
    if differing.size == 0:
        return None
    i = int(differing[0])
    return (f"memory word {base + i}: expected {int(expected[i]):#010x}, got {int(got[i]):#010x} "
            f"({differing.size} words differ)")


def counter_differences(expected: Counters, got: Counters) -> list[str]:
    """One line per counter that differs, in ISA.md's order.

    A per-opcode counter (`ops`) gives one line per differing opcode, named by it:
    'counter ops[MATMUL]: expected 4, got 3'.
    """
    lines = []
    for (name, want), have in zip(expected.as_dict().items(), got.as_dict().values(),
                                  strict=True):
        if isinstance(want, list) or isinstance(have, list):
            lines += _element_differences(name, list(want), list(have))
        elif want != have:
            lines.append(f"counter {name}: expected {want}, got {have}")
    return lines


def _element_differences(name: str, want: list[int], have: list[int]) -> list[str]:
    if len(want) != len(have):
        return [f"counter {name}: expected {want}, got {have}"]

    def label(index: int) -> str:
        return Op(index).name if name == "ops" and index < len(Op) else str(index)

    return [f"counter {name}[{label(i)}]: expected {w}, got {h}"
            for i, (w, h) in enumerate(zip(want, have, strict=True)) if w != h]


def first_named_difference(expected: np.ndarray, got: np.ndarray, base: int,
                           name_of) -> str | None:
    """Like first_memory_difference, with the word's name (for example 'logits[3]') added."""
    line = first_memory_difference(expected, got, base)
    if line is None or line.startswith("memory regions"):
        return line
    address = base + int(np.flatnonzero(np.asarray(expected, np.uint32)
                                         != np.asarray(got, np.uint32))[0])
    return line.replace(f"memory word {address}:", f"memory word {address} ({name_of(address)}):")


def first_write_difference(expected: Mapping[int, int], got: Mapping[int, int],
                           name_of: Callable[[int], str]) -> str | None:
    """The lowest address where the words written differ, or None when they are identical.

    `expected` and `got` map each address written to its final value (the reference machine's
    STOREs, the chip's writes on its memory port). An address in only one of them is a stray
    write (the chip's) or a missing one; in both, the two final values differ. `name_of` names
    the word (for example 'logits[3]', or 'outside the outputs').
    """
    differing = sorted(address for address in expected.keys() | got.keys()
                       if expected.get(address) != got.get(address))
    if not differing:
        return None
    address = differing[0]
    word = f"memory word {address} ({name_of(address)})"
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
