"""The decode environment's pure-Python pieces, without a simulator."""

from __future__ import annotations

import pytest

from model.compiler import Layout
from verif.decode_checks import (
    flatness_differences,
    reference_decode,
    reference_differences,
    rule_differences,
    rule_tokens,
)
from verif.decode_spec import DecodeSpec, plan_from_json, plan_to_json
from verif.mutants import MUTANTS, make_mutant
from verif.scoreboard import output_name


def test_rule_tokens_follow_f():
    assert rule_tokens(0, 5) == [0, 3, 2, 13, 4, 7]


def test_plan_round_trips_through_json():
    plan = [DecodeSpec("a", window=8, force=[0, 1, 2]), DecodeSpec("b", "random", fork_at=3)]
    assert plan_from_json(plan_to_json(plan)) == plan


def test_flatness_sees_a_step_that_is_not_flat():
    spec = DecodeSpec("w", window=3, steps=5)
    assert not flatness_differences(spec, [10, 20, 30, 30, 30])
    assert flatness_differences(spec, [10, 20, 30, 31, 30])
    assert not flatness_differences(DecodeSpec("full"), [1, 2, 3])


def test_rule_check_ignores_forced_and_random_decodes():
    assert rule_differences(DecodeSpec("s", steps=2), [0, 3, 1])
    assert not rule_differences(DecodeSpec("s", steps=2, force=[0, 5, 5]), [0, 5, 5])
    assert not rule_differences(DecodeSpec("r", "random", steps=2), [0, 9, 9])


def test_reference_host_agrees_with_itself_and_names_a_changed_counter():
    spec = DecodeSpec("s", steps=3, window=2)
    ref = reference_decode(spec)
    cycles = [list(r.cycles) for r in ref.records]
    pages = [r.pages for r in ref.records]
    assert not reference_differences(spec, ref.tokens, cycles, pages, ref)
    cycles[1][0] += 1
    assert "step 2" in reference_differences(spec, ref.tokens, cycles, pages, ref)[0]


def test_output_names_cover_the_layout():
    layout = Layout.for_model(8, 16, 64)
    assert output_name(layout, layout.logits + 3) == "logits[3]"
    assert output_name(layout, layout.token) == "token"
    assert output_name(layout, layout.v_new + 7) == "v_new[7]"


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_changes_exactly_one_line_of_a_copy(name, tmp_path):
    mutant = MUTANTS[name]
    sources = make_mutant(mutant, tmp_path)
    broken = next(p for p in sources if p.as_posix().endswith(mutant.path))
    assert mutant.broken in broken.read_text()
    assert tmp_path in broken.parents  # the working tree is untouched
