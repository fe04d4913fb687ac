"""Serving on the RTL: a seeded workload of 24 requests, continuous batching over one pool.

The workload (model.host.workloads.serving_requests) runs with W = 8 over 16 pages of 4 rows,
so that a batch of 8 preempts and evicts, in both gather modes; every batched run is compared
by the scoreboard, the pool is checked every step, and every request's tokens must be host
gather's on the reference machine (Scheduler.run_on_reference).
"""

from __future__ import annotations

import pytest

from model.compiler.gather import GATHER_MODES
from sim.lengths import run_length
from sim.toolchain import SIMULATORS
from verif.runs.launch import serving_job
from verif.runs.plans import (
    SERVING_BATCHES,
    SERVING_REQUESTS,
    SHORT_REQUESTS,
    serving_spec,
)
from verif.runs.spec import ServingSpec

_REFERENCE: dict[tuple, dict[str, list[int]]] = {}


def workload(sim: str, gather: str, batch: int = 8) -> ServingSpec:
    """The workload at batch size ``batch``: 24 requests, 7 on Icarus in make test (they
    still preempt, hit the prefix cache and evict)."""
    return serving_spec(batch, gather, run_length(sim, SERVING_REQUESTS, SHORT_REQUESTS))


def reference_tokens(spec: ServingSpec) -> dict[str, list[int]]:
    """Every request's generated tokens, host gather on the reference machine (one per spec)."""
    key = (spec.batch_size, spec.window, spec.page_size, spec.n_pages, spec.rule,
           spec.n_requests)
    if key not in _REFERENCE:
        finished = spec.scheduler().run_on_reference()
        _REFERENCE[key] = {str(rid): f.generated for rid, f in finished.items()}
    return _REFERENCE[key]


def check_run(result: dict, spec: ServingSpec) -> dict:
    """What every serving run must show: all requests done, every run compared once, the
    tokens host gather's; in chip gather the host wrote block tables, never a row."""
    serving = result["serving"]
    assert serving["requests"] == spec.n_requests and serving["gather"] == spec.gather
    assert result["steps_checked"] == serving["chip_runs"] == result["reference_runs"]
    assert serving["generated"] == reference_tokens(spec)
    covered = result["coverage"]["summary"]
    assert covered["serving.batch_cg.gather_mode"]["covered"] == 1  # this run's mode
    return serving


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=serving_job(workload))
@pytest.mark.parametrize("gather", GATHER_MODES)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_serving_workload(sim, gather, seed, sim_run):
    """B = 8 over 16 pages: every run exact, pool checked every step, preemptions and hits."""
    spec = workload(sim, gather)
    serving = check_run(sim_run.raise_if_failed(), spec)
    assert serving["preemptions"] > 0 and serving["prefix_hits"] > 0 and serving["evictions"] > 0
    covered = sim_run.result["coverage"]["summary"]
    for point in ("preemption", "admission_refused", "prefix_hit", "eviction", "pool_exhausted"):
        assert covered[f"serving.pool_cg.{point}"]["covered"] == 1, point


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.sim_job(launch=serving_job(lambda sim, gather, batch: workload(sim, gather, batch)))
@pytest.mark.parametrize("gather", GATHER_MODES)
@pytest.mark.parametrize("batch", [b for b in SERVING_BATCHES if b != 8],
                         ids=lambda b: f"B{b}")
@pytest.mark.parametrize("sim", ["verilator"])
def test_serving_batch_sweep(sim, batch, gather, seed, sim_run):
    """B = 1, 2, 4 on Verilator (B = 8 is the workload test): the same requests all finish."""
    spec = workload(sim, gather, batch)
    assert check_run(sim_run.raise_if_failed(), spec)["peak_running"] <= batch
