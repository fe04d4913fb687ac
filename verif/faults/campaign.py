"""Running a campaign: the Verilator build with only the fault sites public, the plan split
into chunks, each chunk one simulator process (golden runs once, then every fault), JOBS at a
time on this machine or as tasks on a Dask cluster (the regressions' executor); the records
gathered with the campaign's speed."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from model.chip.isa import ChipConfig
from model.paths import BUILD_ROOT, RUNS_ROOT
from sim.runner import Build, Job, SimulationFailed, build, run_jobs
from verif.faults.items import Fault
from verif.faults.plan import FAULT_PLAN_ENV, plan, write_chunk
from verif.faults.sites import chip_registers, design_defines, verilator_config
from verif.faults.workloads import Workload
from verif.runs.launch import CHIP_TOPLEVEL, HARNESS_DEFINES, VERILATOR_ARGS, chip_sources

COCOTB_MODULE = "verif.tests.faults_uvm"
TESTCASE = "FaultCampaignTest"
# the harness's own `verilator_config` makes the memory's read address public, for AXI faults
AXI_READ_CONFIG = 'public_flat_rw -module "axi_ram" -var "r_addr"\n'


def fault_config(cfg: ChipConfig | None = None, detection: bool = True) -> Path:
    """The Verilator configuration file that makes exactly the fault sites writable."""
    path = BUILD_ROOT / "faults" / f"fault_sites{'' if detection else '-before'}.vlt"
    text = verilator_config(chip_registers(cfg, detection)) + AXI_READ_CONFIG
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


def fault_build(sim: str, cfg: ChipConfig | None = None, detection: bool = True) -> Build:
    """The chip harness as the decodes build it (with or without the parity checks), plus (on
    Verilator) the fault sites public."""
    cfg = cfg or ChipConfig()
    sources = chip_sources() + ([fault_config(cfg, detection)] if sim == "verilator" else [])
    return build(sim, CHIP_TOPLEVEL, sources, parameters=cfg.verilog_parameters(),
                 defines={**HARNESS_DEFINES, **design_defines(detection)}, waves=False,
                 coverage=False,
                 build_args=VERILATOR_ARGS if sim == "verilator" else ())


EXECUTORS = ("local", "dask")
# a campaign's label: the chip without its parity checks (as it was) or with them
LABELS = {"before": False, "after": True}


@dataclass
class CampaignRun:
    records: list[dict]
    wall_s: float
    cpu_s: float  # the simulator processes' CPU time
    processes: int
    executor: str = "local"


def run_campaign(sim: str, seed: int, count: int, outside: int, jobs: int = 2,
                 chunks: int | None = None, root: Path | None = None, detection: bool = True,
                 executor: str = "local", scheduler: str | None = None) -> CampaignRun:
    """A seeded campaign (plan.plan's strata) in ``chunks`` processes, ``jobs`` at a time, on
    the chip with its parity checks (``detection``) or without."""
    runs, faults = plan(seed, count, outside, detection=detection)
    name = f"seed{seed}-n{count}-o{outside}{'' if detection else '-before'}"
    root = Path(root or RUNS_ROOT / sim / "faults" / name).resolve()
    return run_faults(sim, runs, faults, seed, jobs, chunks, root, detection, executor,
                      scheduler)


def run_faults(sim: str, runs: list[Workload], faults: list[Fault], seed: int, jobs: int,
               chunks: int | None, root: Path, detection: bool = True, executor: str = "local",
               scheduler: str | None = None) -> CampaignRun:
    """``faults`` over ``runs``, split round-robin into ``chunks`` simulator processes: ``jobs``
    threads here, or tasks on a Dask cluster (``scheduler``, else a local one of ``jobs``
    workers)."""
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
    chunks = chunks or jobs
    task = partial(run_chunk, sim, detection, runs=runs, seed=seed)
    parts = [(root / f"chunk{i}", faults[i::chunks]) for i in range(chunks)]
    started = time.perf_counter()
    if executor == "dask":
        from verif.regress.dask_executor import cluster_client  # only on Dask
        with cluster_client(scheduler, jobs) as client:
            results = client.gather(client.map(lambda part: task(*part), parts))
    else:
        fault_build(sim, detection=detection)  # once, before the threads share it
        with ThreadPoolExecutor(jobs) as pool:
            results = list(pool.map(lambda part: task(*part), parts))
    records = [record for chunk_records, _ in results for record in chunk_records]
    return CampaignRun(records, time.perf_counter() - started,
                       sum(cpu for _, cpu in results), chunks, executor)


def run_chunk(sim: str, detection: bool, run_dir: Path, faults: list[Fault], *,
              runs: list[Workload], seed: int) -> tuple[list[dict], float]:
    """One chunk in one simulator process (its build made or found here, so a Dask worker
    needs only the repository): its records and the process's CPU seconds."""
    b = fault_build(sim, detection=detection)
    run_dir.mkdir(parents=True, exist_ok=True)
    chunk = run_dir / "plan.json"
    write_chunk(chunk, runs, faults, detection)
    env = {FAULT_PLAN_ENV: str(chunk), "DECODE_PLAN": "", "SERVING_SPEC": "", "PROGRAMS": "0",
           "RANDOM_SEED": str(seed), "TB_SIM": b.sim, "TB_WAVES": "not recorded",
           "TB_RERUN": "python -m scripts.faults"}
    try:
        run_jobs(b, COCOTB_MODULE, [Job(TESTCASE, TESTCASE, str(run_dir), env)], seed)
    except SimulationFailed as failed:
        raise SimulationFailed(f"fault campaign chunk {run_dir} failed:\n{failed}") from None
    result = json.loads((run_dir / "faults.json").read_text())
    return ([{**record, "kind": runs[record["workload"]].kind} for record in result["records"]],
            result["cpu_s"])
