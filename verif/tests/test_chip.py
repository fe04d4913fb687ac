"""The chip on both simulators: random programs and error paths against the reference machine."""

from __future__ import annotations

import pytest

from sim.runner import run_test
from sim.toolchain import SIMULATORS
from verif.launch import chip_build

PROGRAMS_PER_SIMULATOR = 200


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_random_programs_match_the_reference_machine(sim, seed):
    run_test(chip_build(sim), "verif.chip_programs", testcase="random_programs",
             seed=seed, extra_env={"PROGRAMS": str(PROGRAMS_PER_SIMULATOR)})


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_error_paths_stop_the_chip_with_the_documented_code(sim, seed):
    run_test(chip_build(sim), "verif.chip_programs", testcase="error_paths",
             seed=seed)
