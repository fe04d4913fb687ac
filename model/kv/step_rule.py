"""The decode step rule, defined once: what a step reads, what it may give back, what comes next.

``plan_step`` gives a step's ``StepPlan``, which the hosts, the compiler, the float reference
and the testbench read without deriving anything again. ``pages_held`` is written without the
rule on purpose, so that it can check it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def check_window(window: int | None, sinks: int = 0) -> None:
    """A window is None (full attention) or holds at least the new token, and its sinks."""
    if window is not None and window < 1:
        raise ValueError(f"a window must hold at least the new token, got {window}")
    if sinks < 0:
        raise ValueError(f"the number of sink rows cannot be negative, got {sinks}")
    if sinks and (window is None or sinks >= window):
        raise ValueError(f"{sinks} sink rows need a window of more than {sinks} tokens (the "
                         f"sinks and the new token), got window {window}")


def context_size(step: int, window: int | None) -> int:
    """Tokens step ``step`` (1-based) attends: itself and at most window - 1 before it."""
    return step if window is None else min(step, window)


def trim_point(step: int, window: int, sinks: int = 0) -> int:
    """The first recent row the step after ``step`` reads (step + 1 - W + S): below it may go."""
    return max(0, step + 1 - window + sinks)


@dataclass(frozen=True)
class StepPlan:
    """What step ``step`` does with the cache: read rows 0 <= i < sinks and lo <= i < hi (in
    that order), then trim rows sinks <= i < keep_from."""

    step: int
    window: int | None  # the window the step was planned under (None: full attention)
    context: int  # tokens attended: the new one and context - 1 cached rows
    lo: int  # first recent cached row read
    hi: int  # one past the last cached row read (= step - 1)
    keep_from: int | None  # trim point once the step's row is appended; None: keep all
    sinks: int = 0  # sink rows read ahead of lo .. hi (0 until the window has slid past them)

    @property
    def ranges(self) -> tuple[tuple[int, int], ...]:
        """The row ranges read, in the order the chip's kc/vc inputs hold them."""
        return tuple((a, b) for a, b in ((0, self.sinks), (self.lo, self.hi)) if b > a)

    @property
    def rows(self) -> int:
        return self.sinks + self.hi - self.lo


def plan_step(step: int, window: int | None, sinks: int = 0) -> StepPlan:
    """The plan of step ``step`` (1-based) under window ``W`` with ``S`` sink rows: with sinks,
    a full window reads rows ``0 .. S-1`` and the ``W - 1 - S`` most recent (same context)."""
    check_window(window, sinks)
    if step < 1:
        raise ValueError(f"steps count from 1, got {step}")
    context = context_size(step, window)
    keep_from = None if window is None else trim_point(step, window, sinks)
    if sinks and step > window:  # the window has slid past the sinks: read them apart
        return StepPlan(step, window, context, step - window + sinks, step - 1, keep_from, sinks)
    return StepPlan(step, window, context, step - context, step - 1, keep_from)


def next_input(step: int, chip_token: int, force: Sequence[int] | None) -> int:
    """The input of step ``step + 1``: force[step] when teacher-forced, else the chip's token."""
    return chip_token if force is None else int(force[step])


def attended_rows(n_cached: int, window: int | None, sinks: int = 0) -> list[int]:
    """Of ``n_cached`` rows, the ones the next step attends (the float reference's window)."""
    plan = plan_step(n_cached + 1, window, sinks)
    return [row for lo, hi in plan.ranges for row in range(lo, hi)]


def programs_needed(steps: int, window: int | None) -> int:
    """Distinct contexts (hence compiled programs) a decode of ``steps`` steps meets."""
    return len({plan_step(step, window).context for step in range(1, steps + 1)})


def pages_held(step: int, window: int | None, page_size: int, sinks: int = 0) -> int:
    """Pages one request holds once step ``step`` has appended and trimmed: ceil(min(L, S) / P)
    sink pages + ceil((L - S) / P) recent pages - floor((L + 1 - W) / P) below the window."""
    recent = max(0, step - sinks)
    held = -(-min(step, sinks) // page_size) + -(-recent // page_size)
    if window is not None:
        held -= max(0, step + 1 - window) // page_size
    return held
