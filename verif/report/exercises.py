"""The chapter's exercises, as features: one table each, in out/exercises.json.

* Exercises 1 (page sizes) and 3 (attention sinks) ran on the RTL, under the testbench, as
  decode tests; verif/report/exercise_decodes.py reads their tables from the runs' result files.

* Exercise 2, admission: example B's pool (8,192 rows in pages of 16, part 1's main page
  size) and its 400 sampled lengths, all queued at step 0; each rule of model/kv/admission.py
  runs the queue to the end in model/kv/admission_sim.py, which documents the step rule
  (grow a row per step, preempt the latest admitted on OutOfPages, recompute on readmission).
* Exercise 4, prefix alignment: example B part 2's six (prompt, page size) pairs with the
  prompt padded to a page boundary before the forks (``PageTable.pad_to_page``), against
  part 2's unaligned numbers.

Each exercise is one entry of ``EXERCISES``: a key of out/exercises.json, a function that
returns the JSON-ready table and one that prints it. Adding an exercise is one line there.

Run from the repository root: ``python -m scripts.report exercises [--since EPOCH]`` (the RTL runs
written since then; default: the newest ones) or ``python verif/report/exercises.py``. Writes
``out/exercises.json``; exits non-zero when an RTL run is missing or an exercise's check fails.
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import asdict, dataclass
from typing import Any

from model.host.workloads import N_REQUESTS, sample_lengths, share_prompt
from model.kv.admission import AdmissionRule, CoversExpected, OnePageFree, Watermark
from model.kv.admission_sim import simulate
from verif.report.example_b import (
    OWN_ROWS,
    POOL_ROWS,
    PROMPTS,
    SHARE_PAGE_SIZES,
    SHARE_POOL_PAGES,
    SHARERS,
)
from verif.report.exercise_decodes import (
    page_sizes_table,
    print_page_sizes,
    print_sinks,
    sinks_table,
)
from verif.report.output import write_json

# ---- exercise 2: admission -----------------------------------------------------------------

ADMISSION_PAGE_SIZE = 16  # example B part 1's main comparison (the chapter's Figure 15.4)
ADMISSION_PAGES = POOL_ROWS // ADMISSION_PAGE_SIZE
ARRIVAL = (
    f"all {N_REQUESTS} requests queued at step 0 in sample order; first come, first served; "
    "each step every running request appends one row, then the queue head is admitted while "
    "the rule allows (its first row written at once)"
)
EXPECTED_LENGTH = "each request's true length (an oracle; a server would know a prediction)"


def admission_rules(n_pages: int) -> list[tuple[AdmissionRule, bool]]:
    """(rule, net_of_running) per row: the three rules, then exercise 2's rule net of running."""
    return [
        (OnePageFree(), False),
        (CoversExpected(), False),
        (Watermark.of_pool(n_pages), False),
        (CoversExpected(), True),
    ]


def admission_table() -> dict[str, Any]:
    """Exercise 2's table: one row per rule, each run until the queue drains."""
    lengths = sample_lengths()
    rules = admission_rules(ADMISSION_PAGES)
    rows = [
        simulate(lengths, rule, ADMISSION_PAGES, ADMISSION_PAGE_SIZE, net_of_running=net)
        for rule, net in rules
    ]
    return {
        "pool_rows": POOL_ROWS,
        "page_size": ADMISSION_PAGE_SIZE,
        "n_pages": ADMISSION_PAGES,
        "requests": len(lengths),
        "rows_requested": sum(lengths),
        "arrival": ARRIVAL,
        "expected_length": EXPECTED_LENGTH,
        "watermark_reserve_pages": Watermark.of_pool(ADMISSION_PAGES).reserve_pages,
        "step_limit": "none: every run drains (sum of lengths bounds the steps)",
        "rows": [asdict(row) for row in rows],
    }


def print_admission(table: dict[str, Any]) -> None:
    print(
        f"   pool {table['pool_rows']} rows = {table['n_pages']} pages of {table['page_size']}; "
        f"{table['requests']} requests, {table['rows_requested']} rows in all\n"
        f"   arrival: {table['arrival']}\n   expected length: {table['expected_length']}"
    )
    print(
        f"{'rule':48s} {'peak held':>9s} {'OutOfPages':>10s} {'requests hit':>12s} "
        f"{'preempted':>9s} {'rows recomputed':>15s} {'completed':>9s} {'steps':>6s}"
    )
    for r in table["rows"]:
        print(
            f"{r['rule']:48s} {r['peak_running']:9d} {r['out_of_pages']:10d} "
            f"{r['requests_hit']:12d} {r['preemptions']:9d} {r['rows_recomputed']:15d} "
            f"{r['completed']:9d} {r['steps']:6d}"
        )


# ---- exercise 4: prefix alignment ----------------------------------------------------------


@dataclass
class AlignmentRow:
    """One (prompt, page size) pair of example B part 2, with and without alignment."""

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
    shape = (prompt, page_size, SHARERS, OWN_ROWS, SHARE_POOL_PAGES)
    unaligned = share_prompt(*shape)
    aligned = share_prompt(*shape, align=True)
    return AlignmentRow(
        prompt, page_size, unaligned.pages, aligned.pages, unaligned.pages - aligned.pages,
        unaligned.cow_copies, aligned.cow_copies, aligned.padding_rows,
    )  # fmt: skip


def prefix_alignment_rows() -> list[AlignmentRow]:
    return [prefix_alignment_row(prompt, page) for prompt in PROMPTS for page in SHARE_PAGE_SIZES]


def prefix_alignment_table() -> dict[str, Any]:
    """Exercise 4's table: part 2's six rows, pages and copies without and with alignment."""
    return {
        "sharers": SHARERS,
        "own_rows": OWN_ROWS,
        "rows": [asdict(row) for row in prefix_alignment_rows()],
    }


def print_prefix_alignment(table: dict[str, Any]) -> None:
    print(
        f"{'prompt rows':>11s} {'page':>5s} {'pages, unaligned':>16s} {'pages, aligned':>14s} "
        f"{'saved':>6s} {'copies, unaligned':>17s} {'copies, aligned':>15s} {'padding rows':>12s}"
    )
    for r in table["rows"]:
        print(
            f"{r['prompt']:11d} {r['page']:5d} {r['pages_unaligned']:16d} "
            f"{r['pages_aligned']:14d} {r['pages_saved']:6d} {r['cow_unaligned']:17d} "
            f"{r['cow_aligned']:15d} {r['padding_rows']:12d}"
        )
    print(
        f"   padding is stored once, in the shared prompt; each of the {table['sharers']} "
        "requests' contexts holds those rows too, which attention must mask out"
    )


# ---- the exercises -------------------------------------------------------------------------


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
)  # fmt: skip


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", type=float, default=0.0,
                        help="read RTL runs written since this time (epoch seconds)")
    args = parser.parse_args(argv)
    results, text = run(args.since)
    print(text, end="")
    print(f"\nwrote {write_json('exercises.json', results)}")
    found = problems(results)
    for problem in found:
        print(f"PROBLEM: {problem}")
    return 1 if found else 0
