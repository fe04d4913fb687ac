"""The input words one output word of an instruction was made from, for a failure report.

A wrong word is quicker to debug beside what produced it: a MATMUL output C[i][j] beside row i
of A and column j of B, a VADD output beside a[i] and b[i], a softmax output beside its element
and the vector's extremes, a copied word beside its source word and address. `inputs_of` reads
them from the memories as they were before the instruction ran, by hw/ISA.md's definitions;
the paged instructions' source addresses are the reference machine's own
(`model.chip.machine.Machine.data_addresses`). Operands show as int8, as the units read them;
copied words as the 32-bit words they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.chip.isa import FLAG_BT, PAGED_OPS, ChipConfig, Instr, Op
from model.chip.machine import Machine, int8_of

SHORT = 16  # a vector up to this long is listed whole, a longer one by its relevant part
LISTED = 8  # the most positions of a maximum named


@dataclass(frozen=True)
class Memories:
    """The memories as the instruction found them."""

    sram: np.ndarray
    ext: np.ndarray | None = None  # for the instructions that read or write it
    cfg: ChipConfig | None = None  # for the paged instructions' addresses


def inputs_of(instr: Instr, memory: str, address: int, before: Memories) -> str:
    """The inputs of word ``address`` of ``memory`` ("sram" or "ext") as ``instr`` writes it,
    or '' when the instruction writes no such word."""
    op = Op(instr.op)
    if op in PAGED_OPS:
        return _paged(instr, memory, address, before)
    if op in (Op.LOAD, Op.STORE):
        return _copied(instr, memory, address, before)
    if memory != "sram":
        return ""
    if op == Op.MATMUL:
        return _matmul(instr, address - instr.c, before.sram)
    if op == Op.VADD:
        return _vadd(instr, address - instr.c, before.sram)
    if op in (Op.VMAX, Op.ARGMAX):
        return _vector("a", instr.a, instr.length, before.sram) if address == instr.c else ""
    if op == Op.SOFTMAX:
        return _softmax(instr, address - instr.c, before.sram)
    return ""


def _int8(sram: np.ndarray, addresses) -> list[int]:
    return int8_of(sram[np.asarray(addresses, dtype=np.int64)]).tolist()


def _span(addresses: range) -> str:
    """'sram words A .. B' (with 'every S' when they are S apart), or 'sram word A'."""
    if len(addresses) == 1:
        return f"sram word {addresses[0]}"
    every = f" every {addresses.step}" if addresses.step != 1 else ""
    return f"sram words {addresses[0]} .. {addresses[-1]}{every}"


def _vadd(instr: Instr, e: int, sram: np.ndarray) -> str:
    if not 0 <= e < instr.length:
        return ""
    a, b = instr.a + e, instr.b + e
    x, y = _int8(sram, [a, b])
    return f"a[{e}] = {x} (sram word {a}), b[{e}] = {y} (sram word {b})"


def _matmul(instr: Instr, e: int, sram: np.ndarray) -> str:
    """C[i][j]: row i of A and column j of B (hw/ISA.md, "MATMUL")."""
    if not 0 <= e < instr.m * instr.n:
        return ""
    i, j = divmod(e, instr.n)
    k = instr.k
    row = range(instr.a + i * k, instr.a + i * k + k)
    if instr.flags & FLAG_BT:
        column = range(instr.b + j * k, instr.b + j * k + k)
    else:
        column = range(instr.b + j, instr.b + j + k * instr.n, instr.n)
    return (f"C[{i}][{j}] from A row {i} = {_int8(sram, row)} ({_span(row)}) and B column {j} "
            f"= {_int8(sram, column)} ({_span(column)})")


def _vector(name: str, start: int, length: int, sram: np.ndarray) -> str:
    """The whole vector when short; else where it lies and its maximum's positions."""
    where = range(start, start + length)
    values = _int8(sram, where)
    if length <= SHORT:
        return f"{name} = {values} ({_span(where)})"
    peak = max(values)
    at = [index for index, value in enumerate(values) if value == peak]
    listed = ", ".join(map(str, at[:LISTED])) + (f" and {len(at) - LISTED} more"
                                                 if len(at) > LISTED else "")
    return (f"{name} = {length} int8 ({_span(where)}), minimum {min(values)}, maximum {peak} "
            f"at element {listed}")


def _softmax(instr: Instr, e: int, sram: np.ndarray) -> str:
    if not 0 <= e < instr.length:
        return ""
    x = _int8(sram, [instr.a + e])[0]
    return (f"x[{e}] = {x} (sram word {instr.a + e}) of "
            f"{_vector('x', instr.a, instr.length, sram)}")


def _copied(instr: Instr, memory: str, address: int, before: Memories) -> str:
    """LOAD: sram[b + e] = ext[a + e]; STORE: ext[a + e] = sram[b + e]."""
    loads = Op(instr.op) == Op.LOAD
    e = address - (instr.b if loads else instr.a)
    if memory != ("sram" if loads else "ext") or not 0 <= e < instr.length:
        return ""
    if loads:
        return _word("ext", instr.a + e, before.ext)
    return _word("sram", instr.b + e, before.sram)


def _paged(instr: Instr, memory: str, address: int, before: Memories) -> str:
    """The pool word a paged load brought, or the scratchpad word a paged store took (a
    PCOPY's store: its pool word, through the scratchpad)."""
    reads, writes = Machine(before.ext, before.cfg).data_addresses(instr)
    if memory == "sram":
        k = address - instr.b
        return _word("ext", int(reads[k]), before.ext) if 0 <= k < reads.size else ""
    positions = np.flatnonzero(writes == address)
    if positions.size == 0:
        return ""
    k = int(positions[-1])  # a page listed twice: the later row is the one that stays
    if Op(instr.op) == Op.PSTORE:
        return _word("sram", instr.b + k, before.sram)
    return f"{_word('ext', int(reads[k]), before.ext)} through sram word {instr.b + k}"


def _word(memory: str, address: int, words: np.ndarray) -> str:
    return f"{memory} word {address} = {int(words[address]):#010x}"
