"""Runs uvm_test classes as cocotb tests, several in one simulator process, each writing its
own result file.

`uvm_cocotb_test` marks a uvm_test class runnable; `register_jobs` makes one cocotb test per
job the launcher listed (sim.runner.run_jobs: a uvm_test, its environment, its run folder), so
tests that share a build share the simulator's start-up. Each job runs pyuvm's `run_test` (which
clears pyuvm's singletons) with its own environment, a fresh coverage database and profile, and
a `finally`: whatever happens (a scoreboard mismatch, the watchdog, an X on an output, a crash
in build), its run folder gets its result file and its coverage before cocotb records the
test's outcome. Every test resets the chip itself (ChipTest.run_phase).
"""

from __future__ import annotations

import os
import time
from asyncio import CancelledError
from pathlib import Path
from types import ModuleType

import cocotb
from pyuvm import uvm_root

from model.chip import machine
from sim.runner import JOBS_ENV, Job, read_jobs
from verif.coverage import points as coverage
from verif.kit.profiling import PROFILE, cprofile_from_environment
from verif.runs.record import RunRecorder

RUNNABLE: dict[str, tuple[type, bool]] = {}  # uvm_test classes by name, and expect_fail


def uvm_cocotb_test(expect_fail: bool = False):
    """Class decorator: a uvm_test a job may run, by its class's name.

    A negative test says so with expect_fail=True: it passes only if the environment fails it.
    """

    def decorator(cls):
        RUNNABLE[cls.__name__] = (cls, expect_fail)
        return cls

    return decorator


def register_jobs(module: ModuleType) -> None:
    """One cocotb test per job of the file JOBS_ENV names, in order, as attributes of
    ``module`` (where cocotb discovers tests)."""
    path = os.environ.get(JOBS_ENV)
    for index, job in enumerate(read_jobs(path) if path else []):
        if job.test not in RUNNABLE:
            raise ValueError(f"job {job.name}: no uvm_test {job.test!r}; the runnable ones are "
                             f"{sorted(RUNNABLE)}")
        cls, expect_fail = RUNNABLE[job.test]

        async def entry(dut, job: Job = job, cls: type = cls) -> None:
            await run_job(job, cls)

        entry.__doc__ = cls.__doc__
        setattr(module, f"job_{index}", cocotb.test(name=job.name, expect_fail=expect_fail)(entry))


async def run_job(job: Job, cls: type) -> None:
    """One job: its environment while it runs, a fresh coverage database and profile."""
    saved = dict(os.environ)
    os.environ.update({**job.env, "TB_RUN_DIR": job.run_dir})
    coverage.reset()
    PROFILE.reset()
    try:
        await run_uvm_test(cls)
    finally:
        os.environ.clear()
        os.environ.update(saved)


class ReferenceRuns:
    """Counts the reference machine's runs in this simulation (its result file reports them).

    The scoreboard predicts each chip run once; nothing else in the testbench runs the
    machine. Counting every call of model.chip.machine.run, wherever it comes from, lets a test
    check that claim instead of trusting it.
    """

    def __init__(self) -> None:
        self.count = 0
        self._run = machine.run

    def __enter__(self) -> ReferenceRuns:
        def counted(*args, **kwargs):
            self.count += 1
            return self._run(*args, **kwargs)

        machine.run = counted
        return self

    def __exit__(self, *exc) -> None:
        machine.run = self._run


async def run_uvm_test(cls) -> None:
    started = time.perf_counter()
    fallback = RunRecorder(Path(os.environ.get("TB_RUN_DIR", os.getcwd())), cls.__name__)
    status = "failed"
    with ReferenceRuns() as reference, cprofile_from_environment():
        try:
            await uvm_root().run_test(cls)
            status = "passed"
        except CancelledError:  # a component failed; it recorded its exception already
            raise
        except BaseException as error:
            _recorder(fallback).record_failure(error)
            raise
        finally:
            _recorder(fallback).extra["reference_runs"] = reference.count
            _finish(_recorder(fallback), status, time.perf_counter() - started)


def _test():
    return getattr(uvm_root(), "uvm_test_top", None)


def _recorder(fallback: RunRecorder) -> RunRecorder:
    """The test's recorder, or `fallback` when the test did not get as far as its config."""
    cfg = getattr(_test(), "cfg", None)
    return cfg.recorder if cfg is not None else fallback


def _finish(recorder: RunRecorder, status: str, seconds: float) -> None:
    """Collect what the test did, export coverage, write the result file."""
    test = _test()
    if getattr(test, "cfg", None) is not None and hasattr(test, "collect"):
        test.collect(recorder)
    recorder.test = recorder.test or (type(test).__name__ if test else "?")
    recorder.extra["coverage"] = {"files": coverage.export(recorder.run_dir),
                                  "summary": coverage.summary()}
    timing = recorder.extra.setdefault("timing", {})
    timing.update({"test_s": round(seconds, 4), "python_s": PROFILE.as_dict(),
                   "python_total_s": round(PROFILE.total(), 4)})
    recorder.write(status)
