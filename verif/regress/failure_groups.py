"""A regression's failures grouped by their cleaned first error, as OpenTitan's dvsim buckets them.

Many seeds that break one thing fail with one message differing only in its numbers: the groups
count the distinct problems. Every path of `make regress` (xdist, Dask, the merge of shards)
groups the JUnit file's failures alike.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from verif.report.output import text_table

GROUPS_SUFFIX = ".groups.json"  # beside the JUnit file: out/junit/<suite>.groups.json
SIGNATURE_WIDTH = 72  # characters of a signature the summary table shows
# What varies between two failures of one kind, replaced in this order; words glued to digits
# that name things (AXI4, int8, BURST_4K) stay.
REPLACEMENTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:[a-z_]\w*\.)+(?=[A-Z]\w*:)"), ""),  # an exception's module path
    (re.compile(r"[\w./-]*\.py::[^\s'\"]+"), "<test>"),  # a pytest node id
    (re.compile(r"(?<![\w.@+~/-])(?=[\w.@+~/-]*[A-Za-z])(?:~|[\w.@+-]+)?(?:/[\w.@+-]+)+/?"),
     "<path>"),  # a file path, absolute or relative
    (re.compile(r"\b0[xX][0-9a-fA-F]+\b|'[hH][0-9a-fA-F_]+\b"), "<hex>"),
    (re.compile(r"\b(?=[01]*[xXzZ])[01xXzZ]{2,}\b"), "<bits>"),  # bits with X or Z
    (re.compile(r"\b(seed|[A-Za-z])\d+\b"), r"\1<n>"),  # seed7, r2, W8
    (re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"), "<n>"),  # a number alone
    (re.compile(r"\s+"), " "),
)


@dataclass(frozen=True)
class FailedTest:
    """One failing test: its node id, its first error as it was, its re-run command."""

    test: str
    first_error: str
    rerun: str


@dataclass
class FailureGroup:
    """The failures whose first errors clean to one signature."""

    signature: str
    example: str  # the first failure's first error, as it was
    example_test: str
    rerun: str  # the example's re-run command
    tests: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.tests)

    def as_json(self) -> dict:
        """The group as the groups file holds it: its count after its signature."""
        fields = asdict(self)
        return {"signature": fields.pop("signature"), "count": self.count, **fields}


def failure_message(case: ET.Element) -> str:
    """A failing test case's message: its <failure> or <error> element's message attribute
    (the exception and its text), else the traceback's `E` lines."""
    element = next(e for e in case if e.tag in ("failure", "error"))
    if element.get("message"):
        return element.get("message")
    text = element.text or ""
    raised = [line[1:] for line in text.splitlines() if line.startswith("E ")]
    return "\n".join(raised) or text


def signature(error: str) -> str:
    """The error with its volatile tokens replaced (REPLACEMENTS)."""
    for pattern, placeholder in REPLACEMENTS:
        error = pattern.sub(placeholder, error)
    return error.strip()


def group_failures(failed: Iterable[FailedTest]) -> list[FailureGroup]:
    """Failures grouped by signature, largest group first (ties: the first failure first)."""
    groups: dict[str, FailureGroup] = {}
    for test in failed:
        key = signature(test.first_error)
        group = groups.setdefault(key, FailureGroup(key, test.first_error, test.test, test.rerun))
        group.tests.append(test.test)
    return sorted(groups.values(), key=lambda group: -group.count)


def groups_file(junit: Path) -> Path:
    """Where a JUnit file's failure groups go: beside it, named after it."""
    return junit.with_name(junit.stem + GROUPS_SUFFIX)


def write_groups(groups: list[FailureGroup], path: Path) -> Path:
    """The groups as a JSON list (empty when nothing failed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([group.as_json() for group in groups], indent=1) + "\n")
    return path


def summary_lines(groups: list[FailureGroup], path: Path) -> list[str]:
    """The regression summary's table: count, signature, example test (its name)."""
    if not groups:
        return [f"failure groups: no failures ({path})"]
    return [f"failure groups ({path}):", *text_table(
        ["count", "signature", "example"],
        [[group.count, clipped(group.signature), group.example_test.rpartition("::")[2]]
         for group in groups], left=(1, 2)).splitlines()]


def clipped(text: str, width: int = SIGNATURE_WIDTH) -> str:
    """The text cut to `width` characters, ending in '...' when cut (the JSON keeps it whole)."""
    return text if len(text) <= width else text[:width - 3] + "..."
