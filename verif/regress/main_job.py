"""`make run`, the main job: the chapter's whole check on both simulators, and its report.

Stages, each timed:

1. simulator builds: the chip harness on Icarus and Verilator, made once before the parallel
   runs (a no-op when they are up to date);
2. software checks and decodes: one pytest-xdist session of the `chapter` suite
   (verif/regress/suites.py): the chapter's six checks and its exercises' checks, the 32-step
   decodes with W = None, 8, 4 on both simulators (FULL_LENGTH=chapter), and the flows beyond the
   chapter in their `make test` lengths (shorter on Icarus): the RTL exercises (W = 8 with pages
   of 1 to 16 rows, and with 2 sinks), the chapter's decodes in chip-gather mode (the chip reads
   the pool through block tables), the trained model's decodes (W = None, 8, 4, both gather
   modes, greedy and teacher-forced) and the serving workload in both gather modes (B = 8 on
   both simulators, B = 1, 2, 4 on Verilator), and the chapter's decodes in both gather modes
   under the `light` memory profile, the scoreboard checking every run;
3. examples A and B (verif/report/example_a.py, verif/report/example_b.py): the paged cache event
   by event, and what paging, sharing and windows buy;
4. exercises (verif/report/exercises.py): the chapter's four exercises as tables,
   out/exercises.json;
5. serving (verif/report/serving.py): the workload's batch sweep on the RTL in host and chip
   gather, out/serving.json;
6. trained model (verif/report/trained.py): its decodes on the RTL against the reference host,
   and its tables (loss; the window against full attention, trained and random, float and chip
   integers), out/trained.json, out/trained.md and out/plots/trained_window.png; the tables are
   computed once (about 70 s; in a child process alongside stages 2 to 5) and read from
   build/trained_report/ until an input changes;
7. mutation runs: the host's mutants (verif/mutation/host_run.py) and a fixed, seeded sample of
   the RTL mutants (verif/mutation/rtl_run.py --sample, into out/mutants_sample/; its unbroken
   copy runs the checks that caught them). Both start right after the builds, at a lower
   priority, and take the cores the stages 2 to 6 and 8 leave idle; the stage ends when both
   have, after the report's tables;
8. report: the chapter's tables (terminal and out/report.md), PNG plots under out/plots/
   (the chapter's Figures 15.2-15.7 among them), out/regress.json (with each run's gather
   mode and memory profile), the chapter's decodes per memory profile (cycles on the ideal
   memory, cycles waited), host gather against chip gather (out/gather.json), and the coverage
   report out/coverage.md; it fails when Icarus and Verilator differ in any counter or output
   word, or when a run under a profile differs from the ideal run once its waits are out.

Verilator runs collect line and toggle coverage for the coverage report (a build of its own;
`CODE_COVERAGE=0 make run` skips it). A failing stage does not stop the later ones; the exit
status is non-zero if any failed.

    python -m scripts.main_job [--jobs 2] [--started EPOCH_SECONDS]

`--started` (the Makefile passes it) is when `make run` began, so the wall time includes the
set-up that ran before this script.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO

from model.paths import REPO_ROOT, relative
from sim.lengths import CHAPTER_FLOW, FULL_LENGTH_ENV
from sim.mem_profile import PROFILES
from sim.toolchain import SIMULATORS
from verif.regress.regress import OUT, junit_counts, run_pytest, session_runs, write_coverage_report
from verif.report import chapter as chapter_report
from verif.report import example_a, example_b, exercise_plots, exercises, trained_decodes
from verif.report import gather as gather_report
from verif.report import plots as report_plots
from verif.report import serving as serving_report
from verif.report import trained as trained_report
from verif.report.output import write_json
from verif.runs.launch import chip_build
from verif.runs.plans import CHAPTER_WINDOWS
from verif.testplan import plan as testplan

CHAPTER_SUITE = "chapter"
JUNIT = OUT / "junit" / "run.xml"
REPORT = OUT / "report.md"
REGRESS_JSON = OUT / "regress.json"
PLOTS = OUT / "plots"
LIGHT = PROFILES["light"].name  # the memory profile make run's decodes also run under
RTL_MUTANT_SAMPLE = 6  # RTL mutants in make run (make mutants runs them all)
MUTATION_NICENESS = 10  # the mutation runs yield the cores to the decodes
MUTANT_SAMPLE_OUT = OUT / "mutants_sample"


@dataclass
class Stage:
    """One timed stage of the main job."""

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


# ---- the stages ------------------------------------------------------------------------------


def build_simulators() -> tuple[bool, str]:
    with ThreadPoolExecutor(len(SIMULATORS)) as pool:
        builds = list(pool.map(chip_build, SIMULATORS))
    return True, "ready: " + ", ".join(b.sim for b in builds)


def checks_and_decodes(jobs: int) -> tuple[bool, str]:
    run = run_pytest(CHAPTER_SUITE, 1, jobs, JUNIT)
    software = junit_counts(JUNIT, "model.tests")
    decodes = junit_counts(JUNIT, "verif.tests")
    return run.status == 0, f"software checks {software.line()}; decodes {decodes.line()}"


def host_verdict(status: str, started: float) -> tuple[bool, str]:
    """The host's mutation run's verdict, from the mutate.json it wrote (not an older one)."""
    path = OUT / "mutate.json"
    if not path.exists() or path.stat().st_mtime < started:
        return False, f"host: {status}, no new {rel(path)}"
    mutants = json.loads(path.read_text())["mutants"]
    survivors = [m["description"] for m in mutants if not m["caught"]]
    caught = f"host: {len(mutants) - len(survivors)} of {len(mutants)} mutants caught"
    return not survivors, caught + (f"; SURVIVED: {'; '.join(survivors)}" if survivors else "")


def rtl_sample_verdict(status: str, started: float) -> tuple[bool, str, str]:
    """The RTL sample's verdict and its Markdown, from the files it wrote (not older ones)."""
    path = MUTANT_SAMPLE_OUT / "mutants.json"
    if not path.exists() or path.stat().st_mtime < started:
        return False, f"RTL sample: {status}, no new {rel(path)}", ""
    result = json.loads(path.read_text())
    note = (f"RTL sample: {result['caught']} of {result['scored']} caught "
            f"({len(result['mutants'])} mutants, {rel(path)})")
    return True, note, (MUTANT_SAMPLE_OUT / "mutants.md").read_text()


@dataclass
class MutationStage:
    """The mutation stage: the host's mutants and a fixed sample of the RTL mutants.

    Both runs share nothing with the rest of the job, so they start as soon as the simulators
    are built, in subprocesses at a lower priority: they take the cores the other stages leave
    idle (the pytest stage's last groups, the single-threaded stages after it), and otherwise
    a small share of the decodes' (make run went from 101 s to 73-86 s). What they print is
    shown when the stage ends. The sample (``RTL_MUTANT_SAMPLE`` mutants, seeded, spread over
    the modules) goes to its own folder, so it never overwrites a full ``make mutants`` result
    in out/mutants.json.
    """

    text: str = ""  # the sample's Markdown (out/mutants_sample/mutants.md), for the report
    started: float = 0.0
    runs: dict[str, tuple[subprocess.Popen, IO[str]]] = field(default_factory=dict)

    def start(self) -> None:
        self.started = time.time()
        commands = {"host": ["verif.mutation.host_run"],
                    "RTL sample": ["verif.mutation.rtl_run", "--sample", str(RTL_MUTANT_SAMPLE),
                                   "--out", str(MUTANT_SAMPLE_OUT)]}
        for name, command in commands.items():
            output = tempfile.TemporaryFile("w+")  # noqa: SIM115 - read and closed in finish
            process = subprocess.Popen([sys.executable, "-m", *command], cwd=REPO_ROOT,
                                       stdout=output, stderr=subprocess.STDOUT, text=True,
                                       preexec_fn=lambda: os.nice(MUTATION_NICENESS))
            self.runs[name] = (process, output)

    def finish(self) -> tuple[bool, str]:
        statuses = {}
        for name, (process, output) in self.runs.items():
            statuses[name] = f"exit status {process.wait()}"
            output.seek(0)
            print(f"-- {name} mutants\n{output.read()}", end="", flush=True)
            output.close()
        host_ok, host_note = host_verdict(statuses["host"], self.started)
        rtl_ok, rtl_note, self.text = rtl_sample_verdict(statuses["RTL sample"], self.started)
        codes_ok = all(process.returncode == 0 for process, _ in self.runs.values())
        return host_ok and rtl_ok and codes_ok, f"{host_note}; {rtl_note}"

    def ended(self) -> Stage:
        """The stage once both runs are done, timed from their start: its seconds overlap the
        stages that ran meanwhile."""
        stage = timed("mutation runs (host, RTL sample)", self.finish)
        return replace(stage, seconds=time.time() - self.started,
                       note=f"{stage.note} (alongside the stages from the pytest stage on)")


@dataclass
class ExerciseStage:
    """The exercises stage: its tables as printed (for the report) and their problems."""

    since: float
    text: str = ""

    def run(self) -> tuple[bool, str]:
        results, self.text = exercises.run(self.since)
        print(self.text, end="")
        path = write_json("exercises.json", results)
        found = exercises.problems(results)
        for problem in found:
            print(f"PROBLEM: {problem}")
        return not found, (f"{len(results)} exercises, {rel(path)}"
                           + (f"; {'; '.join(found)}" if found else ""))


@dataclass
class ServingStage:
    """The serving stage: the batch sweep's table (for the report) from this job's runs."""

    since: float
    text: str = ""

    def run(self) -> tuple[bool, str]:
        table = serving_report.serving_table(self.since)
        self.text = serving_report.print_table(table)
        path = write_json("serving.json", table)
        if table["rows"]:
            serving_report.throughput_plot(table, PLOTS / "serving.png")
        ok = not table["missing"] and table["b8_simulators_agree"] is not False
        gain = table.get("gain_b8_over_b1")
        return ok, (f"{len(table['rows'])} batch sizes, {rel(path)}"
                    + (f", gain at B = 8: {gain}x" if gain else "")
                    + ("" if ok else f"; missing {table['missing']} or simulators differ"))


@dataclass
class TrainedStage:
    """The trained model's stage: its RTL decodes of this job against the reference host, and
    its tables, read from build/trained_report/ when an earlier run computed them.

    When no run has (a fresh clone, a change to model/), ``start`` computes them in a child
    process alongside the decodes: they need nothing of the other stages, and took 70 to 80 s
    of one core after them. At the decodes' priority: at the mutation runs' lower one they got
    too little of the cores to be done before the decodes were, and the job took as long."""

    since: float
    text: str = ""  # out/report.md's section
    tables: Future | None = None  # the child's (report, cached), when it computes them

    def start(self) -> None:
        if trained_report.cache_file().exists():
            return
        pool = ProcessPoolExecutor(1)
        self.tables = pool.submit(trained_report.cached_trained_report)
        pool.shutdown(wait=False)

    def run(self) -> tuple[bool, str]:
        report, cached = (self.tables.result() if self.tables
                          else trained_report.cached_trained_report())
        paths = trained_report.write_outputs(report)
        decodes = trained_decodes.trained_decodes(session_runs(JUNIT, self.since))
        self.text = trained_report.section(report, trained_decodes.markdown(decodes))
        print(self.text)
        found = trained_decodes.problems(decodes)
        for problem in found:
            print(f"PROBLEM: {problem}")
        verdict = "; ".join(found) or f"{len(decodes)} decodes on the RTL equal the reference's"
        tables = "read from build/trained_report/" if cached else "computed and cached"
        return not found, f"{verdict}; tables {tables}; {rel(paths[0])}"


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
        print("\n== the chapter's decodes per memory profile\n" + chapter_report.text_table(
            chapter_report.PROFILE_HEADER, self.profile_rows, left=(0, 1, 2, 3)))
        REGRESS_JSON.write_text(json.dumps(
            chapter_report.regress_json(self.runs + chip_gather + light), indent=1) + "\n")
        self.gather_text = gather_report.report(
            gather_report.model_decodes() + gather_report.rtl_decodes(run_dirs), OUT)
        print("\n" + self.gather_text)
        self.plots = write_plots(self.runs, self.decodes_since)
        coverage = write_coverage_report(run_dirs, self.decodes_since, "make run")
        print(f"\nwrote {rel(REGRESS_JSON)}, {rel(coverage)}, {rel(JUNIT)} and "
              f"{len(self.plots)} plots in {rel(PLOTS)}/")
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


def rel(path: Path) -> str:
    return str(relative(path))


def example_b_rows(since: float) -> dict:
    """Example B's tables, if this job's example B stage wrote them (not an older run)."""
    path = OUT / "example_b.json"
    fresh = path.exists() and path.stat().st_mtime >= since
    return json.loads(path.read_text()) if fresh else {}


def write_plots(runs: list[chapter_report.ChapterRun], since: float) -> list[Path]:
    plots = [report_plots.cycles_plot(runs, PLOTS / "cycles_per_step.png"),
             report_plots.pages_plot(runs, PLOTS / "pages_per_step.png")]
    example_b = example_b_rows(since)
    if example_b:
        plots += [report_plots.memory_plot(example_b["part1"], PLOTS / "example_b_memory.png"),
                  report_plots.sharing_plot(example_b["part2"], PLOTS / "example_b_sharing.png"),
                  exercise_plots.window_agreement_plot(
                      example_b["part3"], PLOTS / "figure_15_6_window_agreement.png"),
                  exercise_plots.batch_vs_context_plot(
                      example_b["part4"], PLOTS / "figure_15_7_batch_vs_context.png")]
    return plots


def example_b_tables(example_b: dict) -> str:
    """Parts 1 and 2 of example B as Markdown tables."""
    memory = [[("contiguous" if r["page_size"] is None else f"paged, page = {r['page_size']}"),
               str(r["requests_held"]), str(r["rows_used"]), str(r["rows_reserved"]),
               f"{100 * (r['rows_reserved'] - r['rows_used']) / r['rows_reserved']:.1f}%"]
              for r in example_b["part1"]]
    sharing = [[str(r["prompt"]), str(r["page"]), str(r["pages_copied"]), str(r["pages_shared"]),
                f"{100 * (r['pages_copied'] - r['pages_shared']) / r['pages_copied']:.0f}%",
                str(r["cow_copies"])] for r in example_b["part2"]]
    return "\n\n".join([
        chapter_report.markdown_table(
            ["scheme", "requests held", "rows used", "rows reserved", "wasted"], memory),
        chapter_report.markdown_table(
            ["prompt rows", "page", "pages, copied", "pages, shared", "saved", "CoW copies"],
            sharing)])


def testplan_results() -> str:
    """Each testpoint of the testplan, annotated with the outcome of its tests in this run."""
    if not JUNIT.exists():
        return "the pytest stage wrote no JUnit file"
    plan = testplan.load()
    return testplan.results_markdown(testplan.results(plan, testplan.junit_outcomes(JUNIT)))


def stage_rows(stages: list[Stage]) -> list[list[str]]:
    return [[s.name, "ok" if s.ok else "FAILED", f"{s.seconds:.1f}", s.note] for s in stages]


def part3_comparison(example_b: dict) -> str:
    """Example B part 3 beside the chapter's figures: our random models are not the chapter's."""
    comparison = exercise_plots.window_agreement_comparison(example_b["part3"])
    rows = [[str(w), f"{ours:.1f}%", f"{chapter:.1f}%" if chapter is not None else "-"]
            for w, ours, chapter in zip(comparison["window"], comparison["ours_percent"],
                                        comparison["chapter_percent"], strict=True)]
    return (chapter_report.markdown_table(["W", "agreement, ours", "agreement, chapter"], rows)
            + f"\n\n{comparison['note']}")


def markdown_report(report: Report, stages: list[Stage], wall: float,
                    exercise_text: str = "", serving_text: str = "",
                    mutation_text: str = "", trained_text: str = "") -> str:
    example_b = example_b_rows(report.decodes_since)
    sections = [
        "# make run: the chapter's check on Icarus and Verilator",
        f"## Stages (wall time {wall:.1f} s)",
        chapter_report.markdown_table(["stage", "result", "seconds", "note"],
                                      stage_rows(stages)),
        "## Decodes on the RTL", chapter_report.markdown_tables(report.runs),
        "### The chapter's decodes per memory profile",
        "Ideal first (the chapter's memory); under `light` the memory holds each AXI4 channel "
        "low about 10% of cycles and draws read latencies of 4 .. 16 (sim/mem_profile.py). "
        "`cycles (ideal memory)` is cnt_total - cnt_wait, `= ideal run`: equal to the ideal "
        "run's cycles at every step both ran (Icarus runs the light decodes for fewer steps).",
        chapter_report.markdown_table(chapter_report.PROFILE_HEADER, report.profile_rows),
        "## Example B", example_b_tables(example_b) if example_b else "example B did not run",
        "### Example B part 3 beside the chapter's Figure 15.6",
        part3_comparison(example_b) if example_b else "example B did not run",
        "## Exercises", f"```\n{exercise_text.strip()}\n```" if exercise_text
        else "the exercises did not run",
        report.gather_text or "## Host gather and chip gather\n\nthe report stage did not run",
        "## Serving (continuous batching on the RTL)",
        f"```\n{serving_text.strip()}\n```\n\n![serving](plots/serving.png)" if serving_text
        else "the serving stage did not run",
        trained_text or "## The trained model (issue 23)\n\nthe trained model's stage did not run",
        mutation_text.replace("## RTL mutation run", "## RTL mutation run (make run's sample)")
        if mutation_text else "## RTL mutation run\n\nthe mutation stage did not run",
        "## Testplan: each testpoint's tests in this run (verif/TESTPLAN.md)",
        testplan_results(),
        "## Plots", "\n".join(f"![{p.stem}](plots/{p.name})" for p in report.plots),
        f"Per-step data: `{rel(REGRESS_JSON)}`; JUnit: `{rel(JUNIT)}`; "
        "coverage: `out/coverage.md`.",
    ]
    return "\n\n".join(sections) + "\n"


# ---- the job ---------------------------------------------------------------------------------


def print_stages(stages: list[Stage], wall: float) -> None:
    print("\n==== time per stage")
    print(chapter_report.text_table(["stage", "result", "seconds", "note"], stage_rows(stages),
                                    left=(0, 1, 3)))
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
    stages.append(timed("software checks and decodes (pytest-xdist)",
                        lambda: checks_and_decodes(args.jobs)))
    stages.append(timed("example A", in_process(example_a.main)))
    stages.append(timed("example B", in_process(example_b.main)))
    exercise_stage = ExerciseStage(decodes_since)
    stages.append(timed("exercises", exercise_stage.run))
    serving_stage = ServingStage(decodes_since)
    stages.append(timed("serving", serving_stage.run))
    stages.append(timed("trained model", trained_stage.run))
    report = Report(decodes_since)
    stages.append(timed("report", report.build))
    stages.append(mutation_stage.ended())
    wall = time.time() - (args.started or began)
    print_stages(stages, wall)
    REPORT.write_text(markdown_report(report, stages, wall, exercise_stage.text,
                                      serving_stage.text, mutation_stage.text,
                                      trained_stage.text))
    print(f"report: {rel(REPORT)}")
    return 0 if all(stage.ok for stage in stages) else 1

