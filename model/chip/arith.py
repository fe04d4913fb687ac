"""The chip's integer arithmetic, written once (hw/ISA.md): requantization, saturation, softmax.

Every rounding is spelled out, because Python's `//` floors, `round()` rounds half to even and
numpy int32 wraps silently: none of them is what the hardware does. Intermediates are int64.
"""

from __future__ import annotations

import numpy as np

from model.chip.exp_table import EXP
from model.chip.isa import QUO_W

INT8_MIN, INT8_MAX = -128, 127
INT32_MIN = -(2**31)
PROB_ONE = 127  # SOFTMAX output that stands for probability 1

_EXP = np.asarray(EXP, dtype=np.int64)


def sat8(x: np.ndarray) -> np.ndarray:
    """Clamp to the int8 range."""
    return np.clip(np.asarray(x, dtype=np.int64), INT8_MIN, INT8_MAX)


def rounding_doubling_high_mul(x: np.ndarray, mult: int) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul: x*mult / 2^31, ties toward +infinity."""
    x = np.asarray(x, dtype=np.int64)
    product = x * np.int64(mult)
    nudge = np.where(product >= 0, np.int64(1 << 30), np.int64(1 - (1 << 30)))
    total = product + nudge
    high = np.where(total >= 0, total >> 31, -((-total) >> 31))  # truncate toward zero
    if mult != INT32_MIN:  # the one overflow needs both operands at INT32_MIN
        return high
    return np.where(x == INT32_MIN, np.int64(2**31 - 1), high)


def rounding_shift_right(x: np.ndarray, shift: int) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT: x / 2^shift, ties away from zero."""
    x = np.asarray(x, dtype=np.int64)
    shift = min(shift, 63)  # |x| < 2^32, so any shift from 33 up gives the same result
    mask = np.int64((1 << shift) - 1)
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0).astype(np.int64)
    return (x >> shift) + (remainder > threshold).astype(np.int64)


def requant_unclamped(acc: np.ndarray, mult: int, shift: int) -> np.ndarray:
    """Steps 1-3 of ISA.md's requantization, before saturation."""
    return rounding_shift_right(rounding_doubling_high_mul(acc, mult), shift)


def requant(acc: np.ndarray, mult: int, shift: int) -> np.ndarray:
    """An int32 accumulator to int8: the whole of ISA.md's requantization."""
    return sat8(requant_unclamped(acc, mult, shift))


def softmax_int(x: np.ndarray) -> np.ndarray:
    """ISA.md's SOFTMAX of an int8 vector: probabilities in 0..127 (127 stands for 1)."""
    x = np.asarray(x, dtype=np.int64)
    e = _EXP[x.max() - x]
    total = int(e.sum())
    return (e * PROB_ONE + (total >> 1)) // total  # all terms are non-negative: // truncates


def divu(numerator: int, denominator: int, quotient_bits: int = QUO_W) -> tuple[int, int]:
    """The divider block (hw/ISA.md, "SOFTMAX"): exact when the quotient fits ``quotient_bits``
    (SOFTMAX's always does); otherwise, a zero denominator included, the quotient is all ones."""
    ones = (1 << quotient_bits) - 1
    if numerator >= denominator << quotient_bits:
        return ones, numerator - denominator * ones
    return numerator // denominator, numerator % denominator


def quantize_multiplier(scale: float) -> tuple[int, int]:
    """A real scale in (0, 1) as (mult, shift) with mult in [2^30, 2^31): ISA.md's convention."""
    if not 0.0 < scale < 1.0:
        raise ValueError(f"requant scale {scale} must be in (0, 1): rescale the operands")
    shift = 0
    while scale * 2 ** (shift + 1) < 1.0:
        shift += 1
    mult = round(scale * 2 ** (31 + shift))
    if mult == 2**31:  # rounding reached the top of the range: halve and use one shift less
        mult //= 2
        shift -= 1
    if not 0 <= shift <= 31:
        raise ValueError(f"requant scale {scale} does not fit mult in [2^30, 2^31), shift 0..31")
    return mult, shift
