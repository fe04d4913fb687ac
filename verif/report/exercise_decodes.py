"""Exercises 1 and 3 on the RTL: their tables, read from the decode runs' result files.

The decodes themselves are pytest tests (verif/tests/test_decode.py::test_page_size_decode and
::test_sinks_decode, both simulators, under the pyuvm testbench and its scoreboard); this module
only reads what they recorded: pages in use after every step, the cycle counters, the tokens.
Nothing here predicts a value: the runs were checked already (scoreboard, decode checks).

* Exercise 1, page sizes: W = 8, 32 steps, pages of 1, 2, 4, 8 and 16 rows. Per page size: rows
  reserved and pages in use at the end, block-table entries (live, and dropped by trims), peak
  pages, cycles per step once the window is full; and the answers to the exercise's two
  questions, computed from the table.
* Exercise 3, attention sinks: W = 8 keeping S = 2 sink rows; whether the rule held, pages in use
  equal the closed form at every step, cycles flat (the decode checks' verdicts, as the runs
  recorded them); and, in pure Python, what sinks change in
  accuracy against the window alone (example B part 3's 1,152 decisions per window).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from model.chip.geometry import pages_for
from sim.toolchain import SIMULATORS
from verif.report.example_b_part3 import window_accuracy_rows
from verif.runs.plans import (
    CHAPTER_STEPS,
    EXERCISE_WINDOW,
    PAGE_SIZES,
    SINKS,
    page_size_spec,
    sinks_spec,
)
from verif.runs.record import newest_results
from verif.runs.spec import DecodeSpec

SINK_WINDOWS = (4, 8, 16)  # example B part 3's windows that can hold the sinks and more


def totals(result: dict) -> list[int]:
    return [step["counters"]["total"] for step in result["steps"]]


def simulators_agree(results: list[dict]) -> bool:
    """Every simulator ran and reported the same counters and output words at every step they
    both ran (Icarus runs the exercises' decodes for fewer steps, verif.runs.plans)."""
    runs = [[(s["counters"], s.get("outputs")) for s in r["steps"]] for r in results]
    common = min(len(run) for run in runs)
    return len(runs) == len(SIMULATORS) and all(run[:common] == runs[0][:common]
                                                 for run in runs)


def longest(results: list[dict]) -> dict:
    """The run with the most steps (the full-length one)."""
    return max(results, key=lambda result: len(result["steps"]))


# ---- exercise 1: page sizes ------------------------------------------------------------------


@dataclass
class PageSizeRow:
    """One page size, as the RTL decodes recorded it."""

    page_size: int
    rows_reserved: int  # pages in use at the end x page size
    pages_at_end: int
    table_live: int  # block-table entries still held at the end
    table_dropped: int  # entries released by trims (logical pages below the window)
    peak_pages: int
    steady_cycles: int | None  # cycles per step from step W on (None: not flat)
    simulators_agree: bool


def page_size_row(page_size: int, results: list[dict]) -> PageSizeRow:
    full = longest(results)
    decode = full["decodes"][0]
    pages = decode["pages_after"]
    flat = decode["verdicts"].get("cycles") == []  # the decode check's verdict
    return PageSizeRow(page_size, pages[-1] * page_size, pages[-1], pages[-1],
                       pages_for(len(pages), page_size) - pages[-1], max(pages),
                       totals(full)[-1] if flat else None, simulators_agree(results))


def page_sizes_table(since: float = 0.0) -> dict[str, Any]:
    """Exercise 1's table from the RTL runs; missing runs are named, not invented."""
    names = {page_size_spec(p).name: p for p in PAGE_SIZES}
    found = newest_results(set(names), since)
    rows, missing = [], []
    for name, page_size in names.items():
        results = [found[(sim, name)] for sim in SIMULATORS if (sim, name) in found]
        missing += [f"{sim} {name}" for sim in SIMULATORS if (sim, name) not in found]
        if results:
            rows.append(page_size_row(page_size, results))
    table: dict[str, Any] = {"window": EXERCISE_WINDOW, "steps": CHAPTER_STEPS,
                             "rows": [asdict(r) for r in rows], "missing": missing}
    if rows:
        fewest = min(rows, key=lambda r: (r.rows_reserved, r.page_size))
        largest = max(rows, key=lambda r: (r.table_live + r.table_dropped, -r.page_size))
        table["fewest_rows_reserved"] = fewest.page_size
        table["largest_block_table"] = largest.page_size
    return table


def print_page_sizes(table: dict[str, Any]) -> None:
    print(f"   W = {table['window']}, {table['steps']} steps, structured model, on the RTL")
    print(f"{'page':>5s} {'rows reserved':>13s} {'pages at end':>12s} {'table live':>10s} "
          f"{'dropped':>8s} {'peak pages':>10s} {'cycles/step from W':>18s} {'sims agree':>10s}")
    for r in table["rows"]:
        print(f"{r['page_size']:5d} {r['rows_reserved']:13d} {r['pages_at_end']:12d} "
              f"{r['table_live']:10d} {r['table_dropped']:8d} {r['peak_pages']:10d} "
              f"{r['steady_cycles'] or 'not flat':>18} {r['simulators_agree']!s:>10s}")
    print("   (sims agree: the same counters and output words at every step both simulators ran)")
    for miss in table["missing"]:
        print(f"   MISSING run: {miss}")
    if "fewest_rows_reserved" in table:
        print(f"   fewest rows reserved at the end: pages of {table['fewest_rows_reserved']}; "
              f"largest block table (entries live + dropped): pages of "
              f"{table['largest_block_table']}")


# ---- exercise 3: attention sinks ------------------------------------------------------------


def sinks_rtl_rows(since: float = 0.0) -> list[dict[str, Any]]:
    """One row per simulator: rule, exact pages at every step, flat cycles."""
    spec: DecodeSpec = sinks_spec()
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
    alone = window_accuracy_rows(windows=SINK_WINDOWS)
    sinks = window_accuracy_rows(windows=SINK_WINDOWS, sinks=SINKS)
    return [{"window": a.window, "decisions": a.total,
             "agree_window": a.agree, "error_window": a.mean_logit_error,
             "agree_sinks": s.agree, "error_sinks": s.mean_logit_error}
            for a, s in zip(alone, sinks, strict=True)]


def sinks_table(since: float = 0.0) -> dict[str, Any]:
    spec = sinks_spec()
    return {"window": spec.window, "sinks": spec.sinks, "page_size": spec.page_size,
            "rtl": sinks_rtl_rows(since), "accuracy": sinks_accuracy_rows()}


def print_sinks(table: dict[str, Any]) -> None:
    print(f"   W = {table['window']} with S = {table['sinks']} sinks, pages of "
          f"{table['page_size']}, on the RTL:")
    for r in table["rtl"]:
        if not r["ran"]:
            print(f"   {r['sim']:10s} MISSING run")
            continue
        print(f"   {r['sim']:10s} {r['steps']} steps: rule ok {r['rule_ok']}; pages in use exact "
              f"at every step "
              f"{r['pages_exact']} ({r['pages_at_end']} at the end); cycles flat from step "
              f"{table['window']} {r['flat_cycles']} ({r['steady_cycles']} per step)")
    print(f"   accuracy on the random models (teacher-forced, as example B part 3), "
          f"S = {table['sinks']}:")
    print(f"{'W':>4s} {'window alone':>22s} {'window + sinks':>22s}")
    for r in table["accuracy"]:
        n = r["decisions"]
        print(f"{r['window']:4d} {r['agree_window']:5d}/{n} ({100 * r['agree_window'] / n:5.1f}%)"
              f" {100 * r['error_window']:5.1f}% "
              f"{r['agree_sinks']:5d}/{n} ({100 * r['agree_sinks'] / n:5.1f}%)"
              f" {100 * r['error_sinks']:5.1f}%")
    print("   (agreement with full attention, then the mean relative logit error)")
