"""What a window changes, measured against full attention on the same teacher-forced text.

Per window W and sink count S, per step: argmax agreement, KL(full || windowed) in nats, and the
cross-entropy on the text's next token; ``window_table`` takes any model and either reader
(``float_reader``, or model.host.decode's ``chip_reader``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from model.lm.lm_grad import log_softmax
from model.lm.tiny_lm import TinyLM, float_logits

WINDOWS = (2, 4, 8, 16, 24)  # the chapter's Figure 15.6
SINK_COUNTS = (0, 1, 2, 4)


@dataclass(frozen=True)
class Setting:
    """One way of attending: a window (None: every row) and its sink rows."""

    window: int | None
    sinks: int = 0


FULL = Setting(None)


def settings(windows: Iterable[int] = WINDOWS,
             sink_counts: Iterable[int] = SINK_COUNTS) -> list[Setting]:
    """Every window with every sink count it can hold (S < W)."""
    return [Setting(window, sinks) for window in windows for sinks in sink_counts
            if sinks < window]


def impossible_settings(windows: Iterable[int] = WINDOWS,
                        sink_counts: Iterable[int] = SINK_COUNTS) -> list[Setting]:
    """The cells ``settings`` leaves out: sink counts a window cannot hold (S >= W)."""
    possible = set(settings(windows, sink_counts))
    return [Setting(window, sinks) for window in windows for sinks in sink_counts
            if Setting(window, sinks) not in possible]


@dataclass(frozen=True)
class Reading:
    """What one model read of one sequence: a decision and a distribution per step."""

    decisions: np.ndarray  # (steps,) the next token each step would emit
    log_probs: np.ndarray  # (steps, vocab) its next-token log-probabilities


# A reader runs a model over tokens[:-1] (teacher-forced) under one setting.
Reader = Callable[[TinyLM, np.ndarray, Setting], Reading]


def float_reader(model: TinyLM, tokens: np.ndarray, setting: Setting) -> Reading:
    """The float reference's reading: argmax of the float logits."""
    logits = float_logits(model, [int(t) for t in tokens[:-1]], setting.window, setting.sinks)
    return Reading(logits.argmax(axis=1), log_softmax(logits))


@dataclass
class WindowRow:
    """One setting against full attention, summed over every step of every sequence."""

    window: int | None
    sinks: int
    agree: int  # steps whose decision equals full attention's
    steps: int
    kl_sum: float  # sum over steps of KL(full || windowed), nats
    nll_sum: float  # sum over steps of -log p_windowed(the text's next token)

    @property
    def agreement(self) -> float:
        return self.agree / self.steps

    @property
    def mean_kl(self) -> float:
        return self.kl_sum / self.steps

    @property
    def cross_entropy(self) -> float:
        return self.nll_sum / self.steps

    def as_dict(self) -> dict:
        """The row for JSON, with its averages."""
        return {"window": self.window, "sinks": self.sinks, "agree": self.agree,
                "steps": self.steps, "agreement": self.agreement, "mean_kl": self.mean_kl,
                "cross_entropy": self.cross_entropy}


def kl_divergence(log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """KL(p || q) per row; exactly 0 where the rows are equal."""
    return (np.exp(log_p) * (log_p - log_q)).sum(axis=-1)


def compare(full: Reading, windowed: Reading, targets: np.ndarray) -> tuple[int, float, float]:
    """(agreeing steps, summed KL, summed negative log-likelihood of ``targets``)."""
    agree = int((windowed.decisions == full.decisions).sum())
    kl = float(kl_divergence(full.log_probs, windowed.log_probs).sum())
    nll = float(-np.take_along_axis(windowed.log_probs, targets[:, None], axis=1).sum())
    return agree, kl, nll


def window_table(model: TinyLM, sequences: np.ndarray, reader: Reader,
                 choices: list[Setting] | None = None) -> list[WindowRow]:
    """One row per setting (full attention first), each compared with full attention."""
    rows = {setting: WindowRow(setting.window, setting.sinks, 0, 0, 0.0, 0.0)
            for setting in [FULL, *(settings() if choices is None else choices)]}
    for tokens in sequences:
        full = reader(model, tokens, FULL)
        for setting, row in rows.items():
            windowed = full if setting == FULL else reader(model, tokens, setting)
            agree, kl, nll = compare(full, windowed, tokens[1:])
            row.agree += agree
            row.steps += len(tokens) - 1
            row.kl_sum += kl
            row.nll_sum += nll
    return list(rows.values())
