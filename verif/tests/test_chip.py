"""The chip on both simulators: random programs and error paths, on the chip agent, checked by
the env's scoreboard against the reference machine (verif.sequences.program_seqs)."""

from __future__ import annotations

import pytest

from model.chip import machine
from model.chip.isa import ChipConfig, ErrorCode
from sim.lengths import run_length
from sim.toolchain import SIMULATORS
from verif.runs.batching import programs_job
from verif.runs.plans import SHORT_PROGRAMS, error_addresses_on
from verif.sequences.program_seqs import ERROR_CASES, error_image, error_programs

PROGRAMS_PER_SIMULATOR = 200


def programs_on(sim: str) -> int:
    """200 random programs; 25 on Icarus in make test (FULL_LENGTH=1: 200)."""
    return run_length(sim, PROGRAMS_PER_SIMULATOR, SHORT_PROGRAMS)


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=programs_job("RandomProgramsTest", programs_on))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_random_programs_match_the_reference_machine(sim, seed, sim_run):
    result = sim_run.raise_if_failed()
    assert result["reference_runs"] == programs_on(sim) + 6  # and six wide SOFTMAX rows
    # the wide rows' spreads: 0, 64..127 and 128..255 (random programs add the narrow ones)
    assert result["coverage"]["summary"]["decode.chip_cg.softmax_range"]["covered"] >= 3


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.sim_job(launch=programs_job("ErrorPathsTest", error_addresses_on))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_error_paths_stop_the_chip_with_the_documented_code(sim, seed, sim_run):
    result = sim_run.raise_if_failed()
    assert result["reference_runs"] == len(error_programs(ChipConfig(), error_addresses_on(sim)))


def test_every_error_case_stops_the_reference_machine_before_its_store():
    """The stimulus itself: each case's bad instruction stops the machine with an error (so a
    chip that ran on would write the STORE after it, which the scoreboard names)."""
    cfg = ChipConfig()
    for item in error_programs(cfg):
        result = machine.run(item.image(), cfg)
        assert result.error != ErrorCode.OK, item.where()
        assert result.written == (), item.where()
    codes = {machine.run(error_image(bad), cfg).error for _, bad in ERROR_CASES}
    # BUS_ERROR needs a memory that answers with an error: the controller's block test
    assert codes == set(ErrorCode) - {ErrorCode.OK, ErrorCode.BUS_ERROR}
