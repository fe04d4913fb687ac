"""Benchmark: the cost of one decode step against its context and against the pool's size.

Exact cycles and wall and CPU ms per step on the reference machine, Icarus and Verilator (the
replay testbench's marginal cost per record), with the growth fitted: linear in the context,
flat in the pool (README, "How the scaling benchmark measures"). ``python -m scripts.bench scaling``
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from model.chip import machine
from model.chip.geometry import pages_for
from model.chip.isa import ChipConfig
from model.compiler.layout import max_context
from model.host.decode import StepRecord, decode
from model.kv.paged import PageTable
from model.kv.step_rule import plan_step, trim_point
from model.lm.tiny_lm import TinyLM, make_model
from model.paths import OUT, PLOTS
from sim.replay import Record, build_replay, run_replay, write_records
from sim.toolchain import SIMULATORS
from verif.bench.testbench import step_record
from verif.report.output import save_figure, subplots, text_table, write_json

BENCH_DIR = OUT / "bench_scaling"
PLOT = PLOTS / "bench_scaling.png"
CONTEXT_CFG = ChipConfig()  # the chip every other test runs
CONTEXT_PAGE_SIZE = 4  # the chapter's
POOL_CFG = ChipConfig(ext_words=65536)  # room for 1024 pages of POOL_PAGE_SIZE rows, both pools
POOL_SIZES = (8, 32, 128, 512, 1024)
POOL_PAGE_SIZE = 2
POOL_WINDOW = 8
POOL_STEPS = 12  # the window is full: the steady-state step, context POOL_WINDOW
MACHINE_REPEATS = 20  # half a millisecond each
GATHER_REPEATS = 2000  # host gathers timed per pool size (a few microseconds each)
COPIES = {"icarus": 8, "verilator": 100}  # records per timed replay run (Icarus: ~0.3 s each)
REPLAY_REPEATS = {"icarus": 2, "verilator": 5}  # best of, per timed replay run
ENGINES = ("machine", *SIMULATORS)


@dataclass
class StepCase:
    """One decode step to measure: its chip configuration, memory image and the prediction."""

    label: str  # what varies: "context 16", "pool 128 chip"
    cfg: ChipConfig
    record: Record  # image, outputs checked, the reference machine's result

    @property
    def cycles(self) -> int:
        return self.record.expected.counters.total


@dataclass
class Cost:
    """A step's cost: exact cycles, and milliseconds per engine, of wall time and of CPU time."""

    cycles: int
    ms: dict[str, float] = field(default_factory=dict)  # engine -> wall ms per step
    cpu_ms: dict[str, float] = field(default_factory=dict)  # engine -> CPU ms per step

    def times(self, kind: str) -> dict[str, float]:
        """Engine -> ms per step of ``kind`` "wall" or "cpu"."""
        return self.ms if kind == "wall" else self.cpu_ms


def step_case(label: str, step: StepRecord, cfg: ChipConfig) -> StepCase:
    record = step_record(step, cfg)
    if record.expected.counters.cycles() != step.cycles:
        raise AssertionError(f"{label}: the image does not reproduce the decode's step")
    return StepCase(label, cfg, record)


def context_points(cfg: ChipConfig) -> list[int]:
    """A handful of contexts from 1 to the chip's longest: 1, then eighths of the maximum."""
    longest = max_context(cfg)
    return sorted({1, *(longest * eighth // 8 for eighth in (1, 2, 4, 6, 8))} - {0})


def context_cases(model: TinyLM, contexts: Sequence[int], cfg: ChipConfig) -> list[StepCase]:
    """The steps of one window-less decode whose context is one of ``contexts``."""
    steps = max(contexts)
    run = decode(model, steps, page_size=CONTEXT_PAGE_SIZE,
                 n_pages=pages_for(steps, CONTEXT_PAGE_SIZE), cfg=cfg)
    return [step_case(f"context {n}", run.records[n - 1], cfg) for n in contexts]


def pool_case(model: TinyLM, n_pages: int, gather: str) -> StepCase:
    """The steady-state step of a windowed decode whose pool has ``n_pages`` pages."""
    run = decode(model, POOL_STEPS, window=POOL_WINDOW, page_size=POOL_PAGE_SIZE,
                 n_pages=n_pages, cfg=POOL_CFG, gather=gather)
    return step_case(f"pool {n_pages} {gather}", run.records[-1], POOL_CFG)


@dataclass(frozen=True)
class Timing:
    """Seconds of one action, wall and CPU (with the child processes': the simulators). Other
    processes stretch the wall time; the CPU time shows the growth when the wall time is noisy."""

    wall: float
    cpu: float

    def __sub__(self, other: Timing) -> Timing:
        return Timing(self.wall - other.wall, self.cpu - other.cpu)

    def ms_per(self, count: int) -> Timing:
        return Timing(1000 * self.wall / count, 1000 * self.cpu / count)


def _cpu_now() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def best_of(action: Callable[[], object], repeats: int) -> Timing:
    """The fastest of ``repeats`` runs, wall and CPU apart: the least disturbed by others."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), _cpu_now()
        action()
        walls.append(time.perf_counter() - wall)
        cpus.append(_cpu_now() - cpu)
    return Timing(min(walls), min(cpus))


def machine_ms(case: StepCase) -> Timing:
    return best_of(lambda: machine.run(case.record.image, case.cfg), MACHINE_REPEATS).ms_per(1)


def replay_seconds(sim: str, case: StepCase, copies: int, folder: Path) -> Timing:
    """Best of REPLAY_REPEATS[sim] replays of ``copies`` copies of the step; each must pass."""
    path = folder / sim / f"{case.label.replace(' ', '_')}_x{copies}.hex"
    write_records(path, [case.record] * copies)

    def run() -> None:
        result = run_replay(sim, path, case.cfg)
        if not result.passed:
            raise SystemExit(f"{sim} replay of {case.label} failed: {result.summary}")

    return best_of(run, REPLAY_REPEATS[sim])


def replay_ms(sim: str, case: StepCase, folder: Path) -> Timing:
    """Marginal ms per record: COPIES[sim] copies of the step minus one copy."""
    extra = replay_seconds(sim, case, COPIES[sim], folder) - replay_seconds(sim, case, 1, folder)
    return extra.ms_per(COPIES[sim] - 1)


def measure(case: StepCase, sims: Sequence[str] = SIMULATORS) -> Cost:
    """Cycles, and ms per step on the reference machine and on each of ``sims``."""
    timings = {"machine": machine_ms(case)}
    timings |= {sim: replay_ms(sim, case, BENCH_DIR) for sim in sims}
    return Cost(case.cycles, {engine: timing.wall for engine, timing in timings.items()},
                {engine: timing.cpu for engine, timing in timings.items()})


def host_gather_us(n_pages: int) -> float:
    """Microseconds of host gather's PageTable.rows at the steady state, on ``n_pages`` pages."""
    table = PageTable(n_pages, POOL_PAGE_SIZE, (2, 8), np.int8)
    table.new(0)
    for step in range(1, POOL_STEPS + 1):
        table.append(0, np.full((2, 8), step, dtype=np.int8))
        table.trim(0, trim_point(step, POOL_WINDOW))
    plan = plan_step(POOL_STEPS + 1, POOL_WINDOW)
    return 1e6 * best_of(lambda: table.rows(0, plan.lo, plan.hi), GATHER_REPEATS).wall


@dataclass
class LinearFit:
    """y = a + b * x, and R^2 (1: every point on the line)."""

    a: float
    b: float
    r2: float


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> LinearFit:
    """By least squares; R^2 = 1 - residual / total sum of squares (1 when y does not vary)."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    b, a = np.polyfit(x, y, 1)
    residual = float(((y - (a + b * x)) ** 2).sum())
    total = float(((y - y.mean()) ** 2).sum())
    return LinearFit(float(a), float(b), 1.0 if total == 0 else 1 - residual / total)


def spread(values: Sequence[float]) -> float:
    """max / min: 1.0 is perfectly flat."""
    return max(values) / min(values)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Right-aligned columns; floats with 3 significant digits."""
    return text_table(headers, [[f"{value:.3g}" if isinstance(value, float) else value
                                 for value in row] for row in rows])


def context_statement(contexts: Sequence[int], costs: Sequence[Cost]) -> str:
    fit = linear_fit(contexts, [c.cycles for c in costs])
    return (f"linear: cycles = {fit.a:.0f} + {fit.b:.2f} * context, R^2 = {fit.r2:.5f} "
            f"(contexts {contexts[0]}..{contexts[-1]})")


def time_statement(contexts: Sequence[int], costs: Sequence[Cost], kind: str) -> str:
    """Each engine's ms per step against context: a simulator follows the cycles, the reference
    machine (numpy per instruction, not per cycle) hardly."""
    fits = {engine: linear_fit(contexts, [c.times(kind)[engine] for c in costs])
            for engine in costs[0].ms}
    return f"{kind} ms per step: " + "; ".join(
        f"{engine} {fit.a:.3g} + {fit.b:.3g} * context (R^2 {fit.r2:.2f})"
        for engine, fit in fits.items())


def pool_statement(costs: Sequence[Cost], what: str) -> str:
    parts = [f"cycles {spread([c.cycles for c in costs]):.3f}"]
    for kind in ("wall", "cpu"):
        parts.append(f"{kind} ms " + ", ".join(
            f"{engine} {spread([c.times(kind)[engine] for c in costs]):.2f}"
            for engine in costs[0].ms))
    return f"flat ({what}): max/min = " + "; ".join(parts)


@dataclass
class Sweeps:
    """Everything measured: the context sweep, the pool sweep per gather mode, host gathers."""

    contexts: list[int]
    context_costs: list[Cost]
    pool_costs: dict[str, list[Cost]]  # gather mode -> one Cost per POOL_SIZES
    gather_us: list[float]  # host gather's PageTable.rows per POOL_SIZES


def run_sweeps(model: TinyLM) -> Sweeps:
    """Every case; host gather's pool steps on the machine only (its image does not hold the
    pool: the simulators would run the same record at every size)."""
    for sim in SIMULATORS:  # builds first, so no timed run pays for one
        for cfg in (CONTEXT_CFG, POOL_CFG):
            build_replay(sim, cfg)
    contexts = context_points(CONTEXT_CFG)
    context_costs = [measure(case) for case in context_cases(model, contexts, CONTEXT_CFG)]
    pool_costs = {"chip": [measure(pool_case(model, n, "chip")) for n in POOL_SIZES],
                  "host": [measure(pool_case(model, n, "host"), sims=()) for n in POOL_SIZES]}
    return Sweeps(contexts, context_costs, pool_costs, [host_gather_us(n) for n in POOL_SIZES])


def context_table(sweeps: Sweeps) -> str:
    headers = ["context", "cycles", *(f"{engine} ms" for engine in ENGINES),
               *(f"{engine} cpu ms" for engine in ENGINES)]
    rows = [[n, c.cycles, *(c.ms[e] for e in ENGINES), *(c.cpu_ms[e] for e in ENGINES)]
            for n, c in zip(sweeps.contexts, sweeps.context_costs, strict=True)]
    return format_table(headers, rows)


def pool_table(sweeps: Sweeps) -> str:
    chip, host = sweeps.pool_costs["chip"], sweeps.pool_costs["host"]
    headers = ["pages", "chip-gather cycles", *(f"{e} ms" for e in ENGINES),
               *(f"{e} cpu ms" for e in ENGINES), "host-gather cycles", "machine ms",
               "PageTable.rows us"]
    rows = [[n, c.cycles, *(c.ms[e] for e in ENGINES), *(c.cpu_ms[e] for e in ENGINES),
             h.cycles, h.ms["machine"], us]
            for n, c, h, us in zip(POOL_SIZES, chip, host, sweeps.gather_us, strict=True)]
    return format_table(headers, rows)


def statements(sweeps: Sweeps) -> list[str]:
    contexts, costs = sweeps.contexts, sweeps.context_costs
    return [context_statement(contexts, costs),
            time_statement(contexts, costs, "wall"),
            time_statement(contexts, costs, "cpu"),
            pool_statement(sweeps.pool_costs["chip"], "chip gather"),
            pool_statement(sweeps.pool_costs["host"], "host gather") +
            f"; PageTable.rows {spread(sweeps.gather_us):.2f}"]


def plot(sweeps: Sweeps, path: Path) -> Path:
    """Cycles and ms per step, against context (with the fitted line) and pool size."""
    figure, axes = subplots(2, 2, figsize=(10, 7))
    contexts, costs = sweeps.contexts, sweeps.context_costs
    fit = linear_fit(contexts, [c.cycles for c in costs])
    axes[0][0].plot(contexts, [c.cycles for c in costs], "o", label="measured")
    axes[0][0].plot(contexts, [fit.a + fit.b * n for n in contexts], "-",
                    label=f"{fit.a:.0f} + {fit.b:.1f} n, R^2 {fit.r2:.4f}")
    axes[0][0].set(xlabel="context (tokens)", ylabel="cycles per step", title="against context")
    for mode, pool_costs in sweeps.pool_costs.items():
        axes[0][1].plot(POOL_SIZES, [c.cycles for c in pool_costs], "o-",
                        label=f"{mode} gather")
    axes[0][1].set(xscale="log", xlabel="pool size (pages)", ylabel="cycles per step",
                   title=f"against pool size (context {POOL_WINDOW})")
    for index, engine in enumerate(ENGINES):  # wall solid, CPU dashed, one colour per engine
        for kind, style in (("wall", "o-"), ("cpu", "x--")):
            axes[1][0].plot(contexts, [c.times(kind)[engine] for c in costs], style,
                            color=f"C{index}", label=f"{engine} {kind}")
            axes[1][1].plot(POOL_SIZES, [c.times(kind)[engine] for c in sweeps.pool_costs["chip"]],
                            style, color=f"C{index}", label=f"{engine} {kind}, chip gather")
    axes[1][0].set(yscale="log", xlabel="context (tokens)", ylabel="ms per step")
    axes[1][1].set(xscale="log", yscale="log", xlabel="pool size (pages)", ylabel="ms per step")
    for axis in axes.flat:
        if axis.get_yscale() == "linear":  # cycles from 0, with room above the points
            axis.set_ylim(0, 1.1 * axis.get_ylim()[1])
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    return save_figure(figure, path)


def main() -> None:
    started = time.perf_counter()
    sweeps = run_sweeps(make_model("structured"))
    print(f"cost per decode step against context (host gather, no window; {ENGINES[0]} = the "
          f"reference machine, simulators = replay testbench, marginal per step)")
    print(context_table(sweeps))
    print(f"\ncost per decode step against pool size (window {POOL_WINDOW}, pages of "
          f"{POOL_PAGE_SIZE} rows, steady state: context {POOL_WINDOW}; EXT_WORDS "
          f"{POOL_CFG.ext_words})")
    print(pool_table(sweeps))
    print("\n" + "\n".join(statements(sweeps)))
    data = {"contexts": sweeps.contexts,
            "context_costs": [asdict(c) for c in sweeps.context_costs],
            "context_fit": asdict(linear_fit(sweeps.contexts,
                                             [c.cycles for c in sweeps.context_costs])),
            "pool_sizes": list(POOL_SIZES),
            "pool_costs": {mode: [asdict(c) for c in costs]
                           for mode, costs in sweeps.pool_costs.items()},
            "host_gather_us": sweeps.gather_us,
            "statements": statements(sweeps),
            "seconds": time.perf_counter() - started}
    print(f"wrote {write_json('bench_scaling.json', data)} and {plot(sweeps, PLOT)} "
          f"({data['seconds']:.0f} s)")
