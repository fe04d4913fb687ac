"""How far batching raises the chip's tokens per cycle, from the programs' closed-form cycles.

A batch shares its weight loads and projections but runs attention per request, so as B grows
the gain approaches the solo step's cycles over what one more request adds. Cycles are a closed
form of the program (hw/ISA.md), so no inputs are needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tabulate import tabulate

from model.chip.isa import ChipConfig, program_cycles
from model.compiler.cache import ProgramCache
from model.compiler.layout import BATCH_MAX, max_context
from model.compiler.program import StepProgram
from model.compiler.quantize import calibrate, shared_context_scales
from model.lm.tiny_lm import random_model


def step_cycles(programs: ProgramCache, contexts: Sequence[int]) -> int:
    """Cycles of one run of requests at ``contexts``."""
    return program_cycles(programs.get(contexts).words, programs.cfg)


def attention_cycles(program: StepProgram) -> int:
    """The cycles of a step's per-request attention instructions."""
    return program_cycles(program.attention_instructions(), program.cfg)


@dataclass(frozen=True)
class BatchingCeiling:
    """The batching gain when every request is at one context."""

    context: int
    solo_cycles: int
    gain_b8: float  # tokens per 1,000 cycles at B = 8 over the solo step's, to 2 places
    marginal_cycles: float  # cycles one more request adds to a batch (from B = 4 to B = 8)

    @property
    def limit(self) -> float:
        """The gain as B grows without bound."""
        return self.solo_cycles / self.marginal_cycles


def batching_ceiling(programs: ProgramCache, contexts: Sequence[int]) -> list[BatchingCeiling]:
    """The gain at B = 8 and its limit, per context (``programs``: a layout of 8 requests)."""
    ceilings = []
    for context in contexts:
        solo = step_cycles(programs, [context])
        four, eight = step_cycles(programs, [context] * 4), step_cycles(programs, [context] * 8)
        ceilings.append(BatchingCeiling(context, solo, round(8 * solo / eight, 2),
                                        (eight - four) / 4))
    return ceilings


def throughput_table(programs: ProgramCache, batches: Sequence[int] = (1, 2, 4, 8),
                     contexts: Sequence[int] = (1, 8, 32, 64)) -> dict[int, dict[int, float]]:
    """Tokens per 1,000 cycles, per context and batch size, every request at the context."""
    return {n: {b: 1000.0 * b / step_cycles(programs, [n] * b) for b in batches}
            for n in contexts}


def format_table(table: dict[int, dict[int, float]]) -> str:
    """Tokens per 1,000 cycles and the gain over B = 1, one line per context."""
    batches = list(next(iter(table.values())))
    rows = [[context, *(f"{rate:.3f} {rate / rates[batches[0]]:.2f}x" for rate in rates.values())]
            for context, rates in table.items()]
    return tabulate(rows, ["context", *(f"B={b}" for b in batches)], disable_numparse=True)


def main() -> None:
    """Print the table for the random model of serving, calibrated as serving is."""
    cfg, model = ChipConfig(), random_model(2)
    calibration = shared_context_scales(calibrate(model, max_context(cfg), None, starts=[0]))
    table = throughput_table(ProgramCache(model, calibration, cfg, max_batch=BATCH_MAX))
    print("tokens per 1,000 cycles (every request at the given context), and the gain over B=1")
    print(format_table(table))


if __name__ == "__main__":
    main()
