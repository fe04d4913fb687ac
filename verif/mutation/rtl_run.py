"""RTL mutation run: generated mutants of every chip module against a suite, on Verilator.

Each mutant runs its suite's stages in a mirror of the tree (build/rtl-mutants/<name>/, builds
kept), cheapest first, until one catches it; a survivor is then checked by formal equivalence
(mcy's tags); score = caught / built mutants not proven equivalent.
``python -m scripts.mutants [--seed S] [--count N] [--sample K] [--suite NAME]``
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shutil
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from model.chip.rtl_defs import DETECTION_OFF
from model.paths import OUT, REPO_ROOT
from sim.mem_profile import PROFILES
from sim.runner import locked
from sim.toolchain import verilator_root
from verif.formal.plan import BLOCKS as PROVEN_BLOCKS
from verif.kit import units
from verif.kit.compare import first_error
from verif.kit.failure_point import read_point
from verif.mutation import rtl_equivalence
from verif.mutation import rtl_generator as gen
from verif.mutation.framework import Mutant, Outcome, Verdict, run_mutants
from verif.mutation.stage_runner import Finished, run_stage
from verif.report.output import markdown_table, text_table
from verif.runs.failure_waves import WAVES_ON_FAILURE

MUTANT_ROOT = REPO_ROOT / "build" / "rtl-mutants"
FOLDERS = ("hw", "model", "sim", "verif", "scripts", "conftest.py", "pytest.ini")
SIM = "verilator"
TEST_SEED = 1  # every stage of every mutant runs with this seed
PROGRAMS = 40  # random programs per mutant: the chip test runs 200 per simulator
PASS_SCORE = 0.95
BLOCK_TEST = "verif/tests/test_blocks.py::test_block[{block}-" + SIM + "-seed{seed}]"
# modules without a block test of their own: the systolic array's checks every PE; the
# controller's (through the chip) checks the paged instructions' geometry rule
BLOCK_OF = {"pe": "systolic_array", "tile_buffer": "matrix_unit", "paged_geometry": "controller"}
WATCHDOG = re.compile(r"ChipHung|watchdog|did not rise by")
RESULT_MARK = "RTL-MUTANT-STAGE-RESULT "
FORMAL_BLOCKS = {block.name for block in PROVEN_BLOCKS}  # the modules with a formal proof
DECODE_PROFILE = "light"  # sim/mem_profile.py: latencies of 4 .. 16, ready low 10% of cycles


@dataclass(frozen=True)
class Stage:
    name: str
    timeout: float  # wall-clock seconds, building included
    node: str = ""  # a chip test the stage runs as pytest collects it ({seed}: TEST_SEED)


# block: the mutated module's block test (BLOCK_OF); error-paths: ErrorPathsTest; random-programs:
# PROGRAMS random programs; fetch-bursts: each fetch reads exactly its instruction's words (a
# read too many reaches no scoreboard); decode: one short decode (SHORT_PLAN) on a memory that
# stalls (the only stage where the chip waits: cnt_wait and every frozen cycle are checked).
# chip-only: the chip level alone.
FETCH_BURSTS = Stage("fetch-bursts", 300, "verif/tests/test_chip.py::test_each_fetch_reads_"
                     "exactly_its_instructions_words[" + SIM + "-seed{seed}]")
# detection: the same stages, then the parity checks' directed faults (a broken check that
# still passes every fault-free run misses its flip: verif/tests/test_faults.py)
FAULTS = Stage("faults", 300, "verif/tests/test_faults.py::test_the_parity_checks_report_their_"
               "flips_and_nothing_else")
# formal: the mutated module's own proof (make formal's, hw/formal/<module>.sv), last, so only
# survivors pay for it: a block that breaks its contract only where the chip never drives it
# (the controller frozen by a stall in a cycle the memory interface unit never stalls) fails
# its proof, which checks it against the contract for every input
FORMAL = Stage("formal", 900)
# lint: make lint's Verilator -Wall on the chip, with and without its parity checks (a dropped
# default of a combinational block infers a latch, which no simulation shows)
LINT = Stage("lint", 120)
LINT_BUILDS = ((), (f"+define+{DETECTION_OFF}",))
LINT_MESSAGE = re.compile(r"%(Warning|Error)[^:]*: (?:\S*/)?(\w+)\.v:")
SUITES = {
    "rtl-mutation": (Stage("block", 420), Stage("error-paths", 420),
                     Stage("random-programs", 420), FETCH_BURSTS, Stage("decode", 300), LINT,
                     FORMAL),
    "detection": (Stage("block", 420), Stage("error-paths", 420), Stage("random-programs", 420),
                  FETCH_BURSTS, Stage("decode", 300), FAULTS, LINT, FORMAL),
    "chip-only": (Stage("error-paths", 420), Stage("random-programs", 420), FETCH_BURSTS,
                  Stage("decode", 300)),
    "blocks-only": (Stage("block", 420),),
}


@dataclass
class RtlOutcome(Outcome):
    """An Outcome with what the report needs: the catching stage and test, the difference."""

    test: str = ""
    difference: str = ""
    watchdog: bool = False  # a TIMEOUT the testbench's watchdog stopped: counts as caught
    build_seconds: float = 0.0
    stages: list[str] = field(default_factory=list)
    unit: str | None = None  # the unit the catching test's report named
    decided_by: tuple[Stage, str | None] | None = None  # the stage (and block) of the verdict

    @property
    def counts_as_caught(self) -> bool:
        return self.verdict == Verdict.CAUGHT or (self.verdict == Verdict.TIMEOUT and
                                                   self.watchdog)


@dataclass
class StageResult:
    passed: bool
    test: str = ""
    difference: str = ""
    does_not_build: bool = False
    timed_out: bool = False
    build_seconds: float = 0.0
    unit: str | None = None  # the unit the failing test's report named (its failure point)


def block_tests() -> set[str]:
    """The blocks that have a Verilator block test, as pytest collects them."""
    done = run_stage([sys.executable, "-m", "pytest", "--collect-only", "-q",
                      "-p", "no:cacheprovider", "verif/tests/test_blocks.py"])
    return set(re.findall(rf"test_block\[(\w+)-{SIM}-seed", done.output))


def block_of(mutant: Mutant | None, blocks: set[str]) -> str | None:
    module = gen.module_of(mutant) if mutant else ""
    block = BLOCK_OF.get(module, module)
    return block if block in blocks else None


def mirror(source: Path, target: Path, folders: Sequence[str]) -> None:
    """Make ``target``'s ``folders`` equal to ``source``'s, writing only files whose bytes differ
    (an unchanged file keeps its time, so the builds stamped in ``target`` stay up to date)."""
    wanted = {p.relative_to(source) for p in source.rglob("*") if p.is_file()}
    for relative in sorted(wanted):
        old, new = target / relative, source / relative
        if not old.exists() or not filecmp.cmp(old, new, shallow=False):
            old.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(new, old)
    for path in list(target.rglob("*")):
        relative = path.relative_to(target)
        if path.is_file() and relative.parts[0] in folders and relative not in wanted \
                and "__pycache__" not in relative.parts:
            path.unlink()


def run_in_tree(command: list[str], tree: Path, timeout: float) -> Finished:
    """A command in a mutant's tree, its modules compiled into the repository's cache (the trees
    are mirrored: they stay valid), without code coverage or waves on failure."""
    env = os.environ | {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPATH": str(tree),
                        "PYTHONPYCACHEPREFIX": os.environ.get("PYTHONPYCACHEPREFIX")
                        or str(REPO_ROOT / "build" / "pycache"),
                        "RANDOM_SEED": str(TEST_SEED), WAVES_ON_FAILURE: "0", "CODE_COVERAGE": "0"}
    return run_stage(command, cwd=tree, env=env, timeout=timeout)


def stage_result(stage: Stage, tree: Path, block: str | None) -> StageResult:
    started = time.time()
    if stage == LINT:
        return lint_verdict(tree, stage.timeout)
    if stage == FORMAL:
        done = run_in_tree([sys.executable, "-m", "scripts.formal", "--only", block, "--jobs",
                            "1"], tree, stage.timeout)
        result = formal_verdict(done, block)
    elif stage.name == "block" or stage.node:
        node = (stage.node or BLOCK_TEST).format(block=block, seed=TEST_SEED)
        done = run_in_tree([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                            "-p", "no:xdist", node], tree, stage.timeout)
        result = block_verdict(done.output, node)
        result.build_seconds = built_since(tree, started)
    else:
        done = run_in_tree([sys.executable, "-m", "verif.mutation.rtl_run", "--stage", stage.name],
                           tree, stage.timeout)
        result = child_verdict(done.output, stage.name)
    if done.timed_out:
        fired = "; the testbench's watchdog had fired" if WATCHDOG.search(done.output) else ""
        result = StageResult(False, stage.name, f"killed after {stage.timeout:.0f} s "
                             f"(wall-clock limit){fired}", timed_out=True,
                             build_seconds=result.build_seconds)
    return result


def block_verdict(output: str, node: str) -> StageResult:
    """A pytest run of one block test: passed, or the test's own failure message."""
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    if re.match(r"1 passed\b", summary) and "failed" not in summary:
        return StageResult(True)
    if "BuildFailed" in output:
        return StageResult(False, node, first_line(output, "BuildFailed"), does_not_build=True)
    if "no tests ran" in output or "not found" in output:
        raise RuntimeError(f"the block test {node} does not exist:\n{output}")
    log = re.search(r"log:\s+(\S+)", output)
    message = failure_text(Path(log[1]).parent / "results.xml") if log else ""
    point = read_point(Path(log[1]).parent) if log else None
    raised = [line[1:].strip() for line in output.splitlines() if line.startswith("E ")]
    return StageResult(False, node, message or first_line(output, "Error")
                       or short(" ".join(raised[:3])), unit=point.unit if point else None)


def built_since(tree: Path, started: float) -> float:
    """Seconds spent building in a stage: from its start to each build stamp written since."""
    stamps = [p.stat().st_mtime for p in (tree / "build").glob("*/*/built.stamp")]
    return sum(max(0.0, s - started) for s in stamps if s >= started)


def child_verdict(output: str, stage: str) -> StageResult:
    for line in reversed(output.splitlines()):
        if line.startswith(RESULT_MARK):
            return StageResult(**json.loads(line[len(RESULT_MARK):]))
    return StageResult(False, stage, "the stage ended without a verdict: "
                       + " | ".join(output.strip().splitlines()[-3:]))


def first_line(output: str, word: str) -> str:
    return next((line.strip() for line in output.splitlines() if word in line), "")


def failure_text(results_xml: Path) -> str:
    """The failing cocotb test's own message (its first difference), from its results file."""
    if not results_xml.exists():
        return ""
    for case in ET.parse(results_xml).iter("testcase"):
        for bad in (*case.iter("failure"), *case.iter("error")):
            return short(bad.get("message") or bad.text or "")
    return ""


def short(text: str, limit: int = 400) -> str:
    text = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def suite_check(suite: str, blocks: set[str]):
    """run_mutants' check of a copy: the suite's stages, cheapest first, until one decides."""

    def check(mutant: Mutant | None, copy: Path) -> Outcome:
        name = mutant.name if mutant else "unbroken"
        tree = MUTANT_ROOT / name
        started = time.perf_counter()
        with locked(tree.with_suffix(".lock")):  # another run may be using the same tree
            mirror(copy, tree, FOLDERS)
            outcome = run_stages(mutant, tree)
        print(f"  {name}: {outcome.verdict.value} after {', '.join(outcome.stages)} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
        return outcome

    def run_stages(mutant: Mutant | None, tree: Path) -> RtlOutcome:
        outcome = RtlOutcome(tree.name, Verdict.SURVIVED, "every stage passed")
        for stage in SUITES[suite]:
            for block in stage_blocks(stage, mutant, blocks):
                if not note(outcome, stage, block, stage_result(stage, tree, block)):
                    return outcome
        return outcome

    return check


def lint_verdict(tree: Path, timeout: float) -> StageResult:
    """The lint stage's verdict: every build of LINT_BUILDS -Wall clean; else the first message,
    its unit the file it names."""
    rtl = sorted(str(p.relative_to(tree)) for p in (tree / "hw" / "rtl").glob("*.v"))
    for defines in LINT_BUILDS:
        done = run_in_tree([str(verilator_root() / "bin" / "verilator"), "--lint-only",
                            "--quiet", "-Wall", "-Ihw/rtl", *defines, *rtl,
                            "--top-module", "chip_top"], tree, timeout)
        if done.timed_out:
            return StageResult(False, "lint", f"killed after {timeout:.0f} s", timed_out=True)
        if done.returncode != 0:
            message = LINT_MESSAGE.search(done.output)
            return StageResult(False, "lint", short(first_error(done.output)),
                               unit=message[2] if message else None)
    return StageResult(True, "lint")


def formal_verdict(done: Finished, block: str) -> StageResult:
    """The formal stage's verdict: make formal's exit status, its first problem as the
    difference (an assertion with a counterexample, or one no longer proven)."""
    found = [line.removeprefix("problem: ") for line in done.output.splitlines()
             if line.startswith("problem: ")]
    return StageResult(done.returncode == 0, f"formal:{block}",
                       short(found[0] if found else first_error(done.output)), unit=block)


def stage_blocks(stage: Stage, mutant: Mutant | None, blocks: set[str]) -> list[str | None]:
    """A chip stage runs once; the block stage runs the mutated module's block test, if any,
    and the formal stage its proof, if it has one."""
    if stage == FORMAL:
        module = gen.module_of(mutant) if mutant else None
        return [module] if module in FORMAL_BLOCKS else []
    if stage.name != "block":
        return [None]
    block = block_of(mutant, blocks)
    return [block] if block else []


def note(outcome: RtlOutcome, stage: Stage, block: str | None, result: StageResult) -> bool:
    """Add a stage's result to an outcome; False when it decided the verdict."""
    outcome.stages.append(stage.name)
    outcome.build_seconds += result.build_seconds
    if result.passed:
        return True
    outcome.decided_by = (stage, block)
    outcome.test = f"{stage.name}: {result.test}"
    outcome.difference = result.difference
    outcome.unit = result.unit
    outcome.watchdog = bool(WATCHDOG.search(result.difference))
    if result.does_not_build:
        outcome.verdict = Verdict.DOES_NOT_BUILD
    elif result.timed_out or outcome.watchdog:
        outcome.verdict = Verdict.TIMEOUT
    else:
        outcome.verdict = Verdict.CAUGHT
    outcome.detail = f"{outcome.test}: {outcome.difference}"
    return False


def deciding_checks(outcomes: Sequence[Outcome]) -> list[tuple[Stage, str | None]]:
    """The checks that decided verdicts, each once, the chip stages (the longest) first."""
    found = {o.decided_by for o in outcomes if isinstance(o, RtlOutcome) and o.decided_by}
    return sorted(found, key=lambda c: (c[0].name == "block", c[0].name, c[1] or ""))


def unbroken_control(workers: int):
    """run_mutants' control: the unbroken copy must pass every check that decided a verdict
    (else the harness is at fault, not the mutant), in parallel on one mirrored tree."""

    def control(outcomes: Sequence[Outcome], copy: Path) -> Outcome:
        checks = deciding_checks(outcomes)
        tree = MUTANT_ROOT / "unbroken"
        with locked(tree.with_suffix(".lock")):
            mirror(copy, tree, FOLDERS)
            with ThreadPoolExecutor(max_workers=workers) as pool:
                results = list(pool.map(lambda c: stage_result(c[0], tree, c[1]), checks))
        names = [f"{stage.name}:{block}" if block else stage.name for stage, block in checks]
        failed = [(name, r) for name, r in zip(names, results, strict=True) if not r.passed]
        if failed:
            name, result = failed[0]
            return RtlOutcome("unbroken", Verdict.CAUGHT,
                              f"{name}: {result.test}: {result.difference}", stages=names)
        return RtlOutcome("unbroken", Verdict.SURVIVED,
                          f"passed the {len(checks)} checks that decided a verdict",
                          stages=names)

    return control


def run_chip_stage(stage: str) -> StageResult:
    """The child process (--stage): one chip-level stage in a mutant's tree; never raises."""
    from sim.runner import BuildFailed
    from verif.runs.launch import chip_build, run_decode, run_programs
    from verif.runs.plans import SHORT_PLAN

    run_dir = Path.cwd() / "out" / "rtl-mutant" / stage
    started = time.perf_counter()
    try:
        b = chip_build(SIM, waves=False)
    except BuildFailed as err:
        return StageResult(False, stage, short(str(err)), does_not_build=True,
                           build_seconds=time.perf_counter() - started)
    build_seconds = time.perf_counter() - started
    if stage == "decode":
        test = f"PlanDecodeTest {SHORT_PLAN[0].name} ({DECODE_PROFILE} memory)"
        run = run_decode(b, "PlanDecodeTest", SHORT_PLAN, TEST_SEED, run_dir=run_dir,
                         plusargs=tuple(PROFILES[DECODE_PROFILE].plusargs(TEST_SEED)))
    else:
        test = {"error-paths": "ErrorPathsTest", "random-programs": "RandomProgramsTest"}[stage]
        run = run_programs(b, test, TEST_SEED, PROGRAMS, run_dir=run_dir)
    if run.error is None and run.result and run.result["status"] == "passed":
        return StageResult(True, build_seconds=build_seconds)
    kind = (run.result or {}).get("failure_type", "")
    point = (run.result or {}).get("failure_point") or {}
    return StageResult(False, test, short(f"{kind}: {first_error(run.failure)}"),
                       build_seconds=build_seconds, unit=point.get("unit"))


# mcy's tags: caught by a test / not caught, not proven equivalent / not caught, proven
# equivalent (not scored) / caught although proven equivalent (a defect of the flow)
COVERED, UNCOVERED, NOCHANGE, EQGAP = "covered", "uncovered", "NOCHANGE", "EQGAP"


def proof_of(mutant: Mutant, outcome: RtlOutcome, proofs: dict[str, dict],
             timeout: float) -> dict | None:
    """The equivalence proof of a mutant: the recorded one, else (for a survivor: mcy's flow)
    one this run produces within ``timeout`` seconds a check; None when it is not proven
    equivalent."""
    proof = proofs.get(mutant.name)
    if proof is None and not outcome.counts_as_caught \
            and outcome.verdict != Verdict.DOES_NOT_BUILD:
        proof = asdict(rtl_equivalence.prove(mutant, timeout=timeout))
    return proof if proof and proof["status"] == "equivalent" else None


def tag(caught: bool, built: bool, proof: dict | None) -> str | None:
    if not built:
        return None
    if caught:
        return EQGAP if proof else COVERED
    return NOCHANGE if proof else UNCOVERED


def record(mutant: Mutant, outcome: RtlOutcome, proofs: dict[str, dict],
           proof_timeout: float = 300) -> dict:
    proof = proof_of(mutant, outcome, proofs, proof_timeout)
    built = outcome.verdict != Verdict.DOES_NOT_BUILD
    return {
        "name": mutant.name, "file": mutant.path, "line": gen.line_of(mutant),
        "module": gen.module_of(mutant), "operator": gen.operator_of(mutant),
        "description": mutant.description, "original": mutant.original,
        "mutated": mutant.mutated, "verdict": outcome.verdict.value,
        "counts_as_caught": outcome.counts_as_caught, "watchdog": outcome.watchdog,
        "tag": tag(outcome.counts_as_caught, built, proof), "equivalence_proof": proof,
        "catching_test": outcome.test or None,
        "first_difference": outcome.difference or None, "stages_run": outcome.stages,
        "seconds": round(outcome.seconds, 1), "build_seconds": round(outcome.build_seconds, 1),
        "unit_named": outcome.unit,
        "triage": (units.pointed_right(gen.module_of(mutant), outcome.unit)
                   if outcome.counts_as_caught else None),
    }


def score(records: list[dict]) -> tuple[int, int]:
    """(caught, scored): scored = built and not proven equivalent (an EQGAP fails the run)."""
    scored = [r for r in records if r["tag"] in (COVERED, UNCOVERED)]
    return sum(r["counts_as_caught"] for r in scored), len(scored)


def markdown(records: list[dict], header: dict) -> str:
    caught, scored = score(records)
    modules = []
    for module in sorted({r["module"] for r in records}):
        right, counted = units.share(mine := of(records, "module", module))
        modules.append([module, len(mine), caught_in(mine),
                        f"{right} / {counted}" if counted else "not counted (every unit's)"
                        if module in units.SHARED_MODULES else "-"])
    operators = [[op, len(of(records, "operator", op)), caught_in(of(records, "operator", op))]
                 for op in gen.OPERATORS]
    stages = Counter(r["catching_test"].split(":")[0] for r in records if r["counts_as_caught"])
    lines = [
        "## RTL mutation run", "",
        f"Suite `{header['suite']}` ({', '.join(header['stages'])}) on {SIM}, mutant seed "
        f"{header['seed']}, test seed {TEST_SEED}, {PROGRAMS} random programs; "
        f"{len(records)} mutants, {header['workers']} workers, {header['seconds']:.0f} s.", "",
        f"**Score: {caught} / {scored} = {100 * caught / max(scored, 1):.1f}%** caught of the "
        f"built mutants not proven equivalent (pass mark {100 * PASS_SCORE:.0f}%).", "",
        markdown_table(["mcy tag", "mutants"], [[t, len(of(records, "tag", t))] for t in
                                               (COVERED, UNCOVERED, NOCHANGE, EQGAP)],
                       left=(0,)), "",
        triage_line(records), "",
        markdown_table(["verdict", "mutants"], verdict_counts(records), left=(0,)), "",
        markdown_table(["module", "mutants", "caught", "report names its unit"], modules,
                       left=(0, 3)), "",
        markdown_table(["operator class", "mutants", "caught"], operators, left=(0,)), "",
        markdown_table(["catching stage", "mutants"], sorted(stages.items()), left=(0,)),
    ]
    lines += caught_table([r for r in records if r["counts_as_caught"]])
    lines += section("Survivors (uncovered)", of(records, "tag", UNCOVERED))
    lines += section("Proven equivalent (NOCHANGE, not scored)", of(records, "tag", NOCHANGE),
                     reason=True)
    lines += section("Caught although proven equivalent (EQGAP: a defect of the flow)",
                     of(records, "tag", EQGAP), reason=True)
    lines += section("Does not build (not scored)",
                     [r for r in records if r["verdict"] == Verdict.DOES_NOT_BUILD.value])
    watchdog = [r for r in records if r["verdict"] == Verdict.TIMEOUT.value]
    lines += section("Timeouts (caught only when the testbench's watchdog fired)", watchdog,
                     detail=True)
    return "\n".join(lines) + "\n"


def of(records: list[dict], key: str, value: str) -> list[dict]:
    return [r for r in records if r[key] == value]


def caught_in(records: list[dict]) -> int:
    return sum(r["counts_as_caught"] for r in records)


def triage_line(records: list[dict]) -> str:
    right, counted = units.share(records)
    left_out = sum(r["counts_as_caught"] and r["triage"] is None for r in records)
    stages = sorted({r["catching_test"].split(":")[0] for r in records if r["counts_as_caught"]})
    by_stage = "; ".join(
        f"{stage}: {mine[0]} / {mine[1]}" for stage in stages
        if (mine := units.share([r for r in records
                                  if (r["catching_test"] or "").startswith(f"{stage}:")]))[1])
    return (f"**Triage: {right} / {counted} = {100 * right / max(counted, 1):.1f}%** of the caught "
            f"mutants' reports (the catching test's failure point) name a unit of the mutated "
            f"module (aim 90%; verif/kit/units.py); by catching stage: {by_stage}. "
            f"{left_out} caught mutants of modules every unit shares are not counted.")


def caught_table(records: list[dict]) -> list[str]:
    """Each caught mutant: the test that caught it and the unit its report named."""
    verdict = {True: "yes", False: "no", None: "not counted"}
    return ["", f"### Caught: {len(records)}", "", markdown_table(
        ["mutant", "module", "catching test", "unit named", "right unit"],
        [[r["name"], r["module"], r["catching_test"], r["unit_named"] or "-", verdict[r["triage"]]]
         for r in records], left=range(5))]


def verdict_counts(records: list[dict]) -> list[tuple[str, int]]:
    """The verdicts as the score counts them: proven equivalent mutants apart, timeouts split."""
    mine = [r for r in records if r["tag"] != NOCHANGE]

    def count(verdict: Verdict, watchdog: bool | None = None) -> int:
        return sum(r["verdict"] == verdict.value and watchdog in (None, r["watchdog"])
                   for r in mine)

    return [("caught", count(Verdict.CAUGHT)),
            ("timeout, the testbench's watchdog fired (counts as caught)",
             count(Verdict.TIMEOUT, True)),
            ("timeout, the wall-clock limit (not caught)", count(Verdict.TIMEOUT, False)),
            ("survived", count(Verdict.SURVIVED)),
            ("does not build (not scored)", count(Verdict.DOES_NOT_BUILD)),
            ("proven equivalent (run, not scored)", len(records) - len(mine))]


def section(title: str, records: list[dict], reason: bool = False,
            detail: bool = False) -> list[str]:
    lines = ["", f"### {title}: {len(records)}", ""]
    for r in records:
        lines.append(f"- `{r['file']}:{r['line']}` ({r['operator']}, {r['name']}): "
                     f"`{r['original']}` -> `{r['mutated']}`")
        if reason:
            proof = r["equivalence_proof"]
            depth = f"bounded, depth {proof['depth']}" if proof["bounded"] else "unbounded"
            lines.append(f"  - proven equivalent at {proof['top']}'s outputs: {proof['engine']}, "
                         f"{depth}, {proof['seconds']} s")
        if detail:
            lines.append(f"  - {r['catching_test']}: {r['first_difference']}")
    return lines if records else [*lines, "none"]


def print_table(records: list[dict]) -> None:
    print(text_table(["mutant", "operator", "verdict", "seconds", "unit named", "catching test"],
                     [[f"{Path(r['file']).name}:{r['line']}", r["operator"],
                       r["verdict"] if not r["counts_as_caught"] else
                       "caught" if r["verdict"] == "caught" else "caught (watchdog)",
                       f"{r['seconds']:.1f}", r["unit_named"] or "-", r["catching_test"] or ""]
                      for r in records], left=(0, 1, 2, 4, 5)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=gen.DEFAULT_SEED, help="mutant seed")
    parser.add_argument("--count", type=int, default=gen.DEFAULT_COUNT, help="mutants")
    parser.add_argument("--sample", type=int, metavar="K",
                        help="run a fixed, seeded subset of K of the mutants (make run)")
    parser.add_argument("--workers", type=int, default=2, help="mutants checked in parallel")
    parser.add_argument("--suite", choices=sorted(SUITES), default="rtl-mutation")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run only this generated mutant (repeatable)")
    parser.add_argument("--changed-since", metavar="REVISION",
                        help="mutate only the RTL lines changed since this git revision, each "
                             "line once (with --count at least their number)")
    parser.add_argument("--out", type=Path, default=OUT,
                        help="where mutants.json and mutants.md go")
    parser.add_argument("--proof-timeout", type=float, default=300,
                        help="seconds for each equivalence check of a survivor")
    parser.add_argument("--stage", help=argparse.SUPPRESS)  # internal: one chip stage, here
    args = parser.parse_args(argv)
    if args.stage:
        result = run_chip_stage(args.stage)
        print(RESULT_MARK + json.dumps(result.__dict__), flush=True)
        return 0
    only = gen.changed_lines(args.changed_since) if args.changed_since else None
    mutants = gen.generate(args.seed, args.count, only_lines=only)
    if args.sample:
        mutants = gen.sample(mutants, args.sample, args.seed)
    if args.only:
        unknown = set(args.only) - {m.name for m in mutants}
        if unknown:
            parser.error(f"no generated mutant is named {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m.name in args.only]
    started = time.perf_counter()
    print("NOTE: this script deliberately breaks copies of the RTL; 'caught' is EXPECTED.")
    print(f"{len(mutants)} mutants, suite {args.suite}, {args.workers} workers", flush=True)
    unbroken, outcomes = run_mutants(mutants, FOLDERS, suite_check(args.suite, block_tests()),
                                     args.workers, control=unbroken_control(args.workers))
    print(f"unbroken copy passes: {unbroken.verdict == Verdict.SURVIVED} "
          f"({unbroken.detail if unbroken.caught else ', '.join(unbroken.stages) or 'no check'}"
          f"; {unbroken.seconds:.1f} s)")
    if unbroken.verdict != Verdict.SURVIVED:
        print(f"  {unbroken.detail}")
        return 2
    proofs = rtl_equivalence.recorded()
    records = [record(m, o, proofs, args.proof_timeout)
               for m, o in zip(mutants, outcomes, strict=True)]
    elapsed = time.perf_counter() - started
    header = {"suite": args.suite, "stages": [s.name for s in SUITES[args.suite]],
              "seed": args.seed, "count": args.count, "sample": args.sample,
              "workers": args.workers, "seconds": elapsed, "test_seed": TEST_SEED,
              "programs": PROGRAMS, "unbroken_seconds": unbroken.seconds,
              "unbroken_checks": unbroken.stages}
    print_table(records)
    caught, scored = score(records)
    right, counted = units.share(records)
    header |= {"caught": caught, "scored": scored, "score": caught / max(scored, 1),
               "triage_right": right, "triage_counted": counted}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mutants.json").write_text(json.dumps(header | {"mutants": records}, indent=1))
    (args.out / "mutants.md").write_text(markdown(records, header))
    print(f"\nscore {caught} / {scored} = {100 * caught / max(scored, 1):.1f}% in {elapsed:.0f} s"
          f" ({args.out / 'mutants.json'}, {args.out / 'mutants.md'})")
    gaps = of(records, "tag", EQGAP)
    if gaps:
        print(f"EQGAP: caught although proven equivalent: {', '.join(r['name'] for r in gaps)}")
    return 0 if caught >= PASS_SCORE * scored and not gaps else 1


if __name__ == "__main__":
    sys.exit(main())
