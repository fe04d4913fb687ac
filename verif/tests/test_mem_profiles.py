"""The chip under the `light` memory profile (sim/mem_profile.py), on both simulators: random
programs, the error paths, and the chapter's W = 8 decode in both gather modes.

hw/tb/axi_ram.v holds each channel low about 10% of cycles and draws each read burst's
latency in 4 .. 16 (EXT_LAT is 2). The chip waits, and must be otherwise unchanged (hw/ISA.md,
"Exact by construction"): every integer, memory write and event counter exactly as the
reference machine predicts for the ideal memory, cnt_total - cnt_wait equal to its cnt_total,
and cnt_wait within 0 .. the delays the memory counted itself (verif/chip_bfm.py checks both
after every run: the random programs' check and the decode's scoreboard compare the counters
of the ideal memory). Each test also asserts that the chip did wait, so that a profile that
stalled nothing cannot pass for one that did.
"""

from __future__ import annotations

import json

import pytest

from sim.mem_profile import PROFILES
from sim.runner import run_test
from sim.toolchain import SIMULATORS
from verif.launch import chip_build, run_decode
from verif.plans import CHAPTER_STEPS, chapter_spec, chip_gather_spec

LIGHT = PROFILES["light"]
PROGRAMS = 60  # random programs per simulator under the profile


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_random_programs_under_the_light_profile(sim, seed):
    run = run_test(chip_build(sim), "verif.chip_programs", testcase="random_programs",
                   seed=seed, extra_env={"PROGRAMS": str(PROGRAMS)},
                   plusargs=LIGHT.plusargs(seed))
    waits = json.loads((run.test_dir / "waits.json").read_text())
    assert len(waits) == PROGRAMS + 6 and all(w > 0 for w in waits), (
        f"every program fetches, so every one waits under {LIGHT.name}: {waits}")


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_error_paths_under_the_light_profile(sim, seed):
    """Each error code at its address, counters as the ideal memory's, under stalls."""
    run_test(chip_build(sim), "verif.chip_programs", testcase="error_paths", seed=seed,
             plusargs=LIGHT.plusargs(seed))


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.parametrize("gather", ["host", "chip"])
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chapter_decode_under_the_light_profile(sim, gather, seed):
    """W = 8 in both gather modes: every step equals the ideal memory's prediction once its
    wait is taken out."""
    spec = chapter_spec(8) if gather == "host" else chip_gather_spec(8)
    run = run_decode(chip_build(sim), "PlanDecodeTest", [spec], seed,
                     plusargs=LIGHT.plusargs(seed))
    result = run.raise_if_failed()
    assert result["steps_checked"] == CHAPTER_STEPS
    waits = [step["counters"]["wait"] for step in result["steps"]]
    assert all(w > 0 for w in waits), f"a step that did not wait under {LIGHT.name}: {waits}"
    ideal = sum(step["counters"]["total"] for step in result["steps"])
    print(f"\n[{sim}] W = 8, {gather} gather, under {LIGHT.name}: {ideal} cycles on the ideal "
          f"memory, {sum(waits)} waited, {ideal + sum(waits)} in all")
