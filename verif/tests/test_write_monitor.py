"""Identical memory: every word the chip writes is a word the reference machine writes.

The write comparison on its own (no simulator): hand-made sets of writes against a prediction,
and the reference machine's record of the words its STOREs wrote. Then the negative test: a
broken copy of the RTL whose STOREs each write one word more (Icarus, the short plan, the
BrokenChipTest of verif/tests/uvm_tests.py) must fail the scoreboard at step 1 with a stray write
just past the output region, naming its address and what each side wrote there.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from model.chip import isa, machine
from model.chip.isa import Op
from model.compiler.layout import Layout
from model.host.decode import decode
from model.lm.tiny_lm import make_model
from verif.agents.chip.write_monitor import (
    ExtWriteMonitor,
    MemWrite,
    WriteLogOverflow,
    final_values,
    unknown_write,
)
from verif.kit.bfm import WRITE_ENTRY
from verif.kit.compare import first_write_difference
from verif.runs.launch import chip_build, run_decode
from verif.runs.plans import SHORT_PLAN
from verif.scoreboard.scoreboard import output_name
from verif.tests.broken_chips import RTL_MUTANTS, make_broken_chip

LAYOUT = Layout.for_model(make_model("structured"), isa.ChipConfig())


def name_of(address: int) -> str:
    return output_name(LAYOUT, address)


# ---- the comparison, by hand ----------------------------------------------------------------

PREDICTED = {LAYOUT.logits: 0x11, LAYOUT.tokens: 0x5, LAYOUT.v_new + 7: 0xFFFFFF80}


def chip_writes(*pairs: tuple[int, int]) -> dict[int, int]:
    """What the scoreboard makes of the bus: MemWrites in bus order, the last one wins."""
    return final_values(MemWrite(address, value) for address, value in pairs)


def test_identical_writes_have_no_difference():
    got = chip_writes(*PREDICTED.items())
    assert first_write_difference(PREDICTED, got, name_of) is None


def test_a_word_written_twice_counts_with_its_last_value():
    got = chip_writes((LAYOUT.tokens, 0x9), *PREDICTED.items())
    assert first_write_difference(PREDICTED, got, name_of) is None
    got = chip_writes(*PREDICTED.items(), (LAYOUT.tokens, 0x9))
    assert first_write_difference(PREDICTED, got, name_of) == (
        f"different value: memory word {LAYOUT.tokens} (token): the reference machine wrote "
        "0x00000005, the chip wrote 0x00000009")


def test_a_stray_write_names_its_address_and_value():
    got = chip_writes(*PREDICTED.items(), (5000, 0x2A))
    assert first_write_difference(PREDICTED, got, name_of) == (
        "stray write: memory word 5000 (outside the outputs): the reference machine wrote "
        "nothing there, the chip wrote 0x0000002a")


def test_a_stray_write_of_the_value_already_there_is_still_stray():
    got = chip_writes(*PREDICTED.items(), (LAYOUT.outputs[1], 0))
    assert first_write_difference(PREDICTED, got, name_of).startswith(
        f"stray write: memory word {LAYOUT.outputs[1]} (outside the outputs):")


def test_a_missing_write_is_named():
    got = chip_writes((LAYOUT.logits, 0x11), (LAYOUT.tokens, 0x5))
    assert first_write_difference(PREDICTED, got, name_of) == (
        f"missing write: memory word {LAYOUT.v_new + 7} (v_new[7]): the reference machine "
        "wrote 0xffffff80, the chip wrote nothing there")


def test_the_lowest_differing_address_comes_first_with_the_count():
    got = chip_writes((7, 1), *PREDICTED.items(), (LAYOUT.logits, 0x12), (9000, 3))
    assert first_write_difference(PREDICTED, got, name_of) == (
        "stray write: memory word 7 (outside the outputs): the reference machine wrote nothing "
        "there, the chip wrote 0x00000001 (3 written words differ)")


def test_an_unknown_write_is_reported():
    writes = [MemWrite(LAYOUT.tokens, 5), MemWrite(0, 0, unknown="mem_addr 0x01, mem_wdata 1")]
    assert unknown_write(writes) == "memory port: write with mem_addr 0x01, mem_wdata 1"
    assert unknown_write(writes[:1]) is None


# ---- the reference machine's side -----------------------------------------------------------


def test_the_machine_reports_every_word_its_stores_wrote():
    program = [isa.load(100, 0, 4), isa.store(0, 200, 4), isa.store(2, 202, 3), isa.halt()]
    image = np.zeros(300, dtype=np.int64)
    image[: 4 * len(program)] = isa.assemble(program)
    image[100:104] = [7, 8, 9, 10]
    result = machine.run(image)
    assert result.written == (200, 201, 202, 203, 204)
    assert result.writes() == {200: 7, 201: 8, 202: 9, 203: 10, 204: 0}


def test_a_program_that_stores_nothing_wrote_nothing():
    result = machine.run(isa.assemble([isa.load(0, 0, 4), isa.halt()]))
    assert result.written == ()
    assert result.writes() == {}


# ---- the negative test: a broken copy of the RTL ---------------------------------------------


def step_one_extra_word() -> tuple[int, int, int]:
    """The short plan's step 1 with one word more on its last STORE (the tokens'): the address
    it lands on (k_new[0], which that STORE overwrites), what the reference machine left there
    and what the broken chip writes (the scratchpad word after the tokens)."""
    spec = SHORT_PLAN[0]
    model = make_model(spec.model, spec.model_seed)
    inputs = decode(model, spec.steps, spec.start, spec.window,
                    page_size=spec.page_size).records[0].inputs
    last = [i for i in inputs.program.instructions() if i.op == Op.STORE][-1]
    final = machine.run(inputs.image())
    address = last.a + last.length
    return address, int(final.ext[address]), int(final.sram[last.b + last.length])


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_a_store_of_one_word_more_is_a_stray_write(tmp_path, seed):
    """Every STORE writes one word more: step 1's last STORE (the tokens') overwrites k_new[0]
    with the scratchpad word after the tokens, and the new value rows' extra word is a stray
    write past the output region: the output word and two written words differ."""
    sources = make_broken_chip(RTL_MUTANTS["store_writes_one_more_word"], tmp_path)
    run = run_decode(chip_build("icarus", sources), "BrokenChipTest", SHORT_PLAN, seed)
    assert run.error is None, f"the broken chip was not caught:\n{run.error}"
    assert run.result is not None and run.result["status"] == "failed", run.result
    report = run.result["failure"]
    assert run.result["failure_type"] == "ScoreboardMismatch", report
    address, want, got = step_one_extra_word()
    assert address == LAYOUT.k_new and want != got
    assert "step 1 (context 1)" in report
    assert (f"first difference: memory word {address} (k_new[0]): expected {want:#010x}, got "
            f"{got:#010x} (1 words differ)") in report
    assert (f"also: different value: memory word {address} (k_new[0]): the reference machine "
            f"wrote {want:#010x}, the chip wrote {got:#010x} (2 written words differ)") in report
    assert re.search(r"also: counter dma: expected (\d+), got (\d+)", report), report
    assert f"seed: {seed}" in report and "re-run with waves:" in report


# ---- the harness's write log, read after done (no simulator: a stand-in for the BFM) ------------


class LoggedBfm:
    """The BFM's view of chip_harness's write log (`writes`): a ring of `depth` entries."""

    records = True

    def __init__(self, writes: list[tuple[int, int]], depth: int = 4):
        self.writes = self  # the log itself, as bfm.writes is
        self.entries, self.depth, self.layout = writes, depth, WRITE_ENTRY

    def count(self) -> int:
        return len(self.entries)

    def read(self, first: int, count: int) -> list[str]:
        assert count <= self.depth, "the ring no longer holds these entries"
        return [f"{7:032b}{5:032b}{12:016b}{a:016b}{d:032b}"
                for a, d in self.entries[first:first + count]]


class LogReader:
    """What ExtWriteMonitor.publish_run reads and writes: its config, count and port."""

    reads_log = True
    publish_run = ExtWriteMonitor.publish_run

    def __init__(self, bfm: LoggedBfm):
        self.cfg = SimpleNamespace(bfm=bfm, recorder=SimpleNamespace(where=lambda: "(step, seed)"))
        self.published, self.sent = 0, []
        self.ap = type("Port", (), {"write": lambda port, write: self.sent.append(write)})()


def test_each_run_publishes_the_writes_logged_since_the_last_in_bus_order():
    bfm = LoggedBfm([(10, 1), (11, 2)])
    reader = LogReader(bfm)
    reader.publish_run()
    bfm.entries += [(12, 3), (10, 4), (13, 5)]  # the next run
    reader.publish_run()
    ExtWriteMonitor.publish_run(reader)  # a run that wrote nothing
    assert [(w.address, w.value) for w in reader.sent] == [(10, 1), (11, 2), (12, 3), (10, 4),
                                                           (13, 5)]
    assert {(w.pc, w.run_cycle, w.bus_cycle) for w in reader.sent} == {(12, 5, 7)}


def test_a_write_after_the_last_run_reaches_the_scoreboard_at_extract():
    bfm = LoggedBfm([(10, 1)])
    reader = LogReader(bfm)
    reader.publish_run()
    bfm.entries.append((99, 7))  # written after done, no run follows
    ExtWriteMonitor.extract_phase(reader)
    assert [(w.address, w.value) for w in reader.sent][-1] == (99, 7)


def test_more_writes_than_the_log_keeps_fail_loudly():
    reader = LogReader(LoggedBfm([(a, a) for a in range(5)], depth=4))
    with pytest.raises(WriteLogOverflow, match=r"(?s)wrote 5 words .* keeps \(4\).*\(step, seed"):
        reader.publish_run()
    assert reader.sent == []


def test_an_unknown_logged_write_stays_unknown():
    bfm = LoggedBfm([])
    bfm.read = lambda first, count: ["0" * 96 + "x" * 32]
    bfm.count = lambda: 1
    reader = LogReader(bfm)
    reader.publish_run()
    assert reader.sent[0].unknown and "mem_wdata xxxx" in reader.sent[0].unknown
