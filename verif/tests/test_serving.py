"""Serving on the RTL: a seeded workload of 24 requests, continuous batching over one pool.

The workload (model.workloads.serving_requests: example B's lengths scaled to the tiny model,
two shared system prompts, staggered arrivals) runs with W = 8 through one page-table agent
(the scheduler of model.serving: admission, preemption, prefix cache) and one chip agent; the
scoreboard compares every batched run with its one prediction, the agent checks the pool after
every step (verif/serving_pool.py). A pool of 16 pages of 4 rows makes a batch of 8 preempt and
evict. The batch sweep (Verilator) measures tokens per 1,000 cycles on the RTL counters.
"""

from __future__ import annotations

import pytest

from sim.toolchain import SIMULATORS
from verif.launch import chip_build, run_serving
from verif.plans import SERVING_BATCHES, serving_spec


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_serving_workload(sim, seed):
    """B = 8 over 16 pages: every run exact, pool checked every step, preemptions and hits."""
    result = run_serving(chip_build(sim), serving_spec(8), seed).raise_if_failed()
    serving = result["serving"]
    assert serving["requests"] == 24
    assert result["steps_checked"] == serving["chip_runs"] == result["reference_runs"]
    assert serving["preemptions"] > 0 and serving["prefix_hits"] > 0 and serving["evictions"] > 0
    covered = result["coverage"]["summary"]
    for point in ("preemption", "admission_refused", "prefix_hit", "eviction", "pool_exhausted"):
        assert covered[f"serving.pool_cg.{point}"]["covered"] == 1, point


@pytest.mark.sim
@pytest.mark.timeout(900)
@pytest.mark.parametrize("batch", [b for b in SERVING_BATCHES if b != 8],
                         ids=lambda b: f"B{b}")
def test_serving_batch_sweep(batch, seed):
    """B = 1, 2, 4 on Verilator (B = 8 is the workload test): the same requests all finish."""
    result = run_serving(chip_build("verilator"), serving_spec(batch), seed).raise_if_failed()
    serving = result["serving"]
    assert serving["requests"] == 24 and serving["peak_running"] <= batch
    assert result["steps_checked"] == serving["chip_runs"] == result["reference_runs"]
