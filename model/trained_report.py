"""The trained model's report (issue 23): does attention matter, and what does a window cost?

``trained_report()`` computes, as a plain dict (for ``out/trained.json``):

* ``losses``: model.attention_evidence's held-out cross-entropies (trained, attention removed,
  bigram, trained without attention);
* ``windows``: model.window_quality's tables, float and on the chip's integers, for the trained
  model and for a random model (the chapter's Figure 15.6 model kind), on the same held-out
  sequences; every window W with 0, 1, 2 and 4 sinks S except the cells no window can hold
  (S >= W: W = 2 with 2 or 4 sinks, W = 4 with 4), which ``impossible`` lists.

``markdown(report)`` formats it. The entry point that writes the JSON and the plot is
``python -m scripts.report trained`` (verif/report/trained.py).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from model.attention_evidence import loss_table
from model.corpus import Corpus, load_corpus
from model.tiny_lm import TinyLM, make_model
from model.train_lm import saved_config, saved_record, train
from model.window_quality import chip_reader, float_reader, impossible_settings, window_table

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
