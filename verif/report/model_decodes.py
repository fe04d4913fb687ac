"""The chapter's report on the model: the structured model decoded with and without a window.

For W = None, 8 and 4, 32 decode steps from token 0 with pages of 4 rows, on the reference
machine: whether the tokens follow f(t) = (5t + 3) mod 16, how many distinct programs were
compiled (one per context size), the pages in use after steps 1, 8, 16 and 32 and the peak,
and the cycles per step. With a window the cycles stop growing once the window is full.

Whether the rule held and the cycles went flat are the decode checks' verdicts
(verif.scoreboard.decode_checks), as for the RTL runs. ``python -m scripts.report
model-decodes`` writes ``out/report_model.json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from model.chip.machine import CYCLE_NAMES
from model.host.decode import decode
from model.lm.tiny_lm import structured_model
from verif.report.output import write_json
from verif.runs.plans import CHAPTER_STEPS as STEPS
from verif.runs.plans import CHAPTER_WINDOWS as WINDOWS
from verif.runs.plans import TABLE_STEPS, chapter_spec
from verif.scoreboard.decode_checks import DecodeFacts, decode_verdicts

PAGE_SIZE = chapter_spec(None).page_size
PAGE_STEPS = (1, 8, 16, 32)  # pages in use after these steps


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
    """The reference host's decode, judged by the decode checks the RTL runs are judged by."""
    spec = chapter_spec(window)
    run = decode(structured_model(), spec.steps, spec.start, window, page_size=spec.page_size)
    cycles = [list(record.cycles) for record in run.records]
    verdicts = decode_verdicts(DecodeFacts(
        spec, run.tokens, [run.pages_after(s) for s in range(1, spec.steps + 1)],
        [step[0] for step in cycles], run.programs_compiled))
    return WindowReport(
        window=window,
        rule_ok=verdicts["tokens"] == [],
        programs_compiled=run.programs_compiled,
        pages_after={step: run.pages_after(step) for step in PAGE_STEPS},
        peak_pages=run.peak_pages,
        cycles=cycles,
        flat_from_window=verdicts["cycles"] == [],
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
    for step in TABLE_STEPS:
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
        "cycle_names": list(CYCLE_NAMES),
        "windows": [asdict(r) | {"total_cycles": r.total_cycles} for r in reports],
    }
    print(f"\nwrote {write_json('report_model.json', data)}")
