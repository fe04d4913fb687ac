"""The SOFTMAX exponential table of hw/ISA.md: EXP[d] = floor(65535 * exp(-d / 16) + 0.5)."""

from __future__ import annotations

import math

EXP_ENTRIES = 256
EXP_FRAC_BITS = 4  # an index step is 1/16 of a natural-log unit
EXP_ONE = 65535

EXP: tuple[int, ...] = tuple(
    math.floor(EXP_ONE * math.exp(-d / 2**EXP_FRAC_BITS) + 0.5) for d in range(EXP_ENTRIES)
)
