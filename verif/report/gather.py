"""Host gather against chip gather: the words the host writes and the chip's cycles per step.

The chapter's decodes in both modes on the reference machine and, with ``--runs``, on the RTL
(whose memory mirror skips words that already hold their value); out/gather.json, Markdown, plot.
``python -m scripts.report gather [--runs out/runs] [--out out]``
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from pathlib import Path

from model.compiler.gather import GATHER_MODES
from model.host.decode import decode
from model.lm.tiny_lm import make_model
from model.paths import OUT
from verif.report.chapter import collect_chip_gather_runs, collect_runs
from verif.report.chapter import label as window_label
from verif.report.output import markdown_table, save_figure, subplots, write_json
from verif.runs.plans import CHAPTER_STEPS, CHAPTER_WINDOWS, chapter_spec
from verif.runs.record import RESULT_FILE


@dataclass
class GatherSteps:
    """One decode (a window, a gather mode) step by step."""

    window: int | None
    gather: str
    source: str  # "model" (the reference machine) or the simulator that ran it
    host_words: list[int]
    cycles: list[int]

    @property
    def full(self) -> int:
        """The first step with a full window (every later one costs the same)."""
        return min(self.window or CHAPTER_STEPS, CHAPTER_STEPS)

    @property
    def steady_words(self) -> float:
        tail = self.host_words[self.full - 1 :]
        return sum(tail) / len(tail)

    @property
    def steady_cycles(self) -> int:
        return self.cycles[-1]


def model_decodes() -> list[GatherSteps]:
    """Both modes of every chapter decode on the reference machine."""
    spec = chapter_spec(None)
    model = make_model(spec.model, spec.model_seed)
    decodes = []
    for window in CHAPTER_WINDOWS:
        for gather in GATHER_MODES:
            run = decode(model, CHAPTER_STEPS, spec.start, window, page_size=spec.page_size,
                         n_pages=spec.n_pages, gather=gather)
            decodes.append(GatherSteps(window, gather, "model",
                                       [r.inputs.host_words for r in run.records],
                                       [r.cycles[0] for r in run.records]))
    return decodes


def rtl_decodes(run_dirs: list[Path]) -> list[GatherSteps]:
    """The chapter decodes in both modes that passed on the RTL at full length (Icarus runs
    chip gather's shorter version in make run), from their result files."""
    runs = collect_runs(run_dirs) + collect_chip_gather_runs(run_dirs)
    return [GatherSteps(run.window, run.gather, run.sim, run.host_words, run.cycles)
            for run in runs
            if run.status == "passed" and run.host_words and len(run.steps) == CHAPTER_STEPS]


def summary_rows(decodes: list[GatherSteps]) -> list[list[str]]:
    """Per window and source: each mode's steady state, and chip gather's cycle overhead."""
    rows = []
    by_key = {(d.window, d.source, d.gather): d for d in decodes}
    for (window, source, gather), d in by_key.items():
        host = by_key.get((window, source, "host"))
        overhead = (f"{100 * (d.steady_cycles / host.steady_cycles - 1):+.2f}%"
                    if host and gather == "chip" else "")
        rows.append([window_label(window), gather, source, f"{d.steady_words:g}",
                     str(d.steady_cycles), overhead, str(sum(d.host_words)), str(sum(d.cycles))])
    return rows


SUMMARY_HEADER = ["window", "gather", "source", "host words / step (full window)",
                  "cycles / step (full window)", "chip cycles vs host", "host words, all steps",
                  "cycles, all steps"]


def step_rows(decodes: list[GatherSteps], window: int | None) -> tuple[list[str], list]:
    """Every step of one window's decodes on the reference machine, both modes side by side."""
    chosen = [d for d in decodes if d.window == window and d.source == "model"]
    header = ["step"] + [f"{d.gather}: {what}" for d in chosen for what in ("words", "cycles")]
    rows = [[str(step)] + [str(value) for d in chosen
                           for value in (d.host_words[step - 1], d.cycles[step - 1])]
            for step in range(1, CHAPTER_STEPS + 1)]
    return header, rows


def plot(decodes: list[GatherSteps], path: Path) -> Path:
    """Host words written and chip cycles per step, both modes, every window (model)."""
    figure, (words_axes, cycles_axes) = subplots(1, 2, figsize=(11, 4))
    for d in (d for d in decodes if d.source == "model"):
        style = {"color": f"C{CHAPTER_WINDOWS.index(d.window)}",
                 "linestyle": "-" if d.gather == "host" else "--"}
        name = f"{window_label(d.window)} {d.gather} gather"
        steps = range(1, len(d.cycles) + 1)
        # a log axis has no 0: a step that writes nothing is drawn at 0.5
        words_axes.plot(steps, [max(w, 0.5) for w in d.host_words], label=name, **style)
        cycles_axes.plot(steps, d.cycles, label=name, **style)
    words_axes.set(yscale="log", xlabel="decode step", ylabel="words the host writes (log)",
                   title="host words written per step")
    cycles_axes.set(xlabel="decode step", ylabel="cycles (total counter)",
                    title="chip cycles per step")
    for axes in (words_axes, cycles_axes):
        axes.grid(alpha=0.3)
        axes.legend(fontsize=7)
    return save_figure(figure, path)


def report(decodes: list[GatherSteps], out: Path) -> str:
    """The Markdown report; also writes out/gather.json and the plot."""
    write_json("gather.json", [asdict(d) for d in decodes])
    picture = plot(decodes, out / "plots" / "gather_per_step.png")
    header, rows = step_rows(decodes, 8)
    return "\n\n".join([
        "## Host gather and chip gather (structured model, pages of 4 rows)",
        markdown_table(SUMMARY_HEADER, summary_rows(decodes), left=(0, 1, 2)),
        f"### Every step at {window_label(8)} (reference machine)",
        markdown_table(header, rows),
        f"![host words and cycles per step]({picture.relative_to(out)})",
    ])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, help="result folders of decode runs (out/runs)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    run_dirs = [path.parent for path in args.runs.rglob(RESULT_FILE)] if args.runs else []
    decodes = model_decodes() + rtl_decodes(run_dirs)
    text = report(decodes, args.out)
    path = args.out / "gather_report.md"
    path.write_text(text + "\n")
    print(text)
    print(f"\nwrote {path}, {args.out / 'gather.json'} and "
          f"{args.out / 'plots' / 'gather_per_step.png'}")
