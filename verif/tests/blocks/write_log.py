"""The writes of a block harness's write log (hw/tb/write_log.v: one memory write port).

Each entry is {cycle, address, data}, the cycle counted from the command that caused it, so a
block test names the cycle its first wrong word was written in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from verif.kit.compare import WriteDifference, differing_writes
from verif.kit.event_log import EntryLayout, EventLog

WRITE_ENTRY = EntryLayout((("cycle", 32), ("address", 16), ("data", 32)))  # hw/tb/write_log.v


@dataclass(frozen=True)
class Write:
    """One word written, as a write_log entry records it."""

    cycle: int  # since the command that caused it (0: the cycle after its strobe)
    address: int
    data: int


def decode_write(entry: str, what: str) -> Write:
    """A write_log entry as a Write; UnknownValue names ``what`` if a field holds X or Z."""
    return Write(**WRITE_ENTRY.values(entry, what))


def final_writes(writes: Iterable[Write]) -> dict[int, Write]:
    """Each address written and its last write (the one the memory keeps)."""
    return {write.address: write for write in writes}


class WriteLog:
    """One write_log instance of a harness, read from where the last read stopped."""

    def __init__(self, instance, memory: str):
        self.log = EventLog(instance.u_log, WRITE_ENTRY)
        self.memory = memory  # names the memory in reports: "sram", "ext"
        self.read_to = self.log.count()

    def new_writes(self) -> list[Write]:
        """The writes logged since the last call (or since this reader was made)."""
        count = self.log.count()
        entries = self.log.read(self.read_to, count - self.read_to)
        first, self.read_to = self.read_to, count
        return [decode_write(entry, f"{self.memory} write {first + offset}")
                for offset, entry in enumerate(entries)]


def first_logged_difference(expected: Mapping[int, int],
                            writes: Iterable[Write]) -> WriteDifference | None:
    """The differing word whose last write came first, with its cycle (a missing write only
    when no differing word was written), or None when the writes are as predicted."""
    last = final_writes(writes)
    differing = differing_writes(expected, {address: w.data for address, w in last.items()})
    if not differing:
        return None
    written = [address for address in differing if address in last]
    if not written:
        return WriteDifference(differing[0], expected[differing[0]], None, len(differing))
    address = min(written, key=lambda a: last[a].cycle)
    return WriteDifference(address, expected.get(address), last[address].data, len(differing),
                           last[address].cycle)
