"""The campaign's sequence: each workload's golden run, then every fault on it, classified.

The golden run is the reference machine's one prediction per workload; the chip's unfaulted run
must equal it (else the environment is broken and the campaign stops) and gives the end state a
faulty run's is compared with for latency; a flipped memory word is compared with the
prediction's final word (the image's, where the program never wrote it).
"""

from __future__ import annotations

from pyuvm import uvm_sequence, uvm_sequencer

from model.chip import machine
from model.chip.isa import ChipConfig
from verif.agents.chip.items import ProgramItem
from verif.faults.classify import classify
from verif.faults.items import Fault, FaultItem, memory_key
from verif.faults.sites import SCRATCHPAD_PARITY
from verif.sequences.send import send


class GoldenRunDiffers(AssertionError):
    """The unfaulted chip differs from the reference machine: no fault can be classified."""


def expected_word(prediction: machine.RunResult, fault: Fault) -> dict[str, str]:
    """The flipped memory word's final value in the prediction (nothing for other models)."""
    if fault.model not in ("scratchpad", "external"):
        return {}
    memory = prediction.sram if fault.model == "scratchpad" else prediction.ext
    word = int(memory[fault.index]) & 0xFFFFFFFF
    value = word.bit_count() & 1 if fault.site == SCRATCHPAD_PARITY else word
    return {memory_key(fault): str(value)}


def first_difference(golden: dict[str, str], got: dict[str, str]) -> str | None:
    """The first piece of end state (a register, array word or memory word) that differs."""
    return next((key for key in got if key in golden and golden[key] != got[key]), None)


class FaultCampaignSeq(uvm_sequence):
    """Runs ``faults`` over ``workloads`` on the chip agent; ``records`` get one dict each."""

    def __init__(self, name: str, sqr: uvm_sequencer, workloads: list[ProgramItem],
                 faults: list[Fault], cfg: ChipConfig):
        super().__init__(name)
        self.sqr, self.workloads, self.faults, self.cfg = sqr, workloads, faults, cfg
        self.records: list[dict] = []

    async def body(self) -> None:
        expected, golden = [], []
        for number, run in enumerate(self.workloads):
            prediction = machine.run(run.image(), self.cfg)
            item = await send(self.sqr, FaultItem(f"golden{number}", run, None))
            if classify(prediction, item.observed) != "masked":
                raise GoldenRunDiffers(f"{run.where()}: the unfaulted chip differs from the "
                                       f"reference machine ({item.observed})")
            expected.append(prediction)
            golden.append(item.end_state)
        for number, fault in enumerate(self.faults):
            run = self.workloads[fault.workload]
            item = await send(self.sqr, FaultItem(f"fault{number}", run, fault))
            outcome = classify(expected[fault.workload], item.observed)
            latent = None
            if outcome == "masked":
                prediction = expected[fault.workload]
                latent = first_difference(golden[fault.workload] | expected_word(prediction, fault),
                                          item.end_state)
            self.records.append({**fault.as_dict(), "outcome": outcome, "latent": latent,
                                 "error": item.observed.error,
                                 "run_cycles": expected[fault.workload].counters.total})
