"""What making the fault sites public costs Verilator: the chapter's W = 8 decode run on the normal
chip build, on the fault build (only the sites public_flat_rw through the .vlt) and on a build
with every signal public (--public-flat-rw), one after another in one call; the uvm test's own
run time (no start-up) and the ratio to the normal build's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from model.chip.isa import ChipConfig
from model.paths import RUNS_ROOT
from sim.runner import Build, build
from verif.faults.campaign import fault_build
from verif.runs.launch import (
    CHIP_TOPLEVEL,
    HARNESS_DEFINES,
    VERILATOR_ARGS,
    chip_build,
    chip_sources,
    run_decode,
)
from verif.runs.plans import chapter_spec

WINDOW = 8
SEED = 1


@dataclass
class BuildCost:
    seconds: dict[str, float]  # the decode's run time per build

    def __str__(self) -> str:
        normal = self.seconds["normal"]
        return "\n".join(f"{name:>16}: {s:6.2f} s  x{s / normal:.3f}"
                         for name, s in self.seconds.items())


def all_public_build() -> Build:
    args = tuple(a for a in VERILATOR_ARGS if a != "--no-public-flat-rw")
    return build("verilator", CHIP_TOPLEVEL, chip_sources(),
                 parameters=ChipConfig().verilog_parameters(), defines=HARNESS_DEFINES,
                 waves=False, coverage=False, build_args=(*args, "--public-flat-rw"))


def decode_seconds(b: Build, name: str) -> float:
    run = run_decode(b, "PlanDecodeTest", [chapter_spec(WINDOW)], SEED,
                     run_dir=Path(RUNS_ROOT / "verilator" / "faults" / f"cost-{name}").resolve())
    return float(run.raise_if_failed()["timing"]["decode_s"])


def build_cost() -> BuildCost:
    builds = {"normal": chip_build("verilator", waves=False, coverage=False),
              "sites public": fault_build("verilator"), "all public": all_public_build()}
    return BuildCost({name: decode_seconds(b, name) for name, b in builds.items()})
