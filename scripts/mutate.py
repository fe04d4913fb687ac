"""Mutation run: break the page table, the window and the host one line at a time.

Each mutant replaces one exact line (indentation aside) of a copy of the code with a wrong
version; the checks (the chapter's tests (1)-(6): model/tests/test_paged.py, test_tiny_lm.py,
test_host.py) then run against the copy in a subprocess. A mutant is *caught* when the checks
fail. Every mutant must be caught: a survivor is a gap in the tests (or an equivalent mutant,
which should then be removed with a note saying why).

The working tree is never touched: each run copies ``model/``, ``scripts/`` and
``pytest.ini`` into a temporary directory. The unbroken copy must pass first.

The list is the chapter's 18, then two of our own that survived a first run (each closed by
a new test). Mutants tried and left out as equivalent: ``if self.window:`` for
``if self.window is not None:`` in the host (a window of 0 is refused before it matters).

Run from the repository root: ``python -m scripts.mutate [--workers N]``. Writes
``out/mutate.json``; the exit status is non-zero if a mutant survives or the unbroken copy fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts._common import REPO_ROOT, write_json

COPIED = ("model", "scripts", "pytest.ini")
CHECKS = ("model/tests/test_paged.py", "model/tests/test_tiny_lm.py", "model/tests/test_host.py")
TIMEOUT_SECONDS = 300  # a hung run counts as caught, but should never happen


@dataclass(frozen=True)
class Mutant:
    """One line of ``path`` (relative to the repository root), replaced."""

    group: str
    description: str
    path: str
    original: str  # the whole line, without its indentation
    mutated: str


PAGED, TINY_LM, HOST = "model/paged.py", "model/tiny_lm.py", "model/host.py"

MUTANTS = (
    # ---- the chapter's 18 --------------------------------------------------------------------
    Mutant("page table", "a page freed by its last owner is not returned to the free list",
           PAGED, "self._free.append(page)", "pass"),
    Mutant("page table", "a freed page is put on the free list while others still share it",
           PAGED, "if count == 1:", "if count >= 1:"),
    Mutant("page table", "fork does not count the new owner",
           PAGED, "self._refcounts[page] += 1", "pass"),
    Mutant("page table", "no copy before writing into a shared page",
           PAGED, "elif self._refcounts[request.pages[-1]] > 1:", "elif False:"),
    Mutant("page table", "the copy-on-write copy is empty",
           PAGED, "self.pool[private] = self.pool[shared]", "self.pool[private] = 0"),
    Mutant("page table", "the copy keeps the shared page's reference",
           PAGED, "self._unref(shared)", "pass"),
    Mutant("page table", "a new page is taken from a full page's neighbour (offset uses page+1)",
           PAGED, "offset = request.length % self.page_size",
           "offset = request.length % (self.page_size + 1)"),
    Mutant("page table", "the block-table lookup ignores pages already dropped",
           PAGED, "table_index = logical // self.page_size - request.dropped",
           "table_index = logical // self.page_size"),
    Mutant("page table", "trim releases a page that still holds a needed row",
           PAGED, "n_release = keep_from // self.page_size - request.dropped",
           "n_release = -(-keep_from // self.page_size) - request.dropped"),
    Mutant("page table", "trim keeps pages that are completely outside the window",
           PAGED, "n_release = keep_from // self.page_size - request.dropped",
           "n_release = keep_from // self.page_size - request.dropped - 1"),
    Mutant("page table", "release forgets the request's pages",
           PAGED, "for page in request.pages:", "for page in []:"),
    Mutant("page table", "exhaustion is not reported",
           PAGED, "if not self._free:", "if False:"),
    Mutant("window", "the float reference keeps W rows, not W-1",
           TINY_LM, "keep = len(rows) if window is None else min(len(rows), window - 1)",
           "keep = len(rows) if window is None else min(len(rows), window)"),
    Mutant("window", "the chip's context is W+1",
           HOST, "context = context_size(step, self.window)",
           "context = context_size(step, None if self.window is None else self.window + 1)"),
    Mutant("host", "the gather starts one row late",
           HOST, "lo = step - context", "lo = step - context + 1"),
    Mutant("host", "the gather returns values where keys belong",
           HOST, "return rows[:, KEY], rows[:, VALUE]", "return rows[:, VALUE], rows[:, KEY]"),
    Mutant("host", "pages outside the window are never released",
           HOST, "self.cache.trim(trim_point(step, self.window))", "self.cache.trim(0)"),
    Mutant("host", "the trim point is one token too late",
           HOST, "return max(0, step + 1 - window)", "return max(0, step - window)"),
    # ---- our own: each survived once and was closed by a new test ---------------------------
    Mutant("host", "pages in use count only the request's pages, not the pool's",
           HOST, "return self.table.used()", "return len(self.table.block_table(self.rid))"),
    Mutant("window", "the float softmax does not subtract the maximum score",
           TINY_LM, "weights = np.exp(scores - scores.max())", "weights = np.exp(scores)"),
)


class MutantNotApplicable(RuntimeError):
    """The mutant's original line is not in the code exactly once: the list is out of date."""


@dataclass
class Outcome:
    """One run of the checks against one copy."""

    name: str
    caught: bool  # the checks failed (for the unbroken copy: they must not)
    first_failure: str
    seconds: float


def mutate_text(text: str, mutant: Mutant) -> str:
    """The text with the mutant's line replaced, indentation kept; loud if not found once."""
    lines = text.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if line.strip() == mutant.original]
    if len(found) != 1:
        raise MutantNotApplicable(
            f"{mutant.path}: the line {mutant.original!r} occurs {len(found)} times, "
            f"not once (mutant: {mutant.description})"
        )
    line = lines[found[0]]
    indent = line[: len(line) - len(line.lstrip())]
    lines[found[0]] = f"{indent}{mutant.mutated}\n"
    return "".join(lines)


def copy_tree(destination: Path) -> None:
    """The code and tests the checks need, without bytecode caches."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in COPIED:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=ignore)
        else:
            shutil.copy2(source, destination / name)


def run_checks(root: Path) -> tuple[bool, str]:
    """Run the checks on the copy at ``root``: (passed, first failing test or reason)."""
    env = os.environ | {"PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *CHECKS]
    try:
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {TIMEOUT_SECONDS} s"
    if done.returncode == 0:
        return True, ""
    return False, _first_failure(done.stdout + done.stderr)


def _first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0].split("::", 1)[-1]
    lines = output.strip().splitlines()
    return lines[-1] if lines else "no output"


def try_copy(name: str, mutant: Mutant | None) -> Outcome:
    """Copy the tree, apply the mutant (None: unbroken), run the checks."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mutant-") as tmp:
        root = Path(tmp)
        copy_tree(root)
        if mutant is not None:
            target = root / mutant.path
            target.write_text(mutate_text(target.read_text(), mutant))
        passed, failure = run_checks(root)
    return Outcome(name, not passed, failure, time.perf_counter() - started)


def check_applicable(mutants: tuple[Mutant, ...]) -> None:
    """Apply every mutant to the working tree's text in memory first: fail before any run."""
    for mutant in mutants:
        mutate_text((REPO_ROOT / mutant.path).read_text(), mutant)


def print_table(outcomes: list[Outcome], mutants: tuple[Mutant, ...]) -> None:
    width = max(len(f"{m.group}: {m.description}") for m in mutants)
    for mutant, outcome in zip(mutants, outcomes, strict=True):
        verdict = "caught" if outcome.caught else "SURVIVED"
        label = f"{mutant.group}: {mutant.description}"
        print(f"{label:{width}s}  {verdict:8s} {outcome.seconds:5.1f} s  {outcome.first_failure}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="parallel check runs")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    check_applicable(MUTANTS)
    print("NOTE: this script deliberately breaks copies of the model; 'caught' is EXPECTED.")
    unbroken = try_copy("unbroken", None)
    print(f"unbroken copy passes: {not unbroken.caught} ({unbroken.seconds:.1f} s)")
    if unbroken.caught:
        print(f"  first failure: {unbroken.first_failure}")
        return 2
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        outcomes = list(pool.map(try_copy, [m.description for m in MUTANTS], MUTANTS))
    print_table(outcomes, MUTANTS)
    caught = sum(o.caught for o in outcomes)
    elapsed = time.perf_counter() - started
    print(f"\n{caught} of {len(MUTANTS)} broken versions caught in {elapsed:.0f} s "
          f"({args.workers} workers)")
    write_json("mutate.json", {
        "seconds": elapsed,
        "workers": args.workers,
        "mutants": [asdict(m) | asdict(o) for m, o in zip(MUTANTS, outcomes, strict=True)],
    })
    return 0 if caught == len(MUTANTS) else 1


if __name__ == "__main__":
    sys.exit(main())
