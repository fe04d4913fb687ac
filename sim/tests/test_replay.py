"""The plain-Verilog replay testbench on both simulators, over reference-machine records."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from model.chip import isa, machine, randprog
from model.chip.isa import N_OPCODES
from model.paths import RUNS_ROOT
from sim.lengths import run_length
from sim.replay import Record, parse_output, run_replay, write_records
from sim.toolchain import SIMULATORS

RECORDED_PROGRAMS = 60  # 20 on Icarus in make test (sim.lengths)


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
    records = [*random_records(run_length(sim, RECORDED_PROGRAMS, 20)), error_record()]
    count = write_records(path, records)
    result = run_replay(sim, path)
    assert result.passed, result.output[-2000:]
    assert (result.records, result.failed, result.mismatches) == (count, 0, [])
    assert result.total_cycles == sum(r.expected.counters.total for r in records)


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
    assert (result.status, result.records, result.failed) == ("fail", 1, 1)
    want, got = good.expected.counters.mat + 1, good.expected.counters.mat
    assert result.mismatches == [f"record 0: counter mat expected {want} got {got}"]


def test_a_mismatch_line_names_the_differing_fields():
    zeros = (0,) * (N_OPCODES - 1)
    want = machine.Counters(total=10, ops=(1, *zeros))
    got = machine.Counters(total=11, ops=(2, *zeros))
    line = (f"mismatch record=3 timeout=0 memory_diffs=2 first_address=17 memory_want=0000000a "
            f"memory_got=0000000b error_want=0 error_got=0 error_pc_want=8 error_pc_got=4 "
            f"counters_want={want.packed():x} counters_got={got.packed():x}\n"
            "result status=fail records=4 failed=1 cycles=99\n")
    result = parse_output(line)
    assert (result.status, result.records, result.failed, result.total_cycles) == ("fail", 4, 1, 99)
    assert result.mismatches == [
        "record 3: 2 memory words differ, first ext[17] expected 0x0000000a got 0x0000000b; "
        "error_pc expected 8 got 4; counter total expected 10 got 11; "
        f"counter ops expected {[1, *zeros]} got {[2, *zeros]}"]


def test_unknown_counter_bits_are_named_and_a_missing_result_is_no_pass():
    bus = "0" * (machine.COUNTERS_W // 4 - 36) + "x" + "0" * 35  # a bit of cnt_sm (bits 128..159)
    line = ("mismatch record=0 timeout=0 memory_diffs=0 first_address=0 memory_want=0 "
            f"memory_got=0 error_want=0 error_got=0 error_pc_want=0 error_pc_got=0 "
            f"counters_want=0 counters_got={bus}")
    assert parse_output(line).mismatches == ["record 0: X or Z bits in cnt_sm"]
    assert not parse_output(line).passed
