"""Failures that survive the end of the test: recorded before they propagate.

When a run-phase task raises, cocotb cancels every other task and the test sees only a
CancelledError, so each run_phase records its exception first: the result file names the real one.
"""

from __future__ import annotations

import functools
from asyncio import CancelledError
from collections.abc import Awaitable, Callable


def recording_failures(run_phase: Callable[..., Awaitable[None]]):
    """Decorate a component's run_phase: its exception goes to cfg.recorder, then on."""

    @functools.wraps(run_phase)
    async def wrapper(self) -> None:
        try:
            await run_phase(self)
        except CancelledError:
            raise
        except BaseException as error:
            self.cfg.recorder.record_failure(error)
            raise

    return wrapper
