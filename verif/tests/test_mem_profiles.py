"""Every flow under a memory profile other than the ideal one (sim/mem_profile.py), on both
simulators: the chapter's decodes in both gather modes, the fork in both, the serving workload
in both, random programs and the error paths.

`make test` runs them under `light` (hw/tb/axi_ram.v holds each channel low about 10% of cycles
and draws each read burst's latency in 4 .. 16; EXT_LAT is 2); `make regress SUITE=full`
(FULL_LENGTH=1) under `heavy` as well (60%, 20 .. 200, now and then a stall of 300 cycles). The
chip waits, and must be otherwise unchanged (hw/ISA.md, "Exact by construction"): every
integer, memory write and event counter exactly as the reference machine predicts for the
ideal memory, cnt_total - cnt_wait equal to its cnt_total, and cnt_wait within 0 .. the delays
the memory counted itself (verif/kit/bfm.py checks both after every run; the scoreboard then
compares the counters of the ideal memory). Each test also asserts that the chip did wait, so
that a profile that stalled nothing cannot pass for one that did. On Icarus in make test each
flow runs its shorter version (sim.lengths): decodes of 8 steps, a fork after 4 of 8, 3 serving
requests, 20 random programs, the illegal opcode at the lowest 8 of its addresses. Each test's
`profile` parameter sets the memory's plusargs (verif/runs/batching.py); the tests of one
simulator and profile share a process.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from model.compiler.gather import GATHER_MODES
from sim.lengths import full_length, run_length, runs_full
from sim.mem_profile import STALL_FIELDS
from sim.toolchain import SIMULATORS
from verif.runs.launch import decode_job, programs_job, serving_job
from verif.runs.plans import (
    CHAPTER_STEPS,
    CHAPTER_WINDOWS,
    CHIP_FORK_PLAN,
    FORK_PLAN,
    SERVING_REQUESTS,
    chapter_spec,
    chip_gather_spec,
    error_addresses_on,
    fork_steps,
    serving_spec,
)
from verif.runs.spec import DecodeSpec, ServingSpec
from verif.sequences.program_seqs import WIDE_SOFTMAX

PROFILE_NAMES = ("light", "heavy") if full_length() else ("light",)
PROGRAMS = 60  # random programs per simulator under a profile
SHORT = {"steps": 8, "fork_steps": 8, "fork_at": 4, "requests": 3, "programs": 20}


def decode_under(sim: str, window: int | None, gather: str) -> DecodeSpec:
    steps = run_length(sim, CHAPTER_STEPS, SHORT["steps"])
    return chapter_spec(window, steps) if gather == "host" else chip_gather_spec(window, steps)


def fork_under(sim: str, gather: str) -> list[DecodeSpec]:
    (fork,) = FORK_PLAN if gather == "host" else CHIP_FORK_PLAN
    if runs_full(sim):
        return [fork]
    return [replace(fork, steps=SHORT["fork_steps"], fork_at=SHORT["fork_at"])]


def serving_under(sim: str, gather: str) -> ServingSpec:
    return serving_spec(8, gather, run_length(sim, SERVING_REQUESTS, SHORT["requests"]))


def programs_on(sim: str) -> int:
    return run_length(sim, PROGRAMS, SHORT["programs"])


def waited(result: dict) -> list[int]:
    """The cycles each run (a decode's step, a serving run, a bare program) waited."""
    return result.get("program_waits") or [step["counters"]["wait"]
                                            for step in result["steps"]]


def stalled_channels(result: dict) -> int:
    return result["coverage"]["summary"]["decode.chip_cg.memory_stall"]["covered"]


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job(
    "PlanDecodeTest", lambda sim, window, gather: [decode_under(sim, window, gather)]))
@pytest.mark.parametrize("gather", GATHER_MODES)
@pytest.mark.parametrize("window", CHAPTER_WINDOWS, ids=lambda w: f"W{w}")
@pytest.mark.parametrize("profile", PROFILE_NAMES)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chapter_decode_under_a_memory_profile(sim, profile, window, gather, seed, sim_run):
    """Every step equals the ideal memory's prediction once its wait is taken out; every
    step waited, and every channel of the port stalled at least once."""
    spec = decode_under(sim, window, gather)
    result = sim_run.raise_if_failed()
    assert result["steps_checked"] == spec.steps
    waits = waited(result)
    assert all(w > 0 for w in waits), f"a step that did not wait under {profile}: {waits}"
    assert stalled_channels(result) == len(STALL_FIELDS)
    ideal = sum(step["counters"]["total"] for step in result["steps"])
    print(f"\n[{sim}] {spec.label()} under {profile}: {ideal} cycles on the ideal memory, "
          f"{sum(waits)} waited, {ideal + sum(waits)} in all")


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job("ForkDecodeTest", fork_under))
@pytest.mark.parametrize("gather", GATHER_MODES)
@pytest.mark.parametrize("profile", PROFILE_NAMES)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_fork_decode_under_a_memory_profile(sim, profile, gather, seed, sim_run):
    """The fork, copy-on-write included (on the chip in chip gather), under stalls."""
    (spec,) = fork_under(sim, gather)
    result = sim_run.raise_if_failed()
    assert result["steps_checked"] == fork_steps(spec)
    assert all(w > 0 for w in waited(result))


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=serving_job(serving_under))
@pytest.mark.parametrize("gather", GATHER_MODES)
@pytest.mark.parametrize("profile", PROFILE_NAMES)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_serving_under_a_memory_profile(sim, profile, gather, seed, sim_run):
    """Continuous batching at B = 8: every batched run exact under stalls, every request done."""
    spec = serving_under(sim, gather)
    result = sim_run.raise_if_failed()
    assert result["serving"]["requests"] == spec.n_requests
    assert result["steps_checked"] == result["serving"]["chip_runs"]
    assert all(w > 0 for w in waited(result))


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=programs_job("RandomProgramsTest", programs_on))
@pytest.mark.parametrize("profile", PROFILE_NAMES)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_random_programs_under_a_memory_profile(sim, profile, seed, sim_run):
    result = sim_run.raise_if_failed()
    waits = waited(result)
    assert len(waits) == programs_on(sim) + len(WIDE_SOFTMAX) and all(w > 0 for w in waits), (
        f"every program fetches, so every one waits under {profile}: {waits}")


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.sim_job(launch=programs_job("ErrorPathsTest", error_addresses_on))
@pytest.mark.parametrize("profile", PROFILE_NAMES)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_error_paths_under_a_memory_profile(sim, profile, seed, sim_run):
    """Each error code at its address, counters as the ideal memory's, under stalls."""
    result = sim_run.raise_if_failed()
    assert all(w > 0 for w in waited(result)), result["program_waits"]
