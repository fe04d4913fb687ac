"""Batched decode programs: one chip run advances B requests by one token each.

Continuous batching (model.serving) runs every running request one step further per chip run.
Each request has its own context ``n_i`` and its own cached rows, so attention stays per
request; what the requests share are the weights, loaded once per run instead of once per
token, and the projections, run as B-row matmuls (the systolic array is four rows tall, so
four rows cost little more than one):

    LOAD weights, X (B rows)
    Q, KN, VN = X Wq, X Wk, X Wv                  B-row MATMULs
    STORE KN, VN                                  the new rows: outputs, one block each
    for each request i:                           attention, exactly as in the solo program
        LOAD kc_i, vc_i right before KN[i], VN[i] over the rows of requests already done
        scores = [kc_i; KN[i]] q_i; p = SOFTMAX(scores); ATTN[i] = p [vc_i; VN[i]]
    OUT = ATTN Wo; H = X + OUT; LOGITS = H Wout   B-row MATMULs and one VADD
    ARGMAX each row of LOGITS; STORE LOGITS, TOKENS

The solo program loads the cached rows right before the new row, so that scores and the
weighted sum each reduce over one contiguous matrix; the batch program does the same inside
the B-row K and V matrices: request i's cached rows land over rows 0..i-1 (and a gap before
row 0), whose attention is done and whose new rows are already stored.

Exactness: every MATMUL output element is requantized on its own, so a row computed in a
B-row matmul equals the same row computed alone, provided the requant is the same. K and V
use scales shared by every context; Q, the output projection and the LM head use per-context
scales (model.compiler). Rows whose requants differ therefore go in separate matmuls (one per
run of equal requants); with ``shared_context_scales`` every context has the same scales and
each projection is one B-row matmul. Either way, every request's logits, token and K/V rows
equal its solo program's (compile_step / run_step) on the same inputs, integer for integer.

External memory has one layout for every batch of up to ``BATCH_MAX`` requests
(``BatchLayout``), so a testbench loads the weights once. In chip gather the same programs read
and write the rows through block tables instead (model.batch_paged_programs, beside the layout).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model import machine
from model.compiler import (
    CONTEXT_TENSORS,
    Calibration,
    Layout,
    Requant,
    Scales,
    Scratchpad,
    StepResult,
    calibrate,
    max_context,
    run_step,
)
from model.host import ProgramCache
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
from model.tiny_lm import TinyLM, random_model

BATCH_MAX = 8  # requests per chip run: the program room below is sized for it
BATCH_PROGRAM_WORDS = 128 * WORDS_PER_INSTR  # the longest batch program: 8 + 11 B instructions


# ---- scales ------------------------------------------------------------------------------------


def shared_context_scales(calibration: Calibration) -> Calibration:
    """The calibration with every context's ranges widened to the widest over all contexts.

    Every program then has the same Q, output and LM-head requants, so a batch of any
    contexts runs each projection as one B-row matmul. The price is a coarser int8 grid for
    the contexts whose own ranges were narrower.
    """
    widest = {
        name: max(ranges[name] for ranges in calibration.per_context.values())
        for name in CONTEXT_TENSORS
    }
    per_context = {context: dict(widest) for context in calibration.per_context}
    return Calibration(dict(calibration.shared), per_context)


# ---- memory ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchLayout:
    """External-memory addresses, the same for every batch of up to ``max_batch`` requests.

    Inputs: the x rows, then per request a slot of ``max_context - 1`` cached key rows and one
    of cached value rows (request i's first ``n_i - 1`` rows are read). Outputs: the logits
    (one row of ``vocab`` per request), the tokens, the new key rows, the new value rows.
    """

    dim: int
    vocab: int
    max_context: int
    max_batch: int
    weights: int
    weight_words: int
    x: int  # max_batch rows of dim
    kc: int  # max_batch slots of max_context - 1 rows
    vc: int
    logits: int  # max_batch rows of vocab
    tokens: int  # max_batch words
    k_new: int  # max_batch rows of dim
    v_new: int
    end: int  # one past the last word used

    program: int = 0  # the chip starts there

    @classmethod
    def for_model(cls, model: TinyLM, cfg: ChipConfig, max_batch: int = BATCH_MAX) -> BatchLayout:
        d, n = model.dim, max_context(cfg)
        weight_words = Layout.for_model(d, model.vocab, n).weight_words
        x = BATCH_PROGRAM_WORDS + weight_words
        kc = x + max_batch * d
        vc = kc + max_batch * (n - 1) * d
        logits = vc + max_batch * (n - 1) * d
        tokens = logits + max_batch * model.vocab
        k_new = tokens + max_batch
        v_new = k_new + max_batch * d
        return cls(d, model.vocab, n, max_batch, BATCH_PROGRAM_WORDS, weight_words, x, kc, vc,
                   logits, tokens, k_new, v_new, end=v_new + max_batch * d)

    def kc_slot(self, index: int) -> int:
        """Where request ``index``'s cached key rows start."""
        return self.kc + index * (self.max_context - 1) * self.dim

    def vc_slot(self, index: int) -> int:
        return self.vc + index * (self.max_context - 1) * self.dim

    @property
    def outputs(self) -> tuple[int, int]:
        """The words a program stores [start, end): logits, tokens, k_new, v_new."""
        return self.logits, self.end


@dataclass(frozen=True)
class BatchScratchpad:
    """Scratchpad addresses: the weights where the solo program keeps them, then B-row matrices.

    ``k_new`` and ``v_new`` (B rows each) are preceded by room for the longest context's
    cached rows: request i's cached rows are loaded right before its row i. ``scores`` and
    ``probs`` hold one request's attention at a time.
    """

    weights: dict[str, int]
    x: int
    q: int
    k_new: int
    v_new: int
    scores: int
    probs: int
    attn: int
    out: int
    hidden: int
    logits: int
    tokens: int
    end: int

    @classmethod
    def for_batch(cls, model: TinyLM, contexts: Sequence[int]) -> BatchScratchpad:
        solo = Scratchpad.for_context(model, 1)  # weights first, then x: solo.x ends them
        d, rows, longest = model.dim, len(contexts) * model.dim, max(contexts)
        cached = (longest - 1) * d  # room before row 0 for the cached rows
        places, addr = {}, solo.x
        sizes = (("x", rows, 0), ("q", rows, 0), ("k_new", rows, cached),
                 ("v_new", rows, cached), ("scores", longest, 0), ("probs", longest, 0),
                 ("attn", rows, 0), ("out", rows, 0), ("hidden", rows, 0),
                 ("logits", len(contexts) * model.vocab, 0), ("tokens", len(contexts), 0))
        for name, size, room_before in sizes:
            places[name] = addr + room_before
            addr += room_before + size
        return cls(weights=dict(solo.weights), end=addr, **places)

    def keys_of(self, index: int, context: int, dim: int) -> int:
        """Request ``index``'s keys [kc; k_new]: its context - 1 cached rows end at its row."""
        return self.k_new + (index - context + 1) * dim

    def values_of(self, index: int, context: int, dim: int) -> int:
        return self.v_new + (index - context + 1) * dim


# ---- the program -------------------------------------------------------------------------------


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


def _attention(index: int, context: int, scales: Scales, layout: BatchLayout,
               pad: BatchScratchpad, d: int) -> list[Instr]:
    """Request ``index``'s attention: its rows in, ATTN[index] out (the solo program's steps)."""
    rq, cached = scales.requants, (context - 1) * d
    keys, values = pad.keys_of(index, context, d), pad.values_of(index, context, d)
    program = []
    if context > 1:
        program += [load(layout.kc_slot(index), keys, cached),
                    load(layout.vc_slot(index), values, cached)]
    program += [
        matmul(pad.q + index * d, keys, pad.scores, 1, d, context, mult=rq["scores"].mult,
               shift=rq["scores"].shift, b_transposed=True),
        softmax(pad.scores, pad.probs, context),
        matmul(pad.probs, values, pad.attn + index * d, 1, context, d, mult=rq["attn"].mult,
               shift=rq["attn"].shift),
    ]
    return program


def build_batch_program(model: TinyLM, contexts: Sequence[int], scales: Sequence[Scales],
                        layout: BatchLayout, pad: BatchScratchpad) -> list[Instr]:
    """The instructions of one batched decode step (see the module docstring)."""
    d, vocab, batch = model.dim, model.vocab, len(contexts)
    w = pad.weights

    def requants(stage: str) -> list[Requant]:
        return [s.requants[stage] for s in scales]

    program = [load(layout.weights, w["w_q"], layout.weight_words),
               load(layout.x, pad.x, batch * d)]
    program += _projection(requants("q"), pad.x, w["w_q"], pad.q, d, d)
    program += _projection(requants("k"), pad.x, w["w_k"], pad.k_new, d, d)
    program += _projection(requants("v"), pad.x, w["w_v"], pad.v_new, d, d)
    program += [store(pad.k_new, layout.k_new, batch * d),
                store(pad.v_new, layout.v_new, batch * d)]
    for i, n in enumerate(contexts):
        program += _attention(i, n, scales[i], layout, pad, d)
    program += _projection(requants("out"), pad.attn, w["w_o"], pad.out, d, d)
    program.append(vadd(pad.x, pad.out, pad.hidden, batch * d))
    program += _projection(requants("logits"), pad.hidden, w["w_out"], pad.logits, d, vocab)
    program += [argmax(pad.logits + i * vocab, pad.tokens + i, vocab) for i in range(batch)]
    program += [store(pad.logits, layout.logits, batch * vocab),
                store(pad.tokens, layout.tokens, batch), halt()]
    return program


# ---- compiled batches and their results --------------------------------------------------------


@dataclass
class BatchResult:
    """One batched run: each request's outputs (a StepResult, as its solo run gives) and the
    run's counters (each StepResult carries the same counters: the run is one program)."""

    steps: list[StepResult]
    counters: Counters


@dataclass
class BatchProgram:
    """One batched decode-step program for requests with contexts ``contexts``, ready to run."""

    contexts: tuple[int, ...]
    words: np.ndarray  # the program, uint32, at external address 0
    weight_words: np.ndarray  # the same words as every solo program's, at layout.weights
    layout: BatchLayout
    scratchpad: BatchScratchpad
    scales: tuple[Scales, ...]  # request i's: its solo program's
    cfg: ChipConfig

    def input_words(self, xs: Sequence[np.ndarray], kcs: Sequence[np.ndarray],
                    vcs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
        """The per-step writes to external memory: {address: words}, the x rows and each
        request's cached rows."""
        d, lay = self.layout.dim, self.layout
        if not len(xs) == len(kcs) == len(vcs) == len(self.contexts):
            raise ValueError(f"a batch of {len(self.contexts)} requests takes as many x, kc "
                             f"and vc, got {len(xs)}, {len(kcs)} and {len(vcs)}")
        writes = self.x_words(xs)
        for i, (n, kc, vc) in enumerate(zip(self.contexts, kcs, vcs, strict=True)):
            kc = np.asarray(kc, dtype=np.int64).reshape(-1, d)
            vc = np.asarray(vc, dtype=np.int64).reshape(-1, d)
            if len(kc) != n - 1 or len(vc) != n - 1:
                raise ValueError(f"request {i} has context {n}: it takes {n - 1} cached rows, "
                                 f"got {len(kc)} keys and {len(vc)} values")
            if n > 1:
                writes[lay.kc_slot(i)] = machine.words(kc.reshape(-1))
                writes[lay.vc_slot(i)] = machine.words(vc.reshape(-1))
        return writes

    def x_words(self, xs: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
        """The x rows' write, {address: words}: the part of a step's inputs the chip driver
        writes (the page-table agent writes the rest)."""
        return {self.layout.x: machine.words(np.asarray(xs, dtype=np.int64).reshape(-1))}

    def image(self, xs: Sequence[np.ndarray], kcs: Sequence[np.ndarray],
              vcs: Sequence[np.ndarray]) -> np.ndarray:
        """The whole external-memory image of one run: program, weights, inputs."""
        image = np.zeros(self.layout.end, dtype=np.uint32)
        image[: self.words.size] = self.words
        start = self.layout.weights
        image[start : start + self.weight_words.size] = self.weight_words
        for address, values in self.input_words(xs, kcs, vcs).items():
            image[address : address + values.size] = values
        return image

    def read_result(self, ext: np.ndarray, counters: Counters) -> BatchResult:
        """Decode every request's outputs from the final external memory."""
        lay, d = self.layout, self.layout.dim
        steps = []
        for i, scales in enumerate(self.scales):
            logits_at = lay.logits + i * lay.vocab
            logits_int = int8_of(ext[logits_at : logits_at + lay.vocab])
            k_at, v_at = lay.k_new + i * d, lay.v_new + i * d
            steps.append(StepResult(
                logits_int=logits_int, logits=logits_int * scales.logits,
                token=int(ext[lay.tokens + i]), k_new=int8_of(ext[k_at : k_at + d]),
                v_new=int8_of(ext[v_at : v_at + d]), counters=counters,
            ))  # fmt: skip
        return BatchResult(steps, counters)


def compile_batch(programs: ProgramCache, contexts: Sequence[int]) -> BatchProgram:
    """Compile one decode step for requests of ``contexts``, from their solo programs' pieces.

    The solo programs (``programs``: compiled per context, cached) supply each request's
    scales, the weight words and the context checks.
    """
    contexts = tuple(int(n) for n in contexts)
    if not 1 <= len(contexts) <= BATCH_MAX:
        raise ValueError(f"a batch holds 1..{BATCH_MAX} requests, got {len(contexts)}")
    solos = [programs.get(n) for n in contexts]
    model, cfg = programs.model, programs.cfg
    layout = BatchLayout.for_model(model, cfg)
    pad = BatchScratchpad.for_batch(model, contexts)
    scales = tuple(solo.scales for solo in solos)
    words = np.asarray(assemble(build_batch_program(model, contexts, scales, layout, pad)),
                       dtype=np.uint32)
    _check_fits(words, layout, pad, cfg)
    return BatchProgram(contexts, words, solos[0].weight_words, layout, pad, scales, cfg)


def _check_fits(words: np.ndarray, layout: BatchLayout, pad: BatchScratchpad,
                cfg: ChipConfig) -> None:
    if words.size > BATCH_PROGRAM_WORDS:
        raise ValueError(f"program of {words.size} words exceeds its {BATCH_PROGRAM_WORDS}-word "
                         "room")
    if layout.end > cfg.ext_words:
        raise ValueError(f"layout needs {layout.end} external words, the chip has {cfg.ext_words}")
    if pad.end > cfg.sram_words:
        raise ValueError(f"scratchpad needs {pad.end} words, the chip has {cfg.sram_words}")


def run_batch(program: BatchProgram, xs: Sequence[np.ndarray], kcs: Sequence[np.ndarray],
              vcs: Sequence[np.ndarray]) -> BatchResult:
    """Run one batched step on the reference machine; an error stop raises MachineError."""
    result = machine.run(program.image(xs, kcs, vcs), program.cfg, raise_on_error=True)
    return program.read_result(result.ext, result.counters)


class BatchProgramCache:
    """Batch programs by their tuple of contexts, compiled the first time a step needs one."""

    def __init__(self, programs: ProgramCache):
        self.solo = programs
        self.programs: dict[tuple[int, ...], BatchProgram] = {}

    def get(self, contexts: Sequence[int]) -> BatchProgram:
        key = tuple(contexts)
        if key not in self.programs:
            self.programs[key] = compile_batch(self.solo, key)
        return self.programs[key]

    @property
    def x_table(self) -> np.ndarray:
        """The int8 embedding of each token: the x input of a step (the solo programs')."""
        return self.solo.x_table


# ---- throughput --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Throughput:
    """Cycles of one run of B requests all at context ``context``, by unit."""

    batch: int
    context: int
    cycles: tuple[int, int, int, int, int]  # total, dma, mat, vec, sm

    @property
    def tokens_per_kilocycle(self) -> float:
        return 1000.0 * self.batch / self.cycles[0]


def measure(programs: ProgramCache, batch: int, context: int, seed: int = 0) -> Throughput:
    """Run one batch of ``batch`` requests at ``context`` on random inputs; count its cycles.

    Cycles are a closed-form function of the program (hw/ISA.md), so the inputs do not matter.
    """
    rng = np.random.default_rng(seed)
    program = compile_batch(programs, [context] * batch)
    xs = [programs.x_table[t] for t in rng.integers(0, programs.model.vocab, batch)]
    rows = [rng.integers(-128, 128, (context - 1, programs.model.dim)) for _ in range(batch)]
    result = run_batch(program, xs, rows, rows)
    return Throughput(batch, context, result.counters.cycles())


def solo_throughput(programs: ProgramCache, context: int) -> Throughput:
    """The solo program's cycles at ``context`` (model.compiler.compile_step): the baseline."""
    rows = np.zeros((context - 1, programs.model.dim), dtype=np.int64)
    result = run_step(programs.get(context), programs.x_table[0], rows, rows)
    return Throughput(1, context, result.cycles)


def throughput_table(programs: ProgramCache, batches: Sequence[int] = (1, 2, 4, 8),
                     contexts: Sequence[int] = (1, 8, 32, 64)) -> list[list[Throughput]]:
    """One row per context: the solo program, then each batch size."""
    return [[solo_throughput(programs, n)] + [measure(programs, b, n) for b in batches]
            for n in contexts]


@dataclass(frozen=True)
class BatchingCeiling:
    """How far batching can raise tokens per cycle when every request is at one context.

    A batch shares its projections (one B-row matmul) but runs attention per request, so each
    request a batch takes adds a fixed number of cycles (measured from B = 4 to B = 8); as B
    grows the gain over the solo program approaches solo cycles over that marginal cost.
    """

    context: int
    solo_cycles: int
    gain_b8: float  # tokens per 1,000 cycles at B = 8 over the solo program's
    marginal_cycles: float  # cycles one more request adds to a batch

    @property
    def limit(self) -> float:
        """The gain as B grows without bound."""
        return self.solo_cycles / self.marginal_cycles


def batching_ceiling(programs: ProgramCache, contexts: Sequence[int]) -> list[BatchingCeiling]:
    """The batching gain at B = 8 and its limit, per context, on the reference machine."""
    ceilings = []
    for context in contexts:
        solo = solo_throughput(programs, context)
        four, eight = measure(programs, 4, context), measure(programs, 8, context)
        ceilings.append(BatchingCeiling(
            context, solo.cycles[0],
            round(eight.tokens_per_kilocycle / solo.tokens_per_kilocycle, 2),
            (eight.cycles[0] - four.cycles[0]) / 4))
    return ceilings


def format_table(table: list[list[Throughput]]) -> str:
    """Tokens per 1,000 cycles, and the gain over the solo program, one line per context."""
    header = ["context", "solo"] + [f"B={t.batch}" for t in table[0][1:]]
    lines = ["  ".join(f"{h:>14}" for h in header)]
    for row in table:
        solo = row[0].tokens_per_kilocycle
        cells = [f"{row[0].context:>14}", f"{solo:>14.3f}"]
        cells += [f"{t.tokens_per_kilocycle:7.3f} {t.tokens_per_kilocycle / solo:5.2f}x"
                  for t in row[1:]]
        lines.append("  ".join(f"{c:>14}" for c in cells))
    return "\n".join(lines)


def main() -> None:
    """Print tokens per 1,000 cycles of the reference machine for B = 1, 2, 4, 8."""
    cfg = ChipConfig()
    model = random_model(2)
    calibration = shared_context_scales(calibrate(model, max_context(cfg), None, starts=[0]))
    programs = ProgramCache(model, calibration, cfg)
    table = throughput_table(programs)
    print("tokens per 1,000 cycles (reference machine; every request at the given context)")
    print(format_table(table))
    print("cycles by unit at B=8 (total, dma, mat, vec, sm):")
    for row in table:
        print(f"  context {row[0].context:>3}: solo {row[0].cycles}, B=8 {row[-1].cycles}")


if __name__ == "__main__":
    main()

