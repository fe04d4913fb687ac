"""The read bursts of each instruction fetch, watched on chip_harness's AXI4 AR channel.

hw/ISA.md: FETCH is one read stream of the instruction's words (model.chip.isa.WORDS_PER_INSTR)
at pc; a burst accepted while the controller is in FETCH is the fetch's. Python runs only while
ARVALID is high, so a run costs a few callbacks per read burst."""

from __future__ import annotations

from dataclasses import dataclass

from cocotb.triggers import FallingEdge, RisingEdge

from model.chip.isa import WORDS_PER_INSTR
from model.chip.rtl_defs import ControllerState

WORD_BYTES = 4


@dataclass(frozen=True)
class FetchBurst:
    """One AR handshake of a fetch: the pc fetched, the burst's first word and its beats."""

    pc: int
    word: int
    beats: int


async def watch_fetch_bursts(dut, bursts: list[FetchBurst]) -> None:
    """Append every fetch's AR handshake to ``bursts``, forever (start it with start_soon)."""
    while True:
        await RisingEdge(dut.arvalid)
        while True:
            await FallingEdge(dut.clk)  # mid-cycle: what the next rising edge hands over
            if str(dut.arvalid.value) != "1":
                break
            if str(dut.arready.value) == "1" and \
                    int(dut.ctl_state.value) == ControllerState.FETCH:
                bursts.append(FetchBurst(int(dut.pc_now.value),
                                         int(dut.araddr.value) // WORD_BYTES,
                                         int(dut.arlen.value) + 1))


def fetch_problems(bursts: list[FetchBurst]) -> list[str]:
    """Each fetch that did not read exactly its instruction's words, pc .. pc + 3, in order."""
    fetches: dict[int, list[FetchBurst]] = {}
    for burst in bursts:
        fetches.setdefault(burst.pc, []).append(burst)
    problems = []
    for pc, mine in fetches.items():
        words = [b.word + beat for b in mine for beat in range(b.beats)]
        if words != list(range(pc, pc + WORDS_PER_INSTR)):
            problems.append(f"the fetch at pc {pc} read words {words[0]} .. {words[-1]} "
                            f"({len(words)} words in bursts of "
                            f"{', '.join(str(b.beats) for b in mine)} beats), not the "
                            f"instruction's {WORDS_PER_INSTR} words {pc} .. "
                            f"{pc + WORDS_PER_INSTR - 1}")
    return problems
