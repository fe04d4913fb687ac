"""The chip on both simulators: random programs and error paths, on the chip agent, checked by
the env's scoreboard against the reference machine (verif.sequences.program_seqs)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from model.chip import machine
from model.chip.isa import ChipConfig, ErrorCode, Op
from sim.lengths import run_length
from sim.toolchain import SIMULATORS
from verif.runs.launch import programs_job
from verif.runs.plans import SHORT_PROGRAMS, error_addresses_on
from verif.sequences.program_seqs import (
    ERROR_CASES,
    WIDE_SOFTMAX,
    error_address_fillers,
    error_programs,
)

PROGRAMS_PER_SIMULATOR = 200
# hw/ISA.md, "Errors": the code each of ERROR_CASES stops the chip with, and why
DOCUMENTED_CODES = {
    "illegal opcode": ErrorCode.ILLEGAL_OPCODE,  # 0x42 is not in the opcode table
    "external address out of range": ErrorCode.BAD_ADDRESS,  # LOAD: a + len > EXT_WORDS
    "scratchpad address out of range": ErrorCode.BAD_ADDRESS,  # MATMUL: c + m*n > SRAM_WORDS
    "zero size": ErrorCode.BAD_SIZE,  # VADD: len = 0
    "reduction longer than K_MAX": ErrorCode.BAD_SIZE,  # MATMUL: k > K_MAX
    "block table outside the pool": ErrorCode.BAD_PAGE,  # the header first >= P
}
ERROR_PC = 4  # error_image: the bad instruction follows the LOAD (after each filler, 4 more)


def programs_on(sim: str) -> int:
    """200 random programs; 25 on Icarus in make test (FULL_LENGTH=1: 200)."""
    return run_length(sim, PROGRAMS_PER_SIMULATOR, SHORT_PROGRAMS)


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=programs_job("RandomProgramsTest", programs_on))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_random_programs_match_the_reference_machine(sim, seed, sim_run):
    result = sim_run.raise_if_failed()
    assert result["reference_runs"] == programs_on(sim) + len(WIDE_SOFTMAX)
    # the wide rows' spreads: 0, 64..127 and 128..255 (random programs add the narrow ones)
    assert result["coverage"]["summary"]["decode.chip_cg.softmax_range"]["covered"] >= 3


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.sim_job(launch=programs_job("ErrorPathsTest", error_addresses_on))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_error_paths_stop_the_chip_with_the_documented_code(sim, seed, sim_run):
    """Every error program ran, the chip's error code and pc equal to the reference machine's
    (the scoreboard compares them), and the machine's are the ones hw/ISA.md documents."""
    cfg, addresses = ChipConfig(), error_addresses_on(sim)
    result = sim_run.raise_if_failed()
    assert result["reference_runs"] == len(error_programs(cfg, addresses))
    assert_documented_stops(cfg, addresses)


FETCH_PROGRAMS = 3  # random programs whose fetches are watched: every fetch of each


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.sim_job(launch=programs_job("FetchBurstsTest", lambda sim: FETCH_PROGRAMS))
@pytest.mark.parametrize("sim", SIMULATORS)
def test_each_fetch_reads_exactly_its_instructions_words(sim, seed, sim_run):
    """Every FETCH's read bursts on the AXI4 port cover its instruction's words and no more
    (hw/ISA.md, FETCH): the scoreboard cannot see a word read too many, since only the chip's
    writes and status reach it (the mutant chip_top-const-b4c0bcda, a 5-beat fetch)."""
    result = sim_run.raise_if_failed()
    assert result["fetches_watched"] > FETCH_PROGRAMS  # a fetch or more in each program


def assert_documented_stops(cfg: ChipConfig, addresses: int = 0) -> None:
    """Each error program stops the reference machine with its documented code at the bad
    instruction's address, before the STORE after it writes anything: ERROR_CASES with
    DOCUMENTED_CODES, then an illegal opcode at each power-of-two address."""
    assert [name for name, _ in ERROR_CASES] == list(DOCUMENTED_CODES), "a case undocumented"
    fillers = error_address_fillers(cfg, addresses)
    expected = [(code, ERROR_PC) for code in DOCUMENTED_CODES.values()] + [
        (ErrorCode.ILLEGAL_OPCODE, ERROR_PC + 4 * filler) for filler in fillers]
    stops = []
    for item in error_programs(cfg, addresses):
        stopped = machine.run(item.image(), cfg)
        assert stopped.written == (), f"{item.where()}: the STORE after it ran"
        stops.append((stopped.error, stopped.error_pc))
    assert stops == expected


def test_every_error_case_stops_the_reference_machine_with_its_documented_code():
    """The stimulus itself (every address of the memory): each bad instruction stops the
    machine with the code hw/ISA.md gives it (so a chip that ran on would write the STORE
    after it, which the scoreboard names); BUS_ERROR needs a memory that answers with an
    error (the controller's block test), CORRUPTION a flipped bit (verif/tests/test_faults.py)."""
    assert_documented_stops(ChipConfig())
    assert set(DOCUMENTED_CODES.values()) == set(ErrorCode) - {
        ErrorCode.OK, ErrorCode.BUS_ERROR, ErrorCode.CORRUPTION}


def test_the_documented_code_check_fails_a_check_that_names_another_code(monkeypatch):
    """Planted: the machine's check calls a MATMUL reduction longer than K_MAX an address
    error (every error code still occurs, so only the exact codes tell)."""
    check = machine.check

    def misnamed(words, cfg):
        checked = check(words, cfg)
        too_long = checked.instr.op == Op.MATMUL and checked.instr.k > cfg.k_max
        return replace(checked, error=ErrorCode.BAD_ADDRESS) if too_long else checked

    monkeypatch.setattr(machine, "check", misnamed)
    with pytest.raises(AssertionError, match="BAD_ADDRESS"):
        assert_documented_stops(ChipConfig())
