"""The run's result file: written at the end of every simulation, passed or failed.

pytest reads it after the simulator exits: per-step counters, tokens, the failure report, timings
and a serving run's numbers. It is written from a ``finally``, so it exists when a test fails."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np
from cocotb.utils import get_sim_time

from model.host.serving import Scheduler
from model.paths import RUNS_ROOT
from verif.kit.failure_point import FailurePoint, point_of, write_point
from verif.runs.spec import ServingSpec

RESULT_FILE = "result.json"
FAILING_IMAGE = "failing_image.npy"  # the memory image of the run that failed, to replay it


@dataclass
class CheckedStep:
    """One decode step the scoreboard compared (only a failing run's last has mismatches)."""

    decode: str
    step: int
    context: int
    token_in: int
    token_out: int
    counters: dict[str, int]
    outputs: list[int]  # the output region's words, as the chip wrote them
    mismatches: int = 0  # differences the scoreboard found in this step (see scoreboard.py)
    # the first request's new key and value rows as the host read them back
    new_rows: list[list[int]] = field(default_factory=list)


@dataclass
class DecodeResult:
    """One finished decode: its spec (with the forced tokens actually used) and its tokens."""

    spec: dict
    tokens: list[int]
    pages_after: list[int | None]  # pages in use once each step has appended and trimmed
    programs_compiled: int
    # words the page-table agent wrote for each step's cached rows (rows, or table and pair)
    host_words: list[int] = field(default_factory=list)
    # each decode check's problems (verif.scoreboard.decode_checks), empty when it held
    verdicts: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class RunRecorder:
    """Collects what a run did; `write` turns it into the result file."""

    run_dir: Path
    test: str = ""
    seed: int = 0
    sim: str = "unknown"
    waves: str = "not recorded"
    rerun: str = ""
    steps: list[CheckedStep] = field(default_factory=list)
    decodes: list[DecodeResult] = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    failure: str | None = None  # the first exception a component raised, as text
    failure_type: str | None = None
    failure_point: FailurePoint | None = None  # where it happened, when its checker located it
    # the simulation time it was recorded: where the waves open without a FailurePoint
    failure_time_ns: float | None = None

    def where(self) -> str:
        """The lines every failure report ends with: how to find and re-run this run."""
        return (f"  seed: {self.seed}  simulator: {self.sim}\n"
                f"  waves: {self.waves}\n"
                f"  re-run with waves: {self.rerun}")

    def record_failure(self, error: BaseException) -> None:
        """Keep the first failure (later ones are usually its consequences) and its point."""
        if self.failure is None:
            self.failure = str(error)
            self.failure_type = type(error).__name__
            self.failure_time_ns = sim_time_ns()
            self.failure_point = point_of(error)
            if self.failure_point is not None:
                self.run_dir.mkdir(parents=True, exist_ok=True)
                write_point(self.run_dir, self.failure_point)

    def keep_image(self, image: np.ndarray) -> Path:
        """Keep the memory image of the run that failed, to replay it on the reference machine."""
        path = self.run_dir / FAILING_IMAGE
        self.run_dir.mkdir(parents=True, exist_ok=True)
        np.save(path, np.asarray(image, dtype=np.uint32))
        return path

    def write(self, status: str) -> Path:
        path = self.run_dir / RESULT_FILE
        self.run_dir.mkdir(parents=True, exist_ok=True)
        body = {
            "test": self.test,
            "status": status,
            "failure": self.failure,
            "failure_type": self.failure_type,
            "failure_point": self.failure_point,
            "failure_time_ns": self.failure_time_ns,
            "steps_checked": sum(step.mismatches == 0 for step in self.steps),
            "steps": self.steps,
            "decodes": self.decodes,
            "sim": self.sim,
            "seed": self.seed,
            "waves": self.waves,
            "rerun": self.rerun,
            **self.extra,
        }
        # one line: json's C encoder runs only without indent (`python -m json.tool` indents)
        path.write_text(json.dumps(body, default=plain))
        return path


def plain(value: Any) -> Any:
    """What json writes for a value it has no rule for: a record's fields (``asdict`` without
    its slow deep copy), anything else as its text."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    return str(value)


def sim_time_ns() -> float | None:
    """The simulation's time now (None outside a simulation: a recorder made by hand)."""
    try:
        return get_sim_time(unit="ns")
    except RuntimeError:
        return None


def read_result(run_dir: Path) -> dict:
    """The result file of a run folder (pytest side)."""
    return json.loads((Path(run_dir) / RESULT_FILE).read_text())


def run_name(result: dict) -> str | None:
    """The name a run is known by: its one decode's, or its serving workload's."""
    if "serving" in result:
        return result["serving"]["spec"]["name"]
    decodes = result.get("decodes", [])
    return decodes[0]["spec"]["name"] if len(decodes) == 1 else None


def newest_results(names: set[str], since: float = 0.0,
                   root: Path | None = None) -> dict[tuple[str, str], dict]:
    """The newest passed result per (simulator, run name) among ``names`` since ``since``."""
    found: dict[tuple[str, str], tuple[float, dict]] = {}
    for path in (root or RUNS_ROOT).rglob(RESULT_FILE):
        mtime = path.stat().st_mtime
        if mtime < since:
            continue
        result = read_result(path.parent)
        name = run_name(result)
        if result.get("status") != "passed" or name not in names:
            continue
        key = (result.get("sim", "?"), name)
        if mtime >= found.get(key, (-1.0, {}))[0]:
            found[key] = (mtime, result)
    return {key: result for key, (_, result) in found.items()}


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
        # the data words the runs moved through the memory port (DMA and block-table words)
        "port_words": sum(r.counters.dma_words + r.counters.pt_words for r in vseq.responses),
        "host_words": sum(vseq.host_words),
        # the closed-form cycles of every request's attention
        "attention_cycles": sum(vseq.attention_cycles),
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
