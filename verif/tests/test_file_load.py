"""axi_ram's bulk backdoor from the testbench's side (verif/kit/file_load.py), on a stand-in for
the memory's two counters; the decode tests load every step through it on both simulators."""

from __future__ import annotations

import numpy as np

from verif.kit.file_load import FileLoad


class Counter:
    """A 32-bit signal as cocotb sees it: read as its binary string, set with an integer."""

    def __init__(self, count: int = 0):
        self.count = count

    @property
    def value(self) -> str:
        return f"{self.count:032b}"

    @value.setter
    def value(self, count: int) -> None:
        self.count = count


class Ram:
    """An axi_ram instance as cocotb sees it: backdoor_req (set by the testbench) and
    backdoor_ack (what the memory has read)."""

    def __init__(self, asked: int = 0):
        self.backdoor_req, self.backdoor_ack = Counter(asked), Counter(asked)

    def read_file(self) -> None:
        """What the memory does at a rising edge when the counters differ."""
        self.backdoor_ack.count = self.backdoor_req.count


def load(backdoor: FileLoad, pairs: dict[int, int]) -> None:
    backdoor(np.array(list(pairs), dtype=np.int64), np.array(list(pairs.values()), np.uint32))


def test_each_load_asks_the_memory_to_read_the_file(tmp_path):
    ram = Ram()
    backdoor = FileLoad(ram, tmp_path / "backdoor.hex")
    load(backdoor, {5: 0xDEADBEEF, 0x3FFF: 1})
    assert ram.backdoor_req.count == 1
    assert backdoor.path.read_text() == "@5 deadbeef\n@3fff 1\n"


def test_loads_of_one_time_step_all_stay_in_the_file_until_the_memory_reads_it(tmp_path):
    ram = Ram()
    backdoor = FileLoad(ram, tmp_path / "backdoor.hex")
    load(backdoor, {1: 10, 2: 20, 3: 30})
    load(backdoor, {2: 21})  # before the edge: both loads land, in order
    assert ram.backdoor_req.count == 2
    assert backdoor.path.read_text() == "@1 a\n@2 14\n@3 1e\n@2 15\n"
    ram.read_file()
    load(backdoor, {9: 9})  # the memory has read the earlier lines: they are not read again
    assert backdoor.path.read_text() == "@9 9\n"
    assert ram.backdoor_req.count == 3


def test_a_new_load_counts_on_from_the_memory_s_counters(tmp_path):
    """A test that starts in a process where another ran meets counters it did not set."""
    ram = Ram(asked=7)
    backdoor = FileLoad(ram, tmp_path / "backdoor.hex")
    load(backdoor, {0: 1})
    assert ram.backdoor_req.count == 8
