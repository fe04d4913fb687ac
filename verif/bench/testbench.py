"""Benchmark: the pyuvm decode environment against the plain-Verilog replay testbench.

The chapter's three decodes per simulator, in the environment and replayed by hw/tb/replay_tb.v:
per step, per test alone and in a shared process, Python's share, and the floor (the BFM alone),
each the fastest of REPEATS runs. ``python -m scripts.bench testbench [-- --sim verilator]``
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass

from model.chip import machine
from model.chip.isa import ChipConfig
from model.host.decode import StepRecord, decode
from model.kv.step_rule import context_size
from model.lm.tiny_lm import make_model
from model.paths import OUT
from sim.replay import Record, build_replay, run_replay, write_records
from sim.toolchain import SIMULATORS
from verif.bench.chip import timed
from verif.report.output import text_table, write_json
from verif.runs.launch import chip_build, decode_launch, run_launches
from verif.runs.plans import CHAPTER_WINDOWS, chapter_spec
from verif.runs.spec import DecodeSpec

BENCH_DIR = OUT / "bench_tb"
PLAN = [chapter_spec(window) for window in CHAPTER_WINDOWS]
ALONE = chapter_spec(8)  # the decode of the one-test process
# Verilator's runs are short (a replay of the plan: 0.1 s), so the machine's other work shows:
# each is repeated, and the replay that gives the cost per record runs the records several times.
REPEATS = {"icarus": 1, "verilator": 3}  # runs of each measurement; the fastest counts
REPLAY_COPIES = {"icarus": 1, "verilator": 4}  # the plan's records, replayed this many times


@dataclass
class Row:
    """One simulator's measurements, in seconds unless named otherwise."""

    sim: str
    steps: int
    env_step_ms: float  # steady state, the environment's own timer
    replay_step_ms: float  # marginal cost per record
    env_one_s: float  # one test in its own process (start-up included)
    replay_one_s: float
    env_shared_s: float  # per test, three tests in one process
    replay_shared_s: float
    python_share: float  # of the environment's decode time
    python_s: dict
    compile_step_ms: float = 0.0  # of env_step_ms: the host's program compile, per step
    floor_step_ms: float = 0.0  # KitFloorTest: the BFM alone, per record
    predict_step_ms: float = 0.0  # the reference machine's run of a record

    @property
    def ratios(self) -> dict[str, float]:
        """The environment's times (and the floor's) over the replay's."""
        replay = self.replay_step_ms
        return {"ratio_step": self.env_step_ms / replay,
                "ratio_one": self.env_one_s / self.replay_one_s,
                "ratio_shared": self.env_shared_s / self.replay_shared_s,
                "ratio_step_without_compile": (self.env_step_ms - self.compile_step_ms) / replay,
                "ratio_floor": self.floor_step_ms / replay,
                "ratio_floor_predicted": (self.floor_step_ms + self.predict_step_ms) / replay}

    def as_json(self) -> dict:
        return asdict(self) | self.ratios


def step_record(step: StepRecord, cfg: ChipConfig) -> Record:
    """A decode step as a replay record: its image, output region and the machine's result."""
    image = step.inputs.image()
    layout = step.inputs.program.layout
    return Record(image, [(layout.logits, layout.end - layout.logits)], machine.run(image, cfg))


def replay_records(plan: list[DecodeSpec]) -> list[Record]:
    records = []
    for spec in plan:
        model = make_model(spec.model, spec.model_seed)
        run = decode(model, spec.steps, spec.start, spec.window, page_size=spec.page_size)
        records += [step_record(step, ChipConfig()) for step in run.records]
    return records


def time_replay(sim: str, name: str, records: list[Record]) -> float:
    """Seconds of the fastest of REPEATS replay processes over ``records``."""
    path = BENCH_DIR / sim / f"replay_{name}.hex"
    write_records(path, records)
    seconds = []
    for _ in range(REPEATS[sim]):
        result = run_replay(sim, path)
        if not result.passed:
            raise SystemExit(f"{sim} replay failed: {result.summary}")
        seconds.append(result.seconds)
    return min(seconds)


def best_environment(sim: str, plan: list[DecodeSpec], name: str) -> tuple[float, list[dict]]:
    """The fastest of REPEATS runs' seconds, and the result files of the fastest decodes."""
    runs = [time_environment(sim, plan, name) for _ in range(REPEATS[sim])]
    fastest = min(runs, key=lambda run: sum(r["timing"]["decode_s"] for r in run[1]))
    return min(seconds for seconds, _ in runs), fastest[1]


def time_environment(sim: str, plan: list[DecodeSpec], name: str) -> tuple[float, list[dict]]:
    """(seconds, result files) of one simulator process running each decode as a test."""
    build = chip_build(sim)
    launches = [decode_launch(build, "PlanDecodeTest", [spec], seed=1,
                              run_dir=BENCH_DIR / sim / name / spec.name, node=spec.name)
                for spec in plan]
    started = time.perf_counter()
    runs = run_launches(launches)
    seconds = time.perf_counter() - started
    return seconds, [run.raise_if_failed() for run in runs]


def floor_step_ms(sim: str) -> float:
    """Milliseconds per record of the fastest of REPEATS KitFloorTest runs over the plan."""
    build = chip_build(sim)
    fastest = []
    for _ in range(REPEATS[sim]):
        (run,) = run_launches([decode_launch(build, "KitFloorTest", PLAN, seed=1,
                                             run_dir=BENCH_DIR / sim / "floor", node="floor")])
        timing = run.raise_if_failed()["timing"]
        fastest.append(1000 * timing["decode_s"] / timing["runs"])
    return min(fastest)


def predict_step_ms(records: list[Record]) -> float:
    """Milliseconds per record of the reference machine's run, the fastest of three passes."""
    cfg = ChipConfig()
    fastest = min(timed(lambda: [machine.run(r.image, cfg) for r in records]) for _ in range(3))
    return 1000 * fastest / len(records)


def compile_seconds() -> float:
    """The plan's host compile (calibration, one program per context size), as the env does it."""
    started = time.perf_counter()
    for spec in PLAN:
        programs = spec.programs()
        for step in range(1, spec.steps + 1):
            programs.get(context_size(step, spec.window))
    return time.perf_counter() - started


def measure(sim: str, records: list[Record], alone: list[Record]) -> Row:
    build_replay(sim)
    chip_build(sim)
    env_one, _ = best_environment(sim, [ALONE], "one")
    env_shared, results = best_environment(sim, PLAN, "shared")
    replay_one = time_replay(sim, "one", alone)
    replay_all = time_replay(sim, "all", records)
    copies = REPLAY_COPIES[sim]
    replay_long = replay_all if copies == 1 else time_replay(sim, "long", records * copies)
    steps = sum(r["steps_checked"] for r in results)
    decode_s = sum(r["timing"]["decode_s"] for r in results)
    python_s: dict[str, float] = {}
    for result in results:
        for part, seconds in result["timing"]["python_s"].items():
            python_s[part] = round(python_s.get(part, 0.0) + seconds, 4)
    replay_step = (replay_long - replay_one) / (copies * len(records) - len(alone))
    return Row(sim, steps, 1000 * decode_s / steps, 1000 * replay_step, env_one, replay_one,
               env_shared / len(PLAN), replay_all / len(PLAN),
               sum(r["timing"]["python_total_s"] for r in results) / decode_s, python_s,
               1000 * compile_seconds() / steps, floor_step_ms(sim), predict_step_ms(records))


def print_table(rows: list[Row]) -> None:
    print("\nper step (ms), one test in its own process (s), per test in a shared process (s):")
    print(text_table(["simulator", *(f"{what} {who}" for what in ("step", "own", "shared")
                                     for who in ("env", "replay", "ratio"))],
                     [[r.sim, *(f"{value:.2f}{unit}" for value, unit in (
                         (r.env_step_ms, ""), (r.replay_step_ms, ""), (r.ratios["ratio_step"], "x"),
                         (r.env_one_s, ""), (r.replay_one_s, ""), (r.ratios["ratio_one"], "x"),
                         (r.env_shared_s, ""), (r.replay_shared_s, ""),
                         (r.ratios["ratio_shared"], "x")))]
                      for r in rows], left=(0,)))
    print("\nPython in the environment's decode time, and per step the host's program compile:")
    for r in rows:
        parts = ", ".join(f"{name} {1000 * seconds / r.steps:.2f}"
                          for name, seconds in r.python_s.items())
        print(f"  {r.sim:<10} {100 * r.python_share:.1f}% (ms per step: {parts}); compile "
              f"{r.compile_step_ms:.2f} ms/step, ratio per step without it "
              f"{r.ratios['ratio_step_without_compile']:.2f}x")
    print("\nThe floor per step: the BFM alone (KitFloorTest: load, run, read; no pyuvm, no "
          "check), and with the reference machine's one prediction per step:")
    for r in rows:
        print(f"  {r.sim:<10} floor {r.floor_step_ms:.2f} ms, {r.ratios['ratio_floor']:.2f}x the "
              f"replay; prediction {r.predict_step_ms:.2f} ms; floor and prediction "
              f"{r.ratios['ratio_floor_predicted']:.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim", choices=SIMULATORS, action="append",
                        help="measure only this simulator (repeatable; default: all)")
    args = parser.parse_args(argv)
    sims = args.sim or list(SIMULATORS)
    records, alone = replay_records(PLAN), replay_records([ALONE])
    rows = [measure(sim, records, alone) for sim in sims]
    print_table(rows)
    name = "bench_tb.json" if args.sim is None else f"bench_tb_{'_'.join(sims)}.json"
    path = write_json(name, [row.as_json() for row in rows])
    print(f"\nwrote {path}")
    return 0
