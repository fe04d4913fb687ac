"""What the chip monitor saw after one run: the monitor's analysis transaction.

Everything here comes from the RTL after `done`: its status ports and event counters, its
output region of external memory, the instruction words it fetched (the first `ev_instr`
instructions are the ones it executed) and the softmax input it left in its scratchpad.
Nothing comes from the reference model, so chip-side coverage measures what the chip did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from model.compiler import Layout
from model.isa import Op
from model.machine import int8_of
from verif.chip_bfm import ChipStatus


@dataclass
class ExecutedInstr:
    """Word 0 of one executed instruction: its opcode and size fields."""

    op: int
    m: int
    k: int
    n: int

    @property
    def length(self) -> int:
        return (self.k << 8) | self.n

    @classmethod
    def from_word(cls, word: int) -> ExecutedInstr:
        return cls(op=word >> 24, m=(word >> 16) & 0xFF, k=(word >> 8) & 0xFF, n=word & 0xFF)


@dataclass
class ChipObservation:
    """One run of the chip, as observed at its pins and memories after done."""

    status: ChipStatus | None  # None when a status port was X or Z (see `unknown`)
    out_base: int  # external address of outputs[0]
    outputs: np.ndarray  # the output region, uint32 words
    executed: list[ExecutedInstr] = field(default_factory=list)
    softmax_inputs: np.ndarray | None = None  # int8 scores the SOFTMAX read, if one ran
    sim_time_ns: int = 0
    unknown: str | None = None  # which output held X or Z (Icarus only)

    def opcodes(self) -> list[int]:
        return [instr.op for instr in self.executed]

    def dma_lengths(self) -> list[int]:
        return [i.length for i in self.executed if i.op in (Op.LOAD, Op.STORE)]


@dataclass
class DecodedOutputs:
    """The output region read as the compiled step defines it (compiler.Layout)."""

    logits_int: np.ndarray
    token: int
    k_new: np.ndarray
    v_new: np.ndarray


def decode_outputs(layout: Layout, obs: ChipObservation) -> DecodedOutputs:
    """Split the observed output words into logits, token, k_new and v_new."""

    def at(address: int, count: int) -> np.ndarray:
        start = address - obs.out_base
        return obs.outputs[start : start + count]

    return DecodedOutputs(
        logits_int=int8_of(at(layout.logits, layout.vocab)),
        token=int(at(layout.token, 1)[0]),
        k_new=int8_of(at(layout.k_new, layout.dim)),
        v_new=int8_of(at(layout.v_new, layout.dim)),
    )
