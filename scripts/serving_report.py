"""Serving on the RTL: the batch sweep's table, out/serving.json and the throughput plot.

Reads the serving runs' result files (verif/tests/test_serving.py: the workload at B = 1, 2, 4
on Verilator, B = 8 on both simulators); every number comes from a run that passed its
scoreboard: tokens generated, chip cycles from the RTL counters, tokens and request steps per
1,000 cycles, peak pages, preemptions, prefix-cache hits, pool usage and the recompute tax.
The batching gain is tokens per 1,000 cycles at B = 8 over B = 1.

    python -m scripts.serving_report [--since EPOCH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported: no display
import matplotlib.pyplot as plt

from scripts._common import REPO_ROOT, write_json
from verif.plans import SERVING_BATCHES, serving_spec
from verif.run_record import newest_results

SWEEP_SIM = "verilator"  # the sweep's simulator: B = 8 also runs on Icarus (the same numbers)
COLUMNS = (("B", "batch"), ("tokens", "tokens_generated"), ("chip runs", "chip_runs"),
           ("chip cycles", "chip_cycles"), ("tokens/kcycle", "tokens_per_kilocycle"),
           ("steps/kcycle", "steps_per_kilocycle"), ("peak pages", "peak_pages"),
           ("mean pages", "mean_pages"), ("preemptions", "preemptions"),
           ("prefix hits", "prefix_hits"), ("evictions", "evictions"),
           ("recompute tax", "recompute_tax"))


def serving_table(since: float = 0.0) -> dict[str, Any]:
    """One row per batch size from the newest passed runs; missing runs are named."""
    names = {serving_spec(b).name: b for b in SERVING_BATCHES}
    found = newest_results(set(names), since)
    rows, missing = [], []
    for name, batch in names.items():
        result = found.get((SWEEP_SIM, name))
        if result is None:
            missing.append(f"{SWEEP_SIM} {name}")
            continue
        rows.append({"batch": batch, **{k: v for k, v in result["serving"].items()
                                        if k != "spec"}})
    table: dict[str, Any] = {"simulator": SWEEP_SIM, "rows": rows, "missing": missing,
                             "spec": serving_spec(8).__dict__ | {"batch_size": "B"}}
    by_batch = {row["batch"]: row for row in rows}
    if 1 in by_batch and 8 in by_batch and by_batch[1]["tokens_per_kilocycle"]:
        table["gain_b8_over_b1"] = round(by_batch[8]["tokens_per_kilocycle"]
                                         / by_batch[1]["tokens_per_kilocycle"], 2)
    agree = [found.get((sim, serving_spec(8).name), {}).get("serving", {}).get("chip_cycles")
             for sim in ("icarus", "verilator")]
    table["b8_simulators_agree"] = agree[0] is not None and agree[0] == agree[1]
    return table


def print_table(table: dict[str, Any]) -> str:
    lines = [" ".join(f"{title:>13s}" for title, _ in COLUMNS)]
    lines += [" ".join(f"{row[key]!s:>13s}" for _, key in COLUMNS) for row in table["rows"]]
    lines += [f"   missing run: {miss}" for miss in table["missing"]]
    if "gain_b8_over_b1" in table:
        lines.append(f"   batching gain at B = 8: {table['gain_b8_over_b1']}x the tokens per "
                     "1,000 cycles of B = 1 (RTL counters)")
    lines.append(f"   B = 8 on Icarus and Verilator: the same chip cycles "
                 f"{table['b8_simulators_agree']}")
    text = "\n".join(lines)
    print(text)
    return text


def throughput_plot(table: dict[str, Any], path: Path) -> Path:
    figure, axes = plt.subplots(figsize=(6, 4))
    rows = table["rows"]
    axes.plot([r["batch"] for r in rows], [r["tokens_per_kilocycle"] for r in rows], "o-",
              label="tokens generated")
    axes.plot([r["batch"] for r in rows], [r["steps_per_kilocycle"] for r in rows], "s--",
              label="request steps (prompt included)")
    axes.set_xlabel("batch size B (requests per chip run)")
    axes.set_ylabel("per 1,000 chip cycles (RTL counters)")
    axes.set_title("Serving 24 requests, W = 8, 16 pages of 4 rows")
    axes.set_xticks(list(SERVING_BATCHES))
    axes.grid(alpha=0.3)
    axes.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", type=float, default=0.0)
    args = parser.parse_args(argv)
    table = serving_table(args.since)
    print_table(table)
    print(f"wrote {write_json('serving.json', table)}")
    if table["rows"]:
        print(f"wrote {throughput_plot(table, REPO_ROOT / 'out' / 'plots' / 'serving.png')}")
    return 1 if table["missing"] or not table["b8_simulators_agree"] else 0


if __name__ == "__main__":
    sys.exit(main())
