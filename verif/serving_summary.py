"""What a serving run shows, for its result file and the serving report.

Tokens generated, the chip's cycles as its counters reported them (the sum of `total` over the
batched runs, and of the DMA unit's), tokens generated and request steps run (prompt steps
included) per 1,000 cycles, pages in use, and the scheduler's counts: preemptions, prefix-cache
hits and evictions, and the recompute tax (rows recomputed after a preemption over all rows
computed). The gather mode, the words the page-table agent wrote for the cached rows (rows in
host gather, block tables in chip gather) and every request's generated tokens, so that the
two modes can be compared token for token.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from model.serving import Scheduler
from verif.serving_spec import ServingSpec


def serving_summary(spec: ServingSpec, scheduler: Scheduler, vseq) -> dict[str, Any]:
    """The run's numbers: everything measured, from the RTL counters and the scheduler."""
    stats = scheduler.stats
    tokens = sum(len(f.generated) for f in scheduler.finished.values())
    cycles = sum(r.counters.total for r in vseq.responses)
    pages = vseq.pages_used or [0]
    return {
        "spec": asdict(spec),
        "gather": spec.gather,
        "requests": len(scheduler.finished),
        "tokens_generated": tokens,
        "chip_runs": len(vseq.responses),
        "chip_cycles": cycles,
        "dma_cycles": sum(r.counters.dma for r in vseq.responses),
        "host_words": sum(vseq.host_words),
        "tokens_per_kilocycle": round(1000 * tokens / cycles, 4) if cycles else 0.0,
        "steps_per_kilocycle": round(1000 * stats.rows_computed / cycles, 4) if cycles else 0.0,
        "peak_pages": max(pages),
        "mean_pages": round(sum(pages) / len(pages), 2),
        "pool_pages": spec.n_pages,
        "preemptions": stats.preemptions,
        "prefix_hits": scheduler.cache.stats.hits,
        "prefix_misses": scheduler.cache.stats.misses,
        "evictions": scheduler.table.evictions,
        "rows_computed": stats.rows_computed,
        "rows_recomputed": stats.rows_recomputed,
        "recompute_tax": round(stats.rows_recomputed / stats.rows_computed, 4)
        if stats.rows_computed else 0.0,
        "peak_running": stats.peak_running,
        "generated": {str(rid): f.generated for rid, f in scheduler.finished.items()},
    }
