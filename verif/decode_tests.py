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
from dataclasses import replace

import cocotb
from pyuvm import ConfigDB, uvm_factory, uvm_test

from model.batch_compiler import BatchLayout
from model.isa import ErrorCode
from model.tiny_lm import VOCAB, make_model
from verif.cocotb_entry import uvm_cocotb_test
from verif.decode_checks import DecodeFacts, decode_problems, token_problems
from verif.decode_seq import DecodeSeq
from verif.decode_spec import DecodeSpec
from verif.decode_vseq import DecodeVseq, ForkDecodeVseq
from verif.env import DecodeEnv
from verif.env_config import CFG_KEY, config_from_environment
from verif.failures import recording_failures
from verif.run_record import RunRecorder
from verif.serving_summary import serving_summary
from verif.serving_vseq import ServingVseq


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
                           decode.program_cycles(), len(decode.programs), decode.shares_pool)

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


class ServingCheckFailed(AssertionError):
    """A serving run left a request unfinished or the pool not empty."""


@uvm_cocotb_test()
class ServingTest(uvm_test):
    """A workload served with continuous batching over one pool (ServingVseq, SERVING_SPEC).

    Every batched run is compared by the scoreboard; the pool is checked after every step by
    the page-table agent; here, once at the end: every request finished with its output length
    and the pool holds no page (cached pages are evictable, hence free).
    """

    def build_phase(self) -> None:
        self.cfg = config_from_environment(cocotb.top)
        self.cfg.recorder.test = type(self).__name__
        spec = self.cfg.serving
        model = make_model(spec.model, spec.model_seed)
        self.cfg.layout = BatchLayout.for_model(model, self.cfg.chip)
        ConfigDB().set(self, "env", CFG_KEY, self.cfg)
        self.env = DecodeEnv("env", self)
        self.vseq: ServingVseq | None = None

    @recording_failures
    async def run_phase(self) -> None:
        self.raise_objection()
        await self.cfg.bfm.reset()
        self.vseq = ServingVseq("serving_vseq", self.cfg.serving, self.env.chip_sequencer,
                                self.env.pt_sequencer)
        started = time.perf_counter()
        await self.vseq.start()
        self.cfg.recorder.extra["timing"] = {"decode_s": round(time.perf_counter() - started, 4)}
        self.drop_objection()

    @property
    def scheduler(self):
        return self.env.pt_agent.driver.serving.scheduler

    def check_phase(self) -> None:
        scheduler = self.scheduler
        problems = [f"request {rid!r} generated {len(f.generated)} tokens, asked for "
                    f"{f.request.output_len}" for rid, f in scheduler.finished.items()
                    if len(f.generated) != f.request.output_len]
        if not scheduler.done:
            problems.append(f"unfinished: {scheduler.running()} running, "
                            f"{scheduler.queued()} queued")
        if scheduler.table.used():
            problems.append(f"{scheduler.table.used()} pages still held after the last request")
        if problems:
            error = ServingCheckFailed("serving checks failed:\n  " + "\n  ".join(problems)
                                       + "\n" + self.cfg.where())
            self.cfg.recorder.record_failure(error)
            raise error

    def collect(self, recorder: RunRecorder) -> None:
        recorder.extra.update(sim=self.cfg.sim, seed=self.cfg.seed, waves=self.cfg.waves,
                              rerun=self.cfg.rerun, words_written=self.cfg.memory.words_written)
        if self.vseq is not None and self.env.pt_agent.driver.serving is not None:
            recorder.extra["serving"] = serving_summary(self.cfg.serving, self.scheduler,
                                                        self.vseq)


@uvm_cocotb_test()
class BadPageDecodeTest(PlanDecodeTest):
    """Chip gather: at step ``bad_table_at`` the page-table agent writes a page outside the pool
    into the block table. The chip must stop that step with BAD_PAGE and write nothing: the
    scoreboard compares the error code, the output region and every write with the reference
    machine, which stops there too. The decode ends at that step; the steps before it are
    checked as every decode's are.
    """

    def check_phase(self) -> None:
        problems = []
        for decode in self.vseq.decodes:
            at = decode.spec.bad_table_at
            errors = [int(response.error) for response in decode.responses]
            if errors != [0] * (at - 1) + [int(ErrorCode.BAD_PAGE)]:
                problems.append(f"{decode.spec.label()}: error codes per step {errors}, "
                                f"expected BAD_PAGE at step {at} only")
            before = replace(decode.spec, steps=at - 1)
            problems += token_problems(before, decode.tokens)
        if problems:
            error = DecodeCheckFailed("BAD_PAGE checks failed:\n  " + "\n  ".join(problems)
                                      + "\n" + self.cfg.where())
            self.cfg.recorder.record_failure(error)
            raise error

