"""The trained model's report (issue 23): does attention matter, and what does a window cost?

``trained_report()`` computes, as a plain dict (for ``out/trained.json``):

* ``losses``: model.lm.attention_evidence's held-out cross-entropies (trained, attention removed,
  bigram, trained without attention);
* ``windows``: model.lm.window_quality's tables, float and on the chip's integers, for the trained
  model and for a random model (the chapter's Figure 15.6 model kind), on the same held-out
  sequences; every window W with 0, 1, 2 and 4 sinks S except the cells no window can hold
  (S >= W: W = 2 with 2 or 4 sinks, W = 4 with 4), which ``impossible`` lists.

``markdown(report)`` formats it; ``findings(report)`` states, with the report's numbers, what
the trained model shows about the window that the random one does not. The entry point that
writes the JSON and the plot is ``python -m scripts.report trained`` (verif/report/trained.py).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from model.host.decode import chip_reader
from model.lm.attention_evidence import loss_table
from model.lm.corpus import Corpus, load_corpus
from model.lm.tiny_lm import TinyLM, make_model
from model.lm.train_lm import saved_config, saved_record, train
from model.lm.window_quality import float_reader, impossible_settings, window_table

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
    no_attention = None
    seconds = None
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
    return {
        "corpus": corpus_summary(corpus),
        "training": saved_record(),
        "sequence_tokens": SEQUENCE_TOKENS,
        "random_seed": random_seed,
        "losses": losses(trained, corpus, baseline),
        "windows": {name: window_tables(model, corpus, float_sequences, chip_sequences)
                    for name, model in models.items()},
        "impossible": [{"window": s.window, "sinks": s.sinks} for s in impossible_settings()],
    }


# ---- markdown ----------------------------------------------------------------------------------


def markdown(report: dict[str, Any]) -> str:
    """The report's tables as markdown."""
    parts = [loss_markdown(report["losses"])]
    impossible = [(cell["window"], cell["sinks"]) for cell in report.get("impossible", [])]
    for name, tables in report["windows"].items():
        parts.append(window_markdown(name, tables, impossible))
    return "\n\n".join(parts) + "\n"


def _row(report: dict[str, Any], model: str, reader: str, window: int | None,
         sinks: int = 0) -> dict[str, Any]:
    """One setting's row of one model's table."""
    rows = report["windows"][model][reader]["rows"]
    return next(r for r in rows if r["window"] == window and r["sinks"] == sinks)


def _percent(values: list[float]) -> str:
    return ", ".join(f"{100 * v:.1f}" for v in values) + "%"


def findings(report: dict[str, Any]) -> list[str]:
    """The report's answers, one sentence each, every number and comparison read from
    ``report``: attention's worth, the window's cost on both models, the sinks, the chip."""
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
    lines = [f"Held-out cross-entropy ({losses['sequences']} sequences, nats/token)", "",
             "| model | nats/token | what |", "| --- | ---: | --- |"]
    lines += [f"| {row['model']} | {row['nats_per_token']:.4f} | {row['what']} |"
              for row in losses["rows"]]
    return "\n".join(lines)


IMPOSSIBLE = "| {window} | {sinks} | n/a | n/a | n/a | n/a | n/a | n/a |"


def window_markdown(name: str, tables: dict[str, Any],
                    impossible: list[tuple[int, int]] = ()) -> str:
    """One model's float and chip rows side by side, one line per setting; the ``impossible``
    (window, sinks) cells as lines of n/a, in their place, and a note that says why."""
    floats, chips = tables["float"], tables["chip"]
    lines = [f"Window against full attention, {name} model (float: {floats['sequences']} "
             f"sequences; chip: {chips['sequences']})", "",
             "| W | sinks | agree float | agree chip | KL float | KL chip | CE float | CE chip |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    cells = [(row_f["window"], row_f["sinks"], row_f, row_c)
             for row_f, row_c in zip(floats["rows"], chips["rows"], strict=True)]
    cells += [(window, sinks, None, None) for window, sinks in impossible]
    for window, sinks, row_f, row_c in sorted(cells, key=lambda c: (c[0] or 0, c[1])):
        if row_f is None:
            lines.append(IMPOSSIBLE.format(window=window, sinks=sinks))
            continue
        lines.append(
            f"| {window or 'full'} | {sinks} | {100 * row_f['agreement']:.1f}% | "
            f"{100 * row_c['agreement']:.1f}% | {row_f['mean_kl']:.4f} | {row_c['mean_kl']:.4f} "
            f"| {row_f['cross_entropy']:.3f} | {row_c['cross_entropy']:.3f} |")
    if impossible:
        lines += ["", "n/a: no such window. A window holds its S sinks and at least the new "
                  "token (S < W), so " + ", ".join(f"W = {w} with {s} sinks"
                                                   for w, s in impossible) + " cannot be run."]
    return "\n".join(lines)
