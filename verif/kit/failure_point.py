"""Where a failure happened: the record every checker's report carries and the run folder keeps.

It names the unit at fault, the instruction, the cycle and the simulation time, so the waveform
viewer opens there and triage reads the unit back (verif/mutation).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

POINT_FILE = "failure_point.json"


@dataclass(frozen=True)
class FailurePoint:
    """The first wrong thing a checker saw, as precisely as it could place it."""

    # the unit at fault (model.chip.isa.UNIT_OF's or the controller), or the module if known
    unit: str | None = None
    pc: int | None = None  # the instruction's address, when a program ran
    instruction: str | None = None  # its listing: opcode and operands
    cycle: int | None = None  # within the run (0: the first FETCH cycle) or the block's command
    time_ns: float | None = None  # absolute simulation time: where the waveform viewer opens
    where: str = ""  # the step, request and context of a decode; the vector of a block test

    def summary(self) -> str:
        """One line: 'unit U, pc P (instruction), cycle C (T ns), where'."""
        parts = [f"unit {self.unit}" if self.unit else ""]
        if self.pc is not None:
            parts.append(f"pc {self.pc}" + (f" ({self.instruction})" if self.instruction else ""))
        if self.cycle is not None:
            parts.append(f"cycle {self.cycle}"
                         + (f" (at {self.time_ns:g} ns)" if self.time_ns is not None else ""))
        if self.where:
            parts.append(self.where)
        return ", ".join(p for p in parts if p)


class LocatedError(AssertionError):
    """A failure with its point: the message is the report, ``point`` is where it happened."""

    def __init__(self, message: str, point: FailurePoint):
        super().__init__(message)
        self.point = point


def point_of(error: BaseException) -> FailurePoint | None:
    """The point an error carries, or None."""
    return getattr(error, "point", None)


def write_point(folder: Path, point: FailurePoint) -> Path:
    """Keep ``point`` in ``folder`` (a run folder) as POINT_FILE."""
    path = Path(folder) / POINT_FILE
    path.write_text(json.dumps(asdict(point), indent=1))
    return path


def read_point(folder: Path) -> FailurePoint | None:
    """The point a run folder keeps, or None when its run failed nowhere it could place."""
    path = Path(folder) / POINT_FILE
    return FailurePoint(**json.loads(path.read_text())) if path.exists() else None
