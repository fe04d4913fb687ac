"""The compiled decode step: layout, program shape, scales, and the integers it computes.

The step's integers are checked against a numpy emulation of the intended graph written from
hw/ISA.md's arithmetic (model.chip.arith), so a wrong operand address, a missing transpose flag or a
swapped requant shows up as a mismatch in one named tensor.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from model.chip import arith, machine
from model.chip.isa import ChipConfig, Op, disassemble, program_cycles
from model.compiler.cache import ProgramCache
from model.compiler.inputs import run_reference
from model.compiler.layout import Layout, program_room
from model.compiler.program import StepProgram
from model.compiler.quantize import (
    SCORE_STEPS_PER_NAT,
    Calibration,
    calibrate,
    int8_scale,
    quantize,
)
from model.lm.tiny_lm import DIM, VOCAB, TinyLM, float_trace, random_model
from model.tests.host_gather import host_gather_inputs

CFG = ChipConfig()
RANDOM_SEED = 2


@pytest.fixture(scope="module")
def model() -> TinyLM:
    return random_model(RANDOM_SEED)


@pytest.fixture(scope="module")
def calibration(model) -> Calibration:
    return calibrate(model, CFG.k_max, None, starts=range(4))


@pytest.fixture(scope="module")
def programs(model, calibration) -> ProgramCache:
    return ProgramCache(model, calibration, CFG)


def cached_rows(rng: np.random.Generator, context: int) -> tuple[np.ndarray, ...]:
    """An int8 embedding row and context - 1 random int8 key and value rows."""
    x, kc, vc = (rng.integers(-128, 128, size=shape)
                 for shape in ((DIM,), (context - 1, DIM), (context - 1, DIM)))
    return x, kc, vc


def run_solo(program: StepProgram, x, kc, vc):
    """One request's run of a solo program on the reference machine."""
    return run_reference(host_gather_inputs(program, [x], [kc], [vc])).results[0]


def emulate(program: StepProgram, x: np.ndarray, kc: np.ndarray, vc: np.ndarray,
            weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The decode step's integers, from ISA.md's arithmetic, without the machine."""
    rq = program.scales[0].requants

    def mm(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return arith.requant(a @ b, rq[name].mult, rq[name].shift)

    q = mm("q", x, weights["w_q"])
    k_new, v_new = mm("k", x, weights["w_k"]), mm("v", x, weights["w_v"])
    keys, values = np.vstack([kc, k_new]), np.vstack([vc, v_new])
    probs = arith.softmax_int(mm("scores", q, keys.T))
    hidden = arith.sat8(x + mm("out", mm("attn", probs, values), weights["w_o"]))
    logits = mm("logits", hidden, weights["w_out"])
    return {"logits": logits, "token": int(np.argmax(logits)), "k_new": k_new, "v_new": v_new}


def int_weights(model: TinyLM, program: StepProgram) -> dict[str, np.ndarray]:
    return {name: quantize(getattr(model, name), scale)
            for name, scale in program.scales[0].weights.items()}


# ---- layout and program ------------------------------------------------------------------------


def test_layout_fits_and_its_regions_follow_each_other(model):
    layout = Layout.for_model(model, CFG)
    rows = (CFG.k_max - 1) * DIM
    regions = [  # (start, size) in the order the layout promises
        (layout.program, program_room(1)), (layout.weights, layout.weight_words),
        (layout.x, DIM), (layout.kc, rows), (layout.vc, rows), (layout.logits, VOCAB),
        (layout.tokens, 1), (layout.k_new, DIM), (layout.v_new, DIM),
    ]
    for (start, size), (following, _) in itertools.pairwise(regions):
        assert start + size == following
    assert regions[-1][0] + regions[-1][1] == layout.end <= CFG.ext_words
    assert layout.weight_words == 4 * DIM * DIM + DIM * VOCAB
    assert layout.outputs == (layout.logits, layout.end) == (layout.logits, layout.tables)


@pytest.mark.parametrize("context", [1, 2, 32, CFG.k_max])
def test_every_context_fits_the_chip(programs, context):
    program = programs.get(context)
    assert program.words.size <= program.layout.program_words
    assert program.scratchpad.end <= CFG.sram_words
    assert program.layout == programs.get(1).layout  # one layout for all


def test_a_context_beyond_k_max_is_refused(programs):
    with pytest.raises(ValueError, match=r"outside 1\.\.64"):
        programs.get(CFG.k_max + 1)


def test_an_uncalibrated_context_is_refused(model):
    with pytest.raises(ValueError, match="never seen in calibration"):
        ProgramCache(model, calibrate(model, 4, None, starts=[0])).get(5)


@pytest.mark.parametrize("context", [1, 5])
def test_program_uses_the_expected_opcodes(programs, context):
    instrs = programs.get(context).instructions()
    ops = [Op(instr.op) for instr in instrs]
    assert set(ops) == {Op.LOAD, Op.MATMUL, Op.SOFTMAX, Op.VADD, Op.ARGMAX, Op.STORE, Op.HALT}
    assert ops.count(Op.MATMUL) == 7 and ops.count(Op.STORE) == 4 and ops[-1] == Op.HALT
    assert ops.count(Op.LOAD) == (2 if context == 1 else 4)  # no kc/vc rows at context 1
    scores = [i for i in instrs if i.op == Op.MATMUL and i.flags & 1]
    assert len(scores) == 1 and scores[0].n == context  # one transposed MATMUL over all n rows


def test_scales_are_in_range_and_encoded_in_the_program(programs):
    program = programs.get(9)
    scales = program.scales[0]
    matmuls = {(i.mult, i.shift) for i in program.instructions() if i.op == Op.MATMUL}
    assert len(matmuls) == len({(r.mult, r.shift) for r in scales.requants.values()})
    for requant in scales.requants.values():
        assert 0.0 < requant.scale < 1.0
        assert 2**30 <= requant.mult < 2**31 and 0 <= requant.shift <= 31
        assert requant.mult * 2.0 ** -(31 + requant.shift) == pytest.approx(requant.scale, 1e-8)
        assert (requant.mult, requant.shift) in matmuls
    assert scales.requants["scores"].scale == pytest.approx(
        SCORE_STEPS_PER_NAT * scales.q * scales.k / np.sqrt(DIM))


def test_calibration_covers_every_context_and_shares_x_k_v(model):
    assert calibrate(model, 10, 4).contexts() == [1, 2, 3, 4]
    assert calibrate(model, 10, None).contexts() == list(range(1, 11))
    windowed, full = calibrate(model, 3, 8), calibrate(model, 3, None)
    assert windowed.shared == full.shared  # a window longer than the run changes nothing


def test_quantize_rounds_half_away_from_zero_and_saturates():
    assert quantize(np.array([0.5, -0.5, 1.49, 300.0, -300.0]), 1.0).tolist() == [
        1, -1, 1, 127, -128]
    assert int8_scale(254.0) == 2.0
    with pytest.raises(ValueError, match="always zero"):
        int8_scale(0.0)


# ---- what the program computes -----------------------------------------------------------------


@pytest.mark.parametrize("context", [1, 2, 7, 33])
def test_step_integers_equal_an_emulation_of_the_graph(model, programs, context):
    program = programs.get(context)
    weights = int_weights(model, program)
    rng = np.random.default_rng(context)
    for _ in range(3):
        x, kc, vc = cached_rows(rng, context)
        got, want = run_solo(program, x, kc, vc), emulate(program, x, kc, vc, weights)
        np.testing.assert_array_equal(got.logits_int, want["logits"])
        np.testing.assert_array_equal(got.k_new, want["k_new"])
        np.testing.assert_array_equal(got.v_new, want["v_new"])
        assert got.token == want["token"]
        np.testing.assert_allclose(got.logits, got.logits_int * program.scales[0].logits)


def test_new_rows_land_right_after_the_cached_rows(programs):
    context = 6
    program = programs.get(context)
    x, kc, vc = cached_rows(np.random.default_rng(1), context)
    inputs = host_gather_inputs(program, [x], [kc], [vc])
    result = machine.run(inputs.image(), CFG, raise_on_error=True)
    (out,) = inputs.read_results(result.ext, result.counters)
    pad = program.scratchpad
    keys_at, values_at = pad.keys_of(0, context, DIM), pad.values_of(0, context, DIM)
    keys = machine.int8_of(result.sram[keys_at : keys_at + context * DIM])
    values = machine.int8_of(result.sram[values_at : values_at + context * DIM])
    np.testing.assert_array_equal(keys.reshape(context, DIM), np.vstack([kc, out.k_new]))
    np.testing.assert_array_equal(values.reshape(context, DIM), np.vstack([vc, out.v_new]))


def test_scores_are_sixteen_steps_per_nat(model, programs):
    program = programs.get(1)
    ints, reals = [], []
    for token in range(VOCAB):  # context 1: the score of each token's query with its own key
        x = quantize(model.embed[token], program.scales[0].x)
        inputs = host_gather_inputs(program, [x], [np.zeros((0, DIM))], [np.zeros((0, DIM))])
        result = machine.run(inputs.image(), CFG, raise_on_error=True)
        ints.append(machine.int8_of(result.sram[program.scratchpad.scores]))
        reals.append(float_trace(model, token, [], []).scores[0])
    ints, reals = np.array(ints, dtype=float), np.array(reals)
    slope = (ints @ reals) / (reals @ reals)  # least squares through the origin
    assert slope == pytest.approx(SCORE_STEPS_PER_NAT, rel=0.02)
    assert np.abs(ints - SCORE_STEPS_PER_NAT * reals).max() < 4  # int8 q and k: a few steps


def test_input_words_check_the_row_count(programs):
    program = programs.get(3)
    with pytest.raises(ValueError, match="takes 2 cached rows"):
        host_gather_inputs(program, [np.zeros(DIM)], [np.zeros((3, DIM))], [np.zeros((3, DIM))])
    inputs = host_gather_inputs(program, [np.arange(DIM)], [np.ones((2, DIM))],
                                [-np.ones((2, DIM))])
    writes = inputs.x_writes() | inputs.cache_writes()
    assert sorted(writes) == [program.layout.x, program.layout.kc, program.layout.vc]
    assert writes[program.layout.vc].tolist() == [0xFFFFFFFF] * 2 * DIM  # sign-extended words


def test_cycles_grow_with_the_context(programs):
    rng = np.random.default_rng(0)
    cycles = [run_solo(programs.get(n), *cached_rows(rng, n)).cycles for n in range(1, 10)]
    assert all(a[0] < b[0] for a, b in itertools.pairwise(cycles))
    for total, dma, mat, vec, sm in cycles:
        assert total > dma + mat + vec + sm > 0  # the rest is fetch and check


def test_program_cycles_is_the_machines_total_for_any_program(programs):
    """isa.program_cycles, the closed form the watchdog and the throughput use, against the
    machine's cnt_total, which it adds up instruction by instruction as it runs."""
    rng = np.random.default_rng(4)
    for contexts in ([1], [7], [64], [3, 9, 1], [64] * 8):
        program = ProgramCache(programs.model, programs.calibration, CFG,
                               max_batch=8).get(contexts)
        rows = [cached_rows(rng, n) for n in contexts]
        run = run_reference(host_gather_inputs(program, *zip(*rows, strict=True)))
        assert program_cycles(program.words, CFG) == run.results[0].counters.total
    assert program_cycles(disassemble(programs.get(5).words), CFG) == program_cycles(
        programs.get(5).words, CFG)
