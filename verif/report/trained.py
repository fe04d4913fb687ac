"""Issue 23's report: the window measured on a trained model, beside a random one.

Computes model.trained_report's tables (about a minute and a half on one core: the chip's
integers are most of it), prints them as markdown and writes

* ``out/trained.json``: every table, as model.trained_report returns it;
* ``out/trained.md``: the markdown printed;
* ``out/plots/trained_window.png``: the chapter's Figure 15.6 redrawn for both models,
  agreement with full attention against the window, one line per sink count (float solid,
  chip integers dashed).

Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m scripts.report trained [--quick]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from model.paths import OUT, PLOTS
from model.trained_report import markdown, trained_report
from model.window_quality import SINK_COUNTS
from verif.report.figures import plt, save_figure
from verif.report.output import write_json

READER_STYLES = {"float": {"linestyle": "-", "marker": "o"},
                 "chip": {"linestyle": "--", "marker": "x", "alpha": 0.7}}


def agreement_lines(table: dict[str, Any], sinks: int) -> tuple[list[int], list[float]]:
    """Windows and agreement (%) of one sink count; full attention is left out."""
    rows = [row for row in table["rows"] if row["sinks"] == sinks and row["window"] is not None]
    return [row["window"] for row in rows], [100 * row["agreement"] for row in rows]


def window_plot(report: dict[str, Any], path: Path) -> Path:
    """Figure 15.6 for each model: agreement with full attention against the window."""
    models = report["windows"]
    figure, panels = plt.subplots(1, len(models), figsize=(11, 4), sharey=True)
    for axes, (name, tables) in zip(panels, models.items(), strict=True):
        for reader, table in tables.items():
            for color, sinks in enumerate(SINK_COUNTS):
                windows, agreement = agreement_lines(table, sinks)
                axes.plot(windows, agreement, color=f"C{color}",
                          label=f"S = {sinks}, {reader} ({table['sequences']} sequences)",
                          **READER_STYLES[reader])
        windows = sorted({row["window"] for row in table["rows"] if row["window"] is not None})
        axes.set_xscale("log", base=2)
        axes.set_xticks(windows, [str(w) for w in windows])
        axes.set_xlabel("window W (rows)")
        axes.set_title(f"{name} model, teacher-forced on held-out text")
        axes.grid(alpha=0.3)
    panels[0].set_ylabel("argmax agreement with full attention (%)")
    panels[-1].legend(fontsize=7)
    return save_figure(figure, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a few sequences and no baseline training: a smoke run")
    args = parser.parse_args(argv)
    sizes = {"float_sequences": 32, "chip_sequences": 2, "baseline": False} if args.quick else {}
    report = trained_report(**sizes)
    text = markdown(report)
    print(text)
    print(f"wrote {write_json('trained.json', report)}")
    (OUT / "trained.md").write_text(text)
    print(f"wrote {window_plot(report, PLOTS / 'trained_window.png')}")
    return 0
