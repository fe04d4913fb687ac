"""One way to run a command as a stage of a job (the mutation runs' checks, `make run`'s mutation
runs): timed, its output kept, at a nice level, under a wall-clock limit that kills its group."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from model.paths import REPO_ROOT


@dataclass
class Finished:
    """What a stage left: its output (stdout and stderr together), exit status, seconds."""

    output: str
    returncode: int | None  # None: killed at its wall-clock limit
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


@dataclass
class StageProcess:
    """A command started now (``start``) and collected later (``finish``)."""

    command: list[str]
    cwd: Path = REPO_ROOT
    env: dict[str, str] | None = None
    timeout: float | None = None  # wall-clock seconds from the start
    niceness: int = 0  # added to this process's: a stage that yields the cores
    _process: subprocess.Popen | None = field(default=None, init=False, repr=False)
    _output: IO[str] | None = field(default=None, init=False, repr=False)
    _started: float = field(default=0.0, init=False, repr=False)

    def start(self) -> StageProcess:
        self._output = tempfile.TemporaryFile("w+")  # noqa: SIM115 - read and closed in finish
        self._started = time.perf_counter()
        # with a limit, a session of its own, so that the limit kills the whole group
        self._process = subprocess.Popen(
            self.command, cwd=self.cwd, env=self.env, stdout=self._output,
            stderr=subprocess.STDOUT, text=True, start_new_session=self.timeout is not None,
            preexec_fn=(lambda: os.nice(self.niceness)) if self.niceness else None)
        return self

    def finish(self) -> Finished:
        left = None if self.timeout is None else max(
            0.0, self.timeout - (time.perf_counter() - self._started))
        try:
            returncode = self._process.wait(left)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, signal.SIGKILL)  # the stage and the simulator it started
            self._process.wait()
            returncode = None
        self._output.seek(0)
        output = self._output.read()
        self._output.close()
        return Finished(output, returncode, time.perf_counter() - self._started)


def run_stage(command: list[str], **options) -> Finished:
    """Run ``command`` to its end (or its limit): ``StageProcess``'s options."""
    return StageProcess(command, **options).start().finish()
