"""The decode tests: the uvm_test classes that verif.launch runs in the simulator.

Each test builds the DecodeEnv from its config object, resets the chip and starts a virtual
sequence over the plan of decodes pytest passed in (``DECODE_PLAN``). Variants change behaviour
only in build_phase: a different virtual sequence (through the factory) or the config. Every
step is compared by the scoreboard as it ends; every decode is checked as a whole once, here in
check_phase (verif.decode_checks).
"""

from __future__ import annotations

import random
import time

import cocotb
from pyuvm import ConfigDB, uvm_factory, uvm_test

from model.tiny_lm import VOCAB
from verif.cocotb_entry import uvm_cocotb_test
from verif.decode_checks import DecodeFacts, decode_problems
from verif.decode_seq import DecodeSeq
from verif.decode_spec import DecodeSpec
from verif.decode_vseq import DecodeVseq, ForkDecodeVseq
from verif.env import DecodeEnv
from verif.env_config import CFG_KEY, config_from_environment
from verif.failures import recording_failures
from verif.run_record import RunRecorder


class DecodeCheckFailed(AssertionError):
    """A whole decode departs from the chapter's closed forms (verif.decode_checks)."""


@uvm_cocotb_test()
class PlanDecodeTest(uvm_test):  # UVM naming: tests end in Test
    """The plan's decodes, one after another; every step checked, every decode checked."""

    def build_phase(self) -> None:
        self.cfg = config_from_environment(cocotb.top)
        self.cfg.recorder.test = type(self).__name__
        self.cfg.decodes = [self.with_forced_tokens(spec) for spec in self.cfg.decodes]
        ConfigDB().set(self, "env", CFG_KEY, self.cfg)
        self.env = DecodeEnv("env", self)
        self.vseq = None

    def with_forced_tokens(self, spec: DecodeSpec) -> DecodeSpec:
        """Draw a decode's forced tokens from the seed and its name (not from draw order)."""
        if not spec.force_random:
            return spec
        rng = random.Random(f"{self.cfg.seed}/{spec.name}")
        return spec.with_force([spec.start, *(rng.randrange(VOCAB) for _ in range(spec.steps))])

    @recording_failures
    async def run_phase(self) -> None:
        self.raise_objection()
        await self.cfg.bfm.reset()
        self.vseq = uvm_factory().create_object_by_type(DecodeVseq, name="vseq")
        self.vseq.specs, self.vseq.seed = self.cfg.decodes, self.cfg.seed
        self.vseq.chip_sqr, self.vseq.pt_sqr = self.env.chip_sequencer, self.env.pt_sequencer
        started = time.perf_counter()
        await self.vseq.start()
        self.cfg.recorder.extra["timing"] = {"decode_s": round(time.perf_counter() - started, 4)}
        self.drop_objection()

    def check_phase(self) -> None:
        problems = [line for decode in self.vseq.decodes
                    for line in decode_problems(self.facts(decode))]
        if problems:
            error = DecodeCheckFailed("decode checks failed:\n  " + "\n  ".join(problems)
                                      + "\n" + self.cfg.where())
            self.cfg.recorder.record_failure(error)
            raise error

    @staticmethod
    def facts(decode: DecodeSeq) -> DecodeFacts:
        return DecodeFacts(decode.spec, list(decode.tokens), list(decode.pages_after),
                           decode.cycles()[:, 0].tolist(), len(decode.programs),
                           decode.shares_pool)

    def collect(self, recorder: RunRecorder) -> None:
        """Called when the run ends, passed or failed: what the result file keeps."""
        if self.vseq is not None:
            recorder.decodes = [decode.result() for decode in self.vseq.decodes]
        recorder.extra.update(sim=self.cfg.sim, seed=self.cfg.seed, waves=self.cfg.waves,
                              rerun=self.cfg.rerun,
                              words_written=self.cfg.memory.words_written)


@uvm_cocotb_test()
class ForkDecodeTest(PlanDecodeTest):
    """A request forks mid-decode; parent and child share pages until copy-on-write."""

    def build_phase(self) -> None:
        uvm_factory().set_type_override_by_type(DecodeVseq, ForkDecodeVseq)
        super().build_phase()


@uvm_cocotb_test(expect_fail=True)
class BrokenChipTest(PlanDecodeTest):
    """A negative test: the chip is built from a deliberately broken copy of the RTL.

    It passes only if the environment fails the run (scoreboard, watchdog or X check); pytest
    then checks the report in the result file names the step, the counter or address, expected
    and got.
    """
