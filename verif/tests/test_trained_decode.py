"""The trained model (issue 23) on the RTL, in the pyuvm environment, on Icarus and Verilator.

The model of model/lm/data/trained_lm.npz (learned from the pydoc text, model.lm.train_lm) decodes
32 steps with W = None, 8 and 4, in host gather and in chip gather (the chip reads the pool through
the block table). Inside the simulation the scoreboard compares every chip run with the reference
machine (every output word, memory write and counter) and check_phase the decode's closed forms
(pages, programs, flat cycles). Here, against the reference host's integer decode
(model.host.decode.decode, calibrated as the env is): the same tokens, pages after every step,
programs and cycles per step. On Icarus `make test` runs a shorter version (sim.lengths): 12 steps
in host gather, 16 in chip gather (CHIP_GATHER_SHORT_STEPS: a freed page reused and read back), and
the forced decode with W = 4 alone.

The greedy decode from the space collapses into "<other>" (a space, then token 15 for ever: in
the pydoc text digits and punctuation come in runs, and a model without positions, once its
context is mostly "<other>", predicts more of it). The float model does the same, so the chip's
int8 integers do not change a token of it; but those decodes attend nearly identical rows.
So the same windows also run teacher-forced along held-out text (TRAINED_TEXT), where each
step attends different characters and the windows change the chip's decisions: per step, the
chip's ARGMAX must be the reference's, which at 32 steps is the report's chip table
(model.host.decode.chip_reader) on its first sequence.
"""

from __future__ import annotations

import pytest

from model.compiler.gather import GATHER_MODES
from model.lm.corpus import load_corpus
from model.lm.tiny_lm import float_generate, make_model
from sim.lengths import run_length, runs_full
from sim.toolchain import SIMULATORS
from verif.report.trained import CHIP_SEQUENCES, SEQUENCE_TOKENS
from verif.runs.launch import decode_job
from verif.runs.plans import (
    CHAPTER_STEPS,
    CHAPTER_WINDOWS,
    CHIP_GATHER_SHORT_STEPS,
    SHORT_STEPS,
    TRAINED_TEXT,
    trained_forced_spec,
    trained_spec,
)
from verif.runs.spec import DecodeSpec, reference_decode


def steps_on(sim: str, gather: str = "host") -> int:
    short = CHIP_GATHER_SHORT_STEPS if gather == "chip" else SHORT_STEPS
    return run_length(sim, CHAPTER_STEPS, short)


def forced_plan(sim: str) -> list[DecodeSpec]:
    """The forced decodes: W = None, 8 and 4; on Icarus in make test W = 4 alone for 12 steps
    (its decision at step 12 already differs from full attention's)."""
    windows = CHAPTER_WINDOWS if runs_full(sim) else (4,)
    return [trained_forced_spec(window, steps_on(sim)) for window in windows]


def text(tokens: list[int]) -> str:
    """Tokens as the characters they stand for ("#" for <other>)."""
    return load_corpus().alphabet.decode(tokens)


def test_the_forced_text_is_the_reports_first_held_out_sequence():
    (first, *_) = load_corpus().held_out_sequences(SEQUENCE_TOKENS, CHIP_SEQUENCES)
    assert tuple(int(t) for t in first) == TRAINED_TEXT
    assert text(list(TRAINED_TEXT)) == "currentl# onl# one standard #a##i"


def checked_against_the_reference(spec: DecodeSpec, result: dict) -> list[int]:
    """Assert the run is the reference host's decode, step for step; return its totals."""
    assert result["steps_checked"] == result["reference_runs"] == spec.steps
    host = reference_decode(spec)
    (chip,) = result["decodes"]
    totals = [step["counters"]["total"] for step in result["steps"]]
    assert chip["tokens"] == host.tokens
    assert chip["pages_after"] == [host.pages_after(s) for s in range(1, spec.steps + 1)]
    assert chip["programs_compiled"] == host.programs_compiled
    assert totals == [record.cycles[0] for record in host.records]
    return totals


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job(
    "PlanDecodeTest",
    lambda sim, gather, window: [trained_spec(window, gather, steps_on(sim, gather))]))
@pytest.mark.parametrize("window", CHAPTER_WINDOWS, ids=lambda w: f"W{w}")
@pytest.mark.parametrize("gather", GATHER_MODES)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_trained_decode(sim, gather, window, seed, sim_run):
    """The trained model's greedy decode (32 steps; 12 or 16 on Icarus in make test): tokens,
    pages after every step, programs and cycles per step are the reference host's; the tokens
    are the float model's greedy decode too (the int8 integers change none)."""
    spec = trained_spec(window, gather, steps_on(sim, gather))
    result = sim_run.raise_if_failed()
    totals = checked_against_the_reference(spec, result)
    tokens = result["decodes"][0]["tokens"]
    assert tokens == float_generate(make_model("trained"), spec.start, spec.steps, window)
    print(f"\n[{sim}] {spec.label()}: {text(tokens)!r}; cycles per step {totals}")


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job("PlanDecodeTest", lambda sim: forced_plan(sim)))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_trained_forced_decodes(sim, seed, sim_run):
    """Teacher-forced along held-out text with W = None, 8, 4 (W = 4 alone, 12 steps, on Icarus
    in make test): every step's decision (the chip's ARGMAX) is the reference host's; the
    text's characters went in as the inputs."""
    result = sim_run.raise_if_failed()
    plan = forced_plan(sim)
    assert result["steps_checked"] == result["reference_runs"] == sum(s.steps for s in plan)
    for spec, chip in zip(plan, result["decodes"], strict=True):
        assert chip["tokens"] == list(TRAINED_TEXT[: spec.steps + 1])
        host = reference_decode(spec)
        decisions = [step["token_out"] for step in result["steps"]
                     if step["decode"] == spec.label()]
        assert decisions == [record.token for record in host.records], spec.label()
        assert len(set(decisions)) >= 3, f"{spec.label()}: a degenerate decode {decisions}"
        print(f"\n[{sim}] {spec.label()}: read {text(chip['tokens'][:-1])!r}, "
              f"predicted {text(decisions)!r}")
