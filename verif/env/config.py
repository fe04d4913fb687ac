"""The env's one configuration object (ConfigDB ``cfg``): the chip agent's configuration and
what the test is asked to run, both read from what pytest put in the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from model.chip.isa import ChipConfig
from verif.agents.chip.config import DEFAULT_WATCHDOG_MARGIN, ChipAgentConfig
from verif.kit.bfm import ChipBfm
from verif.runs.record import RunRecorder
from verif.runs.spec import DecodeSpec, ServingSpec, plan_from_json, spec_from_json

CFG_KEY = "cfg"


@dataclass
class EnvConfig:
    """Everything the env and its tests are configured with."""

    chip_agent: ChipAgentConfig
    decodes: list[DecodeSpec] = field(default_factory=list)  # DECODE_PLAN
    serving: ServingSpec | None = None  # a serving test's workload (SERVING_SPEC)
    programs: int = 0  # a program test's count of random programs (PROGRAMS)

    @property
    def bfm(self) -> ChipBfm:
        return self.chip_agent.bfm

    @property
    def chip(self) -> ChipConfig:
        return self.chip_agent.chip

    @property
    def recorder(self) -> RunRecorder:
        return self.chip_agent.recorder

    def where(self) -> str:
        return self.recorder.where()


def config_from_environment(dut) -> EnvConfig:
    """Build the config inside the simulator from what pytest put in the environment."""
    chip = ChipConfig()
    recorder = RunRecorder(
        Path(os.environ.get("TB_RUN_DIR", os.getcwd())),
        seed=int(os.environ.get("RANDOM_SEED", "0")),
        sim=os.environ.get("TB_SIM", "unknown"),
        waves=os.environ.get("TB_WAVES", "not recorded (set WAVES=1)"),
        rerun=os.environ.get("TB_RERUN", "(run through pytest to get the command)"),
    )
    margin = int(os.environ.get("TB_WATCHDOG_MARGIN", DEFAULT_WATCHDOG_MARGIN))
    return EnvConfig(
        chip_agent=ChipAgentConfig(ChipBfm(dut, chip), chip, recorder, watchdog_margin=margin),
        decodes=plan_from_json(os.environ.get("DECODE_PLAN") or "[]"),
        serving=spec_from_json(os.environ.get("SERVING_SPEC") or ""),
        programs=int(os.environ.get("PROGRAMS") or "0"),
    )
