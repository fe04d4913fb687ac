"""The AXI4 rules' negative checks: each broken manager of hw/tb/axi_bad_manager.v must fail the
formal check on exactly its own rule, at the cycle and on the channel its header names, with a
counterexample a user can open; the clean exchange (NONE) must pass."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from verif.formal.counterexample import counterexample
from verif.formal.plan import NegativeCheck
from verif.formal.sby import WORK_ROOT, run_check


@dataclass
class NegativeVerdict:
    """What one negative check found against what it should."""

    fault: str  # the AxiRule broken (NONE: the clean exchange)
    expected: str  # "cycle 3, AR_VALID_DROPPED", or "pass"
    found: str  # the counterexample as cycle, channel and rule, or sby's status
    caught: bool  # failed on exactly its own label at its cycle (NONE: passed)
    seconds: float
    trace: str | None = None  # the VCD sby wrote
    save_file: str | None = None  # the GTKWave save file beside it


def run_negative(check: NegativeCheck, work_root: Path = WORK_ROOT) -> NegativeVerdict:
    result = run_check(check.job, check.top, check.sources(), check.check,
                       {"FAULT": int(check.fault)}, work_root=work_root)
    expected = check.expected()
    cx = counterexample(result) if result.status == "FAIL" else None
    if expected is None:
        want, caught = "pass", result.status == "PASS"
    else:
        cycle, channel = expected
        label = f"{channel.name}_{check.fault.name}"
        want = f"cycle {cycle}, {label}"
        caught = cx is not None and cx.labels == (label,) and cx.cycle == cycle
    found = f"cycle {cx.cycle}, {', '.join(cx.labels)}" if cx else result.status.lower()
    return NegativeVerdict(check.fault.name, want, found, caught, round(result.seconds, 1),
                           str(cx.trace) if cx else None, str(cx.save_file) if cx else None)


def problems(verdicts: list[NegativeVerdict]) -> list[str]:
    return [f"negative check {v.fault}: expected {v.expected}, found {v.found}"
            for v in verdicts if not v.caught]


HEADER = ["fault", "expected", "found", "verdict", "seconds", "waves"]


def rows(verdicts: list[NegativeVerdict]) -> list[list[str]]:
    return [[v.fault, v.expected, v.found, "caught" if v.caught else "MISSED", str(v.seconds),
             f"gtkwave {v.trace} {v.save_file}" if v.trace else ""] for v in verdicts]
