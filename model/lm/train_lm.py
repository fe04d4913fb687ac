"""Training the tiny model on the pydoc text (model.lm.corpus): seeded, numpy only, one core.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m model.lm.train_lm

Teacher-forced; Adam on the cross-entropy plus a small L2 penalty (modest ranges for the chip's
int8 scales). The same seed gives the same weights bit for bit on the same machine and numpy."""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from model.lm.corpus import Corpus, load_corpus, random_chunks
from model.lm.lm_grad import WEIGHTS, attention_mask, cross_entropy, forward, gradients
from model.lm.tiny_lm import DIM, TRAINED_WEIGHTS, VOCAB, TinyLM

INIT_STD = 0.3  # initial weights: small, so the first steps are not saturated
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides the trained weights (with the corpus)."""

    seed: int = 0
    steps: int = 6000
    batch: int = 64  # sequences per step
    length: int = 33  # tokens per sequence: 32 predictions, as the reports' sequences
    learning_rate: float = 0.02
    l2: float = 1e-4  # penalty l2 * sum(w^2) over every weight
    # One window drawn per step; None is full attention. Full attention is the default: a window
    # in training makes the model better at that window and worse at full attention.
    windows: tuple[int | None, ...] = (None,)
    attention: bool = True  # False: Wo fixed at zero, only E and Wout train (h = x)
    train_tokens: int | None = None  # use only this many tokens of the training part

    def rate_at(self, step: int) -> float:
        """The learning rate falls linearly to zero: the last steps average out batch noise."""
        return self.learning_rate * (1.0 - step / self.steps)

    def trainable(self) -> tuple[str, ...]:
        return WEIGHTS if self.attention else ("embed", "w_out")


@dataclass
class TrainResult:
    """The trained model and how it got there."""

    model: TinyLM
    config: TrainConfig
    losses: np.ndarray  # the training batch's cross-entropy at every step (before its update)
    seconds: float
    corpus_sha256: str  # the text it learned (model.lm.corpus.Corpus.sha256)


def initial_model(rng: np.random.Generator, attention: bool = True) -> TinyLM:
    """Small Gaussian weights; without attention Wo is zero."""
    shapes = {"embed": (VOCAB, DIM), "w_q": (DIM, DIM), "w_k": (DIM, DIM), "w_v": (DIM, DIM),
              "w_o": (DIM, DIM), "w_out": (DIM, VOCAB)}
    weights = {name: rng.normal(0.0, INIT_STD, shape) for name, shape in shapes.items()}
    if not attention:
        weights["w_o"] = np.zeros((DIM, DIM))
    return TinyLM(**weights)


class Adam:
    """Adam over a dict of named arrays (Kingma and Ba, with bias correction)."""

    def __init__(self, names: tuple[str, ...]):
        self.names = names
        self.moments: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.count = 0

    def update(self, weights: dict[str, np.ndarray], grads: dict[str, np.ndarray],
               learning_rate: float) -> None:
        """One step of size ``learning_rate``, in place on ``weights``."""
        self.count += 1
        beta1, beta2 = ADAM_BETAS
        for name in self.names:
            first, second = self.moments.get(name, (0.0, 0.0))
            first = beta1 * first + (1 - beta1) * grads[name]
            second = beta2 * second + (1 - beta2) * grads[name] ** 2
            self.moments[name] = (first, second)
            step = (first / (1 - beta1**self.count)) / (
                np.sqrt(second / (1 - beta2**self.count)) + ADAM_EPS)
            weights[name] = weights[name] - learning_rate * step


def train(config: TrainConfig, corpus: Corpus | None = None) -> TrainResult:
    """Train a model as ``config`` says; the same config and corpus give the same bits."""
    corpus = corpus or load_corpus()
    text = corpus.train[: config.train_tokens]
    rng = np.random.default_rng(config.seed)
    weights = weights_of(initial_model(rng, config.attention))
    masks = {window: attention_mask(config.length - 1, window) for window in config.windows}
    adam = Adam(config.trainable())
    losses = np.empty(config.steps)
    began = time.perf_counter()
    for step in range(config.steps):
        chunks = random_chunks(text, config.length, config.batch, rng)
        window = config.windows[rng.integers(len(config.windows))]
        model = TinyLM(**weights)
        run = forward(model, chunks[:, :-1], masks[window])
        losses[step] = cross_entropy(run.logits, chunks[:, 1:])
        grads = gradients(model, run, chunks[:, 1:])
        adam.update(weights, {name: grads[name] + 2 * config.l2 * weights[name]
                              for name in config.trainable()}, config.rate_at(step))
    seconds = time.perf_counter() - began
    return TrainResult(TinyLM(**weights), config, losses, seconds, corpus.sha256)


def weights_of(model: TinyLM) -> dict[str, np.ndarray]:
    """The weights by name (model.lm.tiny_lm.TinyLM's fields)."""
    return {name: getattr(model, name) for name in WEIGHTS}


# ---- the weights file --------------------------------------------------------------------------


def save(result: TrainResult, path: Path = TRAINED_WEIGHTS) -> Path:
    """Write the weights, with the config, the corpus hash and the final training loss."""
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"config": asdict(result.config), "corpus_sha256": result.corpus_sha256,
              "final_loss": float(result.losses[-100:].mean()),
              "numpy": np.__version__}
    np.savez_compressed(path, **weights_of(result.model), record=json.dumps(record))
    return path


def saved_record(path: Path = TRAINED_WEIGHTS) -> dict:
    """What ``save`` wrote beside the weights (config, corpus hash, final loss)."""
    with np.load(path) as data:
        return json.loads(str(data["record"]))


def saved_config(path: Path = TRAINED_WEIGHTS) -> TrainConfig:
    """The config the saved weights were trained with."""
    config = saved_record(path)["config"]
    return TrainConfig(**{**config, "windows": tuple(config["windows"])})


# ---- command line ------------------------------------------------------------------------------


def parse_config(argv: list[str] | None = None) -> tuple[TrainConfig, Path]:
    defaults = TrainConfig()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--steps", type=int, default=defaults.steps)
    parser.add_argument("--out", type=Path, default=TRAINED_WEIGHTS)
    args = parser.parse_args(argv)
    return replace(defaults, seed=args.seed, steps=args.steps), args.out


def main(argv: list[str] | None = None) -> None:
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        print("note: set OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 to train on one core")
    config, out = parse_config(argv)
    result = train(config)
    print(f"trained {config.steps} steps in {result.seconds:.1f} s; loss "
          f"{result.losses[:100].mean():.3f} -> {result.losses[-100:].mean():.3f} nats/token")
    print(f"wrote {save(result, out)}")


if __name__ == "__main__":
    main()
