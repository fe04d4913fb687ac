"""A harness's event log (hw/tb/event_log.v), read after the fact, and the writes it holds.

The HDL keeps every event in a ring (`log`, DEPTH entries) and numbers them (`count`, from
reset), so the testbench reads the new entries once a command or a run is over instead of
waking in Python every cycle. `read_entries` and `split` read any event_log instance; a
write_log instance (hw/tb/write_log.v: one memory write port) holds `Write` entries, which
`WriteLog` hands over command by command. The block tests read theirs here; the whole chip's
harness can read its own the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from verif.kit.memory import known

WRITE_FIELDS = (32, 16, 32)  # hw/tb/write_log.v: {cycle, address, data}, most significant first


class LogOverrun(AssertionError):
    """More events arrived since the last read than the ring keeps: the oldest are lost."""


def event_count(log) -> int:
    """The events an event_log instance has logged since reset."""
    return known(log.count.value, f"{log._path}.count")


def read_entries(log, first: int, count: int) -> list[str]:
    """Entries first .. first + count - 1 (numbered from reset) of the event_log instance
    ``log``, as binary strings, so that an X or Z bit stays visible (Icarus)."""
    depth = len(log.log)
    if count > depth:
        raise LogOverrun(f"{log._path}: {count} events since the last read, the ring keeps "
                         f"{depth}: the first {count - depth} are lost")
    return [str(log.log[index % depth].value) for index in range(first, first + count)]


def split(entry: str, widths: Sequence[int]) -> tuple[str, ...]:
    """An entry's fields, most significant first, as binary strings of ``widths`` bits."""
    assert len(entry) == sum(widths), f"an entry of {len(entry)} bits is not {widths}"
    fields, at = [], 0
    for width in widths:
        fields.append(entry[at : at + width])
        at += width
    return tuple(fields)


@dataclass(frozen=True)
class Write:
    """One word written, as a write_log entry records it."""

    cycle: int  # since the command that caused it (0: the cycle after its strobe)
    address: int
    data: int


def decode_write(entry: str, what: str) -> Write:
    """A write_log entry as a Write; UnknownValue names ``what`` if a field holds X or Z."""
    cycle, address, data = (known(field, f"{what}: {name}")
                            for field, name in zip(split(entry, WRITE_FIELDS),
                                                   ("cycle", "address", "data"), strict=True))
    return Write(cycle, address, data)


def final_writes(writes: Iterable[Write]) -> dict[int, Write]:
    """Each address written and its last write (the one the memory keeps)."""
    return {write.address: write for write in writes}


class WriteLog:
    """One write_log instance of a harness, read from where the last read stopped."""

    def __init__(self, instance, memory: str):
        self.log = instance.u_log
        self.memory = memory  # names the memory in reports: "sram", "ext"
        self.read_to = event_count(self.log)

    def new_writes(self) -> list[Write]:
        """The writes logged since the last call (or since this reader was made)."""
        count = event_count(self.log)
        entries = read_entries(self.log, self.read_to, count - self.read_to)
        first, self.read_to = self.read_to, count
        return [decode_write(entry, f"{self.memory} write {first + offset}")
                for offset, entry in enumerate(entries)]
