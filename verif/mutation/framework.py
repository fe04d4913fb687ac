"""Mutation testing, for the host's Python and the chip's Verilog alike.

A mutant replaces one whole line of one file. ``apply`` breaks a copy and verifies that exactly
that line differs (the working tree is never touched; a drifted line fails loudly);
``run_mutants`` checks each copy, in parallel. Catalogues: host_mutants.yml, rtl_generator.py,
tests/broken_chips.py.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from model.paths import REPO_ROOT

IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.md", "gtkwave")


@dataclass(frozen=True)
class Mutant:
    """One line of ``path`` (relative to the repository root), replaced."""

    name: str  # short and unique: names the copy's folder and the negative test
    path: str
    original: str  # the whole line, without its indentation
    mutated: str
    description: str  # what the mutant breaks, in words
    group: str = ""  # for reports: "page table", "window", "host", "rtl", ...


class MutantDoesNotApply(RuntimeError):
    """The mutant's line is not in its file exactly once: the catalogue is out of date."""


class Verdict(Enum):
    CAUGHT = "caught"
    SURVIVED = "survived"
    TIMEOUT = "timeout"  # counts as caught only when a watchdog stopped it (say so in detail)
    DOES_NOT_BUILD = "does-not-build"  # left out of the score


@dataclass
class Outcome:
    """One check of one copy: the unbroken one must pass, a broken one must be caught."""

    name: str
    verdict: Verdict
    detail: str  # the catching test and its first difference, or why it survived
    seconds: float = 0.0

    @property
    def caught(self) -> bool:
        return self.verdict == Verdict.CAUGHT


def mutate_text(text: str, mutant: Mutant) -> str:
    """The text with the mutant's line replaced, indentation kept; loud if not found once."""
    lines = text.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if line.strip() == mutant.original]
    if len(found) != 1:
        raise MutantDoesNotApply(
            f"{mutant.name}: {mutant.path} has the line {mutant.original!r} {len(found)} times, "
            f"not once ({mutant.description}): update the catalogue")
    line = lines[found[0]]
    indent = line[: len(line) - len(line.lstrip())]
    lines[found[0]] = f"{indent}{mutant.mutated}\n"
    return "".join(lines)


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """The (old, new) pairs of lines that differ between two texts, as a line diff sees them."""
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(),
                                      autojunk=False)
    pairs = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag != "equal":
            old = matcher.a[a0:a1]
            new = matcher.b[b0:b1]
            pairs += list(zip(old, new, strict=False)) if len(old) == len(new) else [
                ("\n".join(old), "\n".join(new))]
    return pairs


def check_applies(mutant: Mutant, root: Path = REPO_ROOT) -> None:
    """The mutant changes exactly its one line of the file under ``root``, and nothing else."""
    before = (root / mutant.path).read_text()
    pairs = changed_lines(before, mutate_text(before, mutant))
    if [(old.strip(), new.strip()) for old, new in pairs] != [(mutant.original,
                                                                mutant.mutated)]:
        raise MutantDoesNotApply(f"{mutant.name}: the change is not exactly one line: {pairs}")


def apply(mutant: Mutant | None, workdir: Path, folders: Sequence[str],
          source: Path = REPO_ROOT) -> Path:
    """Copy ``folders`` of ``source`` under ``workdir`` and break the copy (``None``: leave it
    unbroken); returns the copy's root, laid out like the repository."""
    root = Path(workdir) / (mutant.name if mutant else "unbroken")
    shutil.rmtree(root, ignore_errors=True)
    for folder in folders:
        origin = source / folder
        if origin.is_dir():
            shutil.copytree(origin, root / folder, ignore=IGNORED)
        else:
            (root / folder).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, root / folder)
    if mutant is not None:
        check_applies(mutant, root)
        target = root / mutant.path
        target.write_text(mutate_text(target.read_text(), mutant))
    return root


Control = Callable[[Sequence[Outcome], Path], Outcome]


def run_mutants(mutants: Sequence[Mutant], folders: Sequence[str],
                check: Callable[[Mutant | None, Path], Outcome],
                workers: int = 2, source: Path = REPO_ROOT,
                control: Control | None = None) -> tuple[Outcome, list[Outcome]]:
    """The unbroken copy's outcome, then one outcome per mutant (checked in parallel).

    The unbroken copy is the control (a verdict stands only if its deciding check passes there):
    checked whole by ``check`` alongside the mutants, or after them by ``control(outcomes,
    copy)``, on just the checks that decided. Every copy is made from a snapshot taken once all
    mutants apply, so an edit to the working tree during a long run changes nothing of it.
    """
    for mutant in mutants:  # every mutant applies before anything runs
        check_applies(mutant, source)
    with tempfile.TemporaryDirectory(prefix="mutation-snapshot-") as taken:
        snapshot = apply(None, Path(taken), folders, source)

        def one(mutant: Mutant | None) -> Outcome:
            started = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
                outcome = check(mutant, apply(mutant, Path(tmp), folders, snapshot))
            outcome.seconds = time.perf_counter() - started
            return outcome

        with ThreadPoolExecutor(max_workers=workers) as pool:
            if control is None:  # the unbroken copy, the longest check, starts first
                unbroken, *outcomes = pool.map(one, [None, *mutants])
                return unbroken, outcomes
            outcomes = list(pool.map(one, mutants))
        started = time.perf_counter()
        unbroken = control(outcomes, snapshot)
        unbroken.seconds = time.perf_counter() - started
    return unbroken, outcomes
