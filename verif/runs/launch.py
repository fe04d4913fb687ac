"""Running the decode environment from pytest or a script: build once, run, read the result.

`chip_build` is the build every chip run on a simulator shares. `run_decode` and `run_programs`
run one uvm_test in its own run folder and return the result, failed or not, so that negative
tests can inspect it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from model.chip.isa import ChipConfig
from model.paths import TB_DIR
from sim.runner import (
    Build,
    Job,
    SimulationFailed,
    build,
    current_node,
    default_test_dir,
    rerun_command,
    rtl_sources,
    run_folder_name,
    run_jobs,
    traced,
    waves_file,
)
from verif.runs.record import RESULT_FILE, read_result
from verif.runs.spec import DecodeSpec, ServingSpec, plan_to_json, spec_to_json

COCOTB_MODULE = "verif.tests.uvm_tests"
CHIP_TOPLEVEL = "chip_harness"
HARNESS = ("axi_ram.v", "axi_checker.v", "event_log.v", "chip_harness.v")
# the harness's own clock (Verilator: --timing, C++20) and its write logs and cycle watchdog,
# so no Python wakes per clock edge or written word (README, "How `make test` stays fast")
HARNESS_DEFINES = {"CHIP_HARNESS_CLOCK": 1, "CHIP_HARNESS_RECORD": 1}
VERILATOR_ARGS = ("--timing", "-CFLAGS", "-std=c++20", "--no-public-flat-rw")


def chip_sources(rtl_dir: Path | None = None, tb_dir: Path = TB_DIR) -> list[Path]:
    """The chip's RTL plus the harness; `rtl_dir` points at a broken copy for negative tests."""
    rtl = sorted(Path(rtl_dir).glob("*.v")) if rtl_dir else rtl_sources()
    return [*rtl, *(Path(tb_dir) / name for name in HARNESS)]


def chip_build(sim: str, sources: Sequence[Path] | None = None,
               waves: bool | None = None, coverage: bool | None = None) -> Build:
    """The build every run of the chip shares (`waves`, `coverage`: sim.runner.build's)."""
    return build(sim, CHIP_TOPLEVEL, sources or chip_sources(),
                 parameters=ChipConfig().verilog_parameters(), defines=HARNESS_DEFINES,
                 waves=waves, coverage=coverage,
                 build_args=VERILATOR_ARGS if sim == "verilator" else ())


def waves_path(b: Build, run_dir: Path) -> str:
    """Where the runner's waveform file of this run lands, or why there is none."""
    if not b.waves:
        return "not recorded (re-run with WAVES=1)"
    return str(waves_file(b, run_dir))


@dataclass
class DecodeRun:
    """One job's run of a uvm test: its folder, its result, and its simulator process's error."""

    run_dir: Path
    result: dict | None
    error: SimulationFailed | None
    rerun: str = ""  # this job's own re-run command (with waves)

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.get("status") == "passed"

    @property
    def failure(self) -> str:
        """The environment's own report (the result file), else why there is none."""
        if self.result is not None:
            return self.result.get("failure") or f"status {self.result.get('status')}"
        return (f"the simulator process ended before this test wrote its result (it crashed "
                f"or was stopped while running this test, alone):\n{self.error}\n"
                f"  re-run this test with waves: {self.rerun}")

    def raise_if_failed(self) -> dict:
        """The result, or SimulationFailed with this test's own report."""
        if not self.passed:
            raise SimulationFailed(self.failure)
        return self.result


@dataclass(frozen=True)
class Launch:
    """A job and the build it runs on: what a simulation test asks for."""

    build: Build
    job: Job
    seed: int
    plusargs: tuple[str, ...] = ()

    @property
    def batch(self) -> tuple:
        """Launches with the same batch key can share one simulator process."""
        return (self.build, self.plusargs)


def launch(b: Build, testcase: str, env: Mapping[str, str], seed: int,
           run_dir: Path | None = None, node: str | None = None,
           plusargs: tuple[str, ...] = ()) -> Launch:
    """A job running the uvm test ``testcase`` with ``env``, in the pytest ``node``'s run folder."""
    node = node or current_node()
    run_dir = Path(run_dir or default_test_dir(b, seed, node))
    job_env = {"DECODE_PLAN": "", "SERVING_SPEC": "", "PROGRAMS": "0", **env,
               "RANDOM_SEED": str(seed), "TB_SIM": b.sim, "TB_WAVES": waves_path(b, run_dir),
               "TB_RERUN": rerun_command(seed, node)}
    name = run_folder_name(node or f"{testcase}-seed{seed}")
    return Launch(b, Job(name, testcase, str(run_dir), job_env), seed, plusargs)


def traced_launch(launch: Launch, run_dir: Path) -> Launch:
    """The same job on the same configuration built with waves on, in ``run_dir``."""
    b = traced(launch.build)
    env = {**launch.job.env, "TB_WAVES": waves_path(b, run_dir)}
    return replace(launch, build=b, job=replace(launch.job, run_dir=str(run_dir), env=env))


def decode_launch(b: Build, testcase: str, plan: Sequence[DecodeSpec], seed: int,
                  **where) -> Launch:
    return launch(b, testcase, {"DECODE_PLAN": plan_to_json(list(plan))}, seed, **where)


def serving_launch(b: Build, spec: ServingSpec, seed: int, **where) -> Launch:
    return launch(b, "ServingTest", {"SERVING_SPEC": spec_to_json(spec)}, seed, **where)


def programs_launch(b: Build, testcase: str, seed: int, programs: int = 0, **where) -> Launch:
    return launch(b, testcase, {"PROGRAMS": str(programs)}, seed, **where)


def decode_job(testcase: str, plan: Callable[..., list[DecodeSpec]]) -> Callable[..., Launch]:
    """The uvm test ``testcase`` over the decodes ``plan(sim=..., **params)`` gives."""
    def launch(sim: str, seed: int, node: str, **params) -> Launch:
        return decode_launch(chip_build(sim), testcase, plan(sim=sim, **params), seed, node=node)
    return launch


def serving_job(spec: Callable[..., ServingSpec]) -> Callable[..., Launch]:
    """ServingTest over the workload ``spec(sim=..., **params)`` gives."""
    def launch(seed: int, node: str, sim: str = "verilator", **params) -> Launch:
        return serving_launch(chip_build(sim), spec(sim=sim, **params), seed, node=node)
    return launch


def programs_job(testcase: str, programs: Callable[[str], int]) -> Callable[..., Launch]:
    """A bare-program test (RandomProgramsTest, ErrorPathsTest), ``programs(sim)`` of them."""
    def launch(sim: str, seed: int, node: str) -> Launch:
        return programs_launch(chip_build(sim), testcase, seed, programs(sim), node=node)
    return launch


def run_launches(launches: Sequence[Launch]) -> list[DecodeRun]:
    """Run launches that share a batch key in one simulator process; a job the process did not
    finish is run again alone, so a crash is named by its own test. Never raises for a failure."""
    first = launches[0]
    if any(other.batch != first.batch for other in launches):
        raise ValueError("launches of one process must share the build and the plusargs")
    error = _run_process(first.build, [launch.job for launch in launches], first.seed,
                         first.plusargs)
    runs = [_read(launch, error) for launch in launches]
    if len(launches) == 1:
        return runs
    return [run if run.result is not None else run_launches([launch])[0]
            for launch, run in zip(launches, runs, strict=True)]


def _run_process(b: Build, jobs: list[Job], seed: int,
                 plusargs: tuple[str, ...]) -> SimulationFailed | None:
    for job in jobs:
        (Path(job.run_dir) / RESULT_FILE).unlink(missing_ok=True)
    try:
        run_jobs(b, COCOTB_MODULE, jobs, seed, plusargs)
    except SimulationFailed as failed:
        return failed
    return None


def _read(launch: Launch, error: SimulationFailed | None) -> DecodeRun:
    run_dir = Path(launch.job.run_dir)
    result = read_result(run_dir) if (run_dir / RESULT_FILE).exists() else None
    return DecodeRun(run_dir, result, error, launch.job.env["TB_RERUN"])


def run_decode(b: Build, testcase: str, plan: Sequence[DecodeSpec], seed: int,
               run_dir: Path | None = None, plusargs: tuple[str, ...] = ()) -> DecodeRun:
    """Run one decode uvm_test on a build; never raises for a failing simulation."""
    return run_launches([decode_launch(b, testcase, plan, seed, run_dir=run_dir,
                                       plusargs=plusargs)])[0]


def run_programs(b: Build, testcase: str, seed: int, programs: int = 0,
                 run_dir: Path | None = None) -> DecodeRun:
    """Run a program test (RandomProgramsTest, ErrorPathsTest); never raises for a failure."""
    return run_launches([programs_launch(b, testcase, seed, programs, run_dir=run_dir)])[0]
