"""int8 quantization, calibration and the scales of every program.

The scales of x, k and v are shared by every program, since the rows written at context n are
read at n + 1; q, attn and logits have one per context, unless ``shared_context_scales`` widens
them so that a batch of any contexts runs each projection as one matmul.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from model.chip.arith import INT8_MAX, PROB_ONE, quantize_multiplier
from model.chip.exp_table import EXP_STEPS_PER_UNIT
from model.chip.machine import words
from model.kv.step_rule import plan_step
from model.lm.tiny_lm import StepTrace, TinyLM, float_trace, window_slice

SCORE_STEPS_PER_NAT = EXP_STEPS_PER_UNIT  # SOFTMAX reads an int step as 1/16 nat
WEIGHT_NAMES = ("w_q", "w_k", "w_v", "w_o", "w_out")  # their order in memory
SHARED_TENSORS = ("x", "k", "v")  # one range for every context: x also covers out and hidden
CONTEXT_TENSORS = ("q", "attn", "logits")  # one range per context size


def quantize(values: np.ndarray, scale: float) -> np.ndarray:
    """Symmetric int8: round to nearest (ties away from zero), saturate."""
    scaled = np.asarray(values, dtype=np.float64) / scale
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    return np.clip(rounded, -INT8_MAX - 1, INT8_MAX).astype(np.int64)


def int8_scale(max_abs: float) -> float:
    """The scale that maps the largest magnitude seen to 127."""
    if not max_abs > 0.0:
        raise ValueError("cannot choose an int8 scale for a tensor that is always zero")
    return max_abs / INT8_MAX


@dataclass(frozen=True)
class Requant:
    """One MATMUL's requantization: real scale, and its (mult, shift) encoding."""

    scale: float
    mult: int
    shift: int


def requant_for(stage: str, acc_scale: float, out_scale: float) -> Requant:
    """The requant that maps an accumulator of ``acc_scale`` to an output of ``out_scale``."""
    scale = acc_scale / out_scale
    if not 0.0 < scale < 1.0:
        raise ValueError(
            f"{stage}: requant scale {scale:.4g} is outside (0, 1): the output scale "
            f"{out_scale:.4g} is finer than the accumulator's {acc_scale:.4g}"
        )
    mult, shift = quantize_multiplier(scale)
    return Requant(scale, mult, shift)


# ---- calibration -------------------------------------------------------------------------------


@dataclass
class Calibration:
    """Largest magnitudes seen in float runs: shared ones, and per context size."""

    shared: dict[str, float] = field(default_factory=dict)
    per_context: dict[int, dict[str, float]] = field(default_factory=dict)

    def observe(self, context: int, trace: StepTrace) -> None:
        """Widen the ranges to cover one float step."""
        residual = max(_max_abs(trace.x), _max_abs(trace.out), _max_abs(trace.hidden))
        for name, value in (("x", residual), ("k", _max_abs(trace.k)), ("v", _max_abs(trace.v))):
            self.shared[name] = max(self.shared.get(name, 0.0), value)
        ranges = self.per_context.setdefault(context, {})
        for name in CONTEXT_TENSORS:
            ranges[name] = max(ranges.get(name, 0.0), _max_abs(getattr(trace, name)))

    def contexts(self) -> list[int]:
        return sorted(self.per_context)


def _max_abs(values: np.ndarray) -> float:
    return float(np.abs(values).max())


def calibrate(
    model: TinyLM, steps: int, window: int | None, starts: Iterable[int] | None = None,
    sinks: int = 0,
) -> Calibration:
    """Greedy windowed float decodes of ``steps`` tokens from every start token."""
    calibration = Calibration()
    for start in range(model.vocab) if starts is None else starts:
        token, keys, values = start, [], []
        for step in range(1, steps + 1):
            trace = float_trace(
                model,
                token,
                window_slice(keys, window, model.dim, sinks),
                window_slice(values, window, model.dim, sinks),
            )
            calibration.observe(plan_step(step, window, sinks).context, trace)
            keys.append(trace.k)
            values.append(trace.v)
            token = int(np.argmax(trace.logits))
    return calibration


def shared_context_scales(calibration: Calibration) -> Calibration:
    """The calibration with every context's ranges widened to the widest over all contexts,
    at the price of a coarser int8 grid for the narrower ones."""
    widest = {
        name: max(ranges[name] for ranges in calibration.per_context.values())
        for name in CONTEXT_TENSORS
    }
    per_context = {context: dict(widest) for context in calibration.per_context}
    return Calibration(dict(calibration.shared), per_context)


# ---- scales ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scales:
    """Every int8 scale of one context's program (real value = int * scale) and its requants."""

    weights: dict[str, float]
    x: float  # the input embedding, the attention output projection and the residual
    q: float
    k: float
    v: float
    attn: float
    logits: float
    requants: dict[str, Requant]


def choose_scales(model: TinyLM, calibration: Calibration, context: int) -> Scales:
    """The scales of the program for ``context`` tokens, and the requants they imply."""
    if context not in calibration.per_context:
        raise ValueError(
            f"context {context} was never seen in calibration (seen: {calibration.contexts()}); "
            "calibrate over more steps"
        )
    shared, ranges = calibration.shared, calibration.per_context[context]
    weights = {name: int8_scale(_max_abs(getattr(model, name))) for name in WEIGHT_NAMES}
    x, k, v = (int8_scale(shared[name]) for name in SHARED_TENSORS)
    q, attn, logits = (int8_scale(ranges[name]) for name in CONTEXT_TENSORS)
    score = 1.0 / SCORE_STEPS_PER_NAT  # int score = real score * 16
    prob = 1.0 / PROB_ONE
    requants = {
        "q": requant_for("q", x * weights["w_q"], q),
        "k": requant_for("k", x * weights["w_k"], k),
        "v": requant_for("v", x * weights["w_v"], v),
        "scores": requant_for("scores", q * k / np.sqrt(model.dim), score),
        "attn": requant_for("attn", prob * v, attn),
        "out": requant_for("out", attn * weights["w_o"], x),
        "logits": requant_for("logits", x * weights["w_out"], logits),
    }
    return Scales(weights, x, q, k, v, attn, logits, requants)


def weight_words(model: TinyLM, scales: Scales) -> np.ndarray:
    """The int8 weights, in WEIGHT_NAMES order, one sign-extended word each: every program's."""
    return words(np.concatenate([quantize(getattr(model, name), scales.weights[name]).reshape(-1)
                                 for name in WEIGHT_NAMES]))
