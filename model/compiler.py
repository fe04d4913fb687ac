"""The decode step of the tiny model compiled to the chip's instruction set (hw/ISA.md).

A program runs one decode step with a context of ``n`` tokens: the ``n - 1`` cached key and value
rows (``kc``, ``vc``, gathered by the host) plus the new token's. Data flow on the chip:

    LOAD weights, x, kc, vc
    q, k_new, v_new = x Wq, x Wk, x Wv          MATMUL + requant; k_new lands right after kc and
                                                 v_new right after vc in the scratchpad
    scores = [kc; k_new] q                      one MATMUL with B transposed over all n rows,
                                                 requantized so that 1 int step = 1/16 nat
    p = SOFTMAX(scores)                         0..127 stands for 0..1
    attn = p [vc; v_new]                        MATMUL with k = n
    out = attn Wo; h = x + out                  MATMUL requantized to x's scale, then VADD
    logits = h Wout; token = ARGMAX(logits)
    STORE logits, token, k_new, v_new

int8 scales come from float calibration runs (``calibrate``). The scales of x (and the residual
h), of k and of v are shared by every program: cached rows written by the program for context
n are read by the program for context n + 1. The other scales are per context.

External memory has one fixed layout for every context (``Layout``): the program at 0, then
the weights, then the per-step inputs x, kc, vc, then the outputs. A testbench therefore loads
the weights once and writes only the program (when the context changes) and the inputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from model import machine
from model.arith import INT8_MAX, PROB_ONE, quantize_multiplier
from model.exp_table import EXP_STEPS_PER_UNIT
from model.isa import (
    WORDS_PER_INSTR,
    ChipConfig,
    Instr,
    argmax,
    assemble,
    halt,
    load,
    matmul,
    softmax,
    store,
    vadd,
)
from model.machine import Counters, int8_of
from model.step_rule import context_size
from model.tiny_lm import StepTrace, TinyLM, float_trace, window_slice

SCORE_STEPS_PER_NAT = EXP_STEPS_PER_UNIT  # SOFTMAX reads an int step as 1/16 nat
PROGRAM_WORDS = 32 * WORDS_PER_INSTR  # room reserved for the longest program (19 instructions)
WEIGHT_NAMES = ("w_q", "w_k", "w_v", "w_o", "w_out")  # their order in memory


# ---- quantization ------------------------------------------------------------------------------


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


SHARED_TENSORS = ("x", "k", "v")  # one range for every context: x also covers out and hidden
CONTEXT_TENSORS = ("q", "attn", "logits")  # one range per context size


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
    """Greedy windowed float decodes of ``steps`` tokens from every start token.

    Every context size the host will meet (1 .. min(steps, window)) is seen at least once.
    """
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
            calibration.observe(context_size(step, window), trace)
            keys.append(trace.k)
            values.append(trace.v)
            token = int(np.argmax(trace.logits))
    return calibration


# ---- scales ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scales:
    """Every int8 scale of one program (real value = int * scale) and every requant."""

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


# ---- memory layout -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """External-memory addresses, the same for every context up to ``max_context``.

    The per-step inputs are three regions: x (dim words), kc and vc (up to max_context - 1
    rows of dim words each; a program for context n reads the first n - 1 rows).
    """

    dim: int
    vocab: int
    max_context: int
    program: int  # always 0: the chip starts there
    weights: int
    weight_words: int
    x: int
    kc: int
    vc: int
    logits: int
    token: int
    k_new: int
    v_new: int
    end: int  # one past the last word used

    @classmethod
    def for_model(cls, dim: int, vocab: int, max_context: int) -> Layout:
        weight_words = 4 * dim * dim + dim * vocab
        x = PROGRAM_WORDS + weight_words
        kc = x + dim
        vc = kc + (max_context - 1) * dim
        logits = vc + (max_context - 1) * dim
        token = logits + vocab
        k_new = token + 1
        v_new = k_new + dim
        return cls(dim, vocab, max_context, program=0, weights=PROGRAM_WORDS,
                   weight_words=weight_words, x=x, kc=kc, vc=vc, logits=logits, token=token,
                   k_new=k_new, v_new=v_new, end=v_new + dim)

    @property
    def inputs(self) -> tuple[int, int]:
        """The per-step input words [start, end): x, kc and vc, in that order."""
        return self.x, self.vc + (self.max_context - 1) * self.dim

    @property
    def outputs(self) -> tuple[int, int]:
        """The words the program stores [start, end): logits, token, k_new, v_new."""
        return self.logits, self.end


@dataclass(frozen=True)
class Scratchpad:
    """Scratchpad (SRAM) addresses of one program: K and V hold n rows each."""

    weights: dict[str, int]
    x: int
    q: int
    keys: int  # n rows: kc, then k_new
    values: int  # n rows: vc, then v_new
    scores: int
    probs: int
    attn: int
    out: int
    hidden: int
    logits: int
    token: int
    end: int

    @classmethod
    def for_context(cls, model: TinyLM, context: int) -> Scratchpad:
        d, addr = model.dim, 0
        weights = {}
        for name in WEIGHT_NAMES:
            weights[name] = addr
            addr += getattr(model, name).size
        sizes = (("x", d), ("q", d), ("keys", context * d), ("values", context * d),
                 ("scores", context), ("probs", context), ("attn", d), ("out", d),
                 ("hidden", d), ("logits", model.vocab), ("token", 1))
        places = {}
        for name, size in sizes:
            places[name] = addr
            addr += size
        return cls(weights=weights, end=addr, **places)


# ---- the program -------------------------------------------------------------------------------


def _mm(requant: Requant, a: int, b: int, c: int, m: int, k: int, n: int,
        b_transposed: bool = False) -> Instr:
    return matmul(a, b, c, m, k, n, mult=requant.mult, shift=requant.shift,
                  b_transposed=b_transposed)


def build_program(model: TinyLM, context: int, scales: Scales, layout: Layout,
                  pad: Scratchpad) -> list[Instr]:
    """The instructions of one decode step with ``context`` tokens (see the module docstring)."""
    d, n, rq = model.dim, context, scales.requants
    w = pad.weights
    k_new, v_new = pad.keys + (n - 1) * d, pad.values + (n - 1) * d
    program = [load(layout.weights, w["w_q"], layout.weight_words), load(layout.x, pad.x, d)]
    if n > 1:
        rows = (n - 1) * d
        program += [load(layout.kc, pad.keys, rows), load(layout.vc, pad.values, rows)]
    program += [
        _mm(rq["q"], pad.x, w["w_q"], pad.q, 1, d, d),
        _mm(rq["k"], pad.x, w["w_k"], k_new, 1, d, d),
        _mm(rq["v"], pad.x, w["w_v"], v_new, 1, d, d),
        _mm(rq["scores"], pad.q, pad.keys, pad.scores, 1, d, n, b_transposed=True),
        softmax(pad.scores, pad.probs, n),
        _mm(rq["attn"], pad.probs, pad.values, pad.attn, 1, n, d),
        _mm(rq["out"], pad.attn, w["w_o"], pad.out, 1, d, d),
        vadd(pad.x, pad.out, pad.hidden, d),
        _mm(rq["logits"], pad.hidden, w["w_out"], pad.logits, 1, d, model.vocab),
        argmax(pad.logits, pad.token, model.vocab),
        store(pad.logits, layout.logits, model.vocab),
        store(pad.token, layout.token, 1),
        store(k_new, layout.k_new, d),
        store(v_new, layout.v_new, d),
        halt(),
    ]
    return program


# ---- compiled steps and their results ----------------------------------------------------------


@dataclass
class StepResult:
    """What one run of a step program returns (from the reference machine or the RTL)."""

    logits_int: np.ndarray  # (vocab,) int8 values
    logits: np.ndarray  # (vocab,) dequantized
    token: int  # the chip's ARGMAX
    k_new: np.ndarray  # (dim,) int8: the key row the host caches
    v_new: np.ndarray  # (dim,) int8: the value row the host caches
    counters: Counters  # the five cycle counters and the event counters

    @property
    def cycles(self) -> tuple[int, int, int, int, int]:
        """total, dma, mat, vec, sm."""
        return self.counters.cycles()


@dataclass
class CompiledStep:
    """One decode-step program for a context of ``context`` tokens, ready to run."""

    context: int
    words: np.ndarray  # the program, uint32, placed at external address 0
    weight_words: np.ndarray  # the int8 weights, one per word, placed at layout.weights
    layout: Layout
    scratchpad: Scratchpad
    scales: Scales
    cfg: ChipConfig

    def input_words(self, x: np.ndarray, kc: np.ndarray, vc: np.ndarray) -> dict[int, np.ndarray]:
        """The per-step writes to external memory: {address: words} for x, kc and vc."""
        d, rows = self.layout.dim, self.context - 1
        kc = np.asarray(kc, dtype=np.int64).reshape(-1, d)
        vc = np.asarray(vc, dtype=np.int64).reshape(-1, d)
        if len(kc) != rows or len(vc) != rows:
            raise ValueError(
                f"the program for context {self.context} takes {rows} cached rows, "
                f"got {len(kc)} keys and {len(vc)} values"
            )
        x = np.asarray(x, dtype=np.int64).reshape(d)
        return {self.layout.x: machine.words(x), self.layout.kc: machine.words(kc.reshape(-1)),
                self.layout.vc: machine.words(vc.reshape(-1))}

    def image(self, x: np.ndarray, kc: np.ndarray, vc: np.ndarray) -> np.ndarray:
        """The whole external-memory image of one step: program, weights, inputs."""
        image = np.zeros(self.layout.end, dtype=np.uint32)
        image[: self.words.size] = self.words
        image[self.layout.weights : self.layout.weights + self.weight_words.size] = (
            self.weight_words
        )
        for address, values in self.input_words(x, kc, vc).items():
            image[address : address + values.size] = values
        return image

    def read_result(self, ext: np.ndarray, counters: Counters) -> StepResult:
        """Decode the outputs from the final external memory (of either implementation)."""
        lay = self.layout
        logits_int = int8_of(ext[lay.logits : lay.logits + lay.vocab])
        return StepResult(
            logits_int=logits_int,
            logits=logits_int * self.scales.logits,
            token=int(ext[lay.token]),
            k_new=int8_of(ext[lay.k_new : lay.k_new + lay.dim]),
            v_new=int8_of(ext[lay.v_new : lay.v_new + lay.dim]),
            counters=counters,
        )


def compile_step(model: TinyLM, context: int, calibration: Calibration,
                 cfg: ChipConfig | None = None) -> CompiledStep:
    """Compile the decode step for ``context`` tokens; check it fits the chip."""
    cfg = cfg or ChipConfig()
    if not 1 <= context <= cfg.k_max:
        raise ValueError(
            f"context {context} is outside 1..{cfg.k_max}: the weighted sum reduces over "
            "the context, and a MATMUL reduces over at most K_MAX"
        )
    scales = choose_scales(model, calibration, context)
    layout = Layout.for_model(model.dim, model.vocab, cfg.k_max)
    pad = Scratchpad.for_context(model, context)
    words = np.asarray(assemble(build_program(model, context, scales, layout, pad)), np.uint32)
    _check_fits(words, layout, pad, cfg)
    weights = np.concatenate(
        [quantize(getattr(model, name), scales.weights[name]).reshape(-1) for name in WEIGHT_NAMES]
    )
    return CompiledStep(context, words, machine.words(weights), layout, pad, scales, cfg)


def _check_fits(words: np.ndarray, layout: Layout, pad: Scratchpad, cfg: ChipConfig) -> None:
    if words.size > PROGRAM_WORDS:
        raise ValueError(f"program of {words.size} words exceeds its {PROGRAM_WORDS}-word room")
    if layout.end > cfg.ext_words:
        raise ValueError(f"layout needs {layout.end} external words, the chip has {cfg.ext_words}")
    if pad.end > cfg.sram_words:
        raise ValueError(f"scratchpad needs {pad.end} words, the chip has {cfg.sram_words}")


def run_step(step: CompiledStep, x: np.ndarray, kc: np.ndarray, vc: np.ndarray) -> StepResult:
    """Run one step on the reference machine; an error stop raises MachineError."""
    result = machine.run(step.image(x, kc, vc), step.cfg, raise_on_error=True)
    return step.read_result(result.ext, result.counters)


def max_context(cfg: ChipConfig) -> int:
    """The longest context a step program can attend on this chip.

    The weighted sum is one MATMUL reducing over the context (k <= K_MAX) and the scores are
    one SOFTMAX over it (len <= SM_MAX): the smaller bound wins.
    """
    return min(cfg.k_max, cfg.sm_max)
