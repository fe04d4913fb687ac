"""`make run`, the main job: the chapter's whole check on both simulators, and its report.

Timed stages, a failing one not stopping the later ones; the mutation runs alongside them.

    python -m scripts.main_job [--jobs 2] [--started EPOCH_SECONDS (when make run began)]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from model.paths import PLOTS, relative
from sim.lengths import CHAPTER_FLOW, FULL_LENGTH_ENV
from sim.mem_profile import PROFILES
from sim.toolchain import SIMULATORS
from verif.mutation.stage_runner import StageProcess
from verif.regress.regress import OUT, junit_counts, run_pytest, session_runs, write_coverage_report
from verif.regress.run_folders import fresh
from verif.report import chapter as chapter_report
from verif.report import example_a, example_b, exercises, serving, trained, trained_decodes
from verif.report import gather as gather_report
from verif.report.output import markdown_table, text_table
from verif.runs.launch import chip_build
from verif.runs.plans import CHAPTER_WINDOWS
from verif.testplan import plan as testplan

CHAPTER_SUITE = "chapter"
JUNIT = OUT / "junit" / "run.xml"
REPORT = OUT / "report.md"
REGRESS_JSON = OUT / "regress.json"
LIGHT = PROFILES["light"].name  # the memory profile make run's decodes also run under
RTL_MUTANT_SAMPLE = 6  # RTL mutants in make run (make mutants runs them all)
MUTATION_NICENESS = 10  # the mutation runs yield the cores to the decodes
MUTANT_SAMPLE_OUT = OUT / "mutants_sample"
STAGE_HEADER = ["stage", "result", "seconds", "note"]


@dataclass
class Stage:
    name: str
    ok: bool
    seconds: float
    note: str = ""


def timed(name: str, work: Callable[[], tuple[bool, str]]) -> Stage:
    """Run a stage; an exception fails it (and is shown) but does not stop the job."""
    print(f"\n==== {name}", flush=True)
    started = time.perf_counter()
    try:
        ok, note = work()
    except Exception as error:  # a stage's crash is its failure, reported below
        ok, note = False, f"{type(error).__name__}: {error}"
        print(f"stage failed: {note}", flush=True)
    return Stage(name, ok, time.perf_counter() - started, note)


def in_process(work: Callable[[], object]) -> Callable[[], tuple[bool, str]]:
    """A stage that calls ``work`` here: it passes unless it raises."""
    def stage() -> tuple[bool, str]:
        work()
        return True, "done"

    return stage


def build_simulators() -> tuple[bool, str]:
    with ThreadPoolExecutor(len(SIMULATORS)) as pool:
        builds = list(pool.map(chip_build, SIMULATORS))
    return True, "ready: " + ", ".join(b.sim for b in builds)


def checks_and_decodes(jobs: int) -> tuple[bool, str]:
    status, _ = run_pytest(CHAPTER_SUITE, 1, jobs, JUNIT)
    software = junit_counts(JUNIT, "model.tests")
    decodes = junit_counts(JUNIT, "verif.tests")
    return status == 0, f"software checks {software.line()}; decodes {decodes.line()}"


def host_verdict(status: str, started: float) -> tuple[bool, str]:
    """The host's mutation run's verdict, from the mutate.json it wrote (not an older one)."""
    path = OUT / "mutate.json"
    if not fresh(path, started):
        return False, f"host: {status}, no new {relative(path)}"
    mutants = json.loads(path.read_text())["mutants"]
    survivors = [m["description"] for m in mutants if not m["caught"]]
    caught = f"host: {len(mutants) - len(survivors)} of {len(mutants)} mutants caught"
    return not survivors, caught + (f"; SURVIVED: {'; '.join(survivors)}" if survivors else "")


def rtl_sample_verdict(status: str, started: float) -> tuple[bool, str, str]:
    """The RTL sample's verdict and its Markdown, from the files it wrote (not older ones)."""
    path = MUTANT_SAMPLE_OUT / "mutants.json"
    if not fresh(path, started):
        return False, f"RTL sample: {status}, no new {relative(path)}", ""
    result = json.loads(path.read_text())
    note = (f"RTL sample: {result['caught']} of {result['scored']} caught "
            f"({len(result['mutants'])} mutants, {relative(path)})")
    return True, note, (MUTANT_SAMPLE_OUT / "mutants.md").read_text()


@dataclass
class MutationStage:
    """The host's mutants and a seeded sample of the RTL mutants (in a folder of its own, never
    over ``make mutants``'s), started after the builds at a lower priority: they share nothing
    with the other stages and take the cores those leave idle."""

    text: str = ""  # the sample's Markdown (out/mutants_sample/mutants.md), for the report
    started: float = 0.0
    runs: dict[str, StageProcess] = field(default_factory=dict)

    def start(self) -> None:
        self.started = time.time()
        commands = {"host": ["verif.mutation.host_run"],
                    "RTL sample": ["verif.mutation.rtl_run", "--sample", str(RTL_MUTANT_SAMPLE),
                                   "--out", str(MUTANT_SAMPLE_OUT)]}
        self.runs = {name: StageProcess([sys.executable, "-m", *command],
                                        niceness=MUTATION_NICENESS).start()
                     for name, command in commands.items()}

    def finish(self) -> tuple[bool, str]:
        done = {name: run.finish() for name, run in self.runs.items()}
        for name, finished in done.items():
            print(f"-- {name} mutants\n{finished.output}", end="", flush=True)
        statuses = {name: f"exit status {finished.returncode}" for name, finished in done.items()}
        host_ok, host_note = host_verdict(statuses["host"], self.started)
        rtl_ok, rtl_note, self.text = rtl_sample_verdict(statuses["RTL sample"], self.started)
        codes_ok = all(finished.returncode == 0 for finished in done.values())
        return host_ok and rtl_ok and codes_ok, f"{host_note}; {rtl_note}"

    def ended(self) -> Stage:
        """The stage once both runs are done, timed from their start (overlapping others)."""
        return alongside(timed("mutation runs (host, RTL sample)", self.finish), self.started)


def alongside(stage: Stage, started: float) -> Stage:
    """A stage that ran beside the others: timed from its start, and said so."""
    return replace(stage, seconds=time.time() - started,
                   note=f"{stage.note} (alongside the stages from the pytest stage on)")


@dataclass
class FormalStage:
    """``make formal``'s full proofs (verif.formal.report), in a child process at the mutation
    runs' lower priority: the solver shares nothing with the simulations."""

    text: str = ""  # out/formal.md, for the report
    started: float = 0.0
    run: StageProcess | None = None

    def start(self) -> None:
        self.started = time.time()
        self.run = StageProcess([sys.executable, "-m", "verif.formal.report", "--jobs", "1"],
                                niceness=MUTATION_NICENESS).start()

    def finish(self) -> tuple[bool, str]:
        finished = self.run.finish()
        print(f"-- formal\n{finished.output}", end="", flush=True)
        path = OUT / "formal.md"
        if not fresh(path, self.started):
            return False, f"exit status {finished.returncode}, no new {relative(path)}"
        # its headings one level down, under the report's own
        self.text = "#" + path.read_text().replace("\n#", "\n##").replace(
            "# Formal", "# Formal (make formal)", 1)
        last = finished.output.strip().splitlines()[-2:]
        return finished.returncode == 0, "; ".join(last)

    def ended(self) -> Stage:
        return alongside(timed("formal proofs", self.finish), self.started)


@dataclass
class ReportedStage:
    """A report module's stage (exercises, serving): its checks, and its text for report.md."""

    run_and_write: Callable[[float], tuple[bool, str, str]]  # since -> (ok, note, text)
    since: float
    text: str = ""

    def run(self) -> tuple[bool, str]:
        ok, note, self.text = self.run_and_write(self.since)
        return ok, note


@dataclass
class TrainedStage:
    """The trained model's RTL decodes against the reference host, and its tables: read from
    build/trained_report/, else computed by ``start`` in a child process alongside the decodes
    (at their priority: at the mutation runs' lower one they finished no sooner)."""

    since: float
    text: str = ""  # out/report.md's section
    tables: Future | None = None  # the child's (report, cached), when it computes them

    def start(self) -> None:
        if trained.cache_file().exists():
            return
        pool = ProcessPoolExecutor(1)
        self.tables = pool.submit(trained.cached_trained_report)
        pool.shutdown(wait=False)

    def run(self) -> tuple[bool, str]:
        report, cached = (self.tables.result() if self.tables
                          else trained.cached_trained_report())
        paths = trained.write_outputs(report)
        decodes = trained_decodes.trained_decodes(session_runs(JUNIT, self.since))
        self.text = trained.section(report, trained_decodes.markdown(decodes))
        print(self.text)
        found = trained_decodes.problems(decodes)
        for problem in found:
            print(f"PROBLEM: {problem}")
        verdict = "; ".join(found) or f"{len(decodes)} decodes on the RTL equal the reference's"
        tables = "read from build/trained_report/" if cached else "computed and cached"
        return not found, f"{verdict}; tables {tables}; {relative(paths[0])}"


@dataclass
class Report:
    """The report stage: tables, regress.json, plots, coverage. report.md comes at the end."""

    decodes_since: float
    runs: list[chapter_report.ChapterRun] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    gather_text: str = ""  # host gather against chip gather (verif/report/gather.py)
    profile_rows: list[list[str]] = field(default_factory=list)  # the chapter per memory profile

    def build(self) -> tuple[bool, str]:
        run_dirs = session_runs(JUNIT, self.decodes_since)
        self.runs = chapter_report.collect_runs(run_dirs)
        chip_gather = chapter_report.collect_chip_gather_runs(run_dirs)
        light = [run for run in (chapter_report.collect_runs(run_dirs, LIGHT)
                                 + chapter_report.collect_chip_gather_runs(run_dirs, LIGHT))
                 if run.status != "missing"]
        print(chapter_report.terminal_tables(self.runs))
        self.profile_rows = chapter_report.profile_rows(self.runs + chip_gather, light)
        print("\n== the chapter's decodes per memory profile\n"
              + chapter_report.profile_table(self.profile_rows))
        REGRESS_JSON.write_text(json.dumps(
            chapter_report.regress_json(self.runs + chip_gather + light), indent=1) + "\n")
        self.gather_text = gather_report.report(
            gather_report.model_decodes() + gather_report.rtl_decodes(run_dirs), OUT)
        print("\n" + self.gather_text)
        self.plots = write_plots(self.runs, self.decodes_since)
        coverage = write_coverage_report(run_dirs, self.decodes_since, "make run")
        print(f"\nwrote {relative(REGRESS_JSON)}, {relative(coverage)}, {relative(JUNIT)} and "
              f"{len(self.plots)} plots in {relative(PLOTS)}/")
        failed = [f"{run.sim} {chapter_report.label(run.window)}: {run.status}"
                  for run in self.runs if run.status != "passed" or not run.rule_ok]
        disagreements = [d for w in CHAPTER_WINDOWS
                         if (d := chapter_report.first_disagreement(self.runs, w))]
        profiles = chapter_report.profile_problems(self.profile_rows)
        if failed or disagreements or profiles:
            return False, "; ".join(
                [*(f"decode failed: {f}" for f in failed),
                 *(f"Icarus and Verilator differ: {d}" for d in disagreements), *profiles])
        return True, (f"{len(self.runs)} decodes passed, rule ok; Icarus and Verilator agree "
                      "on every counter and output word of every step")


def example_b_rows(since: float) -> dict:
    """Example B's tables, if this job's example B stage wrote them (not an older run)."""
    path = OUT / "example_b.json"
    return json.loads(path.read_text()) if fresh(path, since) else {}


def write_plots(runs: list[chapter_report.ChapterRun], since: float) -> list[Path]:
    example = example_b_rows(since)
    return [chapter_report.cycles_plot(runs, PLOTS / "cycles_per_step.png"),
            chapter_report.pages_plot(runs, PLOTS / "pages_per_step.png"),
            *(example_b.plots(example, PLOTS) if example else [])]


def testplan_results() -> str:
    """Each testpoint of the testplan, annotated with the outcome of its tests in this run."""
    if not JUNIT.exists():
        return "the pytest stage wrote no JUnit file"
    plan = testplan.load()
    return testplan.results_markdown(testplan.results(plan, testplan.junit_outcomes(JUNIT)))


def stage_rows(stages: list[Stage]) -> list[list[str]]:
    return [[s.name, "ok" if s.ok else "FAILED", f"{s.seconds:.1f}", s.note] for s in stages]


def markdown_report(report: Report, stages: list[Stage], wall: float,
                    exercise_text: str = "", serving_text: str = "",
                    mutation_text: str = "", trained_text: str = "",
                    formal_text: str = "") -> str:
    example = example_b_rows(report.decodes_since)
    sections = [
        "# make run: the chapter's check on Icarus and Verilator",
        f"## Stages (wall time {wall:.1f} s)",
        markdown_table(STAGE_HEADER, stage_rows(stages), left=(0, 1, 3)),
        "## Decodes on the RTL", chapter_report.markdown_tables(report.runs),
        "### The chapter's decodes per memory profile",
        "Ideal first (the chapter's memory); under `light` the memory holds each AXI4 channel "
        "low about 10% of cycles and draws read latencies of 4 .. 16 (sim/mem_profile.py). "
        "`cycles (ideal memory)` is cnt_total - cnt_wait, `= ideal run`: equal to the ideal "
        "run's cycles at every step both ran (Icarus runs the light decodes for fewer steps).",
        chapter_report.profile_table(report.profile_rows, markdown=True),
        "## Example B", example_b.markdown(example) if example else "example B did not run",
        "## Exercises", f"```\n{exercise_text.strip()}\n```" if exercise_text
        else "the exercises did not run",
        report.gather_text or "## Host gather and chip gather\n\nthe report stage did not run",
        "## Serving (continuous batching on the RTL)",
        f"```\n{serving_text.strip()}\n```\n\n![serving](plots/serving.png)" if serving_text
        else "the serving stage did not run",
        trained_text or "## The trained model (issue 23)\n\nthe trained model's stage did not run",
        mutation_text.replace("## RTL mutation run", "## RTL mutation run (make run's sample)")
        if mutation_text else "## RTL mutation run\n\nthe mutation stage did not run",
        formal_text or "## Formal (make formal)\n\nthe formal stage did not run",
        "## Testplan: each testpoint's tests in this run (verif/TESTPLAN.md)",
        testplan_results(),
        "## Plots", "\n".join(f"![{p.stem}](plots/{p.name})" for p in report.plots),
        f"Per-step data: `{relative(REGRESS_JSON)}`; JUnit: `{relative(JUNIT)}`; "
        "coverage: `out/coverage.md`.",
    ]
    return "\n\n".join(sections) + "\n"


def print_stages(stages: list[Stage], wall: float) -> None:
    print("\n==== time per stage")
    print(text_table(STAGE_HEADER, stage_rows(stages), left=(0, 1, 3)))
    print(f"make run: wall time {wall:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers")
    parser.add_argument("--started", type=float, help="when make run began (epoch seconds)")
    args = parser.parse_args(argv)
    # Verilator line/toggle coverage belongs in the coverage report: CODE_COVERAGE=0 skips it.
    os.environ.setdefault("CODE_COVERAGE", "1")
    os.environ.setdefault(FULL_LENGTH_ENV, CHAPTER_FLOW)  # the chapter's decodes at 32 steps
    began = time.time()
    stages = [] if args.started is None else [
        Stage("set-up (make setup)", True, began - args.started)]
    stages.append(timed("simulator builds", build_simulators))
    decodes_since = time.time()
    mutation_stage = MutationStage()
    mutation_stage.start()
    trained_stage = TrainedStage(decodes_since)
    trained_stage.start()
    formal_stage = FormalStage()
    formal_stage.start()
    stages.append(timed("software checks and decodes (pytest-xdist)",
                        lambda: checks_and_decodes(args.jobs)))
    stages.append(timed("example A", in_process(example_a.main)))
    stages.append(timed("example B", in_process(example_b.main)))
    exercise_stage = ReportedStage(exercises.run_and_write, decodes_since)
    stages.append(timed("exercises", exercise_stage.run))
    serving_stage = ReportedStage(serving.run_and_write, decodes_since)
    stages.append(timed("serving", serving_stage.run))
    stages.append(timed("trained model", trained_stage.run))
    report = Report(decodes_since)
    stages.append(timed("report", report.build))
    stages.append(mutation_stage.ended())
    stages.append(formal_stage.ended())
    wall = time.time() - (args.started or began)
    print_stages(stages, wall)
    REPORT.write_text(markdown_report(report, stages, wall, exercise_stage.text,
                                      serving_stage.text, mutation_stage.text,
                                      trained_stage.text, formal_stage.text))
    print(f"report: {relative(REPORT)}")
    return 0 if all(stage.ok for stage in stages) else 1
