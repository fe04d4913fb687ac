"""Write logs (verif/tests/blocks/write_log.py) read from a stand-in event_log, and the first
wrong write in time (its first_logged_difference), by hand."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from verif.kit import event_log
from verif.kit.event_log import EntryLayout, LogOverrun
from verif.kit.memory import UnknownValue
from verif.tests.blocks.write_log import (
    WRITE_ENTRY,
    Write,
    WriteLog,
    decode_write,
    final_writes,
    first_logged_difference,
)


@dataclass
class Value:
    """A signal's value as cocotb gives it: its binary string."""

    value: str


class EventLog:
    """An event_log instance (hw/tb/event_log.v) as cocotb sees it: `count` and the ring."""

    _path = "harness.u_sram_writes.u_log"

    def __init__(self, depth: int):
        self.log = [Value("0" * WRITE_ENTRY.bits) for _ in range(depth)]
        self.count = Value(f"{0:032b}")

    def add(self, cycle: int, address: int, data: int) -> None:
        """Log one write as the HDL does: into slot count % depth, then count + 1."""
        count = int(self.count.value, 2)
        self.log[count % len(self.log)] = Value(entry(cycle, address, data))
        self.count = Value(f"{count + 1:032b}")


def entry(cycle: int, address: int, data: int) -> str:
    return f"{cycle:032b}{address:016b}{data:032b}"


def test_an_entry_splits_into_its_fields_most_significant_first():
    layout = EntryLayout((("a", 2), ("b", 3), ("c", 2)))
    assert layout.split("1100101") == {"a": "11", "b": "001", "c": "01"}
    assert decode_write(entry(7, 581, 0xFFFFFFE4), "w") == Write(7, 581, 0xFFFFFFE4)


def test_an_unknown_field_is_named():
    text = entry(7, 581, 5)
    with pytest.raises(UnknownValue, match="sram write 3: address is 00000010010001x1"):
        decode_write(text[:46] + "x" + text[47:], "sram write 3")


def test_each_read_returns_the_writes_since_the_last_across_the_ring_end():
    ring = EventLog(depth=4)
    ring.add(0, 1, 10)
    log = WriteLog(type("Harness", (), {"u_log": ring}), "sram")  # made after the first write
    for cycle in range(1, 4):
        ring.add(cycle, cycle + 1, cycle + 10)
    assert log.new_writes() == [Write(1, 2, 11), Write(2, 3, 12), Write(3, 4, 13)]
    ring.add(0, 9, 99)
    ring.add(1, 8, 98)  # slots 0 and 1 again
    assert log.new_writes() == [Write(0, 9, 99), Write(1, 8, 98)]
    assert log.new_writes() == []


def test_a_second_reader_of_the_same_entries_gets_them_without_asking_again_until_a_reset():
    """The write monitor and the memory's mirror both read a run's entries (verif/kit/bfm.py);
    the simulator is asked once. A reset numbers the entries from zero again."""
    ring = EventLog(depth=4)
    for cycle in range(3):
        ring.add(cycle, cycle, cycle)
    log = event_log.EventLog(ring, WRITE_ENTRY)
    first = log.read(0, 3)
    ring.log[1] = Value(entry(9, 9, 9))  # were the simulator asked again, this would show
    assert log.read(1, 2) == first[1:]
    log.restart()
    assert log.read(1, 2) == [entry(9, 9, 9), entry(2, 2, 2)]


def test_more_writes_than_the_ring_keeps_is_an_overrun():
    ring = EventLog(depth=2)
    with pytest.raises(LogOverrun, match="3 entries since the last read, the ring keeps 2"):
        event_log.EventLog(ring, WRITE_ENTRY).read(0, 3)


def test_the_last_write_of_an_address_is_the_one_that_counts():
    writes = [Write(1, 5, 1), Write(2, 6, 2), Write(3, 5, 3)]
    assert final_writes(writes) == {5: Write(3, 5, 3), 6: Write(2, 6, 2)}
    assert first_logged_difference({5: 3, 6: 2}, writes) is None


def test_the_first_wrong_write_in_time_is_named_with_its_cycle():
    expected = {10: 1, 11: 2, 12: 3}
    writes = [Write(4, 12, 30), Write(5, 10, 1), Write(6, 11, 20)]  # 12 and 11 wrong, 12 first
    difference = first_logged_difference(expected, writes)
    assert (difference.address, difference.expected, difference.got, difference.cycle,
            difference.kind, difference.differing) == (12, 3, 30, 4, "different value", 2)
    assert difference.describe("sram word 12", writer="the unit") == (
        "different value: sram word 12: the reference machine wrote 0x00000003, the unit wrote "
        "0x0000001e (2 written words differ)")


def test_a_stray_write_is_named_and_comes_in_its_time():
    difference = first_logged_difference({10: 1}, [Write(2, 99, 7), Write(3, 10, 2)])
    assert (difference.kind, difference.address, difference.cycle) == ("stray write", 99, 2)
    assert difference.describe("ext word 99", writer="the unit") == (
        "stray write: ext word 99: the reference machine wrote nothing there, the unit wrote "
        "0x00000007 (2 written words differ)")


def test_a_missing_write_has_no_cycle_and_comes_after_any_wrong_one():
    assert first_logged_difference({10: 1, 11: 2}, [Write(3, 11, 5)]).address == 11
    difference = first_logged_difference({10: 1, 11: 2}, [Write(3, 11, 2)])
    assert (difference.kind, difference.address, difference.cycle) == ("missing write", 10, None)
