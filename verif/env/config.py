"""The one configuration object of the env, set in ConfigDB under ``cfg``.

Like an OpenTitan env cfg it carries the handles to the design (the BFM with its memory
backdoor, the Python counterpart of a virtual interface), the chip's parameters, the memory
layout of the steps it runs (None for bare programs), what the test is asked to run, and what a
failure report must name: seed, waveform file, re-run command.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from model.compiler.layout import Layout
from model.isa import ChipConfig
from verif.env.decode_spec import DecodeSpec, plan_from_json
from verif.env.run_record import RunRecorder
from verif.env.serving_spec import ServingSpec, spec_from_json
from verif.kit.bfm import ChipBfm

CFG_KEY = "cfg"
DEFAULT_WATCHDOG_MARGIN = 1000  # cycles beyond the program's closed-form cost


@dataclass
class EnvConfig:
    """Everything the env and its tests are configured with."""

    bfm: ChipBfm
    chip: ChipConfig
    seed: int
    sim: str
    run_dir: Path
    waves: str
    rerun: str
    recorder: RunRecorder
    layout: Layout | None = None  # the steps' memory layout (set by a decode or serving test)
    decodes: list[DecodeSpec] = field(default_factory=list)  # DECODE_PLAN
    serving: ServingSpec | None = None  # a serving test's workload (SERVING_SPEC)
    programs: int = 0  # a program test's count of random programs (PROGRAMS)
    watchdog_margin: int = DEFAULT_WATCHDOG_MARGIN

    def where(self) -> str:
        """The lines every failure report ends with: how to find and re-run this run."""
        return (f"  seed: {self.seed}  simulator: {self.sim}\n"
                f"  waves: {self.waves}\n"
                f"  re-run with waves: {self.rerun}")


def config_from_environment(dut) -> EnvConfig:
    """Build the config inside the simulator from what pytest put in the environment."""
    chip = ChipConfig()
    run_dir = Path(os.environ.get("TB_RUN_DIR", os.getcwd()))
    return EnvConfig(
        bfm=ChipBfm(dut, chip),
        chip=chip,
        seed=int(os.environ.get("RANDOM_SEED", "0")),
        sim=os.environ.get("TB_SIM", "unknown"),
        run_dir=run_dir,
        waves=os.environ.get("TB_WAVES", "not recorded (set WAVES=1)"),
        rerun=os.environ.get("TB_RERUN", "(run through pytest to get the command)"),
        recorder=RunRecorder(run_dir),
        decodes=plan_from_json(os.environ.get("DECODE_PLAN") or "[]"),
        serving=spec_from_json(os.environ.get("SERVING_SPEC") or ""),
        programs=int(os.environ.get("PROGRAMS") or "0"),
        watchdog_margin=int(os.environ.get("TB_WATCHDOG_MARGIN", DEFAULT_WATCHDOG_MARGIN)),
    )
