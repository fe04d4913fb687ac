"""Mutation run of the host: break the page table, the window and the host one line at a time.

Every mutant of host_mutants.yml must fail the chapter's checks (CHECKS) on its copy of model/, and
the unbroken copy must pass them. ``python -m scripts.mutants host [--workers N] [--group G]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

import yaml

from model.paths import REPO_ROOT
from verif.mutation.framework import Mutant, Outcome, Verdict, run_mutants
from verif.mutation.stage_runner import run_stage
from verif.report.output import text_table, write_json

CATALOGUE = Path(__file__).with_name("host_mutants.yml")


def mutant_name(description: str) -> str:
    """A mutant named after its description's words (stable across runs and machines)."""
    return "-".join(description.replace(",", "").replace("'", "").split()[:8])


def load(path: Path = CATALOGUE) -> tuple[Mutant, ...]:
    return tuple(Mutant(mutant_name(m["description"]), m["path"], m["original"], m["mutated"],
                        m["description"], m["group"]) for m in yaml.safe_load(path.read_text()))


HOST_MUTANTS = load()

FOLDERS = ("model", "pytest.ini")
# each copy's pytest cache, kept between runs: a mutant's checks start with the test that caught
# it last time (--failed-first) and stop there (-x) if it still does
CACHE_ROOT = REPO_ROOT / "build" / "host-mutants"
CHECKS = ("model/tests/test_paged.py", "model/tests/test_tiny_lm.py", "model/tests/test_host.py")
TIMEOUT_SECONDS = 300  # a hung run counts as caught (reported as a timeout), but never happens


def pytest_check(checks: tuple[str, ...]):
    """A check that runs ``checks`` with pytest on a copy; fails first, names the failing test."""

    def check(mutant: Mutant | None, root: Path) -> Outcome:
        name = mutant.name if mutant else "unbroken"
        env = os.environ | {"PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        command = [sys.executable, "-m", "pytest", "-x", "-q", "--failed-first",
                   "-o", f"cache_dir={CACHE_ROOT / name}", "-p", "no:xdist", *checks]
        done = run_stage(command, cwd=root, env=env, timeout=TIMEOUT_SECONDS)
        if done.timed_out:
            return Outcome(name, Verdict.TIMEOUT, f"timed out after {TIMEOUT_SECONDS} s")
        if done.returncode == 0:
            return Outcome(name, Verdict.SURVIVED, "every check passed")
        return Outcome(name, Verdict.CAUGHT, first_failure(done.output))

    return check


def first_failure(output: str) -> str:
    """The first failing test's name, from pytest's short summary."""
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0].split("::", 1)[-1]
    lines = output.strip().splitlines()
    return lines[-1] if lines else "no output"


def print_table(mutants: list[Mutant], outcomes: list[Outcome]) -> None:
    print(text_table(["mutant", "verdict", "seconds", "first failure"],
                     [[f"{m.group}: {m.description}",
                       "caught" if o.caught else o.verdict.value.upper(), f"{o.seconds:.1f}",
                       o.detail] for m, o in zip(mutants, outcomes, strict=True)],
                     left=(0, 1, 3)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="parallel check runs")
    parser.add_argument("--group", help="only the mutants of this group (e.g. 'page table')")
    parser.add_argument("--checks", nargs="+", default=list(CHECKS), metavar="PATH",
                        help="the test files to run against each copy")
    args = parser.parse_args(argv)
    mutants = [m for m in HOST_MUTANTS if args.group in (None, m.group)]
    if not mutants:
        groups = sorted({m.group for m in HOST_MUTANTS})
        parser.error(f"no mutant in group {args.group!r}; the groups are {groups}")
    started = time.perf_counter()
    print("NOTE: this script deliberately breaks copies of the model; 'caught' is EXPECTED.")
    unbroken, outcomes = run_mutants(mutants, FOLDERS, pytest_check(tuple(args.checks)),
                                     args.workers)
    print(f"unbroken copy passes: {not unbroken.caught} ({unbroken.seconds:.1f} s)")
    if unbroken.verdict != Verdict.SURVIVED:
        print(f"  first failure: {unbroken.detail}")
        return 2
    print_table(mutants, outcomes)
    caught = sum(o.caught for o in outcomes)
    elapsed = time.perf_counter() - started
    print(f"\n{caught} of {len(mutants)} broken versions caught in {elapsed:.0f} s "
          f"({args.workers} workers; checks: {' '.join(args.checks)})")
    write_json("mutate.json", {
        "seconds": elapsed, "workers": args.workers, "checks": list(args.checks),
        "mutants": [asdict(m) | {"verdict": o.verdict.value, "caught": o.caught,
                                 "first_failure": o.detail, "seconds": o.seconds}
                    for m, o in zip(mutants, outcomes, strict=True)],
    })
    return 0 if caught == len(mutants) else 1


if __name__ == "__main__":
    sys.exit(main())
