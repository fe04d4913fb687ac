"""The plain-Verilog replay testbench on both simulators, over reference-machine records."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from model import isa, machine, randprog
from sim.replay import Record, run_replay, write_records
from sim.runner import RUNS_ROOT
from sim.toolchain import SIMULATORS

RECORDED_PROGRAMS = 60


def random_records(count: int) -> list[Record]:
    records = []
    for seed in range(count):
        program = randprog.generate(10_000 + seed)
        records.append(Record(program.image, [(0, program.ext_used)], machine.run(program.image)))
    return records


def error_record() -> Record:
    image = np.zeros(64, dtype=np.int64)
    words = isa.assemble([isa.load(40, 0, 2), isa.Instr(0x42)])
    image[: len(words)] = words
    return Record(image, [(0, 64)], machine.run(image))


@pytest.mark.sim
@pytest.mark.timeout(600)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_replayed_programs_match_the_reference_machine(sim):
    path = RUNS_ROOT / sim / "replay" / "records.hex"
    count = write_records(path, [*random_records(RECORDED_PROGRAMS), error_record()])
    result = run_replay(sim, path)
    assert result.passed, result.output[-2000:]
    assert result.summary.startswith(f"PASS: {count} records match")


@pytest.mark.sim
@pytest.mark.timeout(600)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_replay_reports_a_wrong_counter_as_a_failure(sim):
    good = random_records(1)[0]
    counters = dataclasses.replace(good.expected.counters, mat=good.expected.counters.mat + 1)
    wrong = Record(good.image, good.checked, dataclasses.replace(good.expected, counters=counters))
    path = RUNS_ROOT / sim / "replay_negative" / "records.hex"
    write_records(path, [wrong])
    result = run_replay(sim, path)
    assert not result.passed
    assert result.summary.startswith("FAIL:")
    assert "MISMATCH" in result.output
