"""Running the decode environment from pytest or a script: build once, run, read the result.

`chip_build` is the same build as verif/tests/test_chip.py (chip_harness with the RTL and the
external memory model), shared by every decode run of a simulator. `run_decode` runs one
uvm_test of verif/decode_tests.py in its own run folder and returns the result file, also
when the simulation failed (the failure is kept, not raised, so negative tests can inspect it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from model.isa import ChipConfig
from sim.runner import (
    TB_DIR,
    Build,
    SimulationFailed,
    build,
    default_test_dir,
    rerun_command,
    rtl_sources,
    run_test,
    waves_file,
)
from verif.decode_spec import DecodeSpec, plan_to_json
from verif.run_record import RESULT_FILE, read_result
from verif.serving_spec import ServingSpec, spec_to_json

COCOTB_MODULE = "verif.decode_tests"
HARNESS = ("axi_ram.v", "axi_checker.v", "chip_harness.v")
# The harness makes its own clock (no cocotb callback per clock edge); on Verilator that needs
# --timing (C++20 coroutines: g++ 12 needs the standard named), and only the signals cocotb
# reaches are public (chip_harness.v's control section) instead of every signal of the chip.
# Measured with scripts/bench_tb.py: together about 45% less wall time per decode step on
# Verilator (the HDL clock alone: no measurable change on Icarus).
# CHIP_HARNESS_RECORD: the harness logs the memory port's writes and runs the cycle watchdog
# (chip_harness.v), so no Python wakes per written word and no cocotb Timer is pending during a
# run. Measured with scripts/bench_tb.py on Verilator: see verif/ext_write_monitor.py and
# verif/chip_bfm.py.
HARNESS_DEFINES = {"CHIP_HARNESS_CLOCK": 1, "CHIP_HARNESS_RECORD": 1}
VERILATOR_ARGS = ("--timing", "-CFLAGS", "-std=c++20", "--no-public-flat-rw")


def chip_sources(rtl_dir: Path | None = None, tb_dir: Path = TB_DIR) -> list[Path]:
    """The chip's RTL plus the harness; `rtl_dir` points at a broken copy for negative tests."""
    rtl = sorted(Path(rtl_dir).glob("*.v")) if rtl_dir else rtl_sources()
    return [*rtl, *(Path(tb_dir) / name for name in HARNESS)]


def chip_build(sim: str, sources: Sequence[Path] | None = None,
               waves: bool | None = None) -> Build:
    return build(sim, "chip_harness", sources or chip_sources(),
                 parameters=ChipConfig().verilog_parameters(), defines=HARNESS_DEFINES,
                 waves=waves, build_args=VERILATOR_ARGS if sim == "verilator" else ())


def waves_path(b: Build, run_dir: Path) -> str:
    """Where the runner's waveform file of this run lands (sim.runner names it by simulator)."""
    if not b.waves:
        return "not recorded (re-run with WAVES=1)"
    return str(waves_file(b, run_dir))


@dataclass
class DecodeRun:
    """One simulator run of a decode test: its folder, result file and failure, if any."""

    run_dir: Path
    result: dict | None
    error: SimulationFailed | None

    @property
    def failure(self) -> str:
        """The environment's own report (the result file), else the runner's message."""
        if self.result and self.result.get("failure"):
            return self.result["failure"]
        return str(self.error or "")

    def raise_if_failed(self) -> dict:
        """The result, or SimulationFailed with the runner's re-run lines and the report."""
        if self.error is not None or self.result is None or self.result["status"] != "passed":
            raise SimulationFailed(f"{self.error or 'no result file'}\n{self.failure}")
        return self.result


def run_decode(b: Build, testcase: str, plan: Sequence[DecodeSpec], seed: int,
               run_dir: Path | None = None,
               extra_env: Mapping[str, str] | None = None,
               plusargs: Sequence[str] = ()) -> DecodeRun:
    """Run one decode uvm_test on a build; never raises for a failing simulation.

    `plusargs` reach the simulator: the memory's profile (sim.mem_profile), for one."""
    return _run(b, testcase, {"DECODE_PLAN": plan_to_json(list(plan))}, seed, run_dir,
                extra_env, plusargs)


def run_serving(b: Build, spec: ServingSpec, seed: int,
                run_dir: Path | None = None) -> DecodeRun:
    """Run the serving uvm_test (ServingTest) on a build; never raises for a failing run."""
    return _run(b, "ServingTest", {"SERVING_SPEC": spec_to_json(spec)}, seed, run_dir)


def _run(b: Build, testcase: str, plan_env: Mapping[str, str], seed: int,
         run_dir: Path | None, extra_env: Mapping[str, str] | None = None,
         plusargs: Sequence[str] = ()) -> DecodeRun:
    run_dir = Path(run_dir or default_test_dir(b, seed))
    (run_dir / RESULT_FILE).unlink(missing_ok=True)
    env = {**plan_env, "TB_RUN_DIR": str(run_dir),
           "TB_SIM": b.sim, "TB_WAVES": waves_path(b, run_dir), "TB_RERUN": rerun_command(seed),
           **(extra_env or {})}
    error = None
    try:
        run_test(b, COCOTB_MODULE, testcase=testcase, seed=seed, test_dir=run_dir,
                 extra_env=env, plusargs=plusargs)
    except SimulationFailed as failed:
        error = failed
    result = read_result(run_dir) if (run_dir / RESULT_FILE).exists() else None
    return DecodeRun(run_dir, result, error)
