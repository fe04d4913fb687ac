"""The chapter's tables, from the decode runs on the RTL: terminal, Markdown and regress.json.

Everything comes from the result files the chapter decodes wrote (out/runs/<sim>/<node>/seed<N>/
result.json, see verif/runs/record.py): the tokens, the programs compiled, the pages in use
after each step, the five cycle counters the RTL reported and the scoreboard's count of
differences per step. Nothing here is the reference model's prediction: each run compared those
already (its scoreboard, and verif/scoreboard/decode_checks.py once per decode), and a failing run
shows up here as its status, its missing steps and the mismatch count of the step where it stopped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from model.chip.machine import CYCLE_NAMES
from sim.mem_profile import IDEAL
from sim.toolchain import SIMULATORS
from verif.runs.plans import (
    CHAPTER_STEPS,
    CHAPTER_WINDOWS,
    TABLE_STEPS,
    chapter_spec,
    chip_gather_spec,
)
from verif.runs.record import RESULT_FILE, read_result
from verif.runs.spec import DecodeSpec

PAGE_STEPS = (1, 8, 16, 32)  # the chapter's "pages in use after step ..." columns


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
    """A ChapterRun from a chapter decode's result file."""
    decode = result["decodes"][0] if result["decodes"] else None
    names = CYCLE_NAMES
    steps = [StepRow(s["step"], s["context"], None,
                     {n: s["counters"][n] for n in names if n in s["counters"]}, s["mismatches"],
                     s["counters"], s.get("outputs", []))
             for s in result["steps"]]
    for row, pages in zip(steps, decode["pages_after"] if decode else [], strict=False):
        row.pages_in_use = pages
    tokens = decode["tokens"] if decode else []
    spec = DecodeSpec(**decode["spec"]) if decode else chapter_spec(window)
    rule_ok = decode is not None and decode.get("verdicts", {}).get("tokens") == []
    return ChapterRun(
        sim=result["sim"], window=window, status=result["status"], run_dir=str(run_dir),
        gather=spec.gather, profile=result.get("memory_profile", IDEAL), tokens=tokens,
        rule_ok=rule_ok,
        programs_compiled=decode["programs_compiled"] if decode else 0,
        failure=result.get("failure"), steps=steps,
        host_words=decode.get("host_words", []) if decode else [])


def chapter_window(result: dict) -> tuple[bool, int | None]:
    """(is a chapter decode, its window), told by the spec name the decode ran with."""
    names = {chapter_spec(w).name: w for w in CHAPTER_WINDOWS}
    specs = [d["spec"]["name"] for d in result.get("decodes", [])]
    if result.get("test") != "PlanDecodeTest" or len(specs) != 1 or specs[0] not in names:
        return False, None
    return True, names[specs[0]]


def collect_runs(run_dirs: list[Path], profile: str = IDEAL) -> list[ChapterRun]:
    """The chapter decodes among `run_dirs` under the memory ``profile`` (one per simulator
    and window; newest wins)."""
    found: dict[tuple[str, int | None], ChapterRun] = {}
    results = [d / RESULT_FILE for d in run_dirs if (d / RESULT_FILE).exists()]
    for path in sorted(results, key=lambda p: p.stat().st_mtime):
        result = read_result(path.parent)
        is_chapter, window = chapter_window(result)
        if is_chapter and result.get("memory_profile", IDEAL) == profile:
            found[(result["sim"], window)] = read_run(path.parent, result, window)
    return [found.get((sim, w), ChapterRun(sim, w, "missing"))
            for w in CHAPTER_WINDOWS for sim in SIMULATORS]


def collect_chip_gather_runs(run_dirs: list[Path], profile: str = IDEAL) -> list[ChapterRun]:
    """The chapter decodes in chip gather among `run_dirs` that ran under the memory
    ``profile`` (one per simulator and window; newest wins), for regress.json beside
    collect_runs' host-gather ones."""
    names = {chip_gather_spec(w).name: w for w in CHAPTER_WINDOWS}
    found: dict[tuple[str, int | None], ChapterRun] = {}
    results = [d / RESULT_FILE for d in run_dirs if (d / RESULT_FILE).exists()]
    for path in sorted(results, key=lambda p: p.stat().st_mtime):
        result = read_result(path.parent)
        specs = [d["spec"]["name"] for d in result.get("decodes", [])]
        if (result.get("test") == "PlanDecodeTest" and len(specs) == 1 and specs[0] in names
                and result.get("memory_profile", IDEAL) == profile):
            window = names[specs[0]]
            found[(result["sim"], window)] = read_run(path.parent, result, window)
    return [found[key] for key in sorted(found, key=lambda k: (str(k[1]), k[0]))]


def first_disagreement(runs: list[ChapterRun], window: int | None) -> str | None:
    """Where Icarus and Verilator first differ in this window's decode (any counter or output
    word of any step), or that one of them is missing or incomplete; None when they agree."""
    pair = [r for r in runs if r.window == window]
    where = label(window)
    for run in pair:
        if len(run.steps) != CHAPTER_STEPS:
            return f"{where}: {run.sim} has {len(run.steps)} of {CHAPTER_STEPS} steps"
    if len(pair) != len(SIMULATORS):
        return f"{where}: {len(pair)} of {len(SIMULATORS)} simulators ran"
    first, *others = pair
    for other in others:
        for a, b in zip(first.steps, other.steps, strict=True):
            for name in sorted(set(a.all_counters) | set(b.all_counters)):
                if a.all_counters.get(name) != b.all_counters.get(name):
                    return (f"{where}: step {a.step}: counter {name}: {first.sim} "
                            f"{a.all_counters.get(name)}, {other.sim} {b.all_counters.get(name)}")
            if a.outputs != b.outputs:
                i = next((i for i, (x, y) in enumerate(zip(a.outputs, b.outputs, strict=False))
                          if x != y), min(len(a.outputs), len(b.outputs)))
                return (f"{where}: step {a.step}: output word {i}: {first.sim} "
                        f"{_word(a.outputs, i)}, {other.sim} {_word(b.outputs, i)}")
    return None


def _word(words: list[int], i: int) -> str:
    return f"{words[i]:#010x}" if i < len(words) else "missing"


def simulators_agree(runs: list[ChapterRun], window: int | None) -> bool:
    """Icarus and Verilator reported the same counters and outputs at every step."""
    return first_disagreement(runs, window) is None


# ---- regress.json --------------------------------------------------------------------------


def regress_json(runs: list[ChapterRun]) -> dict:
    """regress.json: per simulator and window, the decode and every step."""
    return {
        "steps": CHAPTER_STEPS,
        "page_size": chapter_spec(None).page_size,
        "counters": list(CYCLE_NAMES),
        "notes": "pages_in_use: after the step appended and trimmed; mismatches: differences "
                 "the scoreboard found in the step (it raises at the first step that has any)",
        "runs": [asdict(run) | {"cycles_total": sum(run.cycles), "waited_total": sum(run.waits),
                                "peak_pages": run.peak_pages}
                 for run in runs],
    }


# ---- the chapter's cycles per memory profile ----------------------------------------------


PROFILE_HEADER = ["profile", "window", "gather", "simulator", "steps", "cycles (ideal memory)",
                  "waited", "total", "= ideal run"]


def profile_rows(ideal: list[ChapterRun], other: list[ChapterRun]) -> list[list[str]]:
    """Per run: its steps, cycles with the waits taken out, the cycles it waited, and whether
    its ideal-memory cycles equal the ideal profile's run of the same decode step by step (the
    steps both ran); the ideal runs first."""
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


# ---- tables ----------------------------------------------------------------------------------


def label(window: int | None) -> str:
    return f"W={window}"


def summary_rows(runs: list[ChapterRun]) -> list[list[str]]:
    """One row per (window, simulator): status, rule, programs, pages, checked steps."""
    rows = []
    for r in runs:
        pages = ", ".join(str(r.pages_after(s)) if r.pages_after(s) is not None else "-"
                          for s in PAGE_STEPS)
        rows.append([str(r.window), r.sim, r.status, str(r.rule_ok), str(r.programs_compiled),
                     pages, str(r.peak_pages if r.peak_pages is not None else "-"),
                     str(len(r.steps)), str(r.mismatches)])
    return rows


SUMMARY_HEADER = ["window", "simulator", "status", "rule ok", "programs",
                  "pages after " + "/".join(map(str, PAGE_STEPS)), "peak", "steps", "mismatches"]


def cycle_rows(runs: list[ChapterRun]) -> list[list[str]]:
    """The chapter's cycle table: the steps it shows, then the totals (of complete runs)."""
    def cell(run: ChapterRun, step: int) -> str:
        return str(run.cycles[step - 1]) if step <= len(run.cycles) else "-"

    rows = [[str(step), *(cell(r, step) for r in runs)] for step in TABLE_STEPS]
    totals = [str(sum(r.cycles)) if len(r.cycles) == CHAPTER_STEPS else "-" for r in runs]
    return [*rows, ["total", *totals]]


def cycle_header(runs: list[ChapterRun]) -> list[str]:
    return ["step"] + [f"{label(r.window)} {r.sim}" for r in runs]


def text_table(header: list[str], rows: list[list[str]], left: tuple[int, ...] = ()) -> str:
    """Columns as wide as their widest cell: numbers right-aligned, the `left` ones left."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        cells = [cell.ljust(w) if i in left else cell.rjust(w)
                 for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        return "  ".join(cells).rstrip()

    return "\n".join(line(row) for row in [header, *rows])


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def agreement_lines(runs: list[ChapterRun]) -> list[str]:
    return [f"{label(w)}: Icarus and Verilator agree on every counter and output word of every "
            f"step: {simulators_agree(runs, w)}" for w in CHAPTER_WINDOWS]


def terminal_tables(runs: list[ChapterRun]) -> str:
    """The chapter's two tables and the simulators' agreement, for the terminal."""
    return "\n".join([
        f"== the rule f(t) = 5t+3 mod 16 for {CHAPTER_STEPS} tokens on the RTL, "
        f"pages of {chapter_spec(None).page_size} rows",
        text_table(SUMMARY_HEADER, summary_rows(runs)),
        "",
        "== cycles per step on the RTL (total counter)",
        text_table(cycle_header(runs), cycle_rows(runs)),
        *agreement_lines(runs),
    ])


def markdown_tables(runs: list[ChapterRun]) -> str:
    return "\n\n".join([
        markdown_table(SUMMARY_HEADER, summary_rows(runs)),
        markdown_table(cycle_header(runs), cycle_rows(runs)),
        "\n".join(f"- {line}" for line in agreement_lines(runs)),
    ])
