"""The chip agent's monitor and its transaction: what the chip reports after each run.

One trigger per run (the rising edge of done), then one backdoor read of the status, the cycle
and event counters (what the chip-side coverage samples) and the output region: the only place
the testbench reads the chip's status. Just before it publishes the run, it has the agent's write
monitor publish the run's writes (verif/ext_write_monitor.py's `publish_run`), so that the
scoreboard holds every write of a run when the run's observation arrives. An X or Z is not
raised here, where the step is unknown: it travels in the observation, and the scoreboard
raises it as UnknownValue with its step.

Everything in a ChipObservation comes from the RTL after done; nothing comes from the reference
model or is inferred from the program, so a chip-side coverage hole means the hardware did not
do it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge
from pyuvm import ConfigDB, uvm_analysis_port, uvm_monitor

from model.compiler import Layout
from model.machine import int8_of
from verif.chip_bfm import ChipStatus, UnknownValue
from verif.env_config import CFG_KEY, DecodeEnvConfig
from verif.failures import recording_failures
from verif.profiling import PROFILE


@dataclass
class ChipObservation:
    """One run of the chip, as observed at its pins and memories after done."""

    status: ChipStatus | None  # None when a status port was X or Z (see `unknown`)
    out_base: int  # external address of outputs[0]
    outputs: np.ndarray  # the output region, uint32 words
    unknown: str | None = None  # which output held X or Z (Icarus only)


@dataclass
class DecodedOutputs:
    """The output region read as the compiled step defines it (compiler.Layout)."""

    logits_int: np.ndarray
    token: int
    k_new: np.ndarray
    v_new: np.ndarray


def decode_outputs(layout: Layout, obs: ChipObservation) -> DecodedOutputs:
    """Split the observed output words into logits, token, k_new and v_new."""

    def at(address: int, count: int) -> np.ndarray:
        start = address - obs.out_base
        return obs.outputs[start : start + count]

    return DecodedOutputs(
        logits_int=int8_of(at(layout.logits, layout.vocab)),
        token=int(at(layout.token, 1)[0]),
        k_new=int8_of(at(layout.k_new, layout.dim)),
        v_new=int8_of(at(layout.v_new, layout.dim)),
    )


class ChipMonitor(uvm_monitor):
    """Publishes one ChipObservation per rising edge of done."""

    def build_phase(self) -> None:
        self.cfg: DecodeEnvConfig = ConfigDB().get(self, "", CFG_KEY)
        self.ap = uvm_analysis_port("ap", self)
        self.write_monitor = None  # the agent's ExtWriteMonitor, set in its connect_phase

    @recording_failures
    async def run_phase(self) -> None:
        done = self.cfg.bfm.dut.done
        while True:
            await RisingEdge(done)
            await ReadOnly()
            if self.write_monitor is not None:
                self.write_monitor.publish_run()
            with PROFILE.section("chip_monitor"):
                observation = self.observe()
            self.ap.write(observation)

    def observe(self) -> ChipObservation:
        bfm, layout = self.cfg.bfm, self.cfg.layout
        try:
            status = bfm.read_status()
            outputs = bfm.read_words(layout.logits, layout.end - layout.logits)
        except UnknownValue as err:
            return ChipObservation(None, layout.logits, np.zeros(0, np.uint32), unknown=str(err))
        return ChipObservation(status, layout.logits, outputs)
