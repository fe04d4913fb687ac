"""The chapter's report on the model: the structured model decoded with and without a window.

For W = None, 8 and 4, 32 decode steps from token 0 with pages of 4 rows, on the reference
machine: whether the tokens follow f(t) = (5t + 3) mod 16, how many distinct programs were
compiled (one per context size), the pages in use after steps 1, 8, 16 and 32 and the peak,
and the cycles per step. With a window the cycles stop growing once the window is full.

Run from the repository root: ``python -m scripts.report_model`` or
``python scripts/report_model.py``. Writes ``out/report_model.json``.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model.host import decode
from model.machine import Counters
from model.tiny_lm import rule_tokens, structured_model
from scripts._common import write_json

STEPS = 32
PAGE_SIZE = 4
START = 0
WINDOWS = (None, 8, 4)
PAGE_STEPS = (1, 8, 16, 32)  # pages in use after these steps
CYCLE_STEPS = (1, 4, 8, 9, 12, 16, 24, 32)


@dataclass
class WindowReport:
    """One window's decode of the structured model."""

    window: int | None
    rule_ok: bool
    programs_compiled: int
    pages_after: dict[int, int]  # step -> pages in use once it has appended and trimmed
    peak_pages: int
    cycles: list[list[int]]  # per step: total, dma, mat, vec, sm
    flat_from_window: bool  # every step from W on costs the same (True without a window)

    @property
    def total_cycles(self) -> int:
        return sum(step[0] for step in self.cycles)


def report_window(window: int | None) -> WindowReport:
    run = decode(structured_model(), STEPS, START, window, page_size=PAGE_SIZE)
    cycles = [list(record.cycles) for record in run.records]
    flat = window is None or len({step[0] for step in cycles[window - 1 :]}) == 1
    return WindowReport(
        window=window,
        rule_ok=run.tokens == rule_tokens(START, STEPS),
        programs_compiled=run.programs_compiled,
        pages_after={step: run.pages_after(step) for step in PAGE_STEPS},
        peak_pages=run.peak_pages,
        cycles=cycles,
        flat_from_window=flat,
    )


def print_summary(reports: list[WindowReport]) -> None:
    print(f"== the rule f(t) = 5t+3 mod 16 for {STEPS} tokens, pages of {PAGE_SIZE} rows")
    for r in reports:
        pages = ", ".join(f"{step} {count}" for step, count in r.pages_after.items())
        print(
            f"  window {r.window!s:>4s}: rule ok {r.rule_ok}; distinct programs compiled "
            f"{r.programs_compiled}; pages in use after step {pages}; peak {r.peak_pages}"
        )


def print_cycles(reports: list[WindowReport]) -> None:
    print("\n== cycles per step (reference machine)")
    print(f"{'step':>5s} " + " ".join(f"{'W=' + str(r.window):>10s}" for r in reports))
    for step in CYCLE_STEPS:
        print(f"{step:5d} " + " ".join(f"{r.cycles[step - 1][0]:10d}" for r in reports))
    print(f"{'total':>5s} " + " ".join(f"{r.total_cycles:10d}" for r in reports))
    for r in reports:
        if r.window is not None:
            print(f"  W={r.window}: flat from step {r.window} on: {r.flat_from_window}")


def report() -> list[WindowReport]:
    """The three decodes; printed by ``main``."""
    return [report_window(window) for window in WINDOWS]


def main() -> None:
    reports = report()
    print_summary(reports)
    print_cycles(reports)
    data = {
        "steps": STEPS,
        "page_size": PAGE_SIZE,
        "cycle_names": list(Counters.CYCLE_NAMES),
        "windows": [asdict(r) | {"total_cycles": r.total_cycles} for r in reports],
    }
    print(f"\nwrote {write_json('report_model.json', data)}")


if __name__ == "__main__":
    main()
