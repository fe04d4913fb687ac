"""Issue 23's report: the window measured on a trained model, beside a random one.

Computes verif.report.trained_report's tables (about a minute and a half on one core: the chip's
integers are most of it), or reads them from build/trained_report/: each computation is kept
there under a digest of everything it depends on (the weights file's bytes, the pydoc text, the
report's parameters, model/'s sources and numpy's version; verif.runs.disk_cache), so `make
run` computes them once per machine and change. Prints them as markdown and writes

* ``out/trained.json``: every table, as verif.report.trained_report returns it;
* ``out/trained.md``: the markdown printed;
* ``out/plots/trained_window.png``: the chapter's Figure 15.6 redrawn for both models,
  agreement with full attention against the window, one line per sink count (float solid,
  chip integers dashed).

Run from the repository root (``--fresh``: compute even when the cache holds the tables)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m scripts.report trained [--quick] [--fresh]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from model.lm.corpus import raw_text
from model.lm.tiny_lm import TRAINED_WEIGHTS
from model.lm.window_quality import SINK_COUNTS
from model.paths import BUILD_ROOT, OUT, PLOTS, relative
from verif.report.figures import save_figure, subplots
from verif.report.output import write_json
from verif.report.trained_report import (
    CHIP_SEQUENCES,
    FLOAT_SEQUENCES,
    RANDOM_SEED,
    findings,
    markdown,
    trained_report,
)
from verif.runs.disk_cache import load_json, model_code_digest, store_json

TRAINED_CACHE = BUILD_ROOT / "trained_report"
FULL = {"float_sequences": FLOAT_SEQUENCES, "chip_sequences": CHIP_SEQUENCES,
        "random_seed": RANDOM_SEED, "baseline": True}  # the report make run shows
QUICK = {**FULL, "float_sequences": 32, "chip_sequences": 2, "baseline": False}  # a smoke run
PLOT = PLOTS / "trained_window.png"


# ---- the cache ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportInputs:
    """What the report is a function of, besides its parameters."""

    weights: bytes  # the weights file (model/lm/data/trained_lm.npz)
    text: str  # the pydoc topics, before model.lm.corpus maps them onto tokens
    code: bytes  # a digest of model/'s sources, which compute every number
    numpy: str = np.__version__  # its floats

    @classmethod
    def current(cls) -> ReportInputs:
        return cls(TRAINED_WEIGHTS.read_bytes(), raw_text(), model_code_digest())

    def key(self, params: dict[str, Any]) -> str:
        """A digest of these inputs and ``params``: the cache file's name."""
        digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
        for part in (self.weights, self.text.encode(), self.code, self.numpy.encode()):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.hexdigest()[:32]


def cache_file(params: dict[str, Any] = FULL, cache_dir: Path = TRAINED_CACHE,
               inputs: ReportInputs | None = None) -> Path:
    """Where the report for ``params`` and these inputs (default: the current ones) is kept."""
    return cache_dir / f"{(inputs or ReportInputs.current()).key(params)}.json"


def cached_trained_report(params: dict[str, Any] = FULL, cache_dir: Path = TRAINED_CACHE,
                          inputs: ReportInputs | None = None,
                          compute: Callable[..., dict[str, Any]] = trained_report,
                          refresh: bool = False) -> tuple[dict[str, Any], bool]:
    """(the report for ``params``, whether it came from ``cache_dir``): read when a run computed
    it from the same inputs before (unless ``refresh``), else computed by ``compute(**params)``
    and kept."""
    path = cache_file(params, cache_dir, inputs)
    stored = None if refresh else load_json(path)
    if isinstance(stored, dict):
        return stored, True
    report = compute(**params)
    store_json(path, report)
    return report, False


# ---- the outputs -------------------------------------------------------------------------------

READER_STYLES = {"float": {"linestyle": "-", "marker": "o"},
                 "chip": {"linestyle": "--", "marker": "x", "alpha": 0.7}}


def agreement_lines(table: dict[str, Any], sinks: int) -> tuple[list[int], list[float]]:
    """Windows and agreement (%) of one sink count; full attention is left out."""
    rows = [row for row in table["rows"] if row["sinks"] == sinks and row["window"] is not None]
    return [row["window"] for row in rows], [100 * row["agreement"] for row in rows]


def window_plot(report: dict[str, Any], path: Path) -> Path:
    """Figure 15.6 for each model: agreement with full attention against the window."""
    models = report["windows"]
    figure, panels = subplots(1, len(models), figsize=(11, 4), sharey=True)
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


def write_outputs(report: dict[str, Any]) -> list[Path]:
    """out/trained.json, out/trained.md (the tables) and the plot."""
    markdown_path = OUT / "trained.md"
    markdown_path.write_text(markdown(report))
    return [write_json("trained.json", report), markdown_path, window_plot(report, PLOT)]


def section(report: dict[str, Any], decodes: str) -> str:
    """out/report.md's section: the decodes on the RTL (markdown), what the tables show, the
    tables and the figure."""
    return "\n\n".join([
        "## The trained model (issue 23)",
        "### Its decodes on the RTL (verif/tests/test_trained_decode.py)", decodes,
        "### What the trained model shows about the window",
        "\n".join(f"- {line}" for line in findings(report)),
        markdown(report).strip(),
        f"![trained_window](plots/{PLOT.name})",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a few sequences and no baseline training: a smoke run")
    parser.add_argument("--fresh", action="store_true",
                        help="compute the tables even when build/trained_report/ holds them")
    args = parser.parse_args(argv)
    params = QUICK if args.quick else FULL
    began = time.perf_counter()
    report, cached = cached_trained_report(params, refresh=args.fresh)
    print(markdown(report))
    print("\n".join(findings(report)) + "\n")
    print(("read from " + relative(TRAINED_CACHE).as_posix() if cached else "computed")
          + f" in {time.perf_counter() - began:.1f} s")
    for path in write_outputs(report):
        print(f"wrote {relative(path)}")
    return 0
