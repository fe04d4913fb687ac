"""The locator (verif/scoreboard/locate.py) on logs made from the reference machine's own trace.

A chip that did exactly what the reference machine did leaves logs that the trace predicts;
each test breaks one thing in such logs, the way a faulty unit or controller would, and checks
that the locator names that instruction, its unit and the cycle (the negative tests of
verif/tests/test_decode.py check the same on broken RTL).
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from model.chip import isa, machine
from model.chip.isa import ErrorCode
from verif.agents.chip.items import StepItem
from verif.agents.chip.write_monitor import MemWrite
from verif.scoreboard.locate import ChipLogs, Phase, locate

X, W, OUT = 64, 80, 120  # external words: the input vectors, the weights, the results
PROGRAM = [isa.load(X, 0, 8), isa.load(W, 8, 16), isa.matmul(0, 8, 32, 2, 4, 2, mult=1 << 30,
                                                               shift=1),
           isa.vadd(32, 0, 40, 4), isa.softmax(40, 48, 4), isa.store(48, OUT, 4), isa.halt()]


def image() -> np.ndarray:
    words = np.zeros(160, dtype=np.uint32)
    words[: len(PROGRAM) * isa.WORDS_PER_INSTR] = isa.assemble(PROGRAM)
    rng = np.random.default_rng(7)
    words[X:X + 8] = rng.integers(-20, 20, 8) & 0xFF
    words[W:W + 16] = rng.integers(-20, 20, 16) & 0xFF
    return words


def written(address: int, value: int, pc: int, run_cycle: int, bus_cycle: int) -> MemWrite:
    """A write as the harness's log stamps it (bfm.WRITE_STAMP: bus cycle, run cycle, pc)."""
    return MemWrite(address, value, stamp=f"{bus_cycle:032b}{run_cycle:032b}{pc:016b}")


def logs_of(trace: list[machine.Executed]) -> ChipLogs:
    """The logs of a chip that did what the trace says: writes in EXEC order, one a cycle."""
    sram, ext, phases = [], [], []
    for e in trace:
        phases += [Phase(e.pc, False, e.start, e.start), Phase(e.pc, True, e.exec_start - 1,
                                                               e.exec_start - 1)]
        for kind, words in ((sram, e.sram), (ext, e.ext)):
            kind += [written(a, v, e.pc, e.exec_start + i, e.exec_start + i)
                     for i, (a, v) in enumerate(words.items())]
    return ChipLogs(sram, ext, phases)


def located(logs: ChipLogs, error=(0, None), counters: machine.Counters | None = None):
    trace = machine.run(image(), trace=True).trace
    error = (error[0], trace[-1].pc if error[1] is None else error[1])
    return locate(image(), isa.ChipConfig(), logs, error, counters, time_of=lambda c: 10.0 * c)


def test_a_faithful_chip_leaves_only_the_counters_to_the_controller():
    found = located(logs_of(machine.run(image(), trace=True).trace))
    assert (found.point.unit, found.point.pc) == ("controller", None)
    assert "the counters that differ are the controller's" in found.lines[0]


def test_a_counter_off_is_the_controllers_and_an_event_counter_names_its_reporters_too():
    result = machine.run(image(), trace=True)
    logs = logs_of(result.trace)
    found = located(logs, counters=replace(result.counters, sm_range=result.counters.sm_range + 1))
    assert (found.point.unit, found.point.pc) == ("controller", None)
    assert "sm_range also counts the events units sm report" in found.lines[0]
    found = located(logs, counters=replace(result.counters, mat=result.counters.mat - 1))
    assert found.point.unit == "controller" and "also" not in found.lines[0]


def test_a_wrong_matmul_word_is_the_matmuls_at_its_cycle_though_every_later_word_differs():
    trace = machine.run(image(), trace=True).trace
    logs = logs_of(trace)
    mm = next(e for e in trace if e.instr.op == isa.Op.MATMUL)
    wrong = next(i for i, w in enumerate(logs.sram) if w.pc == mm.pc and w.address == 33)
    logs.sram[wrong] = replace(logs.sram[wrong], value=logs.sram[wrong].value ^ 1)
    point = located(logs).point
    assert (point.unit, point.pc, point.instruction) == ("mat", mm.pc, str(mm.instr))
    assert (point.cycle, point.time_ns) == (logs.sram[wrong].run_cycle,
                                            10.0 * logs.sram[wrong].bus_cycle)


def test_a_unit_one_cycle_slow_is_named_by_its_exec():
    trace = machine.run(image(), trace=True).trace
    sm = next(e for e in trace if e.instr.op == isa.Op.SOFTMAX)
    late = [replace(p, run_cycle=p.run_cycle + 1, bus_cycle=p.bus_cycle + 1)
            if p.run_cycle >= sm.end else p for p in logs_of(trace).phases]
    found = located(replace(logs_of(trace), phases=late))
    assert (found.point.unit, found.point.pc) == ("sm", sm.pc)
    want = sm.end - sm.exec_start
    assert f"EXEC took {want + 1} cycles, the formula (model.chip.isa.exec_cycles) gives {want}" \
        in found.lines[0]


def test_a_slow_fetch_is_the_controllers():
    trace = machine.run(image(), trace=True).trace
    third = trace[2]
    shifted = [replace(p, run_cycle=p.run_cycle + 2) if p.run_cycle > third.start else p
               for p in logs_of(trace).phases]
    point = located(replace(logs_of(trace), phases=shifted)).point
    assert (point.unit, point.pc) == ("controller", third.pc)


def test_a_missing_store_word_and_a_stray_one():
    trace = machine.run(image(), trace=True).trace
    st = next(e for e in trace if e.instr.op == isa.Op.STORE)
    logs = logs_of(trace)
    found = located(replace(logs, ext=logs.ext[:-1]))
    assert (found.point.unit, found.point.pc) == ("dma", st.pc)
    assert f"missing write: external memory word {OUT + 3}" in found.lines[0]
    stray = written(OUT + 4, 5, st.pc, st.end - 1, st.end - 1)
    found = located(replace(logs, ext=[*logs.ext, stray]))
    assert found.point.unit == "dma" and "stray write: external memory word 124" in found.lines[0]


def test_a_write_under_a_pc_never_run_is_the_controllers_sequencing():
    logs = logs_of(machine.run(image(), trace=True).trace)
    found = located(replace(logs, sram=[*logs.sram, written(3, 1, 400, 2, 2)]))
    assert (found.point.unit, found.point.pc, found.point.cycle) == ("controller", 400, 2)


def test_a_stop_at_an_illegal_opcode_is_the_controllers_and_needs_no_opcode():
    program = np.array(isa.assemble([isa.load(X, 0, 8), isa.halt()]), dtype=np.uint32)
    program[4] = (program[4] & 0x00FFFFFF) | (66 << 24)  # the HALT's opcode: none of the ISA's
    words = image()
    words[: program.size] = program
    trace = machine.run(words, trace=True).trace
    assert trace[-1].unit == "controller" and trace[-1].pc == 4


def test_a_wrong_error_code_is_the_controllers_checks():
    logs = logs_of(machine.run(image(), trace=True).trace)
    found = located(logs, error=(int(ErrorCode.ILLEGAL_OPCODE), 4))
    assert (found.point.unit, found.point.pc) == ("controller", 4)
    assert "the chip stopped here with ILLEGAL_OPCODE, the reference machine with OK" \
        in found.lines[0]


def step_item(contexts: dict[str, int], serving: bool) -> StepItem:
    """A step of these requests (id: context); only what a report reads of its inputs."""
    requests = [SimpleNamespace(rid=rid, plan=SimpleNamespace(context=c))
                for rid, c in contexts.items()]
    inputs = SimpleNamespace(program=SimpleNamespace(batch=len(requests)), requests=requests,
                             contexts=tuple(contexts.values()))
    return StepItem("serve3", "serving B=8", 4, inputs, serving=serving)


def test_a_report_names_each_slots_request_and_context():
    assert step_item({"a": 5, "b": 9}, serving=True).where() == (
        "serving B=8 step 4 (batch of 2: r0 = request a at context 5, r1 = request b at context 9)")
    assert step_item({"a": 5}, serving=True).where() == (
        "serving B=8 step 4 (batch of 1: r0 = request a at context 5)")
    assert step_item({"a": 5}, serving=False).where() == "serving B=8 step 4 (context 5)"
