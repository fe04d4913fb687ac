"""The chip on both simulators: random programs and error paths, on the chip agent, checked by
the env's scoreboard against the reference machine (verif.sequences.program_seqs)."""

from __future__ import annotations

import pytest

from model import machine
from model.isa import ChipConfig, ErrorCode
from sim.toolchain import SIMULATORS
from verif.env.launch import chip_build, run_programs
from verif.sequences.program_seqs import ERROR_CASES, error_image, error_programs

PROGRAMS_PER_SIMULATOR = 200


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_random_programs_match_the_reference_machine(sim, seed):
    result = run_programs(chip_build(sim), "RandomProgramsTest", seed,
                          PROGRAMS_PER_SIMULATOR).raise_if_failed()
    assert result["reference_runs"] == PROGRAMS_PER_SIMULATOR + 6  # and six wide SOFTMAX rows
    # the wide rows' spreads: 0, 64..127 and 128..255 (random programs add the narrow ones)
    assert result["coverage"]["summary"]["decode.chip_cg.softmax_range"]["covered"] >= 3


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_error_paths_stop_the_chip_with_the_documented_code(sim, seed):
    result = run_programs(chip_build(sim), "ErrorPathsTest", seed).raise_if_failed()
    assert result["reference_runs"] == len(error_programs(ChipConfig()))


def test_every_error_case_stops_the_reference_machine_before_its_store():
    """The stimulus itself: each case's bad instruction stops the machine with an error (so a
    chip that ran on would write the STORE after it, which the scoreboard names)."""
    cfg = ChipConfig()
    for item in error_programs(cfg):
        result = machine.run(item.image(), cfg)
        assert result.error != ErrorCode.OK, item.where()
        assert result.written == (), item.where()
    codes = {machine.run(error_image(bad), cfg).error for _, bad in ERROR_CASES}
    assert codes == set(ErrorCode) - {ErrorCode.OK}
