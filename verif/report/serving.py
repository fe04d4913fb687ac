"""Serving on the RTL: the batch sweep's table, out/serving.json and the throughput plot.

From the serving runs that passed their scoreboard: per gather mode and batch size, COLUMNS; the
batching gain (B = 8 over B = 1) against two bounds; chip gather's cost against host gather's.
``python -m scripts.report serving [--since EPOCH]``
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model.compiler.gather import GATHER_MODES
from model.host.throughput import batching_ceiling
from model.paths import PLOTS, relative
from sim.toolchain import SIMULATORS
from verif.report.chapter import simulators_agree
from verif.report.output import save_figure, subplots, text_table, write_json
from verif.runs.plans import SERVING_BATCHES, serving_spec
from verif.runs.record import newest_results

SWEEP_SIM = "verilator"  # the sweep's simulator: B = 8 also runs on Icarus (the same numbers)
COLUMNS = (("gather", "gather"), ("B", "batch"), ("tokens", "tokens_generated"),
           ("chip runs", "chip_runs"), ("chip cycles", "chip_cycles"),
           ("tokens/kcycle", "tokens_per_kilocycle"), ("steps/kcycle", "steps_per_kilocycle"),
           ("peak pages", "peak_pages"), ("mean pages", "mean_pages"),
           ("preemptions", "preemptions"), ("prefix hits", "prefix_hits"),
           ("evictions", "evictions"), ("recompute tax", "recompute_tax"),
           ("host words", "host_words"), ("port words", "port_words"))
COST_COLUMNS = (("B", "batch"), ("host cycles", "host_cycles"), ("chip cycles", "chip_cycles"),
                ("chip / host", "cycle_ratio"), ("host dma", "host_dma_cycles"),
                ("chip dma", "chip_dma_cycles"), ("host words", "host_words_host"),
                ("chip words", "host_words_chip"), ("same tokens", "same_tokens"))
CEILING_CONTEXTS = (1, 2, 4, 8)  # up to the workload's window (serving_spec's W = 8)
NOT_IN_ROWS = ("spec", "generated")  # kept in the result files, too long for the table


def serving_table(since: float = 0.0) -> dict[str, Any]:
    """The newest passed runs' rows (missing ones named), the gain of batching per mode and its
    bounds, chip gather's cost per B, and whether B = 8 agreed on both simulators."""
    names = {serving_spec(b, g).name: (g, b) for g in GATHER_MODES for b in SERVING_BATCHES}
    found = newest_results(set(names), since)
    rows, missing, runs = [], [], {}
    for name, (gather, batch) in names.items():
        result = found.get((SWEEP_SIM, name))
        if result is None:
            missing.append(f"{SWEEP_SIM} {name}")
            continue
        runs[gather, batch] = result["serving"]
        rows.append({"batch": batch, **{k: v for k, v in result["serving"].items()
                                        if k not in NOT_IN_ROWS}})
    table: dict[str, Any] = {
        "simulator": SWEEP_SIM, "rows": rows, "missing": missing,
        "spec": serving_spec(8).__dict__ | {"batch_size": "B", "gather": "host or chip"},
        "gather_cost": gather_cost(runs), "ceiling": ceiling()}
    for gather in GATHER_MODES:
        gain = batching_gain(runs, gather)
        if gain is not None:
            table["gain_b8_over_b1" + ("" if gather == "host" else f"_{gather}")] = gain
    table["port_bound_gain"] = {gather: bound for gather in GATHER_MODES
                                if (bound := port_bound_gain(runs, gather)) is not None}
    table["attention_free_gain"] = {gather: bound for gather in GATHER_MODES
                                    if (bound := attention_free_gain(runs, gather)) is not None}
    table["b8_simulators_agree"] = agreement(found)
    return table


def gain_b8(runs: dict[tuple[str, int], dict], gather: str,
            rate: Callable[[dict], float | None]) -> float | None:
    """A run's ``rate`` at B = 8 over B = 1 in one gather mode, to 2 places (None: a run
    missing or a rate missing or zero at B = 1)."""
    one, eight = runs.get((gather, 1)), runs.get((gather, 8))
    rates = [rate(run) for run in (one, eight) if run is not None]
    if len(rates) < 2 or not rates[0] or rates[1] is None:
        return None
    return round(rates[1] / rates[0], 2)


def batching_gain(runs: dict[tuple[str, int], dict], gather: str) -> float | None:
    """Tokens per 1,000 cycles at B = 8 over B = 1 (RTL counters)."""
    return gain_b8(runs, gather, lambda run: run["tokens_per_kilocycle"])


def port_bound_gain(runs: dict[tuple[str, int], dict], gather: str) -> float | None:
    """Tokens per port word, B = 8 over B = 1: the gain of a chip taking a cycle per word through
    its memory port (the most faster units can give while weights and rows cross it each run)."""
    return gain_b8(runs, gather, lambda run: run["tokens_generated"] / run["port_words"]
                   if run.get("port_words") else None)


def attention_free_gain(runs: dict[tuple[str, int], dict], gather: str) -> float | None:
    """Tokens per cycle, B = 8 over B = 1, if every request's attention (rows read, scores,
    SOFTMAX, weighted sum) took no cycle: the most that cutting it can give this workload."""
    return gain_b8(runs, gather, lambda run: run["tokens_generated"]
                   / (run["chip_cycles"] - run["attention_cycles"])
                   if "attention_cycles" in run else None)


def ceiling() -> list[dict[str, Any]]:
    """The batching gain the chip allows (reference machine) at the contexts the workload's
    window lets a request reach: what the measured gain is held against."""
    spec = serving_spec(8)
    programs = spec.scheduler().programs
    return [{"context": c.context, "solo_cycles": c.solo_cycles, "gain_b8": c.gain_b8,
             "marginal_cycles": c.marginal_cycles, "limit": round(c.limit, 2)}
            for c in batching_ceiling(programs, CEILING_CONTEXTS)]


def gather_cost(runs: dict[tuple[str, int], dict]) -> list[dict[str, Any]]:
    """Per B run in both modes: cycles, chip over host, DMA cycles, the host's words for the
    cached rows, and whether the tokens were the same."""
    cost = []
    for batch in SERVING_BATCHES:
        host, chip = runs.get(("host", batch)), runs.get(("chip", batch))
        if host is None or chip is None:
            continue
        cost.append({"batch": batch, "host_cycles": host["chip_cycles"],
                     "chip_cycles": chip["chip_cycles"],
                     "cycle_ratio": round(chip["chip_cycles"] / host["chip_cycles"], 4),
                     "host_dma_cycles": host["dma_cycles"], "chip_dma_cycles": chip["dma_cycles"],
                     "host_words_host": host["host_words"], "host_words_chip": chip["host_words"],
                     "same_tokens": host["generated"] == chip["generated"]})
    return cost


def b8_agree(found: dict[tuple[str, str], dict], gather: str) -> bool | None:
    """B = 8 in one gather mode: the same chip cycles and tokens on Icarus and Verilator; None
    when they ran different workloads (Icarus's shorter one, checked by its scoreboard only)."""
    name = serving_spec(8, gather).name
    runs = {sim: run for sim in SIMULATORS
            if (run := found.get((sim, name), {}).get("serving")) is not None}
    specs = [run["spec"] for run in runs.values()]
    if len(runs) == len(SIMULATORS) and any(spec != specs[0] for spec in specs):
        return None
    return simulators_agree({sim: [({"chip_cycles": run["chip_cycles"],
                                     "tokens": run["generated"]}, [])]
                             for sim, run in runs.items()})


def agreement(found: dict[tuple[str, str], dict]) -> bool | None:
    """False if either gather mode differs or is missing, None if either was not comparable."""
    verdicts = [b8_agree(found, gather) for gather in GATHER_MODES]
    return False if False in verdicts else None if None in verdicts else True


def print_table(table: dict[str, Any]) -> str:
    lines = [text_table([title for title, _ in COLUMNS],
                        [[row[key] for _, key in COLUMNS] for row in table["rows"]], left=(0,))]
    lines += [f"   missing run: {miss}" for miss in table["missing"]]
    gains = [[gather, *(f"{gain}x" if gain is not None else "-" for gain in (
        table.get("gain_b8_over_b1" + ("" if gather == "host" else f"_{gather}")),
        table["port_bound_gain"].get(gather), table["attention_free_gain"].get(gather)))]
        for gather in GATHER_MODES]
    lines += ["   the gain of batching, tokens per 1,000 cycles at B = 8 over B = 1 (RTL "
              "counters), and two bounds: port-bound, a chip whose runs take a cycle per data "
              "word through its memory port (tokens per port word); attention-free, every "
              "request's attention (its rows' reads, score matmul, SOFTMAX, weighted sum) "
              "taking no cycle, the runs and request steps unchanged",
              text_table(["gather", "batching gain", "port-bound gain", "attention-free gain"],
                         gains, left=(0,))]
    if table["gather_cost"]:
        lines.append("   the cost of chip gather: chip cycles against host gather's, per B")
        lines.append(text_table([title for title, _ in COST_COLUMNS],
                                [[row[key] for _, key in COST_COLUMNS]
                                 for row in table["gather_cost"]]))
    lines += ["   the chip's batching ceiling (reference machine, every request at one context): "
              "the gain at B = 8, and as B grows without bound (attention runs per request)",
              text_table(["context", "gain at B = 8", "limit", "solo cycles", "more per request"],
                         [[c["context"], f"{c['gain_b8']}x", f"{c['limit']}x", c["solo_cycles"],
                           f"{c['marginal_cycles']:.0f}"] for c in table["ceiling"]])]
    agree = table["b8_simulators_agree"]
    lines.append("   B = 8 on Icarus and Verilator, both gather modes: " + (
        "not compared: Icarus ran the shorter workload (fewer requests); each run equals the "
        "reference machine, checked by its scoreboard" if agree is None else
        f"the same chip cycles and tokens {agree}"))
    text = "\n".join(lines)
    print(text)
    return text


def throughput_plot(table: dict[str, Any], path: Path) -> Path:
    figure, axes = subplots(figsize=(6, 4))
    for gather, color in zip(GATHER_MODES, ("tab:blue", "tab:orange"), strict=True):
        rows = [r for r in table["rows"] if r["gather"] == gather]
        axes.plot([r["batch"] for r in rows], [r["tokens_per_kilocycle"] for r in rows], "o-",
                  color=color, label=f"tokens generated, {gather} gather")
        axes.plot([r["batch"] for r in rows], [r["steps_per_kilocycle"] for r in rows], "s--",
                  color=color, label=f"request steps (prompt included), {gather} gather")
    axes.set(xlabel="batch size B (requests per chip run)",
             ylabel="per 1,000 chip cycles (RTL counters)",
             title="Serving 24 requests, W = 8, 16 pages of 4 rows")
    axes.set_xticks(list(SERVING_BATCHES))
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    return save_figure(figure, path)


def run_and_write(since: float = 0.0) -> tuple[bool, str, str]:
    """Print the table, write out/serving.json and the plot: (ok, a one-line note, the text)."""
    table = serving_table(since)
    text = print_table(table)
    path = relative(write_json("serving.json", table))
    print(f"wrote {path}")
    if table["rows"]:
        print(f"wrote {relative(throughput_plot(table, PLOTS / 'serving.png'))}")
    ok = not table["missing"] and table["b8_simulators_agree"] is not False
    gain = table.get("gain_b8_over_b1")
    return ok, (f"{len(table['rows'])} batch sizes, {path}"
                + (f", gain at B = 8: {gain}x" if gain else "")
                + ("" if ok else f"; missing {table['missing']} or simulators differ")), text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", type=float, default=0.0)
    return 0 if run_and_write(parser.parse_args(argv).since)[0] else 1
