"""The trained model's report (issue 23): does attention matter, and what does a window cost?

Held-out losses, and each window and sink count against full attention (float and on the chip's
integers, trained and random model), kept in build/trained_report/ under a digest of its inputs.
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m scripts.report trained [--quick] [--fresh]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from model.host.decode import chip_reader
from model.lm.attention_evidence import loss_table
from model.lm.corpus import Corpus, load_corpus, raw_text
from model.lm.tiny_lm import TRAINED_WEIGHTS, TinyLM, make_model
from model.lm.train_lm import saved_config, saved_record, train
from model.lm.window_quality import SINK_COUNTS, float_reader, impossible_settings, window_table
from model.paths import BUILD_ROOT, OUT, PLOTS, relative
from verif.report.output import markdown_table, save_figure, subplots, write_json
from verif.runs.disk_cache import load_json, model_code_digest, store_json

SEQUENCE_TOKENS = 33  # 32 predictions per sequence, half the chip's 64-row context limit
LOSS_SEQUENCES = 1300  # nearly every disjoint sequence of the held-out part
FLOAT_SEQUENCES = 256
CHIP_SEQUENCES = 16  # about 0.1 s per sequence and setting: some 30 s per model
RANDOM_SEED = 1


def corpus_summary(corpus: Corpus) -> dict[str, Any]:
    """The token mapping and the split, as the report states them."""
    alphabet = corpus.alphabet
    return {"tokens": [alphabet.symbol(t) for t in range(alphabet.vocab)],
            "train_tokens": len(corpus.train), "held_out_tokens": len(corpus.held_out),
            "other_share_held_out": float((corpus.held_out == alphabet.other).mean()),
            "sha256": corpus.sha256}


def window_tables(model: TinyLM, corpus: Corpus, float_sequences: int,
                  chip_sequences: int) -> dict[str, Any]:
    """Float and chip window tables of one model, with their sizes and times."""
    tables = {}
    for name, reader, count in (("float", float_reader, float_sequences),
                                ("chip", chip_reader, chip_sequences)):
        began = time.perf_counter()
        rows = window_table(model, corpus.held_out_sequences(SEQUENCE_TOKENS, count), reader)
        tables[name] = {"sequences": count, "rows": [row.as_dict() for row in rows],
                        "seconds": time.perf_counter() - began}
    return tables


def losses(model: TinyLM, corpus: Corpus, baseline: bool) -> dict[str, Any]:
    """The evidence table; with ``baseline`` the no-attention model is trained first."""
    no_attention = seconds = None
    if baseline:
        result = train(replace(saved_config(), attention=False), corpus)
        no_attention, seconds = result.model, result.seconds
    sequences = corpus.held_out_sequences(SEQUENCE_TOKENS, LOSS_SEQUENCES)
    rows = loss_table(model, corpus.train, sequences, no_attention)
    return {"sequences": LOSS_SEQUENCES, "rows": [row.as_dict() for row in rows],
            "baseline_training_seconds": seconds}


def trained_report(float_sequences: int = FLOAT_SEQUENCES, chip_sequences: int = CHIP_SEQUENCES,
                   random_seed: int = RANDOM_SEED, baseline: bool = True) -> dict[str, Any]:
    """Every table of the report, as JSON-ready data."""
    corpus = load_corpus()
    trained = make_model("trained")
    models = {"trained": trained, "random": make_model("random", random_seed)}
    return {"corpus": corpus_summary(corpus), "training": saved_record(),
            "sequence_tokens": SEQUENCE_TOKENS, "random_seed": random_seed,
            "losses": losses(trained, corpus, baseline),
            "windows": {name: window_tables(model, corpus, float_sequences, chip_sequences)
                        for name, model in models.items()},
            "impossible": [{"window": s.window, "sinks": s.sinks} for s in impossible_settings()]}


TRAINED_CACHE = BUILD_ROOT / "trained_report"
FULL = {"float_sequences": FLOAT_SEQUENCES, "chip_sequences": CHIP_SEQUENCES,
        "random_seed": RANDOM_SEED, "baseline": True}  # the report make run shows
QUICK = {**FULL, "float_sequences": 32, "chip_sequences": 2, "baseline": False}  # a smoke run
PLOT = PLOTS / "trained_window.png"


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
    """(the report for ``params``, whether it was read from ``cache_dir``): read if a run from
    the same inputs kept it (and not ``refresh``), else computed by ``compute`` and kept."""
    path = cache_file(params, cache_dir, inputs)
    stored = None if refresh else load_json(path)
    if isinstance(stored, dict):
        return stored, True
    report = compute(**params)
    store_json(path, report)
    return report, False


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
        axes.set(xlabel="window W (rows)", title=f"{name} model, teacher-forced on held-out text")
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
    """out/report.md's section: the RTL decodes (``decodes``), the findings, tables and figure."""
    return "\n\n".join([
        "## The trained model (issue 23)",
        "### Its decodes on the RTL (verif/tests/test_trained_decode.py)", decodes,
        "### What the trained model shows about the window",
        "\n".join(f"- {line}" for line in findings(report)),
        markdown(report).strip(),
        f"![trained_window](plots/{PLOT.name})",
    ])


def markdown(report: dict[str, Any]) -> str:
    parts = [loss_markdown(report["losses"])]
    impossible = [(cell["window"], cell["sinks"]) for cell in report.get("impossible", [])]
    for name, tables in report["windows"].items():
        parts.append(window_markdown(name, tables, impossible))
    return "\n\n".join(parts) + "\n"


def _row(report: dict[str, Any], model: str, reader: str, window: int | None,
         sinks: int = 0) -> dict[str, Any]:
    rows = report["windows"][model][reader]["rows"]
    return next(r for r in rows if r["window"] == window and r["sinks"] == sinks)


def _percent(values: list[float]) -> str:
    return ", ".join(f"{100 * v:.1f}" for v in values) + "%"


def findings(report: dict[str, Any]) -> list[str]:
    """The report's answers, one sentence each, every number read from ``report``."""
    return [attention_finding(report), window_finding(report), loss_finding(report),
            sink_finding(report), chip_finding(report)]


def _windows(report: dict[str, Any]) -> list[int]:
    return sorted({row["window"] for row in report["windows"]["trained"]["float"]["rows"]
                   if row["window"] is not None})


def attention_finding(report: dict[str, Any]) -> str:
    loss = {row["model"]: row["nats_per_token"] for row in report["losses"]["rows"]}
    alone = loss.get("trained without attention")
    baseline = f", {alone:.3f} for the same model trained without it" if alone else ""
    return (f"Held-out loss: {loss['trained']:.3f} nats/token with attention, "
            f"{loss['bigram']:.3f} for the bigram table{baseline}.")


def window_finding(report: dict[str, Any]) -> str:
    windows = _windows(report)
    agree = {model: [_row(report, model, "float", w)["agreement"] for w in windows]
             for model in ("trained", "random")}
    less = all(t >= r for t, r in zip(agree["trained"], agree["random"], strict=True))
    verdict = "costs the trained model less than" if less else "does not always cost less on"
    return (f"A window {verdict} the random one: argmax agreement with full attention at "
            f"W = {', '.join(map(str, windows))} is {_percent(agree['trained'])} (trained) "
            f"against {_percent(agree['random'])} (random; float, no sinks).")


def loss_finding(report: dict[str, Any]) -> str:
    full = _row(report, "trained", "float", None)["cross_entropy"]
    ce = {w: _row(report, "trained", "float", w)["cross_entropy"] for w in _windows(report)}
    best, worst = min(ce, key=ce.get), max(ce, key=ce.get)
    why = (" A window can help: without positions, full attention is a bag of every earlier "
           "character, a window a bag of the recent ones." if ce[best] < full else "")
    return (f"The trained model's cross-entropy on the text's next characters is {full:.3f} "
            f"nats with full attention and {ce[best]:.3f} (W = {best}) to {ce[worst]:.3f} "
            f"(W = {worst}) with a window, no sinks.{why}")


def sink_finding(report: dict[str, Any], window: int = 8) -> str:
    rows = [r for r in report["windows"]["trained"]["float"]["rows"] if r["window"] == window]
    spread = max(r["agreement"] for r in rows) - min(r["agreement"] for r in rows)
    why = (" No collapse for sinks to repair: StreamingLLM's comes from attention parked on the "
           "first tokens, which a model without positions cannot tell apart." if spread < 0.05
           else "")
    return (f"Sinks at W = {window}: agreement with {', '.join(str(r['sinks']) for r in rows)} "
            f"sinks is {_percent([r['agreement'] for r in rows])}, a spread of "
            f"{100 * spread:.1f} points.{why}")


def chip_finding(report: dict[str, Any]) -> str:
    gap = {model: max(abs(_row(report, model, "chip", w)["agreement"]
                          - _row(report, model, "float", w)["agreement"])
                      for w in _windows(report)) for model in ("trained", "random")}
    return (f"The chip's integers follow the float model's agreement within "
            f"{100 * gap['trained']:.1f} points for the trained model and "
            f"{100 * gap['random']:.1f} for the random one (no sinks; the int8 scales are "
            "calibrated on greedy decodes, and teacher-forced text goes beyond them).")


def loss_markdown(losses: dict[str, Any]) -> str:
    rows = [[row["model"], f"{row['nats_per_token']:.4f}", row["what"]] for row in losses["rows"]]
    return (f"Held-out cross-entropy ({losses['sequences']} sequences, nats/token)\n\n"
            + markdown_table(["model", "nats/token", "what"], rows, left=(0, 2)))


def window_markdown(name: str, tables: dict[str, Any],
                    impossible: list[tuple[int, int]] = ()) -> str:
    """One model's float and chip rows side by side, a line per setting; the ``impossible``
    (window, sinks) cells as lines of n/a, and a note saying why."""
    floats, chips = tables["float"], tables["chip"]
    cells = [(row_f["window"], row_f["sinks"], row_f, row_c)
             for row_f, row_c in zip(floats["rows"], chips["rows"], strict=True)]
    cells += [(window, sinks, None, None) for window, sinks in impossible]
    rows = [[window or "full", sinks, *(["n/a"] * 6 if row_f is None else [
                f"{100 * row_f['agreement']:.1f}%", f"{100 * row_c['agreement']:.1f}%",
                f"{row_f['mean_kl']:.4f}", f"{row_c['mean_kl']:.4f}",
                f"{row_f['cross_entropy']:.3f}", f"{row_c['cross_entropy']:.3f}"])]
            for window, sinks, row_f, row_c in sorted(cells, key=lambda c: (c[0] or 0, c[1]))]
    text = (f"Window against full attention, {name} model (float: {floats['sequences']} "
            f"sequences; chip: {chips['sequences']})\n\n" + markdown_table(
                ["W", "sinks", "agree float", "agree chip", "KL float", "KL chip", "CE float",
                 "CE chip"], rows))
    if impossible:
        text += ("\n\nn/a: no such window. A window holds its S sinks and at least the new "
                 "token (S < W), so " + ", ".join(f"W = {w} with {s} sinks"
                                                  for w, s in impossible) + " cannot be run.")
    return text


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
