"""The chapter's four exercises, one table each, in out/exercises.json.

Exercises 1 (page sizes) and 3 (sinks) read the RTL decodes' result files; 2 (admission)
simulates example B's pool; 4 (prefix alignment) pads example B part 2's prompts. Adding an
exercise is one line of ``EXERCISES``. ``python -m scripts.report exercises [--since EPOCH]``
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import asdict, dataclass
from typing import Any

from model.chip.geometry import pages_for
from model.host.workloads import N_REQUESTS, sample_lengths, share_prompt
from model.kv.admission import CoversExpected, OnePageFree, Watermark
from model.kv.admission_sim import simulate
from model.paths import relative
from sim.toolchain import SIMULATORS
from verif.report import example_b
from verif.report.chapter import simulators_agree
from verif.report.output import text_table, write_json
from verif.runs import plans
from verif.runs.record import newest_results

SINK_WINDOWS = (4, 8, 16)  # example B part 3's windows that can hold the sinks and more


def totals(result: dict) -> list[int]:
    return [step["counters"]["total"] for step in result["steps"]]


def results_agree(results: list[dict]) -> bool:
    """The simulators' runs of one decode agree over the steps both ran (Icarus runs fewer)."""
    return simulators_agree({r["sim"]: [(s["counters"], s.get("outputs", [])) for s in r["steps"]]
                             for r in results})


@dataclass
class PageSizeRow:
    """Exercise 1: one page size, as the RTL decodes recorded it."""

    page_size: int
    rows_reserved: int  # pages in use at the end x page size
    pages_at_end: int
    table_live: int  # block-table entries still held at the end
    table_dropped: int  # entries released by trims (logical pages below the window)
    peak_pages: int
    steady_cycles: int | None  # cycles per step from step W on (None: not flat)
    simulators_agree: bool


def page_size_row(page_size: int, results: list[dict]) -> PageSizeRow:
    full = max(results, key=lambda result: len(result["steps"]))  # the full-length run
    decode = full["decodes"][0]
    pages = decode["pages_after"]
    flat = decode["verdicts"].get("cycles") == []  # the decode check's verdict
    return PageSizeRow(page_size, pages[-1] * page_size, pages[-1], pages[-1],
                       pages_for(len(pages), page_size) - pages[-1], max(pages),
                       totals(full)[-1] if flat else None, results_agree(results))


def page_sizes_table(since: float = 0.0) -> dict[str, Any]:
    """Exercise 1's table from the RTL runs; missing runs are named, not invented."""
    names = {plans.page_size_spec(p).name: p for p in plans.PAGE_SIZES}
    found = newest_results(set(names), since)
    rows, missing = [], []
    for name, page_size in names.items():
        results = [found[(sim, name)] for sim in SIMULATORS if (sim, name) in found]
        missing += [f"{sim} {name}" for sim in SIMULATORS if (sim, name) not in found]
        if results:
            rows.append(page_size_row(page_size, results))
    table: dict[str, Any] = {"window": plans.EXERCISE_WINDOW, "steps": plans.CHAPTER_STEPS,
                             "rows": [asdict(r) for r in rows], "missing": missing}
    if rows:
        fewest = min(rows, key=lambda r: (r.rows_reserved, r.page_size))
        largest = max(rows, key=lambda r: (r.table_live + r.table_dropped, -r.page_size))
        table["fewest_rows_reserved"] = fewest.page_size
        table["largest_block_table"] = largest.page_size
    return table


def print_page_sizes(table: dict[str, Any]) -> None:
    print(f"   W = {table['window']}, {table['steps']} steps, structured model, on the RTL")
    print(text_table(["page", "rows reserved", "pages at end", "table live", "dropped",
                      "peak pages", "cycles/step from W", "sims agree"],
                     [[r["page_size"], r["rows_reserved"], r["pages_at_end"], r["table_live"],
                       r["table_dropped"], r["peak_pages"], r["steady_cycles"] or "not flat",
                       r["simulators_agree"]] for r in table["rows"]]))
    print("   (sims agree: the same counters and output words at every step both simulators ran)")
    for miss in table["missing"]:
        print(f"   MISSING run: {miss}")
    if "fewest_rows_reserved" in table:
        print(f"   fewest rows reserved at the end: pages of {table['fewest_rows_reserved']}; "
              f"largest block table (entries live + dropped): pages of "
              f"{table['largest_block_table']}")


ADMISSION_PAGE_SIZE = 16  # exercise 2: example B part 1's main comparison (Figure 15.4)
ADMISSION_PAGES = example_b.POOL_ROWS // ADMISSION_PAGE_SIZE
ARRIVAL = (f"all {N_REQUESTS} requests queued at step 0 in sample order; first come, first "
           "served; each step every running request appends one row, then the queue head is "
           "admitted while the rule allows (its first row written at once)")
EXPECTED_LENGTH = "each request's true length (an oracle; a server would know a prediction)"


def admission_table() -> dict[str, Any]:
    """Exercise 2's table: a row per rule, each run until the queue drains; (rule, net of
    running): the three rules, then exercise 2's rule net of the running requests."""
    lengths = sample_lengths()
    rules = [(OnePageFree(), False), (CoversExpected(), False),
             (Watermark.of_pool(ADMISSION_PAGES), False), (CoversExpected(), True)]
    rows = [simulate(lengths, rule, ADMISSION_PAGES, ADMISSION_PAGE_SIZE, net_of_running=net)
            for rule, net in rules]
    return {"pool_rows": example_b.POOL_ROWS, "page_size": ADMISSION_PAGE_SIZE,
            "n_pages": ADMISSION_PAGES, "requests": len(lengths), "rows_requested": sum(lengths),
            "arrival": ARRIVAL, "expected_length": EXPECTED_LENGTH,
            "watermark_reserve_pages": Watermark.of_pool(ADMISSION_PAGES).reserve_pages,
            "step_limit": "none: every run drains (sum of lengths bounds the steps)",
            "rows": [asdict(row) for row in rows]}


def print_admission(table: dict[str, Any]) -> None:
    print(f"   pool {table['pool_rows']} rows = {table['n_pages']} pages of {table['page_size']}; "
          f"{table['requests']} requests, {table['rows_requested']} rows in all\n"
          f"   arrival: {table['arrival']}\n   expected length: {table['expected_length']}")
    columns = {"rule": "rule", "peak held": "peak_running", "OutOfPages": "out_of_pages",
               "requests hit": "requests_hit", "preempted": "preemptions",
               "rows recomputed": "rows_recomputed", "completed": "completed", "steps": "steps"}
    print(text_table(list(columns), [[r[key] for key in columns.values()] for r in table["rows"]],
                     left=(0,)))


def sinks_rtl_rows(since: float = 0.0) -> list[dict[str, Any]]:
    """Exercise 3 on the RTL, a row per simulator: rule, exact pages at every step, flat cycles."""
    spec = plans.sinks_spec()
    found = newest_results({spec.name}, since)
    rows = []
    for sim in SIMULATORS:
        result = found.get((sim, spec.name))
        if result is None:
            rows.append({"sim": sim, "ran": False})
            continue
        decode = result["decodes"][0]
        verdicts = decode["verdicts"]  # what the decode checks found (verif.scoreboard)
        rows.append({"sim": sim, "ran": True, "steps": len(result["steps"]),
                     "rule_ok": verdicts["tokens"] == [],
                     "pages_exact": verdicts["pages"] == [],
                     "pages_at_end": decode["pages_after"][-1],
                     "flat_cycles": verdicts["cycles"] == [],
                     "steady_cycles": totals(result)[-1]})
    return rows


def sinks_accuracy_rows() -> list[dict[str, Any]]:
    """Agreement with full attention, window alone against window plus sinks (floats)."""
    alone = example_b.window_accuracy_rows(windows=SINK_WINDOWS)
    sinks = example_b.window_accuracy_rows(windows=SINK_WINDOWS, sinks=plans.SINKS)
    return [{"window": a.window, "decisions": a.total,
             "agree_window": a.agree, "error_window": a.mean_logit_error,
             "agree_sinks": s.agree, "error_sinks": s.mean_logit_error}
            for a, s in zip(alone, sinks, strict=True)]


def sinks_table(since: float = 0.0) -> dict[str, Any]:
    spec = plans.sinks_spec()
    return {"window": spec.window, "sinks": spec.sinks, "page_size": spec.page_size,
            "rtl": sinks_rtl_rows(since), "accuracy": sinks_accuracy_rows()}


def print_sinks(table: dict[str, Any]) -> None:
    print(f"   W = {table['window']} with S = {table['sinks']} sinks, pages of "
          f"{table['page_size']}, on the RTL:")
    keys = ("steps", "rule_ok", "pages_exact", "pages_at_end", "flat_cycles", "steady_cycles")
    print(text_table(["simulator", "steps", "rule ok", "pages in use exact at every step",
                      "pages at the end", f"cycles flat from step {table['window']}",
                      "cycles per step"],
                     [[r["sim"], *([r[key] for key in keys] if r["ran"] else
                                   ["MISSING run", *["-"] * 5])] for r in table["rtl"]],
                     left=(0,)))
    print(f"   accuracy on the random models (teacher-forced, as example B part 3), "
          f"S = {table['sinks']}:")
    print(text_table(["W", "window alone", "logit error", "window + sinks", "logit error"],
                     [[r["window"], example_b.agreement_cell(r["agree_window"], r["decisions"]),
                       f"{100 * r['error_window']:.1f}%",
                       example_b.agreement_cell(r["agree_sinks"], r["decisions"]),
                       f"{100 * r['error_sinks']:.1f}%"] for r in table["accuracy"]]))
    print("   (agreement with full attention, then the mean relative logit error)")


@dataclass
class AlignmentRow:
    """Exercise 4: one (prompt, page size) pair of example B part 2, with and without alignment."""

    prompt: int
    page: int
    pages_unaligned: int  # part 2's "pages, shared"
    pages_aligned: int
    pages_saved: int  # unaligned - aligned; negative when padding costs a page
    cow_unaligned: int
    cow_aligned: int
    padding_rows: int  # zero rows padded onto the shared prompt (stored once)


def prefix_alignment_row(prompt: int, page_size: int) -> AlignmentRow:
    """Share ``prompt`` among part 2's requests, unpadded and padded to a page boundary."""
    shape = (prompt, page_size, example_b.SHARERS, example_b.OWN_ROWS, example_b.SHARE_POOL_PAGES)
    unaligned = share_prompt(*shape)
    aligned = share_prompt(*shape, align=True)
    return AlignmentRow(prompt, page_size, unaligned.pages, aligned.pages,
                        unaligned.pages - aligned.pages, unaligned.cow_copies, aligned.cow_copies,
                        aligned.padding_rows)


def prefix_alignment_rows() -> list[AlignmentRow]:
    return [prefix_alignment_row(prompt, page) for prompt in example_b.PROMPTS
            for page in example_b.SHARE_PAGE_SIZES]


def prefix_alignment_table() -> dict[str, Any]:
    """Exercise 4's table: part 2's six rows, pages and copies without and with alignment."""
    return {"sharers": example_b.SHARERS, "own_rows": example_b.OWN_ROWS,
            "rows": [asdict(row) for row in prefix_alignment_rows()]}


def print_prefix_alignment(table: dict[str, Any]) -> None:
    print(text_table(["prompt rows", "page", "pages, unaligned", "pages, aligned", "saved",
                      "copies, unaligned", "copies, aligned", "padding rows"],
                     [list(r.values()) for r in table["rows"]]))
    print(f"   padding is stored once, in the shared prompt; each of the {table['sharers']} "
          "requests' contexts holds those rows too, which attention must mask out")


@dataclass(frozen=True)
class Exercise:
    """One exercise: its key in out/exercises.json, its table and how to print it."""

    key: str
    title: str
    table: Callable[[float], dict[str, Any]]  # the RTL runs to read: those written since
    show: Callable[[dict[str, Any]], None]


EXERCISES = (
    Exercise("page_sizes", "exercise 1: pages of 1 to 16 rows, W = 8, on the RTL",
             page_sizes_table, print_page_sizes),
    Exercise("admission", "exercise 2: admission rules on example B's pool",
             lambda since: admission_table(), print_admission),
    Exercise("sinks", "exercise 3: attention sinks (W = 8, S = 2) on the RTL, and accuracy",
             sinks_table, print_sinks),
    Exercise("prefix_alignment", "exercise 4: prefix padded to a page boundary before fork",
             lambda since: prefix_alignment_table(), print_prefix_alignment),
)


def problems(results: dict[str, Any]) -> list[str]:
    """What the RTL exercises failed to show: a missing run, a broken rule, a wrong count."""
    found = [f"exercise 1: missing run {miss}" for miss in results["page_sizes"]["missing"]]
    found += [f"exercise 1: pages of {r['page_size']}: {what}"
              for r in results["page_sizes"]["rows"]
              for what, bad in (("cycles not flat", r["steady_cycles"] is None),
                                ("simulators differ", not r["simulators_agree"])) if bad]
    for r in results["sinks"]["rtl"]:
        checks = ("rule_ok", "pages_exact", "flat_cycles")
        found += ([f"exercise 3: {r['sim']}: missing run"] if not r["ran"] else
                  [f"exercise 3: {r['sim']}: {name} is False" for name in checks if not r[name]])
    return found


def run(since: float = 0.0) -> tuple[dict[str, Any], str]:
    """Every exercise's table, and the text they printed (for the report)."""
    results, text = {}, io.StringIO()
    for exercise in EXERCISES:
        with redirect_stdout(text):
            print(f"\n== {exercise.title}")
            results[exercise.key] = exercise.table(since)
            exercise.show(results[exercise.key])
    return results, text.getvalue()


def run_and_write(since: float = 0.0) -> tuple[bool, str, str]:
    """Print and write every exercise: (no problem, a one-line note, the printed text)."""
    results, text = run(since)
    print(text, end="")
    path = relative(write_json("exercises.json", results))
    print(f"\nwrote {path}")
    found = problems(results)
    for problem in found:
        print(f"PROBLEM: {problem}")
    return not found, f"{len(results)} exercises, {path}" + "".join(f"; {p}" for p in found), text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", type=float, default=0.0,
                        help="read RTL runs written since this time (epoch seconds)")
    ok, _, _ = run_and_write(parser.parse_args(argv).since)
    return 0 if ok else 1
