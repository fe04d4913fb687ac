"""The fault campaign's uvm test (verif/faults): one simulator process runs a chunk of a
campaign, its workloads' golden runs first, then each fault from power-up."""

from __future__ import annotations

import json
import os
import sys
import time

import cocotb
from pyuvm import ConfigDB, uvm_test

from verif.env.config import CFG_KEY, config_from_environment
from verif.faults.env import FaultEnv
from verif.faults.plan import FAULT_PLAN_ENV, read_chunk
from verif.faults.sequence import FaultCampaignSeq
from verif.faults.sites import SCRATCHPAD_SITES, chip_registers
from verif.kit.failures import recording_failures
from verif.tests.cocotb_entry import register_jobs, uvm_cocotb_test


@uvm_cocotb_test()
class FaultCampaignTest(uvm_test):
    """The faults of the chunk FAULT_PLAN names, classified against the reference machine."""

    def build_phase(self) -> None:
        self.cfg = config_from_environment(cocotb.top)
        self.cfg.recorder.test = type(self).__name__
        ConfigDB().set(self, "env", CFG_KEY, self.cfg)
        self.env = FaultEnv("env", self)

    @recording_failures
    async def run_phase(self) -> None:
        self.raise_objection()
        workloads, faults, detection = read_chunk(os.environ[FAULT_PLAN_ENV], self.cfg.chip)
        driver = self.env.agent.driver
        driver.registers = tuple(r for r in chip_registers(self.cfg.chip, detection)
                                 if r.path not in SCRATCHPAD_SITES)
        seq = FaultCampaignSeq("faults", self.env.agent.sequencer, workloads, faults,
                               self.cfg.chip)
        started = time.perf_counter()
        await seq.start()
        seconds = time.perf_counter() - started
        self.cfg.recorder.extra["faults"] = seq.records
        self.cfg.recorder.extra["timing"] = {"campaign_s": round(seconds, 3)}
        out = os.path.join(os.environ["TB_RUN_DIR"], "faults.json")
        with open(out, "w") as handle:  # CPU: the simulator's and Python's (one process)
            json.dump({"records": seq.records, "seconds": seconds,
                       "cpu_s": time.process_time()}, handle)
        self.drop_objection()


register_jobs(sys.modules[__name__])
