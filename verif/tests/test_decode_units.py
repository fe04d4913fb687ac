"""The decode environment's pure-Python pieces, without a simulator."""

from __future__ import annotations

import os
import time

import pytest

from model.chip.isa import ChipConfig
from model.compiler.layout import BATCH_MAX, Layout
from model.compiler.quantize import calibrate
from model.host.decode import decode
from model.lm.tiny_lm import make_model
from verif.coverage.report import current_model
from verif.mutation.framework import check_applies
from verif.runs.disk_cache import cached_calibration
from verif.runs.spec import DecodeSpec, plan_from_json, plan_to_json
from verif.scoreboard.decode_checks import (
    DecodeFacts,
    cycle_problems,
    decode_problems,
    page_problems,
    token_problems,
)
from verif.scoreboard.scoreboard import output_name
from verif.tests.broken_chips import RTL_MUTANTS, make_broken_chip


def test_plan_round_trips_through_json():
    plan = [DecodeSpec("a", window=8, force=[0, 1, 2]), DecodeSpec("b", "random", fork_at=3)]
    assert plan_from_json(plan_to_json(plan)) == plan


def test_cycles_must_grow_until_the_window_fills_then_stay_flat():
    spec = DecodeSpec("w", window=3, steps=5)
    assert not cycle_problems(spec, [10, 20, 30, 30, 30])
    assert "not flat" in cycle_problems(spec, [10, 20, 30, 31, 30])[0]
    assert "do not grow" in cycle_problems(spec, [10, 10, 30, 30, 30])[0]
    assert not cycle_problems(DecodeSpec("full", steps=3), [1, 2, 3])
    assert cycle_problems(DecodeSpec("full", steps=3), [1, 2, 2])


def test_tokens_follow_the_rule_or_the_forced_inputs():
    assert token_problems(DecodeSpec("s", steps=2), [0, 3, 1])
    assert not token_problems(DecodeSpec("s", steps=2), [0, 3, 2])
    assert not token_problems(DecodeSpec("s", steps=2, force=[0, 5, 5]), [0, 5, 5])
    assert token_problems(DecodeSpec("s", steps=2, force=[0, 5, 5]), [0, 5, 6])
    assert not token_problems(DecodeSpec("r", "random", steps=2), [0, 9, 9])
    assert "1 steps ran, 2 planned" in token_problems(DecodeSpec("s", steps=2), [0, 3])[0]


@pytest.mark.parametrize(("window", "page"), [(None, 4), (8, 4), (6, 2), (3, 1), (5, 16)])
def test_the_reference_host_passes_every_decode_check(window, page):
    """The model's own decode meets the closed forms; one wrong page count or token does not."""
    spec = DecodeSpec("s", steps=12, window=window, page_size=page)
    run = decode(make_model("structured"), spec.steps, spec.start, window, page_size=page)
    pages_after = [run.pages_after(step) for step in range(1, spec.steps + 1)]
    facts = DecodeFacts(spec, run.tokens, pages_after, [r.cycles[0] for r in run.records],
                        run.programs_compiled)
    assert decode_problems(facts) == []
    facts.pages_after[-1] += 1
    assert "pages in use" in page_problems(facts)[0]
    facts.shares_pool = True
    assert page_problems(facts) == []
    facts.programs_compiled += 1
    assert "programs compiled" in decode_problems(facts)[0]


def test_output_names_cover_the_layout():
    model, cfg = make_model("structured"), ChipConfig()
    layout = Layout.for_model(model, cfg)
    assert output_name(layout, layout.logits + 3) == "logits[3]"
    assert output_name(layout, layout.tokens) == "token"
    assert output_name(layout, layout.v_new + 7) == "v_new[7]"
    assert output_name(layout, layout.logits - 1) == "outside the outputs"
    batch = Layout.for_model(model, cfg, BATCH_MAX)
    assert output_name(batch, batch.logits + 2 * model.vocab + 5) == "logits[r2][5]"
    assert output_name(batch, batch.tokens + 7) == "tokens[r7]"
    assert output_name(batch, batch.k_new + 8 + 1) == "k_new[r1][1]"
    assert output_name(batch, batch.outputs[1]) == "outside the outputs"
    assert output_name(None, 5) == ""


@pytest.mark.parametrize("name", sorted(RTL_MUTANTS))
def test_each_rtl_mutant_changes_exactly_one_line_of_a_copy(name, tmp_path):
    mutant = RTL_MUTANTS[name]
    check_applies(mutant)  # exactly the one line differs, as a line diff sees it
    sources = make_broken_chip(mutant, tmp_path)
    broken = next(p for p in sources if p.as_posix().endswith(mutant.path))
    assert tmp_path in broken.parents  # the working tree is untouched
    assert mutant.mutated in broken.read_text()


def test_the_coverage_merge_leaves_out_runs_of_an_older_coverage_model(tmp_path):
    """A run recorded before a point's bins changed cannot be merged: it is set apart."""
    def run(name: str, points: dict[str, dict[str, int]], age: float) -> str:
        path = tmp_path / name / "coverage.yml"
        path.parent.mkdir()
        path.write_text("".join(f"{point}:\n  bins:_hits:\n"
                                + "".join(f"    {b}: {n}\n" for b, n in bins.items())
                                for point, bins in points.items()))
        os.utime(path, (time.time() - age, time.time() - age))
        return str(path)

    old = run("old", {"g.op": {"new": 1, "plan": 0}, "g.size": {"1": 2}}, age=60)
    new = run("new", {"g.op": {"new": 3}, "g.size": {"1": 0}}, age=0)
    partial = run("partial", {"g.size": {"1": 1}, "g.mode": {"chip": 1}}, age=30)
    assert current_model([old, new, partial]) == ([new, partial], [old])


def test_a_cached_calibration_is_the_calibration_and_a_changed_argument_misses(tmp_path):
    """The disk cache returns exactly what calibrate returns; another window is another file."""
    model = make_model("structured", 0)
    fresh = calibrate(model, 6, 4)
    first = cached_calibration(model, 6, 4, cache_dir=tmp_path)
    assert first == fresh and len(list(tmp_path.glob("*.json"))) == 1
    assert cached_calibration(model, 6, 4, cache_dir=tmp_path) == fresh  # read back
    assert len(list(tmp_path.glob("*.json"))) == 1
    assert cached_calibration(model, 6, 3, cache_dir=tmp_path) == calibrate(model, 6, 3)
    assert len(list(tmp_path.glob("*.json"))) == 2
