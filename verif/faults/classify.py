"""Exact classification of a faulty run against the reference machine's one prediction.

hang: the watchdog fired; detected: the chip reported an error code the prediction has not, or
the AXI4 protocol checker fired; sdc: a written word or an event counter differs and nothing was
reported; timing: every word equal, only cycle counters differ; masked: everything equal.
A masked run is latent when state the outputs did not show still differs at its end.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.chip.machine import CYCLE_NAMES, Counters, RunResult

OUTCOMES = ("masked", "timing", "detected", "hang", "sdc")


@dataclass
class Observed:
    """What a faulty run showed: None for the status of a hung run."""

    hung: bool
    protocol: str | None  # the protocol checker's report
    error: int | None
    error_pc: int | None
    counters: Counters | None
    writes: dict[int, int]  # every written word's final value
    overflow: bool = False  # the chip wrote more words than the harness logs


def classify(expected: RunResult, got: Observed) -> str:
    """The outcome class of one run (OUTCOMES)."""
    if got.hung:
        return "hang"
    if got.protocol or got.error != int(expected.error):
        return "detected"
    if got.overflow or got.writes != expected.writes() or got.error_pc != expected.error_pc:
        return "sdc"
    if got.counters == expected.counters:
        return "masked"
    differing = {name for name in vars(expected.counters)
                 if getattr(expected.counters, name) != getattr(got.counters, name)}
    return "timing" if differing <= {*CYCLE_NAMES, "wait"} else "sdc"
