"""Does the trained model's attention matter? Held-out cross-entropy against three baselines.

On the same held-out sequences, in nats per token: the trained model; the same weights with the
attention path removed (h = x); a bigram table counted from the training part (the best a model
that sees only the current token can do); and the same architecture trained without attention,
the fair baseline. An attention that learned nothing would be no better than these."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from model.lm.lm_grad import attention_mask, cross_entropy, forward
from model.lm.tiny_lm import TinyLM


def held_out_loss(model: TinyLM, sequences: np.ndarray, window: int | None = None,
                  sinks: int = 0) -> float:
    """Teacher-forced cross-entropy of ``model`` on ``sequences`` (N, T + 1), nats/token."""
    mask = attention_mask(sequences.shape[1] - 1, window, sinks)
    return cross_entropy(forward(model, sequences[:, :-1], mask).logits, sequences[:, 1:])


def without_attention(model: TinyLM) -> TinyLM:
    """The same weights with the attention path zeroed: h = x."""
    return replace(model, w_o=np.zeros_like(model.w_o))


def bigram_log_probs(tokens: np.ndarray, vocab: int) -> np.ndarray:
    """log P(next | current) counted from ``tokens``, add-one smoothed: (vocab, vocab)."""
    counts = np.ones((vocab, vocab))
    np.add.at(counts, (tokens[:-1], tokens[1:]), 1.0)
    return np.log(counts / counts.sum(axis=1, keepdims=True))


def bigram_loss(train_tokens: np.ndarray, sequences: np.ndarray, vocab: int) -> float:
    """The bigram baseline's cross-entropy on the same predictions as ``held_out_loss``."""
    log_probs = bigram_log_probs(train_tokens, vocab)
    return float(-log_probs[sequences[:, :-1], sequences[:, 1:]].mean())


@dataclass
class LossRow:
    """One model's held-out cross-entropy."""

    model: str
    nats_per_token: float
    what: str

    def as_dict(self) -> dict:
        return asdict(self)


def loss_table(model: TinyLM, train_tokens: np.ndarray, sequences: np.ndarray,
               no_attention_trained: TinyLM | None = None) -> list[LossRow]:
    """The evidence, one row per model (the no-attention training only if given)."""
    rows = [
        LossRow("trained", held_out_loss(model, sequences), "full attention"),
        LossRow("attention removed", held_out_loss(without_attention(model), sequences),
                "the trained weights with Wo = 0 (h = x)"),
        LossRow("bigram", bigram_loss(train_tokens, sequences, model.vocab),
                "counted from the training part, add-one smoothing"),
    ]
    if no_attention_trained is not None:
        rows.append(LossRow("trained without attention",
                            held_out_loss(no_attention_trained, sequences),
                            "same architecture and training, Wo fixed at 0"))
    return rows
