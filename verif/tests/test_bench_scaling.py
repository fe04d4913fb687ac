"""Smoke test of verif/bench/scaling.py's pure helpers, on the reference machine only."""

from __future__ import annotations

import pytest

from model.chip.isa import ChipConfig
from model.compiler.layout import max_context
from model.lm.tiny_lm import make_model
from verif.bench.scaling import (
    Cost,
    context_cases,
    context_points,
    context_statement,
    format_table,
    linear_fit,
    measure,
    pool_statement,
    spread,
)


def test_linear_fit_recovers_a_line_and_scores_scatter_below_one():
    fit = linear_fit([1, 8, 16, 64], [1333 + 79 * n for n in (1, 8, 16, 64)])
    assert (fit.a, fit.b, fit.r2) == (pytest.approx(1333), pytest.approx(79), pytest.approx(1))
    assert 0 < linear_fit([0, 1, 2, 3], [0, 2, 1, 3]).r2 < 1
    assert linear_fit([1, 2, 3], [5, 5, 5]).r2 == 1  # flat: nothing left to explain


def test_spread_is_max_over_min():
    assert spread([2.0, 3.0, 2.5]) == 1.5
    assert spread([7, 7]) == 1


def test_table_columns_are_aligned_and_floats_short():
    text = format_table(["context", "ms"], [[1, 0.123456], [64, 12.5]])
    lines = text.splitlines()
    assert lines == ["  context     ms", "---------  -----", "        1  0.123", "       64   12.5"]


def test_contexts_run_from_one_to_the_longest_softmax_the_chip_takes():
    points = context_points(ChipConfig())
    assert points == [1, 8, 16, 32, 48, 64]
    assert points[-1] == max_context(ChipConfig())


def test_statements_name_the_growth():
    costs = [Cost(100 + 10 * n, {"machine": 1.0}) for n in (1, 2, 3)]
    assert context_statement([1, 2, 3], costs) == (
        "linear: cycles = 100 + 10.00 * context, R^2 = 1.00000 (contexts 1..3)")
    flat = [Cost(50, {"machine": ms}, {"machine": ms}) for ms in (1.0, 1.2)]
    assert pool_statement(flat, "chip gather") == (
        "flat (chip gather): max/min = cycles 1.000; wall ms machine 1.20; cpu ms machine 1.20")


def test_a_longer_context_costs_more_cycles_on_the_machine():
    cases = context_cases(make_model("structured"), [1, 3], ChipConfig())
    costs = [measure(case, sims=()) for case in cases]
    assert costs[0].cycles < costs[1].cycles
    assert set(costs[0].ms) == set(costs[0].cpu_ms) == {"machine"}
