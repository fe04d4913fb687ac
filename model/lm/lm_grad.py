"""The tiny model's forward pass over whole sequences at once, and its gradient, by hand.

What ``float_logits`` computes a step at a time, here all at once for training, under a mask built
from the step rule, so a window in training attends exactly the rows a decode attends."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from model.kv.step_rule import attended_rows
from model.lm.tiny_lm import TinyLM

WEIGHTS = tuple(f.name for f in fields(TinyLM))  # embed, w_q, w_k, w_v, w_o, w_out


def attention_mask(length: int, window: int | None = None, sinks: int = 0) -> np.ndarray:
    """(T, T) booleans: position i (decode step i + 1) attends j, by the step rule."""
    mask = np.zeros((length, length), dtype=bool)
    for position in range(length):
        mask[position, attended_rows(position, window, sinks)] = True
        mask[position, position] = True
    return mask


@dataclass
class BatchForward:
    """Every intermediate of one batched forward pass (the backward pass reads them)."""

    tokens: np.ndarray  # (B, T)
    x: np.ndarray  # (B, T, d)
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    probs: np.ndarray  # (B, T, T), zero where the mask is false
    attn: np.ndarray  # (B, T, d)
    hidden: np.ndarray
    logits: np.ndarray  # (B, T, vocab)


def forward(model: TinyLM, tokens: np.ndarray, mask: np.ndarray) -> BatchForward:
    """Teacher-forced logits of every position of every sequence in ``tokens``."""
    x = model.embed[tokens]
    q, k, v = x @ model.w_q, x @ model.w_k, x @ model.w_v
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(model.dim)
    scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs = weights / weights.sum(axis=-1, keepdims=True)
    attn = probs @ v
    hidden = x + attn @ model.w_o
    return BatchForward(tokens, x, q, k, v, probs, attn, hidden, hidden @ model.w_out)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """log p over the last axis, computed stably."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
    """Mean negative log-likelihood of ``targets`` (nats per token)."""
    log_p = log_softmax(logits)
    picked = np.take_along_axis(log_p, targets[..., None], axis=-1)
    return float(-picked.mean())


def gradients(model: TinyLM, run: BatchForward, targets: np.ndarray) -> dict[str, np.ndarray]:
    """d(mean cross-entropy)/d(weight) for every weight of ``model``, by the chain rule."""
    d_logits = np.exp(log_softmax(run.logits))
    np.put_along_axis(d_logits, targets[..., None],
                      np.take_along_axis(d_logits, targets[..., None], axis=-1) - 1.0, axis=-1)
    d_logits /= targets.size
    grads = {"w_out": _sum_outer(run.hidden, d_logits)}
    d_hidden = d_logits @ model.w_out.T
    grads["w_o"] = _sum_outer(run.attn, d_hidden)
    d_attn = d_hidden @ model.w_o.T
    d_probs = d_attn @ run.v.transpose(0, 2, 1)
    d_v = run.probs.transpose(0, 2, 1) @ d_attn
    d_scores = run.probs * (d_probs - (d_probs * run.probs).sum(axis=-1, keepdims=True))
    d_scores /= np.sqrt(model.dim)
    d_q = d_scores @ run.k
    d_k = d_scores.transpose(0, 2, 1) @ run.q
    grads["w_q"], grads["w_k"], grads["w_v"] = (
        _sum_outer(run.x, d) for d in (d_q, d_k, d_v))
    d_x = d_hidden + d_q @ model.w_q.T + d_k @ model.w_k.T + d_v @ model.w_v.T
    grads["embed"] = _embedding_gradient(run.tokens, d_x, model.vocab)
    return grads


def _sum_outer(inputs: np.ndarray, d_outputs: np.ndarray) -> np.ndarray:
    """The gradient of a weight W in outputs = inputs @ W, summed over batch and positions."""
    dim_in, dim_out = inputs.shape[-1], d_outputs.shape[-1]
    return inputs.reshape(-1, dim_in).T @ d_outputs.reshape(-1, dim_out)


def _embedding_gradient(tokens: np.ndarray, d_x: np.ndarray, vocab: int) -> np.ndarray:
    """Each embedding row collects the gradient of every position holding its token."""
    one_hot = np.eye(vocab)[tokens.reshape(-1)]
    return one_hot.T @ d_x.reshape(-1, d_x.shape[-1])
