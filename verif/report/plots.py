"""PNG plots of the main job's report (matplotlib, Agg backend: no display needed).

Cycles per step and pages in use per step of the chapter decodes on the RTL (one colour per
window; Verilator dashed over Icarus, so a disagreement shows), and the memory and sharing
tables of example B (out/example_b.json, parts 1 and 2).
"""

from __future__ import annotations

from pathlib import Path

from verif.report.chapter import CHAPTER_WINDOWS, ChapterRun, label
from verif.report.figures import save_figure, subplots

STYLES = {"icarus": {"linestyle": "-", "linewidth": 2.5, "alpha": 0.6},
          "verilator": {"linestyle": "--", "linewidth": 1.2}}


def _per_step(runs: list[ChapterRun], values, ylabel: str, title: str, path: Path) -> Path:
    figure, axes = subplots(figsize=(7, 4))
    for run in runs:
        steps = [row.step for row in run.steps]
        axes.plot(steps, values(run), label=f"{label(run.window)} {run.sim}",
                  color=f"C{CHAPTER_WINDOWS.index(run.window)}", **STYLES.get(run.sim, {}))
    axes.set_xlabel("decode step")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return save_figure(figure, path)


def cycles_plot(runs: list[ChapterRun], path: Path) -> Path:
    return _per_step(runs, lambda run: run.cycles, "cycles (total counter)",
                     "RTL cycles per decode step, per window", path)


def pages_plot(runs: list[ChapterRun], path: Path) -> Path:
    return _per_step(runs, lambda run: [row.pages_in_use for row in run.steps],
                     "pages in use after the step", "KV-cache pages in use per step", path)


def memory_plot(part1: list[dict], path: Path) -> Path:
    """Example B part 1: requests held and rows wasted, per scheme."""
    names = ["contiguous" if row["page_size"] is None else f"page {row['page_size']}"
             for row in part1]
    wasted = [100 * (r["rows_reserved"] - r["rows_used"]) / r["rows_reserved"] for r in part1]
    figure, (held_axes, waste_axes) = subplots(1, 2, figsize=(9, 3.8))
    held_axes.bar(names, [row["requests_held"] for row in part1], color="tab:blue")
    held_axes.set_title("requests held in the pool")
    waste_axes.bar(names, wasted, color="tab:red")
    waste_axes.set_title("reserved rows wasted (%)")
    for axes in (held_axes, waste_axes):
        axes.tick_params(axis="x", labelrotation=30)
    figure.suptitle("example B: contiguous reservation vs pages")
    return save_figure(figure, path)


def sharing_plot(part2: list[dict], path: Path) -> Path:
    """Example B part 2: pages in use with the prompt copied vs shared, per (prompt, page)."""
    names = [f"prompt {row['prompt']}\npage {row['page']}" for row in part2]
    positions = range(len(part2))
    figure, axes = subplots(figsize=(8, 4))
    axes.bar([p - 0.2 for p in positions], [row["pages_copied"] for row in part2], width=0.4,
             label="prompt copied per request")
    axes.bar([p + 0.2 for p in positions], [row["pages_shared"] for row in part2], width=0.4,
             label="prompt shared (fork + copy-on-write)")
    axes.set_xticks(list(positions), names, fontsize=8)
    axes.set_ylabel("pages in use")
    axes.set_title("example B: prefix sharing")
    axes.legend(fontsize=8)
    return save_figure(figure, path)
