"""Example B: what paging, prefix sharing and sliding windows buy, in four parts and two figures.

1. memory waste, contiguous reservation against pages; 2. prefix sharing with copy-on-write;
3. a window's cost in accuracy, on random models (float, teacher-forced); 4. serving arithmetic
on an ASSUMED chip (derived, not measured). Figures: the chapter's 15.6 (part 3) and 15.7 (part 4).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from model.host.workloads import MAX_LENGTH, N_REQUESTS, sample_lengths, share_prompt
from model.kv.paged import OutOfPages, PageTable
from model.lm.tiny_lm import VOCAB, float_generate, float_logits, random_model
from model.paths import PLOTS
from verif.report.output import markdown_table, save_figure, subplots, text_table, write_json

# Part 1: the pool (the sampled request lengths are model/host/workloads.py's).
POOL_ROWS = 8192
PAGE_SIZES = (1, 4, 16, 64, 256)

# Part 2: a shared prompt, then rows of each request's own.
PROMPTS = (96, 100, 250)
SHARE_PAGE_SIZES = (16, 40)
SHARERS = 8
OWN_ROWS = 40
SHARE_POOL_PAGES = 400

# Part 3: random models x start tokens, the full-context float decode, then each window
# teacher-forced on its tokens (W = STEPS holds the whole context: exact by construction).
MODEL_SEEDS = (1, 2, 3)
STARTS = range(VOCAB)
STEPS = 24
WINDOWS = (2, 4, 8, 16, 24)
# The chapter's Figure 15.6, as printed: agreement (%) with full attention per window.
CHAPTER_AGREEMENT = {2: 71.5, 4: 76.2, 8: 82.6, 16: 93.5, 24: 100.0}
MODELS_DIFFER = (
    "Our random models are not the chapter's (its model's weights and generator are not "
    "given), so the agreement per window differs by a few points; the shape is the same: "
    "agreement rises with the window and is exact when the window holds the whole context."
)

# Part 4: ASSUMED chip and model (7B-class, int8 weights), as in the book's chapters 9 and 14.
CHIP_BYTES = 80 * 10**9
WEIGHT_BYTES = 7 * 10**9
KV_BYTES_PER_TOKEN = 256 * 1024
SERVING_WINDOW = 4096
CONTEXTS = (2048, 8192, 32768, 131072)
GIB = 2**30


@dataclass
class WasteRow:
    """One scheme of part 1; ``page_size`` is None for the contiguous reservation."""

    page_size: int | None
    requests_held: int
    rows_used: int
    rows_reserved: int

    @property
    def wasted(self) -> float:
        return (self.rows_reserved - self.rows_used) / self.rows_reserved


@dataclass
class SharingRow:
    """One (prompt, page size) pair of part 2: pages in use without and with sharing."""

    prompt: int
    page: int
    pages_copied: int  # every request stores the prompt itself
    pages_shared: int  # the prompt is stored once, forked, copied on write
    cow_copies: int

    @property
    def saved(self) -> float:
        return (self.pages_copied - self.pages_shared) / self.pages_copied


@dataclass
class WindowAccuracyRow:
    """One window size of part 3 against full attention, over every model, start and step."""

    window: int
    agree: int  # steps whose argmax equals full attention's
    total: int
    mean_logit_error: float  # mean over steps of |windowed - full| / |full| (RMS norms)


@dataclass
class ServingRow:
    """One context length of part 4 (derived, not measured)."""

    context: int
    kv_bytes_full: int
    kv_bytes_window: int
    max_batch_full: int
    max_batch_window: int


def admit_contiguous(lengths: Sequence[int]) -> WasteRow:
    """Admit requests in order while a full MAX_LENGTH reservation still fits."""
    held = min(len(lengths), POOL_ROWS // MAX_LENGTH)
    return WasteRow(None, held, sum(lengths[:held]), held * MAX_LENGTH)


def admit_paged(lengths: Sequence[int], page_size: int) -> WasteRow:
    """Admit requests in order, growing each row by row, until the pool runs out."""
    table = PageTable(POOL_ROWS // page_size, page_size)
    held = rows_used = 0
    for rid, length in enumerate(lengths):
        table.new(rid)
        try:
            for _ in range(length):
                table.append(rid, 0)
        except OutOfPages:
            table.release(rid)
            break
        held += 1
        rows_used += length
    return WasteRow(page_size, held, rows_used, table.used() * page_size)


def memory_waste_rows(lengths: Sequence[int] | None = None) -> list[WasteRow]:
    """Part 1's table: the contiguous scheme, then one row per page size."""
    lengths = sample_lengths() if lengths is None else lengths
    return [admit_contiguous(lengths)] + [admit_paged(lengths, p) for p in PAGE_SIZES]


WASTE_HEADER = ["scheme", "requests held", "rows used", "rows reserved", "wasted"]


def waste_cells(r: dict[str, Any]) -> list[Any]:
    scheme = "contiguous" if r["page_size"] is None else f"paged, page = {r['page_size']}"
    wasted = (r["rows_reserved"] - r["rows_used"]) / r["rows_reserved"]
    return [scheme, r["requests_held"], r["rows_used"], r["rows_reserved"], f"{100 * wasted:.1f}%"]


def part1() -> list[WasteRow]:
    lengths = sample_lengths()
    print(f"   {N_REQUESTS} sample lengths: mean {statistics.fmean(lengths):.0f}, "
          f"median {sorted(lengths)[N_REQUESTS // 2]}, max {max(lengths)}; "
          f"pool of {POOL_ROWS} rows; contiguous reserves {MAX_LENGTH} rows per request")
    rows = memory_waste_rows(lengths)
    print(text_table(WASTE_HEADER, [waste_cells(asdict(r)) for r in rows], left=(0,)))
    return rows


def share_prefix(prompt: int, page_size: int) -> SharingRow:
    """Pages in use for SHARERS requests of prompt + OWN_ROWS rows, copied vs shared."""
    copied = PageTable(SHARE_POOL_PAGES, page_size)
    for rid in range(SHARERS):
        copied.new(rid)
        for _ in range(prompt + OWN_ROWS):
            copied.append(rid, 0)
    shared = share_prompt(prompt, page_size, SHARERS, OWN_ROWS, SHARE_POOL_PAGES)
    return SharingRow(prompt, page_size, copied.used(), shared.pages, shared.cow_copies)


def prefix_sharing_rows() -> list[SharingRow]:
    """Part 2's table: every prompt length with every page size."""
    return [share_prefix(prompt, page) for prompt in PROMPTS for page in SHARE_PAGE_SIZES]


SHARING_HEADER = ["prompt rows", "page", "pages, copied", "pages, shared", "saved",
                  "copy-on-write copies"]


def sharing_cells(r: dict[str, Any]) -> list[Any]:
    saved = (r["pages_copied"] - r["pages_shared"]) / r["pages_copied"]
    return [r["prompt"], r["page"], r["pages_copied"], r["pages_shared"], f"{100 * saved:.0f}%",
            r["cow_copies"]]


def part2() -> list[SharingRow]:
    rows = prefix_sharing_rows()
    print(text_table(SHARING_HEADER, [sharing_cells(asdict(r)) for r in rows]))
    print("   a prompt ending mid-page costs each request one copy of the shared tail page")
    return rows


def window_accuracy_rows(seeds: tuple[int, ...] = MODEL_SEEDS, windows: tuple[int, ...] = WINDOWS,
                         sinks: int = 0) -> list[WindowAccuracyRow]:
    """One row per window, teacher-forced on the full-context float tokens (``sinks``: every
    window also keeps the first rows). Random models favour no recent token, the worst case for
    a window: this shows a window is not free, not a trained model's loss."""
    agree = dict.fromkeys(windows, 0)
    errors: dict[int, list[np.ndarray]] = {window: [] for window in windows}
    total = 0
    for seed in seeds:
        model = random_model(seed)
        for start in STARTS:
            inputs = float_generate(model, start, STEPS)[:STEPS]
            full = float_logits(model, inputs)
            total += STEPS
            for window in windows:
                windowed = float_logits(model, inputs, window, sinks)
                agree[window] += int((windowed.argmax(1) == full.argmax(1)).sum())
                difference = np.linalg.norm(windowed - full, axis=1)
                errors[window].append(difference / np.linalg.norm(full, axis=1))
    mean_error = {window: float(np.concatenate(errors[window]).mean()) for window in windows}
    return [WindowAccuracyRow(w, agree[w], total, mean_error[w]) for w in windows]


def agreement_cell(agree: int, total: int) -> str:
    return f"{agree}/{total} ({100 * agree / total:.1f}%)"


def part3() -> list[WindowAccuracyRow]:
    rows = window_accuracy_rows()
    print(text_table(["W", "agreement", "mean logit error"],
                     [[r.window, agreement_cell(r.agree, r.total),
                       f"{100 * r.mean_logit_error:.1f}%"] for r in rows]))
    print(f"   W = {STEPS} is the full context here ({STEPS} steps): exact by construction")
    return rows


def window_agreement_comparison(part3: list[dict]) -> dict[str, Any]:
    """Per window: our agreement (%) beside the chapter's, and why they differ."""
    windows = [row["window"] for row in part3]
    return {"window": windows,
            "ours_percent": [round(100 * row["agree"] / row["total"], 1) for row in part3],
            "chapter_percent": [CHAPTER_AGREEMENT.get(window) for window in windows],
            "decisions_per_window": [row["total"] for row in part3], "note": MODELS_DIFFER}


def comparison_table(comparison: dict[str, Any], markdown: bool = False) -> str:
    rows = [[w, f"{ours:.1f}%", f"{chapter:.1f}%" if chapter is not None else "-"]
            for w, ours, chapter in zip(comparison["window"], comparison["ours_percent"],
                                        comparison["chapter_percent"], strict=True)]
    return (markdown_table if markdown else text_table)(
        ["W", "agreement, ours", "agreement, chapter"], rows)


def serving_rows() -> list[ServingRow]:
    """Part 4's table: cache bytes per request and the largest batch the memory allows."""
    room = CHIP_BYTES - WEIGHT_BYTES  # the memory the weights leave for the cache
    rows = []
    for context in CONTEXTS:
        full = KV_BYTES_PER_TOKEN * context
        window = KV_BYTES_PER_TOKEN * min(context, SERVING_WINDOW)
        rows.append(ServingRow(context, full, window, room // full, room // window))
    return rows


def part4() -> list[ServingRow]:
    rows = serving_rows()
    print(text_table(["context", "KV GiB, full", "max batch, full",
                      f"KV GiB, window {SERVING_WINDOW}", "max batch, window"],
                     [[r.context, f"{r.kv_bytes_full / GIB:.2f}", r.max_batch_full,
                       f"{r.kv_bytes_window / GIB:.2f}", r.max_batch_window] for r in rows]))
    return rows


@dataclass(frozen=True)
class Part:
    """One part of the example; ``run`` prints its table and returns its rows."""

    key: str
    title: str
    run: Callable[[], Sequence[Any]]


PARTS = (
    Part("part1", "memory: contiguous reservation vs pages, how many requests fit", part1),
    Part("part2", f"prefix sharing: {SHARERS} requests share a prompt, then append {OWN_ROWS} "
         "rows each", part2),
    Part("part3", f"what a window costs in accuracy: random models, teacher-forced on the "
         f"full-context float tokens ({len(MODEL_SEEDS)} models x {VOCAB} starts x {STEPS} "
         "steps)", part3),
    Part("part4", f"serving arithmetic (DERIVED; ASSUMED {CHIP_BYTES // 10**9} GB chip, "
         f"{WEIGHT_BYTES // 10**9} GB int8 weights, {KV_BYTES_PER_TOKEN // 1024} KiB of cache "
         "per token)", part4),
)


def main() -> None:
    results = {}
    for number, part in enumerate(PARTS, start=1):
        print(f"\n== {number}. {part.title}")
        results[part.key] = [asdict(row) for row in part.run()]
    print(f"\nwrote {write_json('example_b.json', results)}")


def main_part3() -> None:
    rows = part3()
    print(f"\nwrote {write_json('example_b_part3.json', [asdict(r) for r in rows])}")


def markdown(example_b: dict[str, list[dict]]) -> str:
    """Parts 1 and 2 as Markdown tables, then part 3 beside the chapter's Figure 15.6."""
    comparison = window_agreement_comparison(example_b["part3"])
    return "\n\n".join([
        markdown_table(WASTE_HEADER, [waste_cells(r) for r in example_b["part1"]], left=(0,)),
        markdown_table(SHARING_HEADER, [sharing_cells(r) for r in example_b["part2"]]),
        "### Example B part 3 beside the chapter's Figure 15.6",
        comparison_table(comparison, markdown=True), comparison["note"]])


def memory_plot(part1: list[dict], path: Path) -> Path:
    """Part 1: requests held and rows wasted, per scheme."""
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
    """Part 2: pages in use with the prompt copied vs shared, per (prompt, page)."""
    names = [f"prompt {row['prompt']}\npage {row['page']}" for row in part2]
    positions = range(len(part2))
    figure, axes = subplots(figsize=(8, 4))
    axes.bar([p - 0.2 for p in positions], [row["pages_copied"] for row in part2], width=0.4,
             label="prompt copied per request")
    axes.bar([p + 0.2 for p in positions], [row["pages_shared"] for row in part2], width=0.4,
             label="prompt shared (fork + copy-on-write)")
    axes.set_xticks(list(positions), names, fontsize=8)
    axes.set(ylabel="pages in use", title="example B: prefix sharing")
    axes.legend(fontsize=8)
    return save_figure(figure, path)


def window_agreement_plot(part3: list[dict], path: Path) -> Path:
    """Figure 15.6: agreement with full attention against the window, ours and the chapter's."""
    comparison = window_agreement_comparison(part3)
    windows = comparison["window"]
    figure, axes = subplots(figsize=(7, 4))
    axes.plot(windows, comparison["ours_percent"], marker="o", color="tab:blue",
              label="ours (random models, this repository)")
    axes.plot(list(CHAPTER_AGREEMENT), list(CHAPTER_AGREEMENT.values()), marker="s",
              linestyle="--", color="tab:gray", label="chapter (Figure 15.6, recorded)")
    axes.set_xscale("log", base=2)
    axes.set_xticks(windows, [str(w) for w in windows])
    axes.set(xlabel="window W (rows)", ylabel="argmax agreement with full attention (%)",
             title=f"what a window costs: {comparison['decisions_per_window'][0]} decisions per W")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return save_figure(figure, path)


def batch_vs_context_plot(part4: list[dict], path: Path) -> Path:
    """Figure 15.7: the largest batch against the context, without and with a window."""
    contexts = [row["context"] for row in part4]
    figure, axes = subplots(figsize=(7, 4))
    axes.plot(contexts, [row["max_batch_full"] for row in part4], marker="o", color="tab:red",
              label="no window")
    axes.plot(contexts, [row["max_batch_window"] for row in part4], marker="s",
              color="tab:green", label=f"window of {SERVING_WINDOW}")
    for row in part4:  # the window's numbers above its line, the full context's below
        for key, offset in (("max_batch_window", 6), ("max_batch_full", -13)):
            axes.annotate(str(row[key]), (row["context"], row[key]), textcoords="offset points",
                          xytext=(0, offset), ha="center", fontsize=8)
    axes.set_xscale("log", base=2)
    axes.set(yscale="log", ylim=(1, 400), xlabel="context (tokens)", ylabel="max batch (requests)")
    axes.set_xticks(contexts, [f"{c:,}" for c in contexts])
    axes.set_title("what a window buys: the batch the memory allows (derived)\n"
                   f"{CHIP_BYTES // 10**9} GB chip, {WEIGHT_BYTES // 10**9} GB int8 weights, "
                   f"{KV_BYTES_PER_TOKEN // 1024} KiB of cache per token", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return save_figure(figure, path)


def plots(example_b: dict[str, list[dict]], folder: Path = PLOTS) -> list[Path]:
    """Every part's plot: memory, sharing, Figures 15.6 and 15.7."""
    return [memory_plot(example_b["part1"], folder / "example_b_memory.png"),
            sharing_plot(example_b["part2"], folder / "example_b_sharing.png"),
            window_agreement_plot(example_b["part3"], folder / "figure_15_6_window_agreement.png"),
            batch_vs_context_plot(example_b["part4"], folder / "figure_15_7_batch_vs_context.png")]


def main_figures() -> dict[str, Any]:
    """Compute parts 3 and 4, write Figures 15.6 and 15.7; return part 3's comparison."""
    part3 = [asdict(row) for row in window_accuracy_rows()]
    part4 = [asdict(row) for row in serving_rows()]
    for path in (window_agreement_plot(part3, PLOTS / "figure_15_6_window_agreement.png"),
                 batch_vs_context_plot(part4, PLOTS / "figure_15_7_batch_vs_context.png")):
        print(f"wrote {path}")
    comparison = window_agreement_comparison(part3)
    print(comparison_table(comparison))
    print(f"   {comparison['note']}")
    return comparison
