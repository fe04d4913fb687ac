"""The one configuration object of the decode environment, set in ConfigDB under ``cfg``.

Like an OpenTitan env cfg it carries the handles to the design (the BFM and the memory mirror,
the Python counterpart of a virtual interface), the chip's parameters and memory layout, the
plan of decodes to run, and what a failure report must name: seed, waveform file, re-run command.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from model.compiler import Layout
from model.isa import ChipConfig
from model.tiny_lm import DIM, VOCAB
from verif.chip_bfm import ChipBfm
from verif.decode_spec import DecodeSpec, plan_from_json
from verif.ext_memory import ExtMemoryMirror
from verif.run_record import RunRecorder
from verif.serving_spec import ServingSpec, spec_from_json

CFG_KEY = "cfg"
DEFAULT_WATCHDOG_MARGIN = 1000  # cycles beyond the program's closed-form cost


@dataclass
class DecodeEnvConfig:
    """Everything DecodeEnv and its tests are configured with."""

    bfm: ChipBfm
    memory: ExtMemoryMirror
    chip: ChipConfig
    layout: Layout
    decodes: list[DecodeSpec]
    serving: ServingSpec | None  # a serving test's workload (SERVING_SPEC), else None
    seed: int
    sim: str
    run_dir: Path
    waves: str
    rerun: str
    recorder: RunRecorder
    watchdog_margin: int = DEFAULT_WATCHDOG_MARGIN

    def where(self) -> str:
        """The lines every failure report ends with: how to find and re-run this run."""
        return (f"  seed: {self.seed}  simulator: {self.sim}\n"
                f"  waves: {self.waves}\n"
                f"  re-run with waves: {self.rerun}")


def config_from_environment(dut) -> DecodeEnvConfig:
    """Build the config inside the simulator from what pytest put in the environment."""
    chip = ChipConfig()
    bfm = ChipBfm(dut)
    run_dir = Path(os.environ.get("TB_RUN_DIR", os.getcwd()))
    return DecodeEnvConfig(
        bfm=bfm,
        memory=ExtMemoryMirror(bfm, chip.ext_words),
        chip=chip,
        layout=Layout.for_model(DIM, VOCAB, chip.k_max),
        decodes=plan_from_json(os.environ.get("DECODE_PLAN", "[]")),
        serving=spec_from_json(os.environ.get("SERVING_SPEC", "")),
        seed=int(os.environ.get("RANDOM_SEED", "0")),
        sim=os.environ.get("TB_SIM", "unknown"),
        run_dir=run_dir,
        waves=os.environ.get("TB_WAVES", "not recorded (set WAVES=1)"),
        rerun=os.environ.get("TB_RERUN", "(run through pytest to get the command)"),
        recorder=RunRecorder(run_dir),
        watchdog_margin=int(os.environ.get("TB_WATCHDOG_MARGIN", DEFAULT_WATCHDOG_MARGIN)),
    )
