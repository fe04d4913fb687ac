"""Example B, part 3: what a window costs in accuracy (float, random models).

For 3 random models x 16 start tokens, the full-context float model decodes 24 tokens
greedily; then every window W in 2, 4, 8, 16, 24 is run teacher-forced on those same tokens
and compared step by step with full attention: how often the argmax agrees, and the mean
relative RMS difference of the logits. W = 24 holds the whole context, so it is exact.

The random models attend with nothing favouring recent tokens, the worst case for a window:
read the table as "a window is not free", not as the loss a trained model would see.

``part3()`` prints the table and returns the rows (the shape of example_b.py's parts).
Run from the repository root: ``python -m scripts.report example-b-part3``. Writes
``out/example_b_part3.json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from model.lm.tiny_lm import VOCAB, float_generate, float_logits, random_model
from verif.report.output import write_json

MODEL_SEEDS = (1, 2, 3)
STARTS = range(VOCAB)
STEPS = 24
WINDOWS = (2, 4, 8, 16, 24)


@dataclass
class WindowAccuracyRow:
    """One window size against full attention, over every model, start and step."""

    window: int
    agree: int  # steps whose argmax equals full attention's
    total: int
    mean_logit_error: float  # mean over steps of |windowed - full| / |full| (RMS norms)

    @property
    def agreement(self) -> float:
        return self.agree / self.total


def window_accuracy_rows(
    seeds: tuple[int, ...] = MODEL_SEEDS, windows: tuple[int, ...] = WINDOWS, sinks: int = 0
) -> list[WindowAccuracyRow]:
    """The table: one row per window, teacher-forced on the full-context float tokens; with
    ``sinks`` every window also keeps the first rows (model.kv.step_rule)."""
    agree = dict.fromkeys(windows, 0)
    errors: dict[int, list[np.ndarray]] = {window: [] for window in windows}
    total = 0
    for seed in seeds:
        model = random_model(seed)
        for start in STARTS:
            inputs = float_generate(model, start, STEPS)[:STEPS]
            full = float_logits(model, inputs)
            total += STEPS
            for window in windows:
                windowed = float_logits(model, inputs, window, sinks)
                agree[window] += int((windowed.argmax(1) == full.argmax(1)).sum())
                difference = np.linalg.norm(windowed - full, axis=1)
                errors[window].append(difference / np.linalg.norm(full, axis=1))
    mean_error = {window: float(np.concatenate(errors[window]).mean()) for window in windows}
    return [WindowAccuracyRow(w, agree[w], total, mean_error[w]) for w in windows]


def part3() -> list[WindowAccuracyRow]:
    """Print the table and return its rows."""
    rows = window_accuracy_rows()
    print(f"{'W':>4s} {'agreement':>20s} {'mean logit error':>17s}")
    for r in rows:
        print(
            f"{r.window:4d} {r.agree:6d}/{r.total} ({100 * r.agreement:5.1f}%) "
            f"{100 * r.mean_logit_error:16.1f}%"
        )
    print(f"   W = {STEPS} is the full context here ({STEPS} steps): exact by construction")
    return rows


def main() -> None:
    rows = part3()
    print(f"\nwrote {write_json('example_b_part3.json', [asdict(r) for r in rows])}")
