"""The chip under the `light` memory profile (sim/mem_profile.py), on both simulators: random
programs, the error paths, and the chapter's W = 8 decode in both gather modes.

hw/tb/axi_ram.v holds each channel low about 10% of cycles and draws each read burst's
latency in 4 .. 16 (EXT_LAT is 2). The chip waits, and must be otherwise unchanged (hw/ISA.md,
"Exact by construction"): every integer, memory write and event counter exactly as the
reference machine predicts for the ideal memory, cnt_total - cnt_wait equal to its cnt_total,
and cnt_wait within 0 .. the delays the memory counted itself (verif/kit/bfm.py checks both
after every run; the scoreboard compares the counters of the ideal memory). Each test also
asserts that the chip did wait, so that a profile that stalled nothing cannot pass for one
that did. The tests of one simulator share a process (the profile's plusargs are the same).
"""

from __future__ import annotations

import pytest

from sim.lengths import run_length
from sim.mem_profile import PROFILES
from sim.toolchain import SIMULATORS
from verif.env.batching import decode_job, programs_job
from verif.env.plans import CHAPTER_STEPS, SHORT_STEPS, chapter_spec, chip_gather_spec

LIGHT = PROFILES["light"]
PROGRAMS = 60  # random programs per simulator under the profile (20 on Icarus in make test)


def programs_on(sim: str) -> int:
    return run_length(sim, PROGRAMS, 20)


def decode_under_light(sim: str, gather: str):
    steps = run_length(sim, CHAPTER_STEPS, SHORT_STEPS)
    return chapter_spec(8, steps) if gather == "host" else chip_gather_spec(8, steps)


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=programs_job("RandomProgramsTest", programs_on, LIGHT.plusargs))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_random_programs_under_the_light_profile(sim, seed, sim_run):
    result = sim_run.raise_if_failed()
    waits = result["program_waits"]
    assert len(waits) == programs_on(sim) + 6 and all(w > 0 for w in waits), (
        f"every program fetches, so every one waits under {LIGHT.name}: {waits}")


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.sim_job(launch=programs_job("ErrorPathsTest", lambda sim: 0, LIGHT.plusargs))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_error_paths_under_the_light_profile(sim, seed, sim_run):
    """Each error code at its address, counters as the ideal memory's, under stalls."""
    result = sim_run.raise_if_failed()
    assert all(w > 0 for w in result["program_waits"]), result["program_waits"]


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=decode_job("PlanDecodeTest",
                                       lambda sim, gather: [decode_under_light(sim, gather)],
                                       LIGHT.plusargs))
@pytest.mark.parametrize("gather", ["host", "chip"])
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chapter_decode_under_the_light_profile(sim, gather, seed, sim_run):
    """W = 8 in both gather modes: every step equals the ideal memory's prediction once its
    wait is taken out (32 steps; 12 on Icarus in make test)."""
    spec = decode_under_light(sim, gather)
    result = sim_run.raise_if_failed()
    assert result["steps_checked"] == spec.steps
    waits = [step["counters"]["wait"] for step in result["steps"]]
    assert all(w > 0 for w in waits), f"a step that did not wait under {LIGHT.name}: {waits}"
    ideal = sum(step["counters"]["total"] for step in result["steps"])
    print(f"\n[{sim}] W = 8, {gather} gather, under {LIGHT.name}: {ideal} cycles on the ideal "
          f"memory, {sum(waits)} waited, {ideal + sum(waits)} in all")
