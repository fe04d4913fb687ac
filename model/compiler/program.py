"""The one program builder: a decode step of B requests (B = 1: the solo step), either mode.

The requests share the weights and the projections (B-row matmuls); attention stays per
request. Rows with different requants go in separate matmuls, so every request's outputs equal
its run alone, integer for integer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.chip.isa import (
    ChipConfig,
    Instr,
    argmax,
    assemble,
    disassemble,
    halt,
    load,
    matmul,
    softmax,
    store,
    vadd,
)
from model.chip.machine import Counters, int8_of
from model.compiler.gather import Gather, gather_for
from model.compiler.layout import Layout, Scratchpad, max_context
from model.compiler.quantize import Requant, Scales
from model.lm.tiny_lm import TinyLM


@dataclass
class StepResult:
    """One request's outputs of a run (from the reference machine or the RTL)."""

    logits_int: np.ndarray  # (vocab,) int8 values
    logits: np.ndarray  # (vocab,) dequantized
    token: int  # the chip's ARGMAX
    k_new: np.ndarray  # (dim,) int8: the key row the host caches
    v_new: np.ndarray  # (dim,) int8: the value row the host caches
    counters: Counters  # the run's counters (every request of a run carries the same)

    @property
    def cycles(self) -> tuple[int, int, int, int, int]:
        """total, dma, mat, vec, sm."""
        return self.counters.cycles()


def requant_runs(requants: Sequence[Requant]) -> list[tuple[int, int]]:
    """(first row, rows) of each run of consecutive rows sharing one requant."""
    runs: list[tuple[int, int]] = []
    for row, requant in enumerate(requants):
        if runs and requants[runs[-1][0]] == requant:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((row, 1))
    return runs


def _projection(requants: Sequence[Requant], a: int, b: int, c: int, k: int, n: int
                ) -> list[Instr]:
    """C = A B for B rows of A, one MATMUL per run of rows with the same requant."""
    return [matmul(a + first * k, b, c + first * n, rows, k, n, mult=requants[first].mult,
                   shift=requants[first].shift)
            for first, rows in requant_runs(requants)]


def _attention(index: int, context: int, scales: Scales, layout: Layout, pad: Scratchpad,
               gather: Gather) -> list[Instr]:
    """Request ``index``'s attention: its rows in, ATTN[index] out."""
    d, rq = layout.dim, scales.requants
    keys, values = pad.keys_of(index, context, d), pad.values_of(index, context, d)
    return [
        *gather.reads(layout, index, context, keys, values),
        matmul(pad.q + index * d, keys, pad.scores, 1, d, context, mult=rq["scores"].mult,
               shift=rq["scores"].shift, b_transposed=True),
        softmax(pad.scores, pad.probs, context),
        matmul(pad.probs, values, pad.attn + index * d, 1, context, d, mult=rq["attn"].mult,
               shift=rq["attn"].shift),
    ]


def build_program(model: TinyLM, contexts: tuple[int, ...], scales: Sequence[Scales],
                  layout: Layout, pad: Scratchpad, gather: Gather,
                  copy: bool = False) -> list[Instr]:
    """The instructions of one decode step of ``contexts``."""
    d, vocab, batch = model.dim, model.vocab, len(contexts)
    w = pad.weights

    def requants(stage: str) -> list[Requant]:
        return [s.requants[stage] for s in scales]

    program = [*gather.prologue(layout, copy), load(layout.weights, w["w_q"], layout.weight_words),
               load(layout.x, pad.x, batch * d)]
    program += _projection(requants("q"), pad.x, w["w_q"], pad.q, d, d)
    program += _projection(requants("k"), pad.x, w["w_k"], pad.k_new, d, d)
    program += _projection(requants("v"), pad.x, w["w_v"], pad.v_new, d, d)
    program += gather.new_rows(layout, pad, contexts)
    for i, n in enumerate(contexts):
        program += _attention(i, n, scales[i], layout, pad, gather)
    program += _projection(requants("out"), pad.attn, w["w_o"], pad.out, d, d)
    program.append(vadd(pad.x, pad.out, pad.hidden, batch * d))
    program += _projection(requants("logits"), pad.hidden, w["w_out"], pad.logits, d, vocab)
    program += [argmax(pad.logits + i * vocab, pad.tokens + i, vocab) for i in range(batch)]
    program += [store(pad.logits, layout.logits, batch * vocab),
                store(pad.tokens, layout.tokens, batch), halt()]
    return program


@dataclass
class StepProgram:
    """One compiled decode step for requests of ``contexts``, ready to run."""

    contexts: tuple[int, ...]
    words: np.ndarray  # the program, uint32, placed at external address 0
    weight_words: np.ndarray  # the int8 weights, one per word, placed at layout.weights
    layout: Layout
    scratchpad: Scratchpad
    scales: tuple[Scales, ...]  # request i's: its context's
    cfg: ChipConfig
    gather: str  # "host" or "chip"
    copy: bool = False  # behind chip gather's copy-on-write prologue

    @property
    def context(self) -> int:
        """The longest context of the step (a solo step's context)."""
        return max(self.contexts)

    @property
    def batch(self) -> int:
        return len(self.contexts)

    def instructions(self) -> list[Instr]:
        return disassemble(self.words)

    def attention_instructions(self) -> list[Instr]:
        """Every request's own attention, in program order: what a batch does not share."""
        gather = gather_for(self.gather)
        return [instr for i, n in enumerate(self.contexts)
                for instr in _attention(i, n, self.scales[i], self.layout, self.scratchpad,
                                        gather)]

    def read_results(self, ext: np.ndarray, counters: Counters,
                     new_rows: Sequence[tuple[int, int]] | None = None) -> list[StepResult]:
        """Every request's outputs from the final external memory; ``new_rows`` says where the
        new key and value rows are when not in the outputs (chip gather)."""
        lay, d = self.layout, self.layout.dim
        results = []
        for i, scales in enumerate(self.scales):
            k_at, v_at = new_rows[i] if new_rows else (lay.k_new + i * d, lay.v_new + i * d)
            logits_at = lay.logits + i * lay.vocab
            logits_int = int8_of(ext[logits_at : logits_at + lay.vocab])
            results.append(StepResult(
                logits_int=logits_int, logits=logits_int * scales.logits,
                token=int(ext[lay.tokens + i]), k_new=int8_of(ext[k_at : k_at + d]),
                v_new=int8_of(ext[v_at : v_at + d]), counters=counters))
        return results


def check_contexts(contexts: Sequence[int], layout: Layout, cfg: ChipConfig
                   ) -> tuple[int, ...]:
    """The contexts of a step, refused unless the layout and the chip can run them."""
    contexts = tuple(int(n) for n in contexts)
    if not 1 <= len(contexts) <= layout.max_batch:
        raise ValueError(f"a step of this layout runs 1..{layout.max_batch} requests, got "
                         f"{len(contexts)}")
    longest = max_context(cfg)
    for n in contexts:
        if not 1 <= n <= longest:
            raise ValueError(f"context {n} is outside 1..{longest}: the weighted sum reduces "
                             "over the context in one MATMUL (k <= K_MAX) and the scores are one "
                             "SOFTMAX (len <= SM_MAX)")
    return contexts


def compile_program(model: TinyLM, contexts: Sequence[int], scales: Sequence[Scales],
                    weight_words: np.ndarray, layout: Layout, cfg: ChipConfig, gather: Gather,
                    copy: bool = False) -> StepProgram:
    """Compile one decode step for requests of ``contexts``; check that it fits the chip."""
    contexts = check_contexts(contexts, layout, cfg)
    pad = Scratchpad.for_batch(model, contexts)
    instrs = build_program(model, contexts, scales, layout, pad, gather, copy)
    words = np.asarray(assemble(instrs), dtype=np.uint32)
    if words.size > layout.program_words:
        raise ValueError(f"a program of {words.size} words exceeds its {layout.program_words}-"
                         "word room")
    if pad.end > cfg.sram_words:
        raise ValueError(f"scratchpad needs {pad.end} words, the chip has {cfg.sram_words}")
    return StepProgram(contexts, words, weight_words, layout, pad, tuple(scales), cfg,
                       gather.mode, copy)
