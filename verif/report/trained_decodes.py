"""The trained model's decodes on the RTL (verif/tests/test_trained_decode.py), as a table:
each against the reference host's integer decode and the float model (greedy ones by their
tokens, forced ones by each step's ARGMAX), with the text and the cycles per step."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from model.host.decode import Decode
from model.lm.corpus import load_corpus
from model.lm.tiny_lm import float_generate, make_model
from model.lm.window_quality import Setting, float_reader
from verif.report.output import markdown_table
from verif.runs.record import RESULT_FILE, read_result
from verif.runs.spec import DecodeSpec, reference_decode

HEADER = ["simulator", "gather", "decode", "steps", "run", "= integer reference",
          "= float model", "text (greedy: generated; forced: read / predicted)",
          "cycles per step"]


@dataclass
class TrainedDecode:
    """One trained-model decode of one run, against its references."""

    sim: str
    spec: DecodeSpec
    status: str  # the run's: "passed" or "failed"
    tokens: list[int]  # the inputs of every step, then the last output
    decisions: list[int]  # each step's ARGMAX, as the chip reported it
    totals: list[int]  # each step's cycle counter `total`

    @property
    def forced(self) -> bool:
        return self.spec.force is not None

    def equals(self, reference: Decode) -> bool:
        """Tokens, decisions and cycles per step are the reference host's."""
        return (self.tokens == reference.tokens
                and self.decisions == [record.token for record in reference.records]
                and self.totals == [record.cycles[0] for record in reference.records])

    def float_agreement(self) -> tuple[int, int]:
        """(steps whose decision is the float model's, steps)."""
        model = make_model(self.spec.model, self.spec.model_seed)
        if self.forced:
            setting = Setting(self.spec.window, self.spec.sinks)
            want = float_reader(model, np.array(self.tokens), setting).decisions.tolist()
        else:
            want = float_generate(model, self.spec.start, self.spec.steps, self.spec.window,
                                  self.spec.sinks)[1:]
        return sum(a == b for a, b in zip(self.decisions, want, strict=True)), len(want)


def trained_decodes(run_dirs: list[Path]) -> list[TrainedDecode]:
    """Every trained-model decode among the runs' result files, newest last."""
    found = []
    results = [d / RESULT_FILE for d in run_dirs if (d / RESULT_FILE).exists()]
    for path in sorted(results, key=lambda p: p.stat().st_mtime):
        result = read_result(path.parent)
        for decode in result.get("decodes", []):
            spec = DecodeSpec(**decode["spec"])
            if spec.model != "trained":
                continue
            steps = [s for s in result.get("steps", []) if s["decode"] == spec.label()]
            found.append(TrainedDecode(
                result["sim"], spec, result.get("status", "missing"), decode["tokens"],
                [s["token_out"] for s in steps], [s["counters"]["total"] for s in steps]))
    return found


_REFERENCES: dict[str, Decode] = {}


def reference_of(spec: DecodeSpec) -> Decode:
    """The reference decode of a spec, computed once per spec (the simulators share it)."""
    key = json.dumps(asdict(spec), sort_keys=True)
    if key not in _REFERENCES:
        _REFERENCES[key] = reference_decode(spec)
    return _REFERENCES[key]


def cycles_line(spec: DecodeSpec, totals: list[int]) -> str:
    """First and last cycles per step, and where a window makes them flat."""
    if not totals:
        return "-"
    flat = f", flat from step {spec.window}" if spec.window and spec.window <= len(totals) else ""
    return f"{totals[0]} .. {totals[-1]}{flat}"


def text_of(decode: TrainedDecode) -> str:
    alphabet = load_corpus().alphabet
    if decode.forced:
        return (f"`{alphabet.decode(decode.tokens[:-1])}` / "
                f"`{alphabet.decode(decode.decisions)}`")
    return f"`{alphabet.decode(decode.tokens)}`"


def rows(decodes: list[TrainedDecode]) -> list[list[str]]:
    table = []
    for decode in decodes:
        same = decode.equals(reference_of(decode.spec))
        agree, steps = decode.float_agreement()
        table.append([decode.sim, decode.spec.gather, decode.spec.name, str(decode.spec.steps),
                      decode.status, "yes" if same else "NO", f"{agree}/{steps}",
                      text_of(decode), cycles_line(decode.spec, decode.totals)])
    return table


def problems(decodes: list[TrainedDecode]) -> list[str]:
    """Decodes that failed or differ from the reference host's; none at all is a problem."""
    if not decodes:
        return ["no trained-model decode ran"]
    return [f"{d.sim} {d.spec.label()}: "
            + ("run " + d.status if d.status != "passed" else "differs from the reference")
            for d in decodes if d.status != "passed" or not d.equals(reference_of(d.spec))]


def collapsed(decodes: list[TrainedDecode]) -> int | None:
    """The one token every greedy decode repeats after its first output, if there is one."""
    tails = {token for d in decodes if not d.forced for token in d.tokens[2:]}
    return tails.pop() if len(tails) == 1 else None


def markdown(decodes: list[TrainedDecode]) -> str:
    """The table, and a note when the greedy decodes collapse into one token."""
    if not decodes:
        return "no trained-model decode ran"
    table = markdown_table(HEADER, rows(decodes), left=(0, 1, 2, 4, 5, 7, 8))
    token = collapsed(decodes)
    if token is None:
        return table
    return table + (
        f"\n\nEvery greedy decode settles on one token (`{load_corpus().alphabet.decode([token])}`"
        f", token {token}) after its first character, in the float model as on the chip (the "
        "column = float model): a model without positions whose context is mostly that token "
        "predicts more of it. The forced decodes read held-out text instead, so that each "
        "step attends different characters.")
