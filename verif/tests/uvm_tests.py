"""The uvm_test classes that verif.runs.launch runs in the simulator (a cocotb test each).

Each test builds the env from its config object, resets the chip and starts a virtual sequence:
the plan of decodes pytest passed in (``DECODE_PLAN``), a serving workload (``SERVING_SPEC``)
or bare programs (``PROGRAMS``). Variants change behaviour only in build_phase: a different
virtual sequence (through the factory) or the config. Every chip run is compared by the
scoreboard as it ends; every decode is checked as a whole once, here in check_phase
(verif.scoreboard.decode_checks).
"""

from __future__ import annotations

import os
import random
import sys
import time
from dataclasses import replace

import cocotb
import numpy as np
from cocotb.triggers import Timer
from pyuvm import ConfigDB, uvm_factory, uvm_test

from model.chip.isa import ErrorCode
from model.compiler.layout import BATCH_MAX, Layout
from model.lm.tiny_lm import VOCAB, make_model
from verif.env.config import CFG_KEY, config_from_environment
from verif.env.env import ChipEnv
from verif.kit.failures import recording_failures
from verif.kit.fetch_bursts import FetchBurst, fetch_problems, watch_fetch_bursts
from verif.runs.record import RunRecorder, serving_summary
from verif.runs.spec import DecodeSpec
from verif.scoreboard.decode_checks import DecodeFacts, decode_verdicts, token_problems
from verif.sequences.decode_seq import DecodeSeq
from verif.sequences.decode_vseq import DecodeVseq, ForkDecodeVseq
from verif.sequences.program_seqs import (
    ProgramsSeq,
    error_programs,
    random_program,
    random_programs,
)
from verif.sequences.serving_vseq import ServingVseq
from verif.tests.cocotb_entry import register_jobs, uvm_cocotb_test

CRASH_EXIT_STATUS = 3  # ProcessCrashTest's


class DecodeCheckFailed(AssertionError):
    """A whole decode departs from the chapter's closed forms (verif.scoreboard.decode_checks)."""


class ChipTest(uvm_test):
    """What every test does: the config from the environment, the env, a reset, a sequence."""

    max_batch = 1  # the requests one chip run of the test holds (its layout's room)

    def build_phase(self) -> None:
        self.cfg = config_from_environment(cocotb.top)
        self.cfg.recorder.test = type(self).__name__
        self.cfg.recorder.extra["memory_profile"] = self.cfg.bfm.profile.name
        self.configure()
        ConfigDB().set(self, "env", CFG_KEY, self.cfg)
        self.env = ChipEnv("env", self)

    def configure(self) -> None:
        """Set what the test runs into the config (a step layout, or nothing)."""

    def step_layout(self, model_kind: str, model_seed: int) -> Layout:
        return Layout.for_model(make_model(model_kind, model_seed), self.cfg.chip, self.max_batch)

    @recording_failures
    async def run_phase(self) -> None:
        self.raise_objection()
        await self.cfg.bfm.power_up()
        started = time.perf_counter()
        await self.run_sequences()
        self.cfg.recorder.extra["timing"] = {"decode_s": round(time.perf_counter() - started, 4)}
        self.drop_objection()

    async def run_sequences(self) -> None:
        raise NotImplementedError

    def fail(self, error_type, title: str, problems: list[str]) -> None:
        """Record and raise a check_phase failure."""
        error = error_type(f"{title}:\n  " + "\n  ".join(problems) + "\n" + self.cfg.where())
        self.cfg.recorder.record_failure(error)
        raise error

    def collect(self, recorder: RunRecorder) -> None:
        """Called when the run ends, passed or failed: what the result file keeps."""
        recorder.extra["words_written"] = self.cfg.bfm.memory.words_written


@uvm_cocotb_test()
class PlanDecodeTest(ChipTest):  # UVM naming: tests end in Test
    """The plan's decodes, one after another; every step checked, every decode checked."""

    def configure(self) -> None:
        self.cfg.decodes = [self.with_forced_tokens(spec) for spec in self.cfg.decodes]
        first = self.cfg.decodes[0]
        self.cfg.chip_agent.layout = self.step_layout(first.model, first.model_seed)
        self.vseq = None

    def with_forced_tokens(self, spec: DecodeSpec) -> DecodeSpec:
        """Draw a decode's forced tokens from the seed and its name (not from draw order)."""
        if not spec.force_random:
            return spec
        rng = random.Random(f"{self.cfg.recorder.seed}/{spec.name}")
        return spec.with_force([spec.start, *(rng.randrange(VOCAB) for _ in range(spec.steps))])

    async def run_sequences(self) -> None:
        self.vseq = uvm_factory().create_object_by_type(DecodeVseq, name="vseq")
        self.vseq.specs, self.vseq.seed = self.cfg.decodes, self.cfg.recorder.seed
        self.vseq.chip_sqr, self.vseq.pt_sqr = self.env.chip_sequencer, self.env.pt_sequencer
        await self.vseq.start()

    def check_phase(self) -> None:
        for decode in self.vseq.decodes:
            decode.verdicts = decode_verdicts(self.facts(decode))
        problems = [line for decode in self.vseq.decodes
                    for lines in decode.verdicts.values() for line in lines]
        if problems:
            self.fail(DecodeCheckFailed, "decode checks failed", problems)

    @staticmethod
    def facts(decode: DecodeSeq) -> DecodeFacts:
        return DecodeFacts(decode.spec, list(decode.tokens), list(decode.pages_after),
                           decode.program_cycles(), decode.programs_compiled,
                           decode.shares_pool)

    def collect(self, recorder: RunRecorder) -> None:
        super().collect(recorder)
        if self.vseq is not None:
            recorder.decodes = [decode.result() for decode in self.vseq.decodes]


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
            problems += token_problems(replace(decode.spec, steps=at - 1), decode.tokens)
        if problems:
            self.fail(DecodeCheckFailed, "BAD_PAGE checks failed", problems)


class ServingCheckFailed(AssertionError):
    """A serving run left a request unfinished or the pool not empty."""


@uvm_cocotb_test()
class ServingTest(ChipTest):
    """A workload served with continuous batching over one pool (ServingVseq, SERVING_SPEC).

    Every batched run is compared by the scoreboard; the pool is checked after every step by
    the page-table agent; here, once at the end: every request finished with its output length
    and the pool holds no page (cached pages are evictable, hence free).
    """

    max_batch = BATCH_MAX

    def configure(self) -> None:
        spec = self.cfg.serving
        self.cfg.chip_agent.layout = self.step_layout(spec.model, spec.model_seed)
        self.vseq: ServingVseq | None = None

    async def run_sequences(self) -> None:
        self.vseq = ServingVseq("serving_vseq", self.cfg.serving, self.env.chip_sequencer,
                                self.env.pt_sequencer)
        await self.vseq.start()

    @property
    def scheduler(self):
        return self.env.pt_agent.driver.scheduler

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
            self.fail(ServingCheckFailed, "serving checks failed", problems)

    def collect(self, recorder: RunRecorder) -> None:
        super().collect(recorder)
        if self.vseq is not None and self.scheduler is not None:
            recorder.extra["serving"] = serving_summary(self.cfg.serving, self.scheduler,
                                                        self.vseq)


@uvm_cocotb_test()
class RandomProgramsTest(ChipTest):
    """Random legal programs, then wide SOFTMAX rows, on the chip agent: each run's error
    code, writes and counters equal the reference machine's (the env's scoreboard)."""

    async def run_sequences(self) -> None:
        programs = random_programs(self.cfg.recorder.seed, self.cfg.programs, self.cfg.chip)
        await ProgramsSeq("random_programs", self.env.chip_sequencer, programs).start()


@uvm_cocotb_test()
class ErrorPathsTest(ChipTest):
    """Each bad instruction stops the chip with ISA.md's error code, at its address, and the
    instruction after it never runs; an illegal opcode does so at every power-of-two address
    the memory holds (each bit of error_pc), or with PROGRAMS at the lowest PROGRAMS of them."""

    async def run_sequences(self) -> None:
        await ProgramsSeq("error_paths", self.env.chip_sequencer,
                          error_programs(self.cfg.chip, self.cfg.programs)).start()


class FetchBurstsWrong(AssertionError):
    """An instruction fetch read other words than its instruction's (hw/ISA.md, FETCH)."""


@uvm_cocotb_test()
class FetchBurstsTest(ChipTest):
    """PROGRAMS random programs, each compared by the scoreboard; every fetch's read bursts,
    watched on the AR channel, cover exactly its instruction's words (verif/kit/fetch_bursts.py):
    an extra word read is invisible to the scoreboard, which sees only what the chip writes."""

    async def run_sequences(self) -> None:
        bursts: list[FetchBurst] = []
        watcher = cocotb.start_soon(watch_fetch_bursts(self.cfg.bfm.dut, bursts))
        problems, fetches = [], 0
        for index in range(self.cfg.programs):
            program = random_program(self.cfg.recorder.seed, index, self.cfg.chip)
            bursts.clear()
            await ProgramsSeq("fetch_bursts", self.env.chip_sequencer, [program]).start()
            problems += [f"{program.description}: {p}" for p in fetch_problems(bursts)]
            fetches += len({burst.pc for burst in bursts})
        watcher.cancel()
        self.cfg.recorder.extra["fetches_watched"] = fetches
        if problems or not fetches:
            self.fail(FetchBurstsWrong, "instruction fetches", problems or ["no fetch seen"])


class PowerUpNotClean(AssertionError):
    """A test would begin with words an earlier test of its process left in the scratchpad."""


@uvm_cocotb_test()
class PowerUpTest(ChipTest):
    """The state every test starts from, checked: noise in every scratchpad word, a power-up,
    then every word read back from the simulator (`Backdoor.read` asks it, whatever the mirror
    holds) must be zero, as a new simulator process finds it (verif/kit/bfm.py's power_up);
    then a random program runs on the cleared chip, compared by the scoreboard with the
    reference machine's prediction from a zero scratchpad."""

    async def run_sequences(self) -> None:
        bfm = self.cfg.bfm
        words = bfm.scratchpad.size
        rng = np.random.default_rng(self.cfg.recorder.seed)
        noise = rng.integers(1, 2**32, words, dtype=np.uint32)
        bfm.scratchpad.write(0, noise)
        await Timer(1, unit="ns")  # the writes land; no clock edge yet
        if not np.array_equal(bfm.scratchpad.read_all(), noise):
            raise PowerUpNotClean("the noise written into the scratchpad did not land: the "
                                  "check below would prove nothing\n" + self.cfg.where())
        await bfm.power_up()
        left = np.flatnonzero(bfm.scratchpad.read_all())
        if left.size:
            raise PowerUpNotClean(f"after power-up {left.size} of {words} scratchpad words are "
                                  f"not zero, the first at word {left[0]}\n" + self.cfg.where())
        programs = random_programs(self.cfg.recorder.seed, 1, self.cfg.chip)
        await ProgramsSeq("after_power_up", self.env.chip_sequencer, programs).start()


@uvm_cocotb_test()
class KitFloorTest(uvm_test):
    """The testbench benchmark's floor (verif/bench/testbench.py): the plan's runs through the
    chip's BFM alone, no agent, no prediction, no scoreboard. Each run's image is loaded, the
    chip started and awaited, its status and outputs read, as the chip agent does; only its
    total cycles are compared, so that a floor that ran something else fails. Its time per run
    is what any cocotb testbench of this chip pays before it checks anything."""

    def build_phase(self) -> None:
        self.cfg = config_from_environment(cocotb.top)
        self.cfg.recorder.test = type(self).__name__

    @recording_failures
    async def run_phase(self) -> None:
        # imported here, not at the top: every simulator process imports this module, and
        # only the floor needs the benchmark's records (and their imports)
        from verif.bench.testbench import replay_records

        self.raise_objection()
        records, bfm = replay_records(self.cfg.decodes), self.cfg.bfm
        await bfm.power_up()
        started = time.perf_counter()
        for number, record in enumerate(records):
            bfm.memory.load(record.image)
            await bfm.run(record.expected.counters.total + self.cfg.chip_agent.watchdog_margin)
            total = bfm.read_status().counters.total
            for base, count in record.checked:
                bfm.memory.read(base, count)
            if total != record.expected.counters.total:
                raise AssertionError(f"floor run {number}: {total} cycles, the reference machine "
                                     f"{record.expected.counters.total}\n{self.cfg.where()}")
        self.cfg.recorder.extra["timing"] = {"decode_s": round(time.perf_counter() - started, 4),
                                             "runs": len(records)}
        self.drop_objection()


@uvm_cocotb_test()
class ProcessCrashTest(ChipTest):
    """Ends the simulator process in the middle of a test, as a crashing simulator would (the
    batching test's culprit: the tests after it in the process must be re-run alone)."""

    async def run_sequences(self) -> None:
        os._exit(CRASH_EXIT_STATUS)


register_jobs(sys.modules[__name__])  # the jobs of this simulator process (sim.runner.run_jobs)
