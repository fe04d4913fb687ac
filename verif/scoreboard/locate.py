"""From a failing run to its cause: the first instruction whose writes or cycles differ.

The first difference is at the end of a run; the cause is usually earlier. So the reference
machine runs the item again with its trace on, and its instructions are compared one by one with
the harness's logs of writes and phases (README, "Reading a failure report")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from model.chip import machine
from model.chip.isa import ChipConfig, ErrorCode
from model.chip.machine import EVENTS_FROM, Counters, Executed, differing_counters
from verif.agents.chip.write_monitor import MemWrite
from verif.kit.failure_point import FailurePoint


@dataclass(frozen=True)
class Phase:
    """The first cycle of an instruction's FETCH (check False) or its CHECK (check True)."""

    pc: int
    check: bool
    run_cycle: int
    bus_cycle: int

    @classmethod
    def of(cls, fields: dict[str, int]) -> Phase:
        """From a phase entry's fields (the harness's log: bfm.PHASE_ENTRY)."""
        return cls(fields["pc"], bool(fields["check"]), fields["run_cycle"], fields["bus_cycle"])


@dataclass(frozen=True)
class ChipLogs:
    """What the harness's logs say the chip did: its stamped writes and its phases."""

    sram: list[MemWrite]
    ext: list[MemWrite]
    phases: list[Phase]
    sram_complete: bool = True  # False: the ring lost the run's first scratchpad writes


@dataclass(frozen=True)
class Located:
    """The point and the report's lines that explain it."""

    point: FailurePoint
    lines: list[str]


def locate(image, cfg: ChipConfig, logs: ChipLogs, error: tuple[int, int],
           counters: Counters | None = None, time_of=lambda bus_cycle: None,
           where: str = "") -> Located:
    """The first instruction, in program order, the chip ran, stopped, wrote or timed otherwise
    than the reference machine; with every one right, the error or counter is the controller's."""
    reference = machine.run(image, cfg, trace=True)
    trace = reference.trace
    sram, ext = _by_pc(logs.sram), _by_pc(logs.ext)
    # with the ring's first entries lost, the instructions up to the oldest one kept are not
    # compared on the scratchpad (some of their writes are gone); pcs rise through a program
    sram_from = -1 if logs.sram_complete or not logs.sram else logs.sram[0].pc
    fetches = [p for p in logs.phases if not p.check]
    checks = {p.pc: p for p in logs.phases if p.check}
    expected = (int(reference.error), reference.error_pc)
    for index, executed in enumerate(trace):
        found = (_ran_other(executed, index, fetches)
                 or _stopped_otherwise(executed, expected, error, checks)
                 or (executed.pc > sram_from
                     and _wrong_write(executed, "scratchpad", sram.get(executed.pc, {})))
                 or _wrong_write(executed, "external memory", ext.get(executed.pc, {}))
                 or _wrong_cycles(executed, index, fetches, checks))
        if found:
            return _point(executed, *found, time_of, where)
    ran = {e.pc for e in trace}
    stray = [w for w in (*logs.sram, *logs.ext) if w.pc not in ran]
    if stray:
        first = min(stray, key=lambda w: w.bus_cycle)
        return Located(FailurePoint("controller", first.pc, None, first.run_cycle,
                                    time_of(first.bus_cycle), where),
                       [f"the chip wrote word {first.address} at pc {first.pc}, an instruction "
                        "the reference machine never ran there: the controller's sequencing"])
    if error != expected:
        return _wrong_stop(expected, error, where)
    differing = differing_counters(reference.counters, counters) if counters else []
    return _counters_fault(trace, differing, where)


def _by_pc(writes: Iterable[MemWrite]) -> dict[int, dict[int, MemWrite]]:
    """Each pc's writes: address -> the last write there (its final value)."""
    grouped: dict[int, dict[int, MemWrite]] = {}
    for write in writes:
        grouped.setdefault(write.pc, {})[write.address] = write
    return grouped


def _ran_other(executed: Executed, index: int, fetches: list[Phase]):
    if index < len(fetches) and fetches[index].pc != executed.pc:
        got = fetches[index]
        return ("controller", got.run_cycle, got.bus_cycle,
                f"instruction {index} of the run: the chip fetched pc {got.pc}, the reference "
                f"machine pc {executed.pc}")
    return None


def _wrong_write(executed: Executed, memory: str, got: dict[int, MemWrite]):
    """The first differing word this instruction wrote to one memory, in the chip's order."""
    want = executed.sram if memory == "scratchpad" else executed.ext
    for write in sorted(got.values(), key=lambda w: w.bus_cycle):
        if write.address not in want:
            return (executed.unit, write.run_cycle, write.bus_cycle,
                    f"stray write: {memory} word {write.address} = {write.value:#010x}; the "
                    f"reference machine's instruction wrote nothing there")
        if want[write.address] != write.value:
            return (executed.unit, write.run_cycle, write.bus_cycle,
                    f"{memory} word {write.address} = {write.value:#010x}, the reference "
                    f"machine wrote {want[write.address]:#010x}")
    missing = sorted(set(want) - set(got))
    if missing:
        return (executed.unit, executed.end - 1, None,
                f"missing write: {memory} word {missing[0]} (the reference machine wrote "
                f"{want[missing[0]]:#010x}; {len(missing)} words not written)")
    return None


def _stopped_otherwise(executed: Executed, expected: tuple[int, int], got: tuple[int, int],
                       checks: dict):
    """The chip stopped at this instruction with another error than the reference machine
    (or at all): its CHECK is the controller's; BAD_PAGE the paged DMA's table phase."""
    if got == expected or executed.pc not in (got[1], expected[1]):
        return None
    code = ErrorCode(got[0]) if got[1] == executed.pc else ErrorCode.OK
    want = ErrorCode(expected[0]) if expected[1] == executed.pc else ErrorCode.OK
    unit = "dma" if ErrorCode.BAD_PAGE in (code, want) else "controller"
    check = checks.get(executed.pc)
    cycle = check.run_cycle if check else None
    return (unit, cycle, check.bus_cycle if check else None,
            f"the chip stopped here with {code.name}, the reference machine with {want.name}")


def _wrong_cycles(executed: Executed, index: int, fetches: list[Phase], checks: dict):
    """FETCH + CHECK, then EXEC, against the formulas' cycles (the reference machine's)."""
    if index >= len(fetches) or executed.pc not in checks:
        return None
    fetch, check = fetches[index], checks[executed.pc]
    want_fetch = executed.exec_start - 1 - executed.start
    got_fetch = check.run_cycle - fetch.run_cycle
    if got_fetch != want_fetch:
        return ("controller", check.run_cycle, check.bus_cycle,
                f"FETCH took {got_fetch} cycles, the formula (model.chip.isa.fetch_cycles) "
                f"gives {want_fetch}")
    if index + 1 < len(fetches):
        following = fetches[index + 1]
        got_exec = following.run_cycle - check.run_cycle - 1
        want_exec = executed.end - executed.exec_start
        if got_exec != want_exec:
            return (executed.unit, following.run_cycle, following.bus_cycle,
                    f"EXEC took {got_exec} cycles, the formula (model.chip.isa.exec_cycles) gives "
                    f"{want_exec}")
    return None


def _point(executed: Executed, unit: str, run_cycle: int, bus_cycle: int | None, what: str,
           time_of, where: str) -> Located:
    point = FailurePoint(unit, executed.pc, str(executed.instr), run_cycle,
                         time_of(bus_cycle) if bus_cycle is not None else None, where)
    return Located(point, [f"the first wrong instruction: pc {executed.pc} "
                           f"({executed.instr}), unit {unit}, cycle {run_cycle}: {what}"])


def _wrong_stop(expected: tuple[int, int], got: tuple[int, int], where: str) -> Located:
    """Every instruction wrote and took what it should, but the run stopped otherwise."""
    (want_code, want_pc), (code, pc) = expected, got
    return Located(FailurePoint("controller", pc, None, None, None, where),
                   [f"every instruction wrote and took what it should; the chip stopped with "
                    f"{ErrorCode(code).name} at pc {pc}, the reference machine with "
                    f"{ErrorCode(want_code).name} at pc {want_pc}: the controller's checks"])


def _counters_fault(trace: list[Executed], differing: list[str], where: str) -> Located:
    """Every instruction wrote and took what it should: the counters that differ are the
    controller's, which keeps them; an event counter's reporting units are named as well."""
    reporters = sorted({unit for name in differing for unit in EVENTS_FROM[name]})
    also = (f"; {', '.join(differing)} also count{'s' if len(differing) == 1 else ''} the "
            f"events units {', '.join(reporters)} report" if reporters else "")
    return Located(FailurePoint("controller", None, None, None, None, where),
                   [f"every instruction ({len(trace)}) wrote the words and took the cycles of "
                    f"its formulas: the counters that differ are the controller's (it keeps "
                    f"them){also}"])
