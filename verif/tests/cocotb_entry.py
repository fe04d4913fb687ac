"""Registers uvm_test classes as cocotb tests, and writes each run's result file.

This is pyuvm's `@pyuvm.test()` plus a `finally`: whatever happens (a scoreboard mismatch, the
watchdog, an X on an output, a crash in build), the run folder gets its result file and its
coverage database before cocotb records the test's outcome.
"""

from __future__ import annotations

import inspect
import os
import time
from asyncio import CancelledError
from pathlib import Path

import cocotb
from pyuvm import uvm_root

from model import machine
from verif.coverage import points as coverage
from verif.env.profiling import PROFILE, cprofile_from_environment
from verif.env.run_record import RunRecorder


def uvm_cocotb_test(expect_fail: bool = False):
    """Class decorator: run this uvm_test as a cocotb test named after the class.

    A negative test says so with expect_fail=True: it passes only if the environment fails it.
    """

    def decorator(cls):
        @cocotb.test(name=cls.__name__, expect_fail=expect_fail)
        async def entry(dut) -> None:
            await run_uvm_test(cls)

        entry.__doc__ = cls.__doc__
        module = inspect.getmodule(inspect.stack()[1].frame)
        setattr(module, f"__{cls.__name__}", entry)
        return cls

    return decorator


class ReferenceRuns:
    """Counts the reference machine's runs in this simulation (its result file reports them).

    The scoreboard predicts each chip run once; nothing else in the testbench runs the
    machine. Counting every call of model.machine.run, wherever it comes from, lets a test
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
    if test is not None and hasattr(test, "collect"):
        test.collect(recorder)
    recorder.test = recorder.test or (type(test).__name__ if test else "?")
    recorder.extra["coverage"] = {"files": coverage.export(recorder.run_dir),
                                  "summary": coverage.summary()}
    timing = recorder.extra.setdefault("timing", {})
    timing.update({"test_s": round(seconds, 4), "python_s": PROFILE.as_dict(),
                   "python_total_s": round(PROFILE.total(), 4)})
    recorder.write(status)
