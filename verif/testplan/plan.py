"""The machine-readable testplan: load it, check it against the tree, render it, annotate it.

`problems()` lists every way the plan and the tree disagree, `markdown()` is verif/TESTPLAN.md,
`results()` annotates each testpoint with the outcome of its tests in a run (a JUnit file)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path

import yaml

from model.chip.isa import ErrorCode, Op
from model.chip.machine import CYCLE_NAMES, Counters
from model.paths import REPO_ROOT

PLAN_FILE = Path(__file__).with_name("testplan.yml")
MARKDOWN_FILE = REPO_ROOT / "verif" / "TESTPLAN.md"


@dataclass(frozen=True)
class Testpoint:
    name: str
    goal: str
    stimulus: str
    checks: str
    tests: tuple[str, ...]
    coverage: tuple[str, ...] = ()

    def selects(self, nodeid: str) -> bool:
        """Whether one of the testpoint's selections selects the pytest node ``nodeid``."""
        return any(selects(selection, nodeid) for selection in self.tests)


@dataclass(frozen=True)
class Testplan:
    title: str
    intro: str
    facts: dict[str, int]
    roles: tuple[dict[str, str], ...]
    sections: tuple[dict[str, str], ...]
    testpoints: tuple[Testpoint, ...] = field(default=())


def load(path: Path = PLAN_FILE) -> Testplan:
    data = yaml.safe_load(path.read_text())
    points = tuple(Testpoint(**{**p, "tests": tuple(p["tests"]),
                                "coverage": tuple(p.get("coverage", ()))})
                   for p in data["testpoints"])
    return Testplan(data["title"], data["intro"], data["facts"], tuple(data["roles"]),
                    tuple(data["sections"]), points)


def selects(selection: str, nodeid: str) -> bool:
    """A pytest selection (folder, file, file::function) selects a node id."""
    return nodeid == selection or nodeid.startswith((f"{selection}/", f"{selection}::",
                                                     f"{selection}["))


def model_facts() -> dict[str, int]:
    """The counts the plan states, as model/ defines them."""
    counters = [f.name for f in fields(Counters)]
    return {"opcodes": len(Op), "error_codes": len(ErrorCode), "counters": len(counters),
            "cycle_counters": len(CYCLE_NAMES),
            "event_counters": len(counters) - len(CYCLE_NAMES)}


def problems(plan: Testplan, nodeids: Iterable[str], coverage_points: set[str],
             root: Path = REPO_ROOT) -> list[str]:
    """Every way the plan and the tree disagree: a test no testpoint selects, a selection or
    coverage point that does not exist, a role's class or file missing, a count model/ differs."""
    nodeids = list(nodeids)
    found = [f"no testpoint selects {n}" for n in nodeids
             if not any(p.selects(n) for p in plan.testpoints)]
    for point in plan.testpoints:
        found += [f"{point.name}: {s} selects no test" for s in point.tests
                  if not any(selects(s, n) for n in nodeids)]
        found += [f"{point.name}: no coverage point {c}" for c in point.coverage
                  if c not in coverage_points]
    names = [p.name for p in plan.testpoints]
    found += [f"testpoint {n} is named twice" for n in sorted(set(names)) if names.count(n) > 1]
    for role in plan.roles:
        path = root / role["file"]
        if not path.exists():
            found.append(f"role {role['role']}: no file {role['file']}")
        elif not re.search(rf"^(class|def|async def) {role['class']}\b", path.read_text(),
                           re.M):
            found.append(f"role {role['role']}: {role['file']} defines no {role['class']}")
    model = model_facts()
    found += [f"the plan says {name} = {value}, model/ has {model.get(name)}"
              for name, value in plan.facts.items() if model.get(name) != value]
    return found


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)])


def markdown(plan: Testplan) -> str:
    """verif/TESTPLAN.md: the intro, the roles, the prose sections, then every testpoint."""
    roles = _table(["UVM role", "class", "file"],
                   [[r["role"], f"`{r['class']}`", f"`{r['file']}`"] for r in plan.roles])
    points = _table(["testpoint", "goal", "stimulus", "checks", "tests", "coverage"],
                    [[f"`{p.name}`", p.goal, p.stimulus, p.checks,
                      ", ".join(f"`{t}`" for t in p.tests),
                      ", ".join(f"`{c}`" for c in p.coverage)] for p in plan.testpoints])
    facts = ", ".join(f"{name.replace('_', ' ')}: {value}" for name, value in plan.facts.items())
    parts = [f"# {plan.title}",
             "<!-- generated from verif/testplan/testplan.yml by `python -m scripts.testplan`:"
             " edit that file -->", plan.intro.strip(),
             f"The chip, as the plan counts it: {facts}.",
             "## The environment at a glance", roles,
             *(f"## {s['title']}\n\n{s['text'].strip()}" for s in plan.sections),
             "## Testpoints", points]
    return "\n\n".join(parts) + "\n"


@dataclass(frozen=True)
class PointResult:
    """A testpoint's tests in one run: how many passed, failed and were skipped."""

    name: str
    passed: int
    failed: int
    skipped: int

    @property
    def verdict(self) -> str:
        if self.failed:
            return "FAILED"
        return "passed" if self.passed else "not run"


def junit_outcomes(junit: Path) -> dict[str, str]:
    """Each test case of a JUnit file as a pytest node id, and its outcome."""
    outcomes = {}
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        nodeid = f"{module}.py::{case.get('name', '')}"
        bad = case.find("failure") is not None or case.find("error") is not None
        outcomes[nodeid] = ("failed" if bad else
                            "skipped" if case.find("skipped") is not None else "passed")
    return outcomes


def results(plan: Testplan, outcomes: dict[str, str]) -> list[PointResult]:
    """Every testpoint with the outcomes of the tests of it that ran."""
    rows = []
    for point in plan.testpoints:
        mine = [o for node, o in outcomes.items() if point.selects(node)]
        rows.append(PointResult(point.name, mine.count("passed"), mine.count("failed"),
                                mine.count("skipped")))
    return rows


def results_markdown(rows: list[PointResult]) -> str:
    return _table(["testpoint", "verdict", "passed", "failed", "skipped"],
                  [[f"`{r.name}`", r.verdict, str(r.passed), str(r.failed), str(r.skipped)]
                   for r in rows])
