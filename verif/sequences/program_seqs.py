"""Bare programs on the chip agent: constrained-random programs, wide SOFTMAX rows, error paths.

The scoreboard checks each like a decode step. The directed programs reach what random ones do
not: wide SOFTMAX ranges, and every error code at every bit of ``error_pc``.
"""

from __future__ import annotations

import random

import numpy as np
from pyuvm import uvm_sequence, uvm_sequencer

from model.chip import isa, randprog
from model.chip.isa import ChipConfig
from verif.agents.chip.items import ProgramItem
from verif.sequences.send import send


def program_seed(run_seed: int, index: int) -> int:
    return run_seed * 1_000_003 + index


def random_program(run_seed: int, index: int, cfg: ChipConfig) -> ProgramItem:
    """The ``index``-th random program of a run, named by a seed anyone can replay."""
    program = randprog.generate(program_seed(run_seed, index), cfg)
    return ProgramItem(f"program{index}", f"program {index} (program seed {program.seed})",
                       program.image, cfg.ext_words)


# SOFTMAX rows: (length, max - min of the values); the lengths set each bit of ev_sm_max_len up
# to SM_MAX's, the spreads fill decode.chip_cg.softmax_range's bins 64..127 and 128..255
WIDE_SOFTMAX = ((64, 64), (128, 127), (192, 128), (255, 200), (256, 255), (1, 0))
WIDE_SOFTMAX_DATA = 64  # the rows' external address; the result follows them


def wide_softmax_program(rng: random.Random, length: int, spread: int,
                         cfg: ChipConfig) -> ProgramItem:
    """LOAD a raw int8 row spanning exactly `spread` (random programs' lie close together),
    noise in its upper bytes, SOFTMAX it, STORE the result."""
    length = min(length, cfg.sm_max)
    low = rng.randint(-128, 127 - spread)
    values = [low, low + spread, *(rng.randint(low, low + spread) for _ in range(length - 2))]
    rng.shuffle(values)
    row = [(rng.getrandbits(24) << 8) | (v & 0xFF) for v in values[:length]]
    out = WIDE_SOFTMAX_DATA + length
    words = isa.assemble((isa.load(WIDE_SOFTMAX_DATA, 0, length), isa.softmax(0, length, length),
                          isa.store(length, out, length)))
    image = np.zeros(out + length, dtype=np.int64)
    image[: len(words)] = words
    image[WIDE_SOFTMAX_DATA:out] = row
    return ProgramItem(f"softmax{length}", f"SOFTMAX of {length} values spanning {spread}",
                       image, cfg.ext_words)


class ProgramsSeq(uvm_sequence):
    """Run a list of bare programs on the chip agent, one after another."""

    def __init__(self, name: str, chip_sqr: uvm_sequencer, programs: list[ProgramItem]):
        super().__init__(name)
        self.chip_sqr = chip_sqr
        self.programs = programs

    async def body(self) -> None:
        for program in self.programs:
            await send(self.chip_sqr, program, want_response=True)


def random_programs(seed: int, count: int, cfg: ChipConfig) -> list[ProgramItem]:
    """``count`` random legal programs, then the wide SOFTMAX rows."""
    rng = random.Random(seed)
    return [*(random_program(seed, index, cfg) for index in range(count)),
            *(wide_softmax_program(rng, length, spread, cfg) for length, spread in WIDE_SOFTMAX)]


# ---- error paths ----------------------------------------------------------------------------

ERROR_CASES = [
    ("illegal opcode", isa.Instr(0x42)),
    ("external address out of range", isa.load(16380, 0, 8)),
    ("scratchpad address out of range", isa.matmul(0, 0, 4094, 2, 2, 2)),
    ("zero size", isa.vadd(0, 0, 0, 0)),
    ("reduction longer than K_MAX", isa.matmul(0, 0, 0, 1, 65, 1)),
    # the block table at 100 holds the data [1, 2, 3, 4]: its header 1 is no slot of a page of 1
    ("block table outside the pool", isa.pload(100, 8, 300, 1, 1, 0, 4)),
]
ILLEGAL = isa.Instr(0x42)
ERROR_FILLER = isa.vadd(0, 0, 8, 1)  # legal, short, reads only the loaded data, writes sram[8]
ERROR_AFTER = 100  # the STORE that must not run writes this many words past the data


def error_image(bad: isa.Instr, fillers: int = 0) -> np.ndarray:
    """LOAD [1, 2, 3, 4] (at 100 at least), `fillers` filler instructions, `bad` (at address
    4 + 4 * fillers), then a STORE of the loaded words that must never run."""
    data = max(100, 4 * (fillers + 4))  # past the program and its HALT
    words = isa.assemble([isa.load(data, 0, 4), *([ERROR_FILLER] * fillers), bad,
                          isa.store(0, data + ERROR_AFTER, 4)])
    image = np.zeros(data + ERROR_AFTER + 56, dtype=np.int64)
    image[: len(words)] = words
    image[data : data + 4] = [1, 2, 3, 4]
    return image


def error_address_fillers(cfg: ChipConfig, addresses: int = 0) -> list[int]:
    """Fillers that put an illegal opcode at address 2^b, for b = 3 up to the highest address
    bit that fits; with ``addresses``, only the lowest that many."""
    fillers = [(1 << b) // 4 - 1 for b in range(3, cfg.ext_words.bit_length())]
    fitting = [f for f in fillers if error_image(ILLEGAL, f).size <= cfg.ext_words]
    return fitting[:addresses] if addresses else fitting


def error_programs(cfg: ChipConfig, addresses: int = 0) -> list[ProgramItem]:
    """Each bad instruction of ERROR_CASES, then an illegal opcode at every power-of-two
    address, so each bit of ``error_pc`` toggles; a STORE after it would be a stray write."""
    cases = [*((name, bad, 0) for name, bad in ERROR_CASES),
             *((f"illegal opcode at address {4 * (f + 1)}", ILLEGAL, f)
               for f in error_address_fillers(cfg, addresses))]
    return [ProgramItem(f"error{index}", f"error path: {name}", error_image(bad, fillers),
                        cfg.ext_words)
            for index, (name, bad, fillers) in enumerate(cases)]
