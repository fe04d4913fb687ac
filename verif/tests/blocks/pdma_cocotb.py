"""The paged DMA (hw/tb/pdma_harness.v: pdma, mem_if, axi_ram, sram) against the reference
machine.

Each PLOAD, PSTORE and PCOPY runs on the harness and on `model.chip.machine.Machine` from the same
external memory (the pool, the block tables) and the same scratchpad. Directed cases first:
reads that cross page boundaries, a table whose first row starts mid-page, pages listed out of
order and twice, pages of 1 .. 1024 rows, 64 entries (the buffer full), a row of 255 words, and
each way a table can name a page outside the pool (the header, a used entry, either page of a
PCOPY) beside an unused entry full of noise; then random ones. Checked after every command:
every word written to either memory (the harness's write logs: the first wrong word in time
is named with its cycle and its source word; on BAD_PAGE any write is a stray one), the whole
external memory and the whole SRAM, the busy cycles (`model.chip.isa.exec_cycles`, or the table
phase on BAD_PAGE), `fault` (with done, on BAD_PAGE only), the table words received (the
machine's `ev_pt_words`) and the words moved (`ev_dma_words`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import cocotb
import numpy as np

from model.chip import isa
from model.chip.geometry import page_shift_of
from model.chip.isa import ChipConfig, ErrorCode, Instr, Op
from model.chip.machine import Machine, RunResult
from verif.kit.compare import first_memory_difference
from verif.kit.memory import Backdoor
from verif.tests.blocks.block_tb import (
    PAGED_ASSEMBLERS,
    block_rng,
    failure,
    random_view,
    sram_backdoor,
    sram_writes,
    start_clock_and_reset,
)
from verif.tests.blocks.command import Command, MemoryWrites, run_command
from verif.tests.blocks.provenance import Memories
from verif.tests.blocks.write_log import WriteLog

STROBE = {Op.PLOAD: "cmd_pload", Op.PSTORE: "cmd_pstore", Op.PCOPY: "cmd_pcopy"}
PROGRAM_WORDS = 8  # the instruction and a HALT, where the reference machine fetches them
TABLE_BASE = 16  # block tables from here ..
POOL_BASE = 512  # .. pools from here to the top of external memory
RANDOM_CASES = 30


@dataclass
class Case:
    """One command: the instruction and the table words it reads (written before it runs)."""

    name: str
    instr: Instr
    table: list[int]  # at instr.a: header and entries (PCOPY: the two pages)


def paged(op: Op, pool_shape: tuple[int, int, int], length: int, sram: int,
          row: int = 0) -> Instr:
    """`op` on a pool of (row_words, page size, pages) at POOL_BASE, table at TABLE_BASE."""
    row_words, page_size, pages = pool_shape
    return PAGED_ASSEMBLERS[op](TABLE_BASE, sram, POOL_BASE, row_words, length,
                                page_shift_of(page_size), pages, row=row)


def viewed(rng: random.Random, name: str, instr: Instr, **view) -> Case:
    """A PLOAD or PSTORE through a random block table (block_tb.random_view's ``view``)."""
    return Case(name, instr, random_view(rng, instr, **view))


def directed_cases(rng: random.Random) -> list[Case]:
    small, wide = (8, 4, 16), (255, 1, 4)
    cases = [
        viewed(rng, "window from mid-page, across pages", paged(Op.PLOAD, small, 7, 40),
               first=3),
        viewed(rng, "a row of the table's second page first",
               paged(Op.PLOAD, small, 9, 40, row=5), first=2),
        viewed(rng, "one page for every table page", paged(Op.PLOAD, small, 12, 40),
               repeat=True),
        viewed(rng, "pages of one row, 64 entries", paged(Op.PLOAD, (2, 1, 100), 64, 0)),
        viewed(rng, "pages of 1024 rows", paged(Op.PLOAD, (1, 1024, 2), 5, 10, row=1021),
               first=2),
        viewed(rng, "a row of 255 words", paged(Op.PLOAD, wide, 1, 100)),
        viewed(rng, "the step's new row", paged(Op.PSTORE, small, 1, 40, row=7), first=1),
        Case("a page listed twice: the later row wins",
             paged(Op.PSTORE, (4, 2, 8), 6, 40, row=1), [1, 4, 3, 0, 3, 6]),
        Case("copy-on-write of a whole page", paged(Op.PCOPY, small, 4, 200), [5, 9]),
        Case("copy of slots 1 .. 2", paged(Op.PCOPY, small, 2, 200, row=1), [9, 5]),
        Case("an unused entry holds noise", paged(Op.PLOAD, small, 3, 40), [0, 2, 0xFFFFFFFF]),
    ]
    bad = [
        ("the header is not a slot", paged(Op.PLOAD, small, 5, 40), [4, 1, 2, 3]),
        ("a used entry is the pool's size", paged(Op.PLOAD, small, 5, 40), [3, 1, 16, 3]),
        ("a used entry is beyond 16 bits", paged(Op.PSTORE, small, 1, 40, row=7), [0, 1, 0x10000]),
        ("a used entry is all ones", paged(Op.PSTORE, small, 3, 40), [2, 1, 0xFFFFFFFF]),
        ("PCOPY from outside the pool", paged(Op.PCOPY, small, 4, 200), [16, 1]),
        ("PCOPY to outside the pool", paged(Op.PCOPY, small, 4, 200), [1, 0xFFFF]),
    ]
    return cases + [Case(f"BAD_PAGE: {name}", instr, table) for name, instr, table in bad]


def random_case(rng: random.Random, index: int, cfg: ChipConfig) -> Case:
    row_words = rng.choice([1, 2, 8, rng.randint(1, 40)])
    page_size = 2 ** rng.choice([0, 1, 2, 3, 4, rng.randint(0, 6)])
    pages = rng.randint(1, max(1, min(40, (cfg.ext_words - POOL_BASE) // (page_size * row_words))))
    op = rng.choice([Op.PLOAD, Op.PLOAD, Op.PSTORE, Op.PCOPY])
    if op == Op.PCOPY:
        row = rng.randrange(page_size)
        length = rng.randint(1, page_size - row)
    else:
        row = rng.choice([0, rng.randrange(2 * page_size)])
        length = rng.randint(1, longest_view(row, page_size, cfg.sram_words // row_words // 2))
    sram = rng.randrange(cfg.sram_words - length * row_words + 1)
    instr = paged(op, (row_words, page_size, pages), length, sram, row)
    table = ([rng.randrange(pages), rng.randrange(pages)] if op == Op.PCOPY
             else random_view(rng, instr, repeat=rng.random() < 0.2))
    if rng.random() < 0.15:  # outside the pool: the header, an entry (used or not), a page
        where = rng.randrange(len(table))
        table[where] = (page_size if where == 0 and op != Op.PCOPY
                        else rng.choice([pages, 0xFFFF, 0xFFFFFFFF]))
    return Case(f"random {index}", instr, table)


def longest_view(row: int, page_size: int, sram_rows: int) -> int:
    """The most table rows from ``row`` (48 at most, ``sram_rows`` at most) whose entries
    (model.chip.isa.table_entries) fit the entry buffer."""
    shift = page_shift_of(page_size)
    return max(length for length in range(1, max(1, min(48, sram_rows)) + 1)
               if isa.table_entries(row, length, shift)[1] <= isa.PT_ENTRIES)


def predict(ext: np.ndarray, sram: np.ndarray, instr: Instr, cfg: ChipConfig) -> RunResult:
    """The reference machine: `instr` then HALT at address 0 of this external memory (a unit
    with both memories: model.chip.machine.run_instruction's scratchpad, and this image too)."""
    image = ext.copy()
    words = isa.assemble([instr])
    image[: len(words)] = words
    machine = Machine(image, cfg)
    machine.sram[:] = sram
    return machine.run()


def drive_fields(dut, instr: Instr) -> None:
    dut.cmd_table.value = instr.a
    dut.cmd_sram.value = instr.b
    dut.cmd_pool.value = instr.c
    dut.cmd_row_words.value = instr.m
    dut.cmd_len.value = instr.length
    dut.cmd_page_shift.value = instr.shift
    dut.cmd_row.value = instr.row
    dut.cmd_pages.value = instr.pages
    dut.cmd_copy.value = int(instr.op == Op.PCOPY)


async def check(dut, cfg: ChipConfig, ext: Backdoor, sram: Backdoor,
                logs: dict[str, WriteLog], case: Case) -> bool:
    """Write the case's table, run it on both, compare; returns whether it faulted."""
    instr = case.instr
    ext.write(instr.a, np.array(case.table, dtype=np.uint32))
    before = Memories(sram.shadow.copy(), ext.shadow.copy(), cfg)
    want = predict(before.ext, before.sram, instr, cfg)
    assert want.error in (ErrorCode.OK, ErrorCode.BAD_PAGE), failure(
        f"{case.name}: the test made an illegal {instr}: {want.error.name}")
    faulted = want.error == ErrorCode.BAD_PAGE
    drive_fields(dut, instr)
    cycles_want = (isa.table_phase_cycles(instr, cfg) if faulted
                   else isa.exec_cycles(instr, cfg))
    command = await run_command(dut, STROBE[Op(instr.op)], cycles_want,
                                Command.of(instr, case.name))
    command.check_writes(instr, before,
                         MemoryWrites("sram", want.sram_writes(), logs["sram"].new_writes()),
                         MemoryWrites("ext", want.writes(), logs["ext"].new_writes()))
    problems = compare_memories(ext, sram, want)
    if command.cycles != cycles_want:
        problems.append(f"busy {command.cycles} cycles, model.chip.isa says {cycles_want}")
    problems += count_problems(dut, want, faulted)
    command.check(not problems, "\n  ".join(["differs:", *problems]))
    return faulted


def compare_memories(ext: Backdoor, sram: Backdoor, want: RunResult) -> list[str]:
    problems = []
    got_ext = ext.read_all()
    got_ext[:PROGRAM_WORDS] = want.ext[:PROGRAM_WORDS]  # the harness fetches no program
    for name, memory, expected, got in (("ext", ext, want.ext, got_ext),
                                        ("sram", sram, want.sram, sram.read_all())):
        difference = first_memory_difference(expected, got, what=f"{name} word")
        if difference:
            problems.append(difference)
        memory.shadow[:] = expected
    return problems


def count_problems(dut, want: RunResult, faulted: bool) -> list[str]:
    counts = {"n_faults": int(faulted), "n_table_words": want.counters.pt_words,
              "n_data_words": want.counters.dma_words}
    return [f"{name} {int(getattr(dut, name).value)}, expected {value}"
            for name, value in counts.items() if int(getattr(dut, name).value) != value]


@cocotb.test()
async def pdma_matches_the_reference_machine(dut):
    """Directed and random PLOAD, PSTORE, PCOPY: both memories, cycles, fault, word counts."""
    rng = block_rng(dut)
    cfg = ChipConfig(sram_words=int(dut.SRAM_WORDS.value), ext_words=int(dut.EXT_WORDS.value),
                     ext_lat=int(dut.EXT_LAT.value))
    await start_clock_and_reset(dut, {name: 0 for name in (
        *STROBE.values(), "cmd_table", "cmd_sram", "cmd_pool", "cmd_row_words", "cmd_len",
        "cmd_page_shift", "cmd_row", "cmd_pages", "cmd_copy")})
    ext = Backdoor(dut.u_ext.u_mem.mem, cfg.ext_words, "ext word")
    sram = sram_backdoor(dut, cfg.sram_words)
    logs = {"sram": sram_writes(dut), "ext": WriteLog(dut.u_ext_writes, "ext")}
    ext.write(POOL_BASE, np.array([rng.getrandbits(32) for _ in range(cfg.ext_words - POOL_BASE)],
                                  dtype=np.uint32))
    sram.write(0, np.array([rng.getrandbits(32) for _ in range(cfg.sram_words)], np.uint32))
    cases = directed_cases(rng) + [random_case(rng, i, cfg) for i in range(RANDOM_CASES)]
    faults = [await check(dut, cfg, ext, sram, logs, case) for case in cases]
    dut._log.info("%d commands (%d stopped on BAD_PAGE) match the reference machine",
                  len(cases), sum(faults))
