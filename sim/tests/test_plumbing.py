"""The simulator plumbing: both simulators build and run a block, and failures are not lost."""

from __future__ import annotations

import pytest

from sim.runner import RTL_DIR, SimulationFailed, build, run_test
from sim.toolchain import SIMULATORS

MODULE = "sim.tests.plumbing_cocotb"


def requant_build(sim: str):
    return build(sim, "requant", [RTL_DIR / "requant.v"])


@pytest.mark.sim
@pytest.mark.parametrize("sim", SIMULATORS)
def test_a_passing_cocotb_test_passes(sim):
    run = run_test(requant_build(sim), MODULE, testcase="requant_agrees_with_the_model", seed=11)
    assert run.passed == ["requant_agrees_with_the_model"]
    assert run.results_xml.exists()


@pytest.mark.sim
@pytest.mark.parametrize("sim", SIMULATORS)
def test_a_failing_cocotb_test_fails_pytest_with_a_rerun_command(sim):
    with pytest.raises(SimulationFailed) as failure:
        run_test(requant_build(sim), MODULE, testcase="deliberately_wrong_expectation", seed=12)
    message = str(failure.value)
    assert "deliberately_wrong_expectation" in message
    assert "seed: 12" in message
    assert "WAVES=1 RANDOM_SEED=12" in message
