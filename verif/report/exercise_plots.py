"""The chapter's Figures 15.6 and 15.7 as PNG plots (matplotlib, Agg backend), in out/plots/.

* Figure 15.6: agreement with full attention against the window, from example B part 3
  (verif/report/example_b_part3.py), ours beside the chapter's recorded figures.
* Figure 15.7: the largest batch the memory allows against the context, with and without a
  window, from example B part 4's derived arithmetic (verif/report/example_b.py).

Both plots take the rows as JSON-ready dicts (``asdict`` of the examples' rows, or their
out/*.json files), in the style of verif/report/plots.py.

Run from the repository root: ``python -m scripts.report exercise-plots``.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from model.paths import PLOTS
from verif.report.example_b import (
    CHIP_BYTES,
    KV_BYTES_PER_TOKEN,
    SERVING_WINDOW,
    WEIGHT_BYTES,
    serving_rows,
)
from verif.report.example_b_part3 import window_accuracy_rows
from verif.report.figures import save_figure, subplots

# The chapter's Figure 15.6, as printed: agreement (%) with full attention per window.
CHAPTER_AGREEMENT = {2: 71.5, 4: 76.2, 8: 82.6, 16: 93.5, 24: 100.0}
MODELS_DIFFER = (
    "Our random models are not the chapter's (its model's weights and generator are not "
    "given), so the agreement per window differs by a few points; the shape is the same: "
    "agreement rises with the window and is exact when the window holds the whole context."
)


def window_agreement_comparison(part3: list[dict]) -> dict[str, Any]:
    """Per window: our agreement (%) beside the chapter's, and why they differ."""
    windows = [row["window"] for row in part3]
    ours = [round(100 * row["agree"] / row["total"], 1) for row in part3]
    return {
        "window": windows,
        "ours_percent": ours,
        "chapter_percent": [CHAPTER_AGREEMENT.get(window) for window in windows],
        "decisions_per_window": [row["total"] for row in part3],
        "note": MODELS_DIFFER,
    }


def window_agreement_plot(part3: list[dict], path: Path) -> Path:
    """Figure 15.6: agreement with full attention against the window, ours and the chapter's."""
    comparison = window_agreement_comparison(part3)
    windows = comparison["window"]
    figure, axes = subplots(figsize=(7, 4))
    axes.plot(
        windows,
        comparison["ours_percent"],
        marker="o",
        color="tab:blue",
        label="ours (random models, this repository)",
    )
    axes.plot(
        list(CHAPTER_AGREEMENT),
        list(CHAPTER_AGREEMENT.values()),
        marker="s",
        linestyle="--",
        color="tab:gray",
        label="chapter (Figure 15.6, recorded)",
    )
    axes.set_xscale("log", base=2)
    axes.set_xticks(windows, [str(w) for w in windows])
    axes.set_xlabel("window W (rows)")
    axes.set_ylabel("argmax agreement with full attention (%)")
    axes.set_title(f"what a window costs: {comparison['decisions_per_window'][0]} decisions per W")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return save_figure(figure, path)


def batch_vs_context_plot(part4: list[dict], path: Path) -> Path:
    """Figure 15.7: the largest batch against the context, without and with a window."""
    contexts = [row["context"] for row in part4]
    figure, axes = subplots(figsize=(7, 4))
    axes.plot(
        contexts,
        [row["max_batch_full"] for row in part4],
        marker="o",
        color="tab:red",
        label="no window",
    )
    axes.plot(
        contexts,
        [row["max_batch_window"] for row in part4],
        marker="s",
        color="tab:green",
        label=f"window of {SERVING_WINDOW}",
    )
    for row in part4:  # the window's numbers above its line, the full context's below
        for key, offset in (("max_batch_window", 6), ("max_batch_full", -13)):
            axes.annotate(
                str(row[key]),
                (row["context"], row[key]),
                textcoords="offset points",
                xytext=(0, offset),
                ha="center",
                fontsize=8,
            )
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_ylim(1, 400)
    axes.set_xticks(contexts, [f"{c:,}" for c in contexts])
    axes.set_xlabel("context (tokens)")
    axes.set_ylabel("max batch (requests)")
    axes.set_title(
        "what a window buys: the batch the memory allows (derived)\n"
        f"{CHIP_BYTES // 10**9} GB chip, {WEIGHT_BYTES // 10**9} GB int8 weights, "
        f"{KV_BYTES_PER_TOKEN // 1024} KiB of cache per token",
        fontsize=10,
    )
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return save_figure(figure, path)


def main() -> dict[str, Any]:
    """Compute parts 3 and 4 and write both figures; return part 3's comparison."""
    plots = PLOTS
    part3 = [asdict(row) for row in window_accuracy_rows()]
    part4 = [asdict(row) for row in serving_rows()]
    for path in (
        window_agreement_plot(part3, plots / "figure_15_6_window_agreement.png"),
        batch_vs_context_plot(part4, plots / "figure_15_7_batch_vs_context.png"),
    ):
        print(f"wrote {path}")
    comparison = window_agreement_comparison(part3)
    print(f"{'W':>4s} {'ours':>7s} {'chapter':>8s}")
    for window, ours, chapter in zip(
        comparison["window"], comparison["ours_percent"], comparison["chapter_percent"], strict=True
    ):
        print(f"{window:4d} {ours:6.1f}% {chapter:7.1f}%")
    print(f"   {comparison['note']}")
    return comparison
