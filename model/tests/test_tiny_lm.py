"""The tiny model's float reference and its window (the chapter's checks (5) and (6), in float).

The windowed step is checked against a recomputation from token ids over exactly the last W
tokens: keys and values rebuilt from the embeddings, never read from a cache. A comparison with
the chip under a tolerance could not see a window that is one token too wide.
"""

from __future__ import annotations

import numpy as np
import pytest

from model.kv.step_rule import context_size
from model.lm.tiny_lm import (
    DIM,
    STRUCTURED_ATTENTION_BOUND,
    VOCAB,
    TinyLM,
    float_generate,
    float_logits,
    float_step,
    float_trace,
    float_windowed,
    make_model,
    random_model,
    structured_model,
)

RANDOM_SEED = 2  # the chapter's random model for check (5)
STEPS = 24


def rule_tokens(start: int, n: int) -> list[int]:
    """The structured rule f(t) = (5t + 3) mod 16, written out independently of the model."""
    tokens = [start]
    for _ in range(n):
        tokens.append((5 * tokens[-1] + 3) % 16)
    return tokens


def recomputed_step(model: TinyLM, tokens: list[int], window: int | None) -> np.ndarray:
    """The logits of the last token, attending exactly the last W tokens, rebuilt from ids."""
    attended = tokens if window is None else tokens[-window:]
    x = model.embed[attended]
    keys, values = x @ model.w_k, x @ model.w_v
    query = model.embed[tokens[-1]] @ model.w_q
    scores = keys @ query / np.sqrt(DIM)
    probs = np.exp(scores - scores.max())
    probs /= probs.sum()
    hidden = model.embed[tokens[-1]] + (probs @ values) @ model.w_o
    return hidden @ model.w_out


# ---- models ------------------------------------------------------------------------------------


def test_models_have_the_chapter_shapes():
    for model in (structured_model(), random_model(1)):
        assert (model.vocab, model.dim) == (VOCAB, DIM) == (16, 8)
        assert model.w_out.shape == (DIM, VOCAB)
        for name in ("w_q", "w_k", "w_v", "w_o"):
            assert getattr(model, name).shape == (DIM, DIM)


def test_random_models_are_seeded():
    assert np.array_equal(random_model(3).w_q, random_model(3).w_q)
    assert not np.array_equal(random_model(3).w_q, random_model(4).w_q)
    assert np.array_equal(make_model("random", 3).embed, random_model(3).embed)
    with pytest.raises(ValueError, match="unknown model kind"):
        make_model("learned")


@pytest.mark.parametrize("window", [None, 8, 4, 2, 1])
def test_structured_model_follows_the_rule_under_every_window(window):
    for start in range(VOCAB):
        assert float_generate(structured_model(), start, STEPS, window) == rule_tokens(start, STEPS)


def test_structured_attention_changes_the_logits_but_stays_within_its_bound():
    model = structured_model()
    rng = np.random.default_rng(0)
    changes = []
    for _ in range(200):
        context = rng.integers(0, VOCAB, size=rng.integers(1, 20)).tolist()
        direct = model.embed[context[-1]] @ model.w_out
        change = recomputed_step(model, context, None) - direct
        changes.append(np.abs(change).max())
    assert max(changes) <= STRUCTURED_ATTENTION_BOUND + 1e-12
    assert np.ptp(changes) > 0.01  # the context moves the logits: attention is not dead
    assert STRUCTURED_ATTENTION_BOUND < 0.5  # the direct margin is 1: argmax cannot change


# ---- the float step and its window -------------------------------------------------------------


def test_float_step_matches_a_recomputation_from_token_ids():
    model = random_model(RANDOM_SEED)
    tokens = float_generate(model, 3, 12)
    keys, values = [], []
    for step, token in enumerate(tokens[:-1], start=1):
        logits, k, v = float_step(model, token, keys, values)
        np.testing.assert_allclose(logits, recomputed_step(model, tokens[:step], None), atol=1e-12)
        keys.append(k)
        values.append(v)


def test_trace_is_consistent_with_the_step():
    model = random_model(RANDOM_SEED)
    trace = float_trace(model, 5, np.ones((3, DIM)), np.zeros((3, DIM)))
    assert trace.scores.shape == trace.probs.shape == (4,)
    assert trace.probs.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(trace.hidden, trace.x + trace.out)
    np.testing.assert_array_equal(trace.logits, float_step(model, 5, np.ones((3, DIM)),
                                                           np.zeros((3, DIM)))[0])


def test_float_step_is_stable_for_large_scores():
    """Scores far beyond exp's range (a reference fed arbitrary rows) still give finite logits."""
    model = random_model(RANDOM_SEED)
    huge_keys = 1e6 * np.vstack([model.embed[5] @ model.w_q, -(model.embed[5] @ model.w_q)])
    trace = float_trace(model, 5, huge_keys, np.ones((2, DIM)))
    assert np.isfinite(trace.logits).all()
    assert trace.probs.max() == pytest.approx(1.0)


def test_a_window_at_least_as_long_as_the_context_is_full_attention():
    model = random_model(RANDOM_SEED)
    tokens = float_generate(model, 3, 16)
    full = float_logits(model, tokens[:13], None)
    for window in (13, 20):
        np.testing.assert_array_equal(float_logits(model, tokens[:13], window), full)


def test_a_window_of_3_changes_a_random_model():
    model = random_model(RANDOM_SEED)
    tokens = float_generate(model, 3, 16)
    difference = np.abs(float_logits(model, tokens[:13], 3) - float_logits(model, tokens[:13]))
    assert difference.max() > 1e-3


@pytest.mark.parametrize("window", [1, 2, 3, 5])
def test_windowed_step_equals_a_recomputation_over_exactly_the_last_w_tokens(window):
    model = random_model(RANDOM_SEED)
    tokens = float_generate(model, 3, 12)
    keys, values = [], []  # full caches: the window must pick from them
    for step in range(1, 12):
        got, k, v = float_windowed(model, tokens[step - 1], keys, values, window)
        want = recomputed_step(model, tokens[:step], window)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
        keys.append(k)
        values.append(v)


def test_teacher_forced_logits_agree_with_greedy_generation():
    model = random_model(RANDOM_SEED)
    for window in (None, 4):
        tokens = float_generate(model, 7, 10, window)
        logits = float_logits(model, tokens[:-1], window)
        assert logits.argmax(axis=1).tolist() == tokens[1:]


def test_context_size_and_window_validation():
    assert [context_size(step, 4) for step in range(1, 8)] == [1, 2, 3, 4, 4, 4, 4]
    assert [context_size(step, None) for step in (1, 9)] == [1, 9]
    with pytest.raises(ValueError, match="at least the new token"):
        float_windowed(random_model(1), 0, [], [], 0)
