"""What the chip's changed units cost in logic: cells and flip-flops, before and after.

Yosys (Debian's, installed when missing) synthesizes each unit of UNITS to generic gates, from
this tree's hw/rtl and from BASELINE's: per module its own cells and flip-flops, then the unit's
total; and each module that holds a parity check (DETECTION_UNITS), from this tree with and
without FAULT_DETECTION_OFF (hw/ISA.md, "CORRUPTION"). ``python -m scripts.bench area`` writes
out/bench_area.md and out/bench_area.json.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from model.chip.isa import ChipConfig
from model.chip.rtl_defs import DETECTION_OFF
from model.paths import OUT, REPO_ROOT, RTL_DIR
from verif.report.output import markdown_table, write_json

# The units whose RTL changed, with the chip's parameters (not sram.v: a behavioural memory,
# which Yosys would build from flip-flops).
UNITS = {"softmax_unit": {"SM_MAX": ChipConfig().sm_max},
         "matrix_unit": {"ARRAY_N": ChipConfig().array_n, "K_MAX": ChipConfig().k_max}}
# "before": the revision before SOFTMAX's divider was pipelined and the matrix unit's reads widened
BASELINE = "9b3b4ec"
# the parity checks' modules: the controller's (instruction register, counters, the flag and the
# scratchpad's read checks) and the scratchpad's (a bit per word, a check per lane), the
# scratchpad at 256 words (Yosys builds its array from flip-flops: the chip's 4,096 would take
# minutes; the parity bits are 1/32 of the words' at any size) with the chip's ARRAY_N lanes
DETECTION_UNITS = {"controller": {}, "sram": {"SRAM_WORDS": 256, "LANES": ChipConfig().array_n}}
WITHOUT_DETECTION = f"-D{DETECTION_OFF}"
ENSURE_PACKAGES = REPO_ROOT / "scripts" / "ensure_system_packages.sh"


@dataclass(frozen=True)
class ModuleCost:
    """One synthesized module's own gates (not its submodules'), or, named TOTAL, the unit's."""

    module: str
    cells: int
    flip_flops: int


TOTAL = "total"


def module_costs(stat: str) -> list[ModuleCost]:
    """The sections of Yosys's `stat` (``=== name ===``), the last the unit's total (the design
    hierarchy; a unit without submodules is its own). A flip-flop's gate type names a DFF."""
    costs = []
    for name, body in re.findall(r"^=== (.+?) ===\n(.*?)(?=^=== |\Z)", stat, re.M | re.S):
        gates = [(kind, int(n)) for kind, n in re.findall(r"^\s+(\$_\w+)\s+(\d+)$", body, re.M)]
        module = TOTAL if name == "design hierarchy" else plain_name(name)
        costs.append(ModuleCost(module, sum(n for _, n in gates),
                                sum(n for kind, n in gates if "DFF" in kind)))
    if len(costs) == 1:
        costs.append(ModuleCost(TOTAL, costs[0].cells, costs[0].flip_flops))
    return costs


def plain_name(name: str) -> str:
    """A module's name without Yosys's parameter decoration: `$paramod$<hash>\\divu` and
    `$paramod\\divu\\DIV_W=..` are both `divu`."""
    parts = name.split("\\")
    return parts[1] if len(parts) > 1 else name


def synthesize(rtl_dir: Path, top: str, parameters: dict[str, int],
               define: str = "") -> list[ModuleCost]:
    files = " ".join(str(p) for p in sorted(rtl_dir.glob("*.v")))
    chparam = "".join(f"chparam -set {k} {v} {top}; " for k, v in parameters.items())
    with tempfile.TemporaryDirectory() as tmp:
        stat = Path(tmp) / "stat.txt"
        script = (f"read_verilog {define} -I{rtl_dir} {files}; {chparam}synth -top {top}; "
                  f"tee -q -o {stat} stat")
        subprocess.run(["yosys", "-q", "-p", script], check=True, capture_output=True,
                       text=True)
        return module_costs(stat.read_text())


def baseline_rtl(into: Path) -> Path:
    """hw/rtl as it was at BASELINE, written under ``into``."""
    listing = subprocess.run(["git", "ls-tree", "--name-only", BASELINE, "hw/rtl/"],
                             cwd=REPO_ROOT, check=True, capture_output=True, text=True)
    rtl = into / "rtl"
    rtl.mkdir()
    for path in listing.stdout.split():
        text = subprocess.run(["git", "show", f"{BASELINE}:{path}"], cwd=REPO_ROOT, check=True,
                              capture_output=True, text=True).stdout
        (rtl / Path(path).name).write_text(text)
    return rtl


def detection_costs() -> tuple[list[str], dict]:
    """Each parity check's module without and with the checks, from this tree."""
    lines = ["## Logic of the parity checks", "",
             "Yosys `synth`, before = this tree with FAULT_DETECTION_OFF (the chip without its "
             "parity checks), after = with them; the scratchpad at "
             f"{DETECTION_UNITS['sram']['SRAM_WORDS']} words.", ""]
    results = {}
    for unit, parameters in DETECTION_UNITS.items():
        before = synthesize(RTL_DIR, unit, parameters, WITHOUT_DETECTION)
        after = synthesize(RTL_DIR, unit, parameters)
        results[unit] = {"before": [asdict(c) for c in before],
                         "after": [asdict(c) for c in after]}
        lines += table(unit, before, after)
    return lines, results


def table(unit: str, before: list[ModuleCost], after: list[ModuleCost]) -> list[str]:
    old = {c.module: c for c in before}
    new = {c.module: c for c in after}
    names = [*sorted((old.keys() | new.keys()) - {TOTAL}), TOTAL]
    rows = [[f"**{name}** (every instance)" if name == TOTAL else name,
             *(getattr(cost.get(name), what, "-") for what in ("cells", "flip_flops")
               for cost in (old, new))] for name in names]
    return [f"### `{unit}`", "", markdown_table(["module", "cells before", "cells after",
                                                 "flip-flops before", "flip-flops after"],
                                                rows, left=(0,)), ""]


def main() -> int:
    if subprocess.run([str(ENSURE_PACKAGES), "yosys"]).returncode:
        return 2  # the script has said what is missing and how to install it
    lines = ["## Logic of the changed units", "",
             f"Yosys `synth` (generic gates), before = revision {BASELINE}, after = this tree: "
             "each module's own cells (its submodules on lines of their own), then the unit's "
             "total.", ""]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        old_rtl = baseline_rtl(Path(tmp))
        for unit, parameters in UNITS.items():
            before = synthesize(old_rtl, unit, parameters)
            after = synthesize(RTL_DIR, unit, parameters)
            results[unit] = {"before": [asdict(c) for c in before],
                             "after": [asdict(c) for c in after]}
            lines += table(unit, before, after)
    detection_lines, detection = detection_costs()
    text = "\n".join(lines + detection_lines)
    print(text)
    json_path = write_json("bench_area.json", {"baseline": BASELINE, "units": results,
                                               "detection": detection})
    (OUT / "bench_area.md").write_text(text + "\n")
    print(f"wrote {OUT / 'bench_area.md'} and {json_path}")
    return 0
