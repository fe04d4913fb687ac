"""Steps of B requests (model.compiler): every request equals its solo run, exactly.

The solo step (B = 1, a decode's layout) is the reference: for random batches of random
contexts, each request's logits, token and new K/V rows must be the same integers. Cycle counts
are closed-form functions of the programs, so the throughput checks are exact.
"""

from __future__ import annotations

import re
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.chip.isa import ChipConfig, Op
from model.compiler.cache import ProgramCache
from model.compiler.gather import ChipGather
from model.compiler.inputs import run_reference
from model.compiler.layout import BATCH_MAX, Layout, Pool, max_context
from model.compiler.program import requant_runs
from model.compiler.quantize import Requant, calibrate, shared_context_scales
from model.host.throughput import (
    attention_cycles,
    batching_ceiling,
    main,
    step_cycles,
    throughput_table,
)
from model.lm.tiny_lm import random_model
from model.tests.host_gather import host_gather_inputs

CFG = ChipConfig()
LONGEST = max_context(CFG)


@pytest.fixture(scope="module")
def calibration():
    return calibrate(random_model(2), LONGEST, None, starts=[0])


@pytest.fixture(scope="module", params=["per-context scales", "shared scales"])
def programs(request, calibration) -> ProgramCache:
    """Batch programs (a serving layout of BATCH_MAX requests)."""
    if request.param == "shared scales":
        calibration = shared_context_scales(calibration)
    return ProgramCache(random_model(2), calibration, CFG, max_batch=BATCH_MAX)


def solo_programs(programs: ProgramCache) -> ProgramCache:
    """The same model's solo programs: a decode's layout, one request."""
    return ProgramCache(programs.model, programs.calibration, CFG)


def random_inputs(programs: ProgramCache, contexts, rng):
    """x of random tokens; random int8 cached rows (any int8 row is a legal input)."""
    d = programs.model.dim
    xs = [programs.x_table[t] for t in rng.integers(0, programs.model.vocab, len(contexts))]
    kcs = [rng.integers(-128, 128, (n - 1, d)) for n in contexts]
    vcs = [rng.integers(-128, 128, (n - 1, d)) for n in contexts]
    return xs, kcs, vcs


def run(programs: ProgramCache, contexts, xs, kcs, vcs):
    return run_reference(host_gather_inputs(programs.get(contexts), xs, kcs, vcs)).results


def outputs(result) -> tuple:
    return (result.logits_int.tolist(), result.token, result.k_new.tolist(),
            result.v_new.tolist())


def assert_equal_to_solo(programs: ProgramCache, contexts, xs, kcs, vcs) -> None:
    solo = solo_programs(programs)
    batch = run(programs, contexts, xs, kcs, vcs)
    for i, n in enumerate(contexts):
        alone = run(solo, [n], [xs[i]], [kcs[i]], [vcs[i]])[0]
        assert outputs(batch[i]) == outputs(alone), f"request {i} of contexts {contexts}"


@settings(max_examples=25, deadline=None)
@given(contexts=st.lists(st.integers(1, LONGEST), min_size=1, max_size=BATCH_MAX),
       seed=st.integers(0, 2**16))
def test_every_request_equals_its_solo_run(programs, contexts, seed):
    rng = np.random.default_rng(seed)
    assert_equal_to_solo(programs, contexts, *random_inputs(programs, contexts, rng))


def test_short_contexts_and_full_batches_equal_solo(programs):
    """The edges the random draw may miss: context 1 (no cached rows), 64, eight requests."""
    rng = np.random.default_rng(7)
    for contexts in ([1] * BATCH_MAX, [LONGEST] * BATCH_MAX, [1, LONGEST, 2, LONGEST - 1]):
        assert_equal_to_solo(programs, contexts, *random_inputs(programs, contexts, rng))


def matmuls(program) -> int:
    return sum(instr.op == Op.MATMUL for instr in program.instructions())


def test_shared_scales_run_each_projection_as_one_matmul(calibration):
    """Q, K, V, output and LM head: 5 matmuls for any batch, plus 2 per request (attention)."""
    programs = ProgramCache(random_model(2), shared_context_scales(calibration), CFG,
                            max_batch=BATCH_MAX)
    contexts = [1, 5, 9, 30, 64, 2, 3, 17]
    assert matmuls(programs.get(contexts)) == 5 + 2 * len(contexts)


def test_per_context_scales_split_projections_by_requant(calibration):
    """Different contexts have different Q/output/LM-head requants: one matmul per run of them."""
    programs = ProgramCache(random_model(2), calibration, CFG, max_batch=BATCH_MAX)
    contexts = [1, 1, 2, 1]
    q_runs = requant_runs([programs.scales(n).requants["q"] for n in contexts])
    assert [rows for _, rows in q_runs] == [2, 1, 1]
    # K and V scales are shared by every context: one matmul each; Q, out, logits: three each
    assert matmuls(programs.get(contexts)) == 2 + 3 * 3 + 2 * len(contexts)


def test_requant_runs():
    a, b = Requant(0.5, 1, 2), Requant(0.25, 1, 3)
    assert requant_runs([a, a, b, a]) == [(0, 2), (2, 1), (3, 1)]
    assert requant_runs([a]) == [(0, 1)]


def test_one_layout_for_every_batch(programs):
    """Weights, inputs and outputs sit at the same addresses whatever the contexts: a testbench
    loads the weights once. The largest batch fits the chip."""
    layouts = {programs.get(c).layout for c in ([1], [64] * BATCH_MAX, [3, 9])}
    assert len(layouts) == 1
    (layout,) = layouts
    assert layout == Layout.for_model(programs.model, CFG, BATCH_MAX)
    assert layout.end <= CFG.ext_words
    weights = {programs.get(c).weight_words.tobytes() for c in ([1], [7, 8])}
    assert weights == {solo_programs(programs).get(1).weight_words.tobytes()}


def test_batch_programs_are_cached_by_contexts(programs):
    assert programs.get([2, 3]) is programs.get((2, 3))
    assert programs.get([3, 2]) is not programs.get([2, 3])
    assert programs.get(4) is programs.get([4])


@pytest.mark.parametrize("contexts", [[], [1] * (BATCH_MAX + 1), [0], [LONGEST + 1]])
def test_bad_batches_are_refused(programs, contexts):
    with pytest.raises(ValueError, match=r"runs 1\.\.8 requests|outside"):
        programs.get(contexts)


def test_wrong_inputs_are_refused(programs):
    program = programs.get([3, 1])
    x = programs.x_table[0]
    rows = np.zeros((2, programs.model.dim), dtype=np.int64)
    none = rows[:0]
    with pytest.raises(ValueError, match="takes 2 cached rows"):
        host_gather_inputs(program, [x, x], [rows[:1], none], [rows, none])
    with pytest.raises(ValueError, match="takes as many"):
        host_gather_inputs(program, [x], [rows], [rows])


# ---- throughput --------------------------------------------------------------------------------


@pytest.mark.parametrize("context", [1, 8, 64])
def test_one_request_costs_what_the_solo_program_costs(programs, context):
    """At B = 1 a serving layout's step does a decode's solo step: the same cycles, unit by unit
    (the layouts differ only in addresses)."""
    rng = np.random.default_rng(context)
    xs, kcs, vcs = random_inputs(programs, [context], rng)
    batch = run(programs, [context], xs, kcs, vcs)[0]
    solo = run(solo_programs(programs), [context], xs, kcs, vcs)[0]
    assert batch.counters == solo.counters


def test_throughput_grows_with_the_batch(programs):
    """Tokens per 1,000 cycles rise with B; at context 1, eight requests reach 2.5x one."""
    table = throughput_table(programs, contexts=(1, 8, 32))
    for rates in table.values():
        values = list(rates.values())
        assert values == sorted(values) and len(set(values)) == 4
    assert table[1][8] / table[1][1] >= 2.5


def test_a_batch_grows_by_a_fixed_cost_per_request_and_per_tile_row(programs):
    """The ceiling's premise: each request a batch takes adds the same cycles (its attention
    runs alone), and every ARRAY_N-th one also a tile row of the shared projections; so over a
    whole tile row a request costs ``marginal_cycles``, and the gain approaches solo / marginal.
    """
    n = CFG.array_n
    for ceiling in batching_ceiling(programs, (1, 8)):
        cycles = [step_cycles(programs, [ceiling.context] * b) for b in range(1, 2 * n + 1)]
        steps = [after - before for before, after in pairwise(cycles)]
        opens_a_row = [(batch % n) == 0 for batch in range(1, 2 * n)]  # batch -> batch + 1
        assert len({s for s, new_row in zip(steps, opens_a_row, strict=True) if not new_row}) == 1
        assert sum(steps[n - 1 :]) / n == ceiling.marginal_cycles
        assert 1 < ceiling.gain_b8 < ceiling.limit
    first, eighth = batching_ceiling(programs, (1, 8))
    assert first.limit > eighth.limit  # a longer context leaves batching less to share


@pytest.mark.parametrize("gather", ["host", "chip"])
def test_attention_is_each_requests_own_instructions(calibration, gather):
    """A step's attention instructions are, request by request and in program order, its rows'
    two reads (none at context 1), its score matmul, its SOFTMAX and its weighted sum; a batch
    shares none of them, so their cycles are the sum of each request's alone."""
    pool = Pool(4, 64, random_model(2).dim) if gather == "chip" else None
    strategy = ChipGather() if gather == "chip" else None
    programs = ProgramCache(random_model(2), calibration, CFG, strategy, BATCH_MAX, pool)
    contexts = [1, 8, 5, 40]
    program = programs.get(contexts)
    attention = program.attention_instructions()
    read = Op.PLOAD if gather == "chip" else Op.LOAD
    expected = [op for n in contexts
                for op in [read] * (2 * (n > 1)) + [Op.MATMUL, Op.SOFTMAX, Op.MATMUL]]
    assert [instr.op for instr in attention] == expected
    rest = iter(program.instructions())
    assert all(any(instr == other for other in rest) for instr in attention), "in order"
    assert attention_cycles(program) == sum(attention_cycles(programs.get([n])) for n in contexts)
    assert attention_cycles(program) < step_cycles(programs, contexts)


def test_main_prints_the_table(capsys):
    main()
    out = capsys.readouterr().out
    assert "tokens per 1,000 cycles" in out
    assert len(re.findall(r"\d\.\d\dx", out)) == 4 * 4  # a gain per batch size and context
