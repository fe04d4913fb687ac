"""Reading a harness's event log (hw/tb/event_log.v) after the fact, not every cycle.

A log is a ring of the last DEPTH entries and a count since reset; a reader takes the new ones once
a command or a run is over, as binary strings, so an X or Z stays visible.
"""

from __future__ import annotations

from dataclasses import dataclass

from verif.kit.memory import known


@dataclass(frozen=True)
class EntryLayout:
    """The fields of one entry, the most significant first, as (name, bits)."""

    fields: tuple[tuple[str, int], ...]

    @property
    def bits(self) -> int:
        return sum(width for _, width in self.fields)

    def split(self, text: str) -> dict[str, str]:
        """An entry's binary string as {field: its binary string}."""
        assert len(text) == self.bits, f"an entry of {len(text)} bits, the layout has {self.bits}"
        fields, at = {}, 0
        for name, width in self.fields:
            fields[name] = text[at:at + width]
            at += width
        return fields

    def values(self, text: str, what: str = "entry") -> dict[str, int]:
        """An entry as {field: integer}; UnknownValue names ``what`` and the field."""
        return {name: known(bits, f"{what}: {name}") for name, bits in self.split(text).items()}


class LogOverrun(AssertionError):
    """More entries arrived since the last read than the ring keeps: the oldest are lost."""


class EventLog:
    """One event_log instance of a harness (its handle, e.g. `dut.u_wlog`)."""

    def __init__(self, handle, layout: EntryLayout):
        self.handle, self.layout = handle, layout
        self.depth = len(handle.log)
        # the last entries read, (first, entries): two readers of one run's entries (the write
        # monitor, the memory's mirror) read the simulator once
        self.last_read: tuple[int, list[str]] = (0, [])

    def restart(self) -> None:
        """A reset is about to number the entries from zero again: forget the ones read."""
        self.last_read = (0, [])

    def count(self) -> int:
        """Entries logged since reset."""
        return known(self.handle.count.value, f"{self.handle._path}.count")

    def read(self, first: int, count: int) -> list[str]:
        """Entries first .. first + count - 1 (numbered from reset) as binary strings."""
        if count > self.depth:
            raise LogOverrun(f"{self.handle._path}: {count} entries since the last read, the "
                             f"ring keeps {self.depth}: the first {count - self.depth} are lost")
        start, entries = self.last_read
        if start <= first and first + count <= start + len(entries):
            return entries[first - start:first - start + count]
        log = self.handle.log
        entries = [str(log[index % self.depth].value) for index in range(first, first + count)]
        self.last_read = (first, entries)
        return entries

    def kept(self, first: int, last: int) -> int:
        """The first entry of first .. last - 1 still in the ring."""
        return max(first, last - self.depth)
