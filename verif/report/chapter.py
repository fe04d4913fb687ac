"""The chapter's decodes as tables: on the RTL (terminal, Markdown, regress.json, plots) from the
runs' result files, and on the reference machine (``python -m scripts.report model-decodes``).

Nothing here predicts a value: a failing run shows as its status, missing steps and mismatches.
``simulators_differ`` is the one rule by which Icarus and Verilator are held equal.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from model.chip.machine import CYCLE_NAMES
from model.host.decode import decode
from model.lm.tiny_lm import structured_model
from sim.mem_profile import IDEAL
from sim.toolchain import SIMULATORS
from verif.report.output import markdown_table, save_figure, subplots, text_table, write_json
from verif.runs.plans import (
    CHAPTER_STEPS,
    CHAPTER_WINDOWS,
    TABLE_STEPS,
    chapter_spec,
    chip_gather_spec,
)
from verif.runs.record import RESULT_FILE, read_result
from verif.runs.spec import DecodeSpec
from verif.scoreboard.decode_checks import DecodeFacts, decode_verdicts

PAGE_STEPS = (1, 8, 16, 32)  # the chapter's "pages in use after step ..." columns
PAGE_SIZE = chapter_spec(None).page_size


@dataclass
class StepRow:
    """One decode step as the RTL ran it."""

    step: int
    context: int
    pages_in_use: int | None  # after the step appended its row and trimmed
    counters: dict[str, int]  # the five cycle counters
    mismatches: int  # the scoreboard's differences in this step
    all_counters: dict = field(default_factory=dict)  # every counter, events included
    outputs: list[int] = field(default_factory=list)  # the output region's words


@dataclass
class ChapterRun:
    """One (simulator, window) decode of the structured model, read from its result file."""

    sim: str
    window: int | None
    status: str  # the simulation's: "passed", "failed", or "missing" (no result file)
    run_dir: str = ""
    gather: str = "host"  # who copied each step's cached rows: the host, or the chip itself
    profile: str = IDEAL  # the external memory's (sim/mem_profile.py)
    tokens: list[int] = field(default_factory=list)
    rule_ok: bool = False
    programs_compiled: int = 0
    failure: str | None = None
    steps: list[StepRow] = field(default_factory=list)
    # words the page-table agent wrote per step for the cached rows: rows (host gather), block
    # table and copy pair (chip gather); the memory mirror skips words that already hold them
    host_words: list[int] = field(default_factory=list)

    @property
    def cycles(self) -> list[int]:
        """Each step's cycles on the ideal memory (under another profile: waits taken out)."""
        return [row.counters["total"] for row in self.steps]

    @property
    def waits(self) -> list[int]:
        """Each step's cycles frozen waiting on memory (cnt_wait; 0 on the ideal memory)."""
        return [row.all_counters.get("wait", 0) for row in self.steps]

    def pages_after(self, step: int) -> int | None:
        return self.steps[step - 1].pages_in_use if step <= len(self.steps) else None

    @property
    def peak_pages(self) -> int | None:
        pages = [row.pages_in_use for row in self.steps if row.pages_in_use is not None]
        return max(pages, default=None)

    @property
    def mismatches(self) -> int:
        return sum(row.mismatches for row in self.steps)


def read_run(run_dir: Path, result: dict, window: int | None) -> ChapterRun:
    decode = result["decodes"][0] if result["decodes"] else None
    steps = [StepRow(s["step"], s["context"], None,
                     {n: s["counters"][n] for n in CYCLE_NAMES if n in s["counters"]},
                     s["mismatches"], s["counters"], s.get("outputs", []))
             for s in result["steps"]]
    for row, pages in zip(steps, decode["pages_after"] if decode else [], strict=False):
        row.pages_in_use = pages
    spec = DecodeSpec(**decode["spec"]) if decode else chapter_spec(window)
    return ChapterRun(
        sim=result["sim"], window=window, status=result["status"], run_dir=str(run_dir),
        gather=spec.gather, profile=result.get("memory_profile", IDEAL),
        tokens=decode["tokens"] if decode else [],
        rule_ok=decode is not None and decode.get("verdicts", {}).get("tokens") == [],
        programs_compiled=decode["programs_compiled"] if decode else 0,
        failure=result.get("failure"), steps=steps,
        host_words=decode.get("host_words", []) if decode else [])


def _collect(run_dirs: list[Path], names: dict[str, int | None],
             profile: str) -> dict[tuple[str, int | None], ChapterRun]:
    """The decodes of a spec in ``names`` (spec name -> window) under the memory ``profile``,
    per simulator and window; the newest wins."""
    found = {}
    results = [d / RESULT_FILE for d in run_dirs if (d / RESULT_FILE).exists()]
    for path in sorted(results, key=lambda p: p.stat().st_mtime):
        result = read_result(path.parent)
        specs = [d["spec"]["name"] for d in result.get("decodes", [])]
        if (result.get("test") == "PlanDecodeTest" and len(specs) == 1 and specs[0] in names
                and result.get("memory_profile", IDEAL) == profile):
            window = names[specs[0]]
            found[(result["sim"], window)] = read_run(path.parent, result, window)
    return found


def collect_runs(run_dirs: list[Path], profile: str = IDEAL) -> list[ChapterRun]:
    """The chapter decodes (host gather), one per window and simulator, "missing" if none ran."""
    found = _collect(run_dirs, {chapter_spec(w).name: w for w in CHAPTER_WINDOWS}, profile)
    return [found.get((sim, w), ChapterRun(sim, w, "missing"))
            for w in CHAPTER_WINDOWS for sim in SIMULATORS]


def collect_chip_gather_runs(run_dirs: list[Path], profile: str = IDEAL) -> list[ChapterRun]:
    """The chapter decodes in chip gather that ran, for regress.json beside collect_runs'."""
    found = _collect(run_dirs, {chip_gather_spec(w).name: w for w in CHAPTER_WINDOWS}, profile)
    return [found[key] for key in sorted(found, key=lambda k: (str(k[1]), k[0]))]


def simulators_differ(steps: dict[str, list[tuple[dict[str, Any], list]]]) -> str | None:
    """The one rule: every simulator ran, and at each step all of them ran they reported the
    same counters and output words. ``steps``: per simulator, each step's (counters, outputs).
    The first difference in words, or None when they agree."""
    if len(steps) != len(SIMULATORS):
        return f"{len(steps)} of {len(SIMULATORS)} simulators ran"
    (first, mine), *others = steps.items()
    for other, theirs in others:
        for number, ((a, a_out), (b, b_out)) in enumerate(zip(mine, theirs, strict=False), 1):
            name = next((n for n in sorted(set(a) | set(b)) if a.get(n) != b.get(n)), None)
            if name is not None:
                return (f"step {number}: counter {name}: {first} {a.get(name)}, "
                        f"{other} {b.get(name)}")
            if a_out != b_out:
                i = next((i for i, (x, y) in enumerate(zip(a_out, b_out, strict=False))
                          if x != y), min(len(a_out), len(b_out)))
                return (f"step {number}: output word {i}: {first} {_word(a_out, i)}, "
                        f"{other} {_word(b_out, i)}")
    return None


def simulators_agree(steps: dict[str, list[tuple[dict[str, Any], list]]]) -> bool:
    return simulators_differ(steps) is None


def _word(words: list[int], i: int) -> str:
    return f"{words[i]:#010x}" if i < len(words) else "missing"


def first_disagreement(runs: list[ChapterRun], window: int | None) -> str | None:
    """Where this window's decodes are incomplete or Icarus and Verilator first differ."""
    pair = [r for r in runs if r.window == window]
    for run in pair:
        if len(run.steps) != CHAPTER_STEPS:
            return f"{label(window)}: {run.sim} has {len(run.steps)} of {CHAPTER_STEPS} steps"
    found = simulators_differ({run.sim: [(row.all_counters, row.outputs) for row in run.steps]
                               for run in pair})
    return f"{label(window)}: {found}" if found else None


def regress_json(runs: list[ChapterRun]) -> dict:
    """regress.json: per simulator and window, the decode and every step."""
    return {"steps": CHAPTER_STEPS, "page_size": PAGE_SIZE, "counters": list(CYCLE_NAMES),
            "notes": "pages_in_use: after the step appended and trimmed; mismatches: differences "
                     "the scoreboard found in the step (it raises at the first step that has any)",
            "runs": [asdict(run) | {"cycles_total": sum(run.cycles),
                                    "waited_total": sum(run.waits), "peak_pages": run.peak_pages}
                     for run in runs]}


PROFILE_HEADER = ["profile", "window", "gather", "simulator", "steps", "cycles (ideal memory)",
                  "waited", "total", "= ideal run"]


def profile_rows(ideal: list[ChapterRun], other: list[ChapterRun]) -> list[list[str]]:
    """Per run, the ideal ones first: steps, cycles without the waits, the waits, and whether
    those cycles equal the ideal run's of the same decode at every step both ran."""
    reference = {(r.window, r.gather, r.sim): r.cycles for r in ideal}
    rows = []
    for run in [*ideal, *other]:
        if run.status != "passed":
            rows.append([run.profile, label(run.window), run.gather, run.sim, "-", "-", "-", "-",
                         run.status])
            continue
        base = reference.get((run.window, run.gather, run.sim), [])
        common = min(len(base), len(run.cycles))
        same = bool(common) and base[:common] == run.cycles[:common]
        rows.append([run.profile, label(run.window), run.gather, run.sim, str(len(run.steps)),
                     str(sum(run.cycles)), str(sum(run.waits)),
                     str(sum(run.cycles) + sum(run.waits)), str(same)])
    return rows


def profile_problems(rows: list[list[str]]) -> list[str]:
    """Runs under a memory profile whose cycles, waits taken out, differ from the ideal run."""
    return [f"{row[0]} {row[1]} {row[2]} {row[3]}: its ideal-memory cycles differ from the "
            f"ideal run's" for row in rows if row[0] != IDEAL and row[-1] == "False"]


def profile_table(rows: list[list[str]], markdown: bool = False) -> str:
    return (markdown_table if markdown else text_table)(PROFILE_HEADER, rows, left=(0, 1, 2, 3))


def label(window: int | None) -> str:
    return f"W={window}"


SUMMARY_HEADER = ["window", "simulator", "status", "rule ok", "programs",
                  "pages after " + "/".join(map(str, PAGE_STEPS)), "peak", "steps", "mismatches"]


def summary_rows(runs: list[ChapterRun]) -> list[list]:
    """One row per (window, simulator): status, rule, programs, pages, checked steps."""
    return [[r.window, r.sim, r.status, r.rule_ok, r.programs_compiled,
             ", ".join(str(r.pages_after(s)) if r.pages_after(s) is not None else "-"
                       for s in PAGE_STEPS),
             r.peak_pages if r.peak_pages is not None else "-", len(r.steps), r.mismatches]
            for r in runs]


def cycle_rows(runs: list[ChapterRun]) -> list[list]:
    """The chapter's cycle table: the steps it shows, then the totals (of complete runs)."""
    rows = [[step, *(r.cycles[step - 1] if step <= len(r.cycles) else "-" for r in runs)]
            for step in TABLE_STEPS]
    return [*rows, ["total", *(sum(r.cycles) if len(r.cycles) == CHAPTER_STEPS else "-"
                               for r in runs)]]


def cycle_header(runs: list[ChapterRun]) -> list[str]:
    return ["step"] + [f"{label(r.window)} {r.sim}" for r in runs]


def agreement_lines(runs: list[ChapterRun]) -> list[str]:
    return [f"{label(w)}: Icarus and Verilator agree on every counter and output word of every "
            f"step: {first_disagreement(runs, w) is None}" for w in CHAPTER_WINDOWS]


def terminal_tables(runs: list[ChapterRun]) -> str:
    """The chapter's two tables and the simulators' agreement, for the terminal."""
    return "\n".join([
        f"== the rule f(t) = 5t+3 mod 16 for {CHAPTER_STEPS} tokens on the RTL, "
        f"pages of {PAGE_SIZE} rows",
        text_table(SUMMARY_HEADER, summary_rows(runs), left=(1, 2)),
        "",
        "== cycles per step on the RTL (total counter)",
        text_table(cycle_header(runs), cycle_rows(runs)),
        *agreement_lines(runs),
    ])


def markdown_tables(runs: list[ChapterRun]) -> str:
    return "\n\n".join([
        markdown_table(SUMMARY_HEADER, summary_rows(runs), left=(1, 2)),
        markdown_table(cycle_header(runs), cycle_rows(runs)),
        "\n".join(f"- {line}" for line in agreement_lines(runs)),
    ])


STYLES = {"icarus": {"linestyle": "-", "linewidth": 2.5, "alpha": 0.6},
          "verilator": {"linestyle": "--", "linewidth": 1.2}}


def _per_step(runs: list[ChapterRun], values, ylabel: str, title: str, path: Path) -> Path:
    """One line per run (a colour per window; Verilator dashed over Icarus: a difference shows)."""
    figure, axes = subplots(figsize=(7, 4))
    for run in runs:
        steps = [row.step for row in run.steps]
        axes.plot(steps, values(run), label=f"{label(run.window)} {run.sim}",
                  color=f"C{CHAPTER_WINDOWS.index(run.window)}", **STYLES.get(run.sim, {}))
    axes.set(xlabel="decode step", ylabel=ylabel, title=title)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return save_figure(figure, path)


def cycles_plot(runs: list[ChapterRun], path: Path) -> Path:
    return _per_step(runs, lambda run: run.cycles, "cycles (total counter)",
                     "RTL cycles per decode step, per window", path)


def pages_plot(runs: list[ChapterRun], path: Path) -> Path:
    return _per_step(runs, lambda run: [row.pages_in_use for row in run.steps],
                     "pages in use after the step", "KV-cache pages in use per step", path)


@dataclass
class WindowReport:
    """One window's decode of the structured model on the reference machine."""

    window: int | None
    rule_ok: bool
    programs_compiled: int
    pages_after: dict[int, int]  # step -> pages in use once it has appended and trimmed
    peak_pages: int
    cycles: list[list[int]]  # per step: total, dma, mat, vec, sm
    flat_from_window: bool  # every step from W on costs the same (True without a window)

    @property
    def total_cycles(self) -> int:
        return sum(step[0] for step in self.cycles)


def report_window(window: int | None) -> WindowReport:
    """The reference host's decode, judged by the decode checks the RTL runs are judged by."""
    spec = chapter_spec(window)
    run = decode(structured_model(), spec.steps, spec.start, window, page_size=spec.page_size)
    cycles = [list(record.cycles) for record in run.records]
    verdicts = decode_verdicts(DecodeFacts(
        spec, run.tokens, [run.pages_after(s) for s in range(1, spec.steps + 1)],
        [step[0] for step in cycles], run.programs_compiled))
    return WindowReport(window, verdicts["tokens"] == [], run.programs_compiled,
                        {step: run.pages_after(step) for step in PAGE_STEPS}, run.peak_pages,
                        cycles, verdicts["cycles"] == [])


def model_tables(reports: list[WindowReport]) -> str:
    summary = [[r.window, r.rule_ok, r.programs_compiled,
                ", ".join(map(str, r.pages_after.values())), r.peak_pages,
                r.flat_from_window if r.window is not None else "-"] for r in reports]
    cycles = [[step, *(r.cycles[step - 1][0] for r in reports)] for step in TABLE_STEPS]
    return "\n".join([
        f"== the rule f(t) = 5t+3 mod 16 for {CHAPTER_STEPS} tokens, pages of {PAGE_SIZE} rows",
        text_table(["window", "rule ok", "programs compiled", SUMMARY_HEADER[5], "peak",
                    "cycles flat from step W"], summary),
        "", "== cycles per step (reference machine)",
        text_table(["step", *(label(r.window) for r in reports)],
                   [*cycles, ["total", *(r.total_cycles for r in reports)]])])


def main() -> None:
    """``python -m scripts.report model-decodes``: the tables and out/report_model.json."""
    reports = [report_window(window) for window in CHAPTER_WINDOWS]
    print(model_tables(reports))
    data = {"steps": CHAPTER_STEPS, "page_size": PAGE_SIZE, "cycle_names": list(CYCLE_NAMES),
            "windows": [asdict(r) | {"total_cycles": r.total_cycles} for r in reports]}
    print(f"\nwrote {write_json('report_model.json', data)}")
