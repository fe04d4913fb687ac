"""Benchmark: the pyuvm decode environment against the plain-Verilog replay testbench.

For each simulator, the chapter's three decodes (structured model, 32 steps, W = None, 8, 4:
96 steps) run once in the cocotb/pyuvm environment (every step driven, observed, predicted,
compared, covered), and the same 96 programs and memory images run in hw/tb/replay_tb.v, which
compares memory and counters in Verilog with no Python at run time. Reported, from one run:

* wall time per decode step in each testbench, in steady state: the environment's own timer
  around its virtual sequence, and the replay's marginal cost per record (all records minus
  one record, so process start-up and builds cancel out of both);
* the share of the environment's decode time spent in Python (driver, monitor, scoreboard,
  page-table agent, coverage: timed sections that never await);
* the ratio environment / replay per step, and for the whole process as a user sees it;
* the part of the environment's per-step time that is the host compiling each decode's programs
  (calibration and one program per context size, done by every DecodeSeq inside the
  environment's timer; the replay's programs are compiled before it starts), timed here in this
  process the way the environment does it (verif.env.decode_spec.DecodeSpec.programs: the
  calibration comes from its cache in build/, which the environment's run has just filled), and the
  ratio without it.

Run from the repository root: ``python -m scripts.bench testbench`` (about a minute; builds first);
``--sim verilator`` (or ``icarus``) measures one simulator only. Writes ``out/bench_tb.json``
(with ``--sim``, ``out/bench_tb_<sim>.json``, so a partial run never replaces the full table).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass

from model import machine
from model.host import decode
from model.isa import ChipConfig
from model.paths import OUT
from model.step_rule import context_size
from model.tiny_lm import make_model
from sim.replay import Record, build_replay, run_replay, write_records
from sim.toolchain import SIMULATORS
from verif.env.launch import chip_build, run_decode
from verif.env.plans import CHAPTER_WINDOWS, chapter_spec
from verif.report.output import write_json

BENCH_DIR = OUT / "bench_tb"
PLAN = [chapter_spec(window) for window in CHAPTER_WINDOWS]


@dataclass
class Row:
    """One simulator's measurements."""

    sim: str
    steps: int
    env_process_s: float  # the cocotb run as a user waits for it (start-up included)
    env_step_ms: float  # steady state, the environment's own timer
    python_share: float  # of the environment's decode time
    replay_process_s: float
    replay_step_ms: float  # marginal cost per record
    python_s: dict
    compile_step_ms: float = 0.0  # of env_step_ms: the host's program compile, per step

    @property
    def ratio_step(self) -> float:
        return self.env_step_ms / self.replay_step_ms

    @property
    def ratio_step_without_compile(self) -> float:
        return (self.env_step_ms - self.compile_step_ms) / self.replay_step_ms

    @property
    def ratio_process(self) -> float:
        return self.env_process_s / self.replay_process_s


def replay_records() -> list[Record]:
    """The plan's steps as replay records: image, output region, the machine's result."""
    cfg, records = ChipConfig(), []
    for spec in PLAN:
        model = make_model(spec.model, spec.model_seed)
        run = decode(model, spec.steps, spec.start, spec.window, page_size=spec.page_size)
        for record in run.records:
            image = record.inputs.image()
            layout = record.inputs.program.layout
            records.append(Record(image, [(layout.logits, layout.end - layout.logits)],
                                  machine.run(image, cfg)))
    return records


def time_replay(sim: str, records: list[Record]) -> tuple[float, float]:
    """(whole run seconds, marginal seconds per record) of the replay testbench."""
    build_replay(sim)
    timings = []
    for name, subset in (("one", records[:1]), ("all", records)):
        path = BENCH_DIR / sim / f"replay_{name}.hex"
        write_records(path, subset)
        result = run_replay(sim, path)
        if not result.passed:
            raise SystemExit(f"{sim} replay failed: {result.summary}")
        timings.append(result.seconds)
    return timings[1], (timings[1] - timings[0]) / (len(records) - 1)


def time_environment(sim: str) -> tuple[float, dict]:
    """(whole run seconds, result file) of the pyuvm environment on the plan."""
    build = chip_build(sim)
    started = time.perf_counter()
    run = run_decode(build, "PlanDecodeTest", PLAN, seed=1, run_dir=BENCH_DIR / sim / "env")
    seconds = time.perf_counter() - started
    return seconds, run.raise_if_failed()


def compile_seconds() -> float:
    """The plan's host compile (calibration, one program per context size), as the env does it."""
    started = time.perf_counter()
    for spec in PLAN:
        programs = spec.programs()
        for step in range(1, spec.steps + 1):
            programs.get(context_size(step, spec.window))
    return time.perf_counter() - started


def measure(sim: str, records: list[Record]) -> Row:
    env_s, result = time_environment(sim)
    replay_s, replay_step = time_replay(sim, records)
    timing = result["timing"]
    steps = result["steps_checked"]
    return Row(sim, steps, env_s, 1000 * timing["decode_s"] / steps,
               timing["python_total_s"] / timing["decode_s"], replay_s, 1000 * replay_step,
               timing["python_s"], 1000 * compile_seconds() / steps)


def print_table(rows: list[Row]) -> None:
    print(f"\n{'simulator':<10} {'steps':>5} {'env ms/step':>12} {'Python share':>13} "
          f"{'replay ms/step':>15} {'ratio/step':>11} {'env run s':>10} {'replay run s':>13} "
          f"{'ratio/run':>10} {'compile ms/step':>16} {'ratio w/o compile':>18}")
    for r in rows:
        print(f"{r.sim:<10} {r.steps:>5} {r.env_step_ms:>12.2f} {100 * r.python_share:>12.1f}% "
              f"{r.replay_step_ms:>15.2f} {r.ratio_step:>11.2f} {r.env_process_s:>10.2f} "
              f"{r.replay_process_s:>13.2f} {r.ratio_process:>10.2f} {r.compile_step_ms:>16.2f} "
              f"{r.ratio_step_without_compile:>18.2f}")
    print("\nPython time by component (seconds over the whole decode):")
    for r in rows:
        parts = ", ".join(f"{name} {seconds:.3f}" for name, seconds in r.python_s.items())
        print(f"  {r.sim:<10} {parts}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim", choices=SIMULATORS, action="append",
                        help="measure only this simulator (repeatable; default: all)")
    args = parser.parse_args(argv)
    sims = args.sim or list(SIMULATORS)
    records = replay_records()
    rows = [measure(sim, records) for sim in sims]
    print_table(rows)
    name = "bench_tb.json" if args.sim is None else f"bench_tb_{'_'.join(sims)}.json"
    path = write_json(name, [{**asdict(r), "ratio_step": r.ratio_step,
                                         "ratio_step_without_compile":
                                             r.ratio_step_without_compile,
                                         "ratio_process": r.ratio_process} for r in rows])
    print(f"\nwrote {path}")
    return 0
