"""The tiny language model the chip decodes, and the float reference the chip's integers follow.

One attention layer over 16 tokens, dimension 8. ``structured_model``'s greedy next token is
(5t + 3) mod 16 under any window, ``random_model``'s attention is strong enough that a window
changes its tokens, ``trained_model`` learned English text (model.lm.train_lm)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from model.kv.step_rule import attended_rows

VOCAB = 16
DIM = 8
STRUCTURED_ATTENTION_BOUND = 0.25  # largest change attention may make to any structured logit

# the random model's weight spreads: scores over a few nats (inside the chip's +-8), and the
# attention path moving the logits as much as the direct path
RANDOM_QK_STD = 0.45
RANDOM_V_STD = 1.0 / np.sqrt(DIM)
RANDOM_O_STD = 2.0 / np.sqrt(DIM)
RANDOM_OUT_STD = 1.0 / np.sqrt(DIM)

TRAINED_WEIGHTS = Path(__file__).resolve().parent / "data" / "trained_lm.npz"


def rule_next(token: int) -> int:
    """The structured model's next token: f(t) = (5t + 3) mod 16 (a bijection of the vocab)."""
    return (5 * token + 3) % VOCAB


def rule_tokens(start: int, steps: int) -> list[int]:
    """[start, f(start), f(f(start)), ...]: what the structured model generates greedily."""
    tokens = [start]
    for _ in range(steps):
        tokens.append(rule_next(tokens[-1]))
    return tokens


@dataclass(frozen=True)
class TinyLM:
    """The weights of one model, float64 numpy arrays."""

    embed: np.ndarray  # (VOCAB, DIM): the input x of a token
    w_q: np.ndarray  # (DIM, DIM)
    w_k: np.ndarray  # (DIM, DIM)
    w_v: np.ndarray  # (DIM, DIM)
    w_o: np.ndarray  # (DIM, DIM): attention output projection, added to x (residual)
    w_out: np.ndarray  # (DIM, VOCAB): hidden state to logits

    @property
    def vocab(self) -> int:
        return self.embed.shape[0]

    @property
    def dim(self) -> int:
        return self.embed.shape[1]


@dataclass(frozen=True)
class StepTrace:
    """Every intermediate value of one float decode step (calibration reads them all)."""

    x: np.ndarray  # (d,) embedding of the input token
    q: np.ndarray  # (d,)
    k: np.ndarray  # (d,) the new key, cached for later steps
    v: np.ndarray  # (d,) the new value
    scores: np.ndarray  # (n,) scaled dot products over [k_cache; k], in nats
    probs: np.ndarray  # (n,)
    attn: np.ndarray  # (d,) probability-weighted sum of the values
    out: np.ndarray  # (d,) attn Wo, the attention path's contribution to the residual
    hidden: np.ndarray  # (d,) x + out
    logits: np.ndarray  # (VOCAB,)


# ---- models ------------------------------------------------------------------------------------


def structured_model(seed: int = 0) -> TinyLM:
    """A model whose greedy next token is ``rule_next`` under every context and window: the
    direct logits are 1 at f(t) and at most 0 elsewhere, and Wo is scaled so that attention
    moves any logit by at most STRUCTURED_ATTENTION_BOUND < 1/2 (the chapter's test 6)."""
    rng = np.random.default_rng(seed)
    embed = np.vstack([np.eye(DIM), -np.eye(DIM)])
    w_out = np.zeros((DIM, VOCAB))
    for token in range(VOCAB):
        w_out[:, rule_next(token)] = embed[token]
    w_q, w_k, w_v = (rng.normal(0.0, 0.5, (DIM, DIM)) for _ in range(3))
    w_o = rng.normal(0.0, 1.0, (DIM, DIM))
    bound = _attention_logit_bound(embed @ w_v, w_o, w_out)
    return TinyLM(embed, w_q, w_k, w_v, w_o * (STRUCTURED_ATTENTION_BOUND / bound), w_out)


def _attention_logit_bound(values: np.ndarray, w_o: np.ndarray, w_out: np.ndarray) -> float:
    """The largest |change| attention (a convex combination of value rows) can make to a logit."""
    attn_bound = np.abs(values).max(axis=0)
    return float((attn_bound @ np.abs(w_o) @ np.abs(w_out)).max())


def random_model(seed: int) -> TinyLM:
    """Gaussian weights (numpy Generator seeded with ``seed``) whose attention matters."""
    rng = np.random.default_rng(seed)
    return TinyLM(
        embed=rng.normal(0.0, 1.0, (VOCAB, DIM)),
        w_q=rng.normal(0.0, RANDOM_QK_STD, (DIM, DIM)),
        w_k=rng.normal(0.0, RANDOM_QK_STD, (DIM, DIM)),
        w_v=rng.normal(0.0, RANDOM_V_STD, (DIM, DIM)),
        w_o=rng.normal(0.0, RANDOM_O_STD, (DIM, DIM)),
        w_out=rng.normal(0.0, RANDOM_OUT_STD, (DIM, VOCAB)),
    )


def trained_model(path: Path = TRAINED_WEIGHTS) -> TinyLM:
    """The weights ``python -m model.lm.train_lm`` learned from the pydoc text."""
    with np.load(path) as data:
        return TinyLM(**{name: np.array(data[name], dtype=np.float64)
                         for name in TinyLM.__dataclass_fields__})


def make_model(kind: str, seed: int = 0) -> TinyLM:
    """A model by kind: "structured", "random" or "trained" (which ignores ``seed``)."""
    if kind == "structured":
        return structured_model(seed)
    if kind == "random":
        return random_model(seed)
    if kind == "trained":
        return trained_model()
    raise ValueError(f"unknown model kind {kind!r}: use 'structured', 'random' or 'trained'")


# ---- the float decode step ---------------------------------------------------------------------


def as_rows(cache: ArrayLike, dim: int) -> np.ndarray:
    """Cached keys or values (a list of rows or an array, possibly empty) as an (m, dim) array."""
    return np.asarray(cache, dtype=np.float64).reshape(-1, dim)


def float_trace(model: TinyLM, token: int, k_cache: ArrayLike, v_cache: ArrayLike) -> StepTrace:
    """One decode step attending every cached row plus the new token, with all intermediates."""
    x = model.embed[token]
    q, k, v = x @ model.w_q, x @ model.w_k, x @ model.w_v
    keys = np.vstack([as_rows(k_cache, model.dim), k])
    values = np.vstack([as_rows(v_cache, model.dim), v])
    scores = keys @ q / np.sqrt(model.dim)
    weights = np.exp(scores - scores.max())
    probs = weights / weights.sum()
    attn = probs @ values
    out = attn @ model.w_o
    hidden = x + out
    return StepTrace(x, q, k, v, scores, probs, attn, out, hidden, hidden @ model.w_out)


def float_step(
    model: TinyLM, token: int, k_cache: ArrayLike, v_cache: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One decode step over every cached row: (logits, k_new, v_new)."""
    trace = float_trace(model, token, k_cache, v_cache)
    return trace.logits, trace.k, trace.v


def window_slice(cache: ArrayLike, window: int | None, dim: int, sinks: int = 0) -> np.ndarray:
    """The cached rows the next step attends: the first ``sinks`` and the most recent ones."""
    rows = as_rows(cache, dim)
    return rows[attended_rows(len(rows), window, sinks)]


def float_windowed(
    model: TinyLM, token: int, k_cache: ArrayLike, v_cache: ArrayLike, window: int | None,
    sinks: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One decode step attending the new token and at most window - 1 previous ones."""
    keys = window_slice(k_cache, window, model.dim, sinks)
    values = window_slice(v_cache, window, model.dim, sinks)
    return float_step(model, token, keys, values)


def float_logits(model: TinyLM, tokens: list[int], window: int | None = None,
                 sinks: int = 0) -> np.ndarray:
    """Teacher-forced decode: the windowed logits of every step, fed ``tokens`` in order."""
    keys: list[np.ndarray] = []
    values: list[np.ndarray] = []
    logits = []
    for token in tokens:
        step_logits, k, v = float_windowed(model, token, keys, values, window, sinks)
        keys.append(k)
        values.append(v)
        logits.append(step_logits)
    return np.array(logits)


def float_generate(model: TinyLM, start: int, n: int, window: int | None = None,
                   sinks: int = 0) -> list[int]:
    """Greedy decode of n tokens from ``start``: the list [start, t1, ..., tn]."""
    tokens = [start]
    keys: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for _ in range(n):
        logits, k, v = float_windowed(model, tokens[-1], keys, values, window, sinks)
        keys.append(k)
        values.append(v)
        tokens.append(int(np.argmax(logits)))
    return tokens
