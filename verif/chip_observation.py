"""What the chip monitor saw after one run: the monitor's analysis transaction.

Everything here comes from the RTL after `done`: its status ports, its cycle and event counters
(per-opcode counts, DMA words, the longest softmax and its widest input: hw/ISA.md, "Counters")
and its output region of external memory. Nothing comes from the reference model, and nothing is
inferred from the program or the scratchpad: chip-side coverage measures what the chip reported
doing, so a hole means the hardware did not do it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.compiler import Layout
from model.machine import int8_of
from verif.chip_bfm import ChipStatus


@dataclass
class ChipObservation:
    """One run of the chip, as observed at its pins and memories after done."""

    status: ChipStatus | None  # None when a status port was X or Z (see `unknown`)
    out_base: int  # external address of outputs[0]
    outputs: np.ndarray  # the output region, uint32 words
    sim_time_ns: int = 0
    unknown: str | None = None  # which output held X or Z (Icarus only)


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
