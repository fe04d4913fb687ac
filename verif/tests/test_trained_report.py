"""The trained model's report kept on disk (verif/report/trained.py), and its RTL decode table
(verif/report/trained_decodes.py), on hand-made inputs: no simulator."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from verif.report import trained, trained_decodes
from verif.report.trained import findings, markdown, trained_report
from verif.runs.plans import trained_forced_spec, trained_spec
from verif.runs.spec import reference_decode

INPUTS = trained.ReportInputs(weights=b"weights", text="some text", code=b"code", numpy="2.0")
PARAMS = {"float_sequences": 2, "chip_sequences": 1, "random_seed": 1, "baseline": False}


class Counted:
    """A stand-in computation that counts its calls and returns a fresh report each time."""

    def __init__(self):
        self.calls = 0

    def __call__(self, **params) -> dict:
        self.calls += 1
        return {"params": params, "call": self.calls, "rows": [{"window": None, "kl": 0.1}]}


def test_the_cache_returns_what_was_computed_then_reads_it_back(tmp_path):
    compute = Counted()
    assert not trained.cache_file(PARAMS, tmp_path, INPUTS).exists()
    first, cached = trained.cached_trained_report(PARAMS, tmp_path, INPUTS, compute)
    assert not cached and compute.calls == 1 and first["params"] == PARAMS
    again, cached = trained.cached_trained_report(PARAMS, tmp_path, INPUTS, compute)
    assert cached and compute.calls == 1 and again == first
    # the one file it keeps is the one cache_file names (make run asks it whether to compute)
    assert list(tmp_path.glob("*.json")) == [trained.cache_file(PARAMS, tmp_path, INPUTS)]


@pytest.mark.parametrize("changed", [
    {"params": {**PARAMS, "chip_sequences": 2}},
    {"params": {**PARAMS, "baseline": True}},
    {"inputs": replace(INPUTS, weights=b"weightz")},
    {"inputs": replace(INPUTS, text="some text.")},
    {"inputs": replace(INPUTS, code=b"code2")},
    {"inputs": replace(INPUTS, numpy="2.1")},
], ids=["chip_sequences", "baseline", "weights", "corpus", "code", "numpy"])
def test_the_cache_misses_when_an_input_changes(tmp_path, changed):
    compute = Counted()
    trained.cached_trained_report(PARAMS, tmp_path, INPUTS, compute)
    params, inputs = changed.get("params", PARAMS), changed.get("inputs", INPUTS)
    report, cached = trained.cached_trained_report(params, tmp_path, inputs, compute)
    assert not cached and compute.calls == 2 and report["call"] == 2
    assert trained.cached_trained_report(PARAMS, tmp_path, INPUTS, compute)[0]["call"] == 1


def test_a_damaged_cache_file_or_refresh_computes_again(tmp_path):
    compute = Counted()
    trained.cached_trained_report(PARAMS, tmp_path, INPUTS, compute)
    (path,) = tmp_path.glob("*.json")
    path.write_text('{"params": ')  # a write cut short
    report, cached = trained.cached_trained_report(PARAMS, tmp_path, INPUTS, compute)
    assert not cached and report["call"] == 2 and json.loads(path.read_text()) == report
    report, cached = trained.cached_trained_report(PARAMS, tmp_path, INPUTS, compute,
                                                   refresh=True)
    assert not cached and report["call"] == 3 and json.loads(path.read_text()) == report


def test_the_real_report_reads_back_equal_and_the_current_inputs_name_the_weights(tmp_path):
    """The whole report survives its JSON file exactly (floats, None windows, nesting)."""
    report, cached = trained.cached_trained_report(PARAMS, tmp_path)
    assert not cached and report["windows"]["trained"]["chip"]["sequences"] == 1
    assert trained.cached_trained_report(PARAMS, tmp_path) == (report, True)
    current = trained.ReportInputs.current()
    assert current.weights == trained.TRAINED_WEIGHTS.read_bytes()
    assert current.key(PARAMS) != replace(current, weights=current.weights + b"\0").key(PARAMS)


def fake_decode(spec, tokens, decisions, totals, status="passed"):
    return trained_decodes.TrainedDecode("verilator", spec, status, tokens, decisions, totals)


def test_the_decode_table_compares_with_the_reference_and_names_a_difference():
    spec = trained_spec(4, steps=6)
    reference = reference_decode(spec)
    decisions = [record.token for record in reference.records]
    cycles = [record.cycles[0] for record in reference.records]
    good = fake_decode(spec, reference.tokens, decisions, cycles)
    bad = fake_decode(spec, reference.tokens, decisions, [*cycles[:-1], cycles[-1] + 1])
    assert trained_decodes.problems([good]) == []
    assert trained_decodes.problems([good, bad]) == [
        "verilator trained-W4 (W=4, P=4): differs from the reference"]
    assert trained_decodes.problems([]) == ["no trained-model decode ran"]
    (row,) = trained_decodes.rows([good])
    assert row[5:7] == ["yes", "6/6"] and row[-1].endswith("flat from step 4")
    assert trained_decodes.collapsed([good]) == 15  # " ", then <other> for ever
    assert "settles on one token (`#`, token 15)" in trained_decodes.markdown([good])


def test_the_forced_decodes_row_shows_what_it_read_and_predicted():
    spec = trained_forced_spec(8, steps=4)
    reference = reference_decode(spec)
    decode = fake_decode(spec, reference.tokens, [r.token for r in reference.records],
                         [r.cycles[0] for r in reference.records])
    (row,) = trained_decodes.rows([decode])
    assert row[7].startswith("`curr` / `")


def markdown_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table row, the separator rows left out."""
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|") and not set(line) <= set("|:- ")]


def test_the_report_is_plain_json_and_prints_as_markdown():
    report = trained_report(float_sequences=2, chip_sequences=1, baseline=False)
    assert json.loads(json.dumps(report)) == report
    text = markdown(report)
    rows = markdown_rows(text)
    assert {"trained", "bigram"} <= {row[0] for row in rows}
    full = ["full", "0", "100.0%", "100.0%", "0.0000", "0.0000"]
    assert [row[:6] for row in rows].count(full) == 2
    assert [row[:2] for row in rows].count(["24", "4"]) == 2
    assert [row[:4] for row in rows].count(["2", "4", "n/a", "n/a"]) == 2  # impossible, said so
    assert text.count("W = 2 with 2 sinks, W = 2 with 4 sinks, W = 4 with 4 sinks") == 2
    said = findings(report)
    assert len(said) == 5 and said[1].startswith("A window ") and "W = 2, 4, 8, 16, 24" in said[1]
