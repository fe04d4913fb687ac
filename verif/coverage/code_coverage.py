"""Verilator code coverage (line, branch, toggle): merge the runs' coverage.dat and summarise.

What no legal run reaches has no point at all: the RTL wraps it in `verilator coverage_off`
comments, each with its reason (verif/TESTPLAN.md, "Code coverage").

    python -m scripts.coverage code [RUN_DIRS_OR_GLOBS ...] [--all] [--holes N] [--check]
"""

from __future__ import annotations

import argparse
import glob
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from model.chip.machine import COUNTER_FIELDS
from model.paths import RTL_DIR, RUNS_ROOT, relative
from sim.runner import COVERAGE_FILE

HEADER = "# SystemC::Coverage-3"
KINDS = ("line", "branch", "toggle")
HOLES_SHOWN = 40
NAMED_KEYS = ("t", "page", "f", "l", "n", "o", "S")
COVERAGE_OFF = "verilator coverage_off"  # the RTL's exclusion comment, its reason after `//`
COUNTER_WIDTHS = {f.hw_name: f.width for f in COUNTER_FIELDS}  # ev_ops: a count per opcode
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_TOGGLE = re.compile(r"^(?P<signal>.*?)(?:\[(?P<bit>\d+)\])?:(?P<direction>0->1|1->0)$")


@dataclass(frozen=True, order=True)
class CoveragePoint:
    """One coverage point, identified by everything Verilator says about it but the instance."""

    file: str
    line: int
    column: int
    kind: str
    module: str
    comment: str
    lines: str = ""
    other: tuple[tuple[str, str], ...] = ()

    @property
    def signal(self) -> str:
        """A toggle point's signal name (generate scopes included), without bit and direction."""
        match = _TOGGLE.match(self.comment)
        return match["signal"] if match else self.comment

    @property
    def bit(self) -> int:
        """A toggle point's bit (0 for a one-bit signal)."""
        match = _TOGGLE.match(self.comment)
        return int(match["bit"] or 0) if match else 0

    def where(self) -> str:
        """`file:line:column` relative to the repository (one line can hold several points)."""
        return f"{relative(Path(self.file))}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Tally:
    """How many points of a group there are and how many of them were hit at least once."""

    points: int = 0
    hit: int = 0

    @property
    def percent(self) -> float:
        return 100.0 * self.hit / self.points if self.points else 100.0

    def add(self, hit: bool) -> Tally:
        return Tally(self.points + 1, self.hit + int(hit))

    def cell(self) -> str:
        return f"{self.hit}/{self.points} ({self.percent:.1f}%)" if self.points else "-"


@dataclass(frozen=True)
class Thresholds:
    """What `--check` demands (issue 13: 100% line, 98% branch)."""

    line: float = 100.0
    branch: float = 98.0


THRESHOLDS = Thresholds()


# --- reading coverage.dat -----------------------------------------------------------------------


def unescape(text: str) -> str:
    """Undo Verilator's `%XX` quoting of non-printable characters, `%` and `"`."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


@cache
def point_of(body: str) -> CoveragePoint:
    """The point a line's body describes, parsed once however many files list it (every run of a
    build lists the same points: make run's report read 140,000 lines)."""
    fields = {}
    for pair in filter(None, body.split("\x01")):
        key, _, value = pair.partition("\x02")
        fields[unescape(key)] = unescape(value)
    fields.pop("h", None)
    page = fields.get("page", "")
    module = page.split("/", 1)[1] if "/" in page else Path(fields.get("f", "?")).stem
    return CoveragePoint(
        file=fields.get("f", ""),
        line=int(fields.get("l", 0)),
        column=int(fields.get("n", 0)),
        kind=fields.get("t", page.split("/")[0].removeprefix("v_")),
        module=module.split("__", 1)[0],  # a parameterised variant: RTL names have no `__`
        comment=fields.get("o", ""),
        lines=fields.get("S", ""),
        other=tuple(sorted((k, v) for k, v in fields.items() if k not in NAMED_KEYS)),
    )


def read_coverage(path: Path) -> Counter[CoveragePoint]:
    """The counts of one coverage.dat (a point listed twice adds up, as Verilator's tools do)."""
    counts: Counter[CoveragePoint] = Counter()
    lines = path.read_text().splitlines()
    if not lines or lines[0].strip() != HEADER:
        raise ValueError(f"{path} is not a Verilator coverage file (no {HEADER!r} header)")
    for line in filter(str.strip, lines[1:]):
        if not line.startswith("C '"):
            raise ValueError(f"{path}: not a coverage point line: {line[:80]!r}")
        body, count = line[3:].rsplit("' ", 1)
        counts[point_of(body)] += int(count)
    return counts


def coverage_files(paths: Iterable[Path | str]) -> list[Path]:
    """The coverage.dat files named by run folders (searched recursively), files or globs."""
    found: dict[Path, None] = {}
    for item in paths:
        for match in glob.glob(str(item), recursive=True) or [str(item)]:
            path = Path(match)
            files = sorted(path.rglob(COVERAGE_FILE)) if path.is_dir() else [path]
            found.update((f.resolve(), None) for f in files if f.is_file())
    return list(found)


@cache
def _under(file: str, roots: tuple[Path, ...] | None) -> bool:
    """Whether a file is under one of the roots (None: any); asked once per file."""
    return roots is None or any(Path(file).is_relative_to(root) for root in roots)


def excluded_regions(files: Iterable[str]) -> list[tuple[str, int, str]]:
    """(file, line, reason) of every `verilator coverage_off` comment in the files."""
    regions = []
    for file in sorted(f for f in set(files) if Path(f).is_file()):
        for number, line in enumerate(Path(file).read_text().splitlines(), start=1):
            if COVERAGE_OFF in line:
                regions.append((file, number, line.partition("//")[2].strip()))
    return regions


def toggle_holes(counts: Mapping[CoveragePoint, int]) -> list[tuple[CoveragePoint, int, int]]:
    """(first point, holes, toggle points) of each signal with a toggle hole: a point never seen
    of a bit between bits the signal toggled. A per-opcode counter (ev_ops) is judged per
    field: each holds its own opcode's count."""
    fields: dict[tuple, list[CoveragePoint]] = defaultdict(list)
    for point in (p for p in counts if p.kind == "toggle"):
        width = COUNTER_WIDTHS.get(point.signal.rsplit(".", 1)[-1])
        index = point.bit // width if width else 0
        fields[point.module, point.file, point.signal, index].append(point)
    signals: dict[tuple, list[CoveragePoint]] = defaultdict(list)
    holes: Counter[tuple] = Counter()
    for (*signal, _), group in fields.items():
        signals[tuple(signal)] += group
        toggled = [p.bit for p in group if counts[p] > 0]
        holes[tuple(signal)] += sum(1 for p in group if counts[p] == 0 and toggled
                                    and min(toggled) < p.bit < max(toggled))
    return sorted((min(signals[key]), n, len(signals[key])) for key, n in holes.items() if n)


@dataclass
class CodeCoverageSummary:
    """Merged counts of some runs, with the views a report needs (totals, modules, holes), and
    the `verilator coverage_off` regions of the sources the points name (`excluded`)."""

    sources: list[Path]
    counts: Mapping[CoveragePoint, int] = field(default_factory=dict)
    excluded: list[tuple[str, int, str]] = field(default_factory=list)

    def totals(self) -> dict[str, Tally]:
        """Points and points hit per kind, over the whole design."""
        tallies = dict.fromkeys(self.kinds(), Tally())
        for point, count in self.counts.items():
            tallies[point.kind] = tallies[point.kind].add(count > 0)
        return tallies

    def by_module(self) -> dict[str, dict[str, Tally]]:
        """Points and points hit per module and kind."""
        modules: dict[str, dict[str, Tally]] = defaultdict(dict)
        for point, count in self.counts.items():
            tally = modules[point.module].get(point.kind, Tally())
            modules[point.module][point.kind] = tally.add(count > 0)
        return dict(sorted(modules.items()))

    def kinds(self) -> list[str]:
        present = {point.kind for point in self.counts}
        return [k for k in KINDS if k in present] + sorted(present - set(KINDS))

    def holes(self, kind: str | None = None) -> list[CoveragePoint]:
        """Points no run hit, in source order."""
        return sorted(p for p, count in self.counts.items()
                      if count == 0 and kind in (None, p.kind))

    def check(self, thresholds: Thresholds = THRESHOLDS) -> list[str]:
        """What falls short of `thresholds`."""
        totals = self.totals()
        return [f"{kind} coverage {totals[kind].percent:.2f}% is under {minimum}%"
                for kind, minimum in (("line", thresholds.line), ("branch", thresholds.branch))
                if kind in totals and totals[kind].percent < minimum]

    def to_markdown(self, holes_shown: int = HOLES_SHOWN) -> str:
        """Totals, per-module tables, exclusions and holes, for a person."""
        if not self.counts:
            return "# Code coverage\n\nNo points: run a Verilator test with CODE_COVERAGE=1.\n"
        kinds = self.kinds()
        line_holes = [p for p in self.holes() if p.kind != "toggle"]
        signals = toggle_holes(self.counts)
        out = [
            "# Code coverage (Verilator)",
            "",
            f"{len(self.sources)} coverage file(s) merged; hit = counted at least once.",
            "",
            "| kind | points | hit | % |",
            "|---|---:|---:|---:|",
            *(f"| {k} | {t.points} | {t.hit} | {t.percent:.1f} |"
              for k, t in self.totals().items()),
            *_section("Per module (hit/points)", [
                "| module | " + " | ".join(kinds) + " |", "|---|" + "---:|" * len(kinds),
                *(f"| {name} | " + " | ".join(t.get(k, Tally()).cell() for k in kinds) + " |"
                  for name, t in self.by_module().items())]),
            *_section("Excluded: `verilator coverage_off` in the source (no points)",
                      [f"- {relative(Path(f))}:{n} {why}" for f, n, why in self.excluded]),
            *_section(f"Line and branch holes ({min(len(line_holes), holes_shown)} of "
                      f"{len(line_holes)})",
                      [f"- {p.where()} {p.kind} `{p.comment}` ({p.module}"
                       + (f", source lines {p.lines})" if p.lines else ")")
                       for p in line_holes[:holes_shown]]),
            *_section(f"Signals with toggle holes ({min(len(signals), holes_shown)} of "
                      f"{len(signals)})",
                      [f"- {p.where()} `{p.signal}`: {n} of {total} toggle points ({p.module})"
                       for p, n, total in signals[:holes_shown]]),
        ]
        return "\n".join(out) + "\n"


def _section(title: str, lines: list[str]) -> list[str]:
    return ["", f"## {title}", "", *(lines or ["none"])]


def summarize(run_dirs: Iterable[Path | str],
              roots: Iterable[Path] | None = (RTL_DIR,)) -> CodeCoverageSummary:
    """Merge the coverage.dat files under `run_dirs`, keeping the points of files under `roots`
    (None: every point, the harness and memory model too)."""
    files = coverage_files(run_dirs)
    roots = None if roots is None else tuple(Path(r).resolve() for r in roots)
    counts: Counter[CoveragePoint] = Counter()
    for path in files:
        counts.update({p: c for p, c in read_coverage(path).items() if _under(p.file, roots)})
    return CodeCoverageSummary(files, dict(counts), excluded_regions(p.file for p in counts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(RUNS_ROOT / "verilator")],
                        help="run folders (searched recursively), coverage.dat files or globs")
    parser.add_argument("--all", action="store_true", help="keep the harness and memory model")
    parser.add_argument("--holes", type=int, default=HOLES_SHOWN, help="holes shown per list")
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 under {THRESHOLDS.line}%% line or {THRESHOLDS.branch}%% "
                             "branch coverage")
    args = parser.parse_args(argv)
    summary = summarize(args.paths, roots=None if args.all else (RTL_DIR,))
    if not summary.sources:
        raise SystemExit(f"no {COVERAGE_FILE} under {' '.join(args.paths)}: "
                         "run a Verilator test with CODE_COVERAGE=1 first")
    print(summary.to_markdown(args.holes), end="")
    problems = summary.check() if args.check else []
    for problem in problems:
        print(f"CHECK FAILED: {problem}")
    return 1 if problems else 0
