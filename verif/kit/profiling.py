"""Where the testbench's wall time goes: Python sections against the simulator.

Only synchronous sections (code between two awaits) are timed, so their sum is pure Python time;
the rest of the wall time is the simulator and cocotb's scheduler.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Profile:
    """Seconds spent in each named Python section, accumulated over a run."""

    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    @contextmanager
    def section(self, name: str) -> Iterator[None]:
        """Time a block that does not await: its time is Python's, not the simulator's."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - started

    def reset(self) -> None:
        """Forget every section: a new test starts (several run in one process)."""
        self.seconds.clear()

    def total(self) -> float:
        return sum(self.seconds.values())

    def as_dict(self) -> dict[str, float]:
        return {name: round(value, 6) for name, value in sorted(self.seconds.items())}


PROFILE = Profile()  # one per simulator process, like cocotb itself


PROFILE_ENV = "TB_CPROFILE"  # a path: the run's cProfile statistics are written there


@contextmanager
def cprofile_from_environment() -> Iterator[None]:
    """cProfile the block when TB_CPROFILE names a file (``python -m pstats FILE``): it sees
    every callback, since the simulator calls Python on the one thread."""
    import os

    path = os.environ.get(PROFILE_ENV)
    if not path:
        yield
        return
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        profiler.dump_stats(path)
