"""The controller, through the whole chip (hw/tb/chip_harness.v), against `model.chip.machine.run`.

Why the whole chip and not the controller's handshakes with unit models: the controller's
contract (fetch, the error checks, dispatch, the cycle and event counters) is stated by
hw/ISA.md at the chip's ports, and the reference machine predicts exactly what those show: the
final external memory, `error`, `error_pc` and every counter. Python unit models would restate
the units' costs and events, a second copy of the model; the real units are used instead, and
each has a block test of its own, so a difference here points at the controller or the wiring.

Targeted programs, built with constrained-random operands, run back to back in one simulation
without a reset between them (so every `start` must clear the status and the counters):
- for each opcode: LOAD the operands, the instruction, STORE its result, HALT; once with the
  operand ranges placed at random, then once per range with that range ending exactly at the
  top of its memory (the largest legal address); and HALT alone; a VADD of 300 elements that
  all clamp (ev_sat past 255);
- the paged instructions (PLOAD then STORE its rows; LOAD then PSTORE; PCOPY) on a random pool
  and block table, once with random places, then with the table, the pool and the scratchpad
  rows each ending at the top of its memory; PLOAD and PSTORE with 64 entries, the most;
- every error code: an illegal opcode (11 .. 255, other fields random) after a legal
  instruction; BAD_SIZE for every size field of every opcode (zero, k > K_MAX, SOFTMAX
  len > SM_MAX, a paged page_shift > 15, more than 64 entries, PCOPY slots past the page, and a
  zero size with a bad address too: the size check comes first; page_shift = 15, legal, with
  a pool that passes the memory); BAD_ADDRESS for every operand range of every opcode (one
  word over, and again one word over, a few words over, or the largest 16-bit start; a paged
  instruction's table, pool and scratchpad rows, and the table one word over with a first
  entry above 0); BAD_PAGE for each way a block table can name a page outside the pool; a
  program that runs off the end of external memory without HALT (the fetch check);
- BUS_ERROR, last: the memory (hw/tb/axi_ram.v) is told to answer a few addresses with
  SLVERR (reads) and DECERR (writes), and the reference machine is told the same
  (`model.chip.machine.BusErrors`): a LOAD and a PLOAD's block table and a PCOPY's pair read from
  them, a STORE and a PSTORE write to them, a block table whose header errs and whose entry is
  a bad page, and a fetch from one. The test sets the memory's error addresses through its
  backdoor (the variables its plusargs set at time 0), so that the programs before it run on a
  memory without errors.
Checked for each: the whole external memory, `error`, `error_pc`, every counter (the counters
bus, unpacked by `model.chip.machine.Counters.from_packed`), and the cycles from `start` to `done`
(`cnt_total`, as hw/ISA.md defines `busy`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import cocotb
import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from model.chip import isa, machine
from model.chip.geometry import page_of, page_shift_of
from model.chip.isa import ChipConfig, ErrorCode, Instr, Op
from model.chip.machine import Counters, RunResult, counter_differences
from model.chip.randprog import random_mult, random_shift
from sim.runner import CLOCK_NS
from verif.kit.clock import reset, start_clock
from verif.kit.compare import first_memory_difference
from verif.kit.memory import Backdoor
from verif.tests.blocks.block_tb import (
    PAGED_ASSEMBLERS,
    block_rng,
    failure,
    int8_words,
    paged_again,
    random_layout,
    random_view,
)
from verif.tests.blocks.command import Command, settled_rise

DATA_BASE = 64           # external words below hold the program (16 instructions at most)
WATCHDOG_MARGIN = 1000


@dataclass
class Program:
    """A named program and the data it loads, as one external memory image."""

    name: str
    instrs: list[Instr]
    data: list[tuple[int, np.ndarray]] = field(default_factory=list)   # (ext address, words)

    def image(self, cfg: ChipConfig) -> np.ndarray:
        image = np.zeros(cfg.ext_words, dtype=np.int64)
        code = [word for instr in self.instrs for word in isa.encode(instr)]
        image[:len(code)] = code
        for address, words in self.data:
            image[address:address + len(words)] = words
        return image

    def listing(self) -> str:
        return "\n".join(f"    {4 * i:5d}: {instr}" for i, instr in enumerate(self.instrs[:8]))


@dataclass
class UnitWork:
    """A legal instruction with the scratchpad ranges it reads and the one it writes."""

    instr: Instr
    sources: list[tuple[int, int]]     # (sram start, words)
    result: tuple[int, int]


# --- legal instructions, one generator per opcode -----------------------------------------------


# each instruction with a `len` field, assembled by model.chip.isa from its operands and a length
LENGTH_ASSEMBLERS = {
    Op.LOAD: lambda instr, length: isa.load(instr.a, instr.b, length),
    Op.STORE: lambda instr, length: isa.store(instr.b, instr.a, length),
    Op.VADD: lambda instr, length: isa.vadd(instr.a, instr.b, instr.c, length),
    Op.VMAX: lambda instr, length: isa.vmax(instr.a, instr.c, length),
    Op.ARGMAX: lambda instr, length: isa.argmax(instr.a, instr.c, length),
    Op.SOFTMAX: lambda instr, length: isa.softmax(instr.a, instr.c, length),
}


def with_length(instr: Instr, length: int) -> Instr:
    """``instr`` assembled again with its `len` field ``length`` (the assembler packs it; a
    paged instruction's: block_tb.paged_again)."""
    return LENGTH_ASSEMBLERS[Op(instr.op)](instr, length)


def random_length(rng: random.Random, top: int) -> int:
    return rng.choice([1, 2, rng.randint(1, 16), rng.randint(1, top)])


def legal_matmul(rng: random.Random, cfg: ChipConfig, at_top: int | None) -> UnitWork:
    edge = 2 * cfg.array_n + 1
    while True:
        m, n = rng.randint(1, edge), rng.randint(1, edge)
        k = rng.choice([1, cfg.k_max, rng.randint(1, cfg.k_max)])
        if m * k + k * n + m * n <= cfg.sram_words:
            break
    a, b, c = random_layout(rng, [m * k, k * n, m * n], cfg.sram_words, at_top)
    instr = Instr(Op.MATMUL, m=m, k=k, n=n, a=a, b=b, c=c, flags=rng.randint(0, 3),
                  shift=random_shift(rng), mult=random_mult(rng))
    return UnitWork(instr, [(a, m * k), (b, k * n)], (c, m * n))


def legal_vadd(rng: random.Random, cfg: ChipConfig, at_top: int | None) -> UnitWork:
    length = random_length(rng, min(300, cfg.sram_words // 3))
    a, b, c = random_layout(rng, [length] * 3, cfg.sram_words, at_top)
    if at_top is None and rng.random() < 0.25:
        c = a                                                  # in place
    return UnitWork(isa.vadd(a, b, c, length), [(a, length), (b, length)], (c, length))


def legal_reduce(op: Op):
    def generate(rng: random.Random, cfg: ChipConfig, at_top: int | None) -> UnitWork:
        length = random_length(rng, 300)
        a, c = random_layout(rng, [length, 1], cfg.sram_words, at_top)
        make = isa.vmax if op == Op.VMAX else isa.argmax
        return UnitWork(make(a, c, length), [(a, length)], (c, 1))
    return generate


def legal_softmax(rng: random.Random, cfg: ChipConfig, at_top: int | None) -> UnitWork:
    # the longest legal length once (its check's boundary), short ones otherwise
    length = cfg.sm_max if at_top is None else rng.choice([1, rng.randint(1, 40)])
    a, c = random_layout(rng, [length, length], cfg.sram_words, at_top)
    return UnitWork(isa.softmax(a, c, length), [(a, length)], (c, length))


UNIT_WORK = {Op.MATMUL: legal_matmul, Op.VADD: legal_vadd, Op.VMAX: legal_reduce(Op.VMAX),
             Op.ARGMAX: legal_reduce(Op.ARGMAX), Op.SOFTMAX: legal_softmax}


def through_the_unit(rng: random.Random, cfg: ChipConfig, name: str, work: UnitWork,
                     instr: Instr | None = None) -> Program:
    """LOAD the sources, run `instr` (default: the work's own), STORE the result, HALT."""
    sizes = [words for _, words in work.sources] + [work.result[1]]
    ext = [DATA_BASE + s for s in random_layout(rng, sizes, cfg.ext_words - DATA_BASE)]
    loads = [isa.load(address, sram, words)
             for (sram, words), address in zip(work.sources, ext, strict=False)]
    data = [(address, int8_words(rng, words))
            for (_, words), address in zip(work.sources, ext, strict=False)]
    store = isa.store(work.result[0], ext[-1], work.result[1])
    return Program(name, [*loads, instr or work.instr, store, isa.halt()], data)


def dma_work(rng: random.Random, cfg: ChipConfig, at_top: int | None) -> tuple[Instr, Instr]:
    """A LOAD and a STORE of the same length; `at_top` 0, 1, 2 puts the LOAD's external range,
    the STORE's, or the scratchpad range at the top of its memory."""
    length = random_length(rng, 300)
    ext_top = at_top if at_top in (0, 1) else None
    ext_in, ext_out = (DATA_BASE + s for s in
                       random_layout(rng, [length, length], cfg.ext_words - DATA_BASE, ext_top))
    (sram,) = random_layout(rng, [length], cfg.sram_words, 0 if at_top == 2 else None)
    return isa.load(ext_in, sram, length), isa.store(sram, ext_out, length)


def dma_program(rng: random.Random, cfg: ChipConfig, name: str, at_top: int | None,
                bad: Instr | None = None) -> Program:
    """LOAD, then STORE the same words elsewhere (`bad` replaces the STORE when given)."""
    load, store = dma_work(rng, cfg, at_top)
    data = [(load.a, int8_words(rng, load.length))]
    return Program(name, [load, bad or store, isa.halt()], data)


RANGES = {Op.MATMUL: ("a", "b", "c"), Op.VADD: ("a", "b", "c"), Op.VMAX: ("a", "c"),
          Op.ARGMAX: ("a", "c"), Op.SOFTMAX: ("a", "c")}    # the layout order of each UNIT_WORK


SATURATING = 300  # VADD elements that all clamp: ev_sat passes 255, so its high bits count too


def saturating_vadd() -> Program:
    """A VADD of 100 + 100 in every element: each sum clamps to 127."""
    ext = [DATA_BASE + i * SATURATING for i in range(3)]
    sram = [i * SATURATING for i in range(3)]
    hundreds = np.full(SATURATING, 100, dtype=np.uint32)
    return Program("VADD, every sum clamped", [
        isa.load(ext[0], sram[0], SATURATING), isa.load(ext[1], sram[1], SATURATING),
        isa.vadd(sram[0], sram[1], sram[2], SATURATING),
        isa.store(sram[2], ext[2], SATURATING), isa.halt()],
        [(ext[0], hundreds), (ext[1], hundreds)])


def legal_programs(rng: random.Random, cfg: ChipConfig) -> list[Program]:
    """Each opcode with random ranges, then with each of its ranges ending at the top; a VADD
    that clamps every element."""
    programs = [Program("HALT alone", [isa.halt()]), saturating_vadd()]
    for at_top, where in ((None, "random ranges"), (0, "LOAD's external range at the top"),
                          (1, "STORE's external range at the top"),
                          (2, "scratchpad range at the top")):
        programs.append(dma_program(rng, cfg, f"LOAD and STORE, {where}", at_top))
    for op, generate in UNIT_WORK.items():
        for at_top in (None, *range(len(RANGES[op]))):
            where = "random ranges" if at_top is None else f"{RANGES[op][at_top]} at the top"
            work = generate(rng, cfg, at_top)
            programs.append(through_the_unit(rng, cfg, f"{op.name}, {where}", work))
    for op in sorted(isa.PAGED_OPS):
        for at_top in (None, *range(len(PAGED_PLACES))):
            programs.append(paged_program(rng, cfg, op, at_top))
        if op != Op.PCOPY:
            programs.append(paged_program(rng, cfg, op, None, most_entries=True))
    return programs


# --- the paged instructions --------------------------------------------------------------------

PAGED_PLACES = ("table", "pool", "sram")    # the ranges `at_top` may put at the top


def paged_program(rng: random.Random, cfg: ChipConfig, op: Op, at_top: int | None,
                  bad_page: bool = False, most_entries: bool = False) -> Program:
    """`op` on a random pool and block table; PLOAD's rows are stored, PSTORE's loaded first.
    With `bad_page` the table names a page outside the pool; with `most_entries` (PLOAD,
    PSTORE) it has PT_ENTRIES entries, the most the size check allows (pages of one row)."""
    row_words, page_size, pages = rng.randint(1, 8), 2 ** rng.randint(0, 3), rng.randint(1, 8)
    page_size = 1 if most_entries else page_size
    row = rng.randrange(page_size) if op == Op.PCOPY else rng.randrange(2 * page_size)
    length = rng.randint(1, page_size - row if op == Op.PCOPY else 12)
    length = isa.PT_ENTRIES if most_entries else length
    # the fields, placed below: the table, the pool and the scratchpad rows at 0 for now
    shape = PAGED_ASSEMBLERS[op](0, 0, 0, row_words, length, page_shift_of(page_size), pages,
                                 row=row)
    geometry = isa.paged_geometry(shape)
    words = geometry.words
    table = ([rng.randrange(pages), rng.randrange(pages)] if op == Op.PCOPY
             else random_view(rng, shape))
    if bad_page and op == Op.PCOPY:  # either page
        table[rng.randrange(2)] = rng.choice([pages, 0xFFFFFFFF])
    elif bad_page and rng.random() < 0.5:  # the header is not a slot
        table[0] = page_size
    elif bad_page:  # the entry of the first row
        table[1 + page_of(table[0] + row, page_size)] = rng.choice([pages, 0xFFFFFFFF])
    # the table, the pool, the data elsewhere
    sizes = [len(table), geometry.pool_words, words]
    ext_top = at_top if at_top in (0, 1) else None
    table_at, pool_at, data_at = (DATA_BASE + s for s in
                                  random_layout(rng, sizes, cfg.ext_words - DATA_BASE, ext_top))
    (sram,) = random_layout(rng, [words], cfg.sram_words, 0 if at_top == 2 else None)
    instr = paged_again(shape, table=table_at, sram=sram, pool=pool_at)
    data = [(table_at, np.array(table, dtype=np.int64)),
            (pool_at, int8_words(rng, sizes[1])), (data_at, int8_words(rng, words))]
    around = {Op.PLOAD: [instr, isa.store(sram, data_at, words)],
              Op.PSTORE: [isa.load(data_at, sram, words), instr], Op.PCOPY: [instr]}[op]
    where = "random places" if at_top is None else f"the {PAGED_PLACES[at_top]} at the top"
    where = f"{isa.PT_ENTRIES} entries" if most_entries else where
    name = f"{op.name}, {'a page outside the pool' if bad_page else where}"
    return Program(name, [*around, isa.halt()], data)


def bad_paged(rng: random.Random, instr: Instr, cfg: ChipConfig) -> list[tuple[str, Instr]]:
    """A paged instruction with each size field bad, and each of its ranges past its memory."""
    geometry = isa.paged_geometry(instr)
    copy = instr.op == Op.PCOPY
    bad = [("row_words = 0", paged_again(instr, row_words=0)),
           ("len = 0", paged_again(instr, length=0)),
           ("pages = 0", paged_again(instr, pages=0)),
           ("page_shift > 15",
            paged_again(instr, page_shift=rng.randint(isa.PAGE_SHIFT_MAX + 1, 255))),
           ("len = 0, a out of range", paged_again(instr, length=0, table=0xFFFF))]
    if copy:
        bad.append(("slots past the page",
                    paged_again(instr, length=geometry.page_size - instr.row + 1)))
    else:
        bad.append(("65 entries", paged_again(instr, length=isa.PT_ENTRIES + 1, page_shift=0)))
    spans = [("a", geometry.table_words + geometry.first_entry if not copy else 2,
              cfg.ext_words), ("b", geometry.words, cfg.sram_words),
             ("c", geometry.pool_words, cfg.ext_words)]
    bad.append(("page_shift = 15, the largest: the pool passes the memory",
                paged_again(instr, page_shift=isa.PAGE_SHIFT_MAX)))
    for name, words, limit in spans:
        anywhere = rng.choice([limit - words + rng.choice([1, rng.randint(2, 64)]), 0xFFFF])
        for start in (limit - words + 1, anywhere):  # one word over (the boundary), then random
            bad.append((f"{name} + {words} > {limit}", replace(instr, **{name: start})))
    if not copy:  # the table's span counts the entries before the first row's: one page on
        moved = paged_again(instr, row=instr.row + geometry.page_size)
        moved_geometry = isa.paged_geometry(moved)
        span = moved_geometry.table_words + moved_geometry.first_entry
        bad.append((f"a + {span} = {cfg.ext_words + 1} (first entry "
                    f"{moved_geometry.first_entry})", replace(moved, a=cfg.ext_words - span + 1)))
    return bad


# --- instructions that fail their check ---------------------------------------------------------


def operand_ranges(instr: Instr, cfg: ChipConfig) -> list[tuple[str, int, int]]:
    """(field, words, memory size) of every range the address check covers (hw/ISA.md)."""
    op, length, sram = Op(instr.op), instr.length, cfg.sram_words
    if op in (Op.LOAD, Op.STORE):
        return [("a", length, cfg.ext_words), ("b", length, sram)]
    if op == Op.MATMUL:
        return [("a", instr.m * instr.k, sram), ("b", instr.k * instr.n, sram),
                ("c", instr.m * instr.n, sram)]
    if op == Op.VADD:
        return [("a", length, sram), ("b", length, sram), ("c", length, sram)]
    if op in (Op.VMAX, Op.ARGMAX):
        return [("a", length, sram), ("c", 1, sram)]
    return [("a", length, sram), ("c", length, sram)]


def bad_addresses(rng: random.Random, instr: Instr, cfg: ChipConfig) -> list[tuple[str, Instr]]:
    """One instruction per operand range, that range past the end of its memory."""
    bad = []
    for name, words, limit in operand_ranges(instr, cfg):
        over = rng.choice([1, rng.randint(2, 64)])
        for start in (limit - words + 1, rng.choice([limit - words + over, 0xFFFF])):
            why = f"{name} + {words} = {start + words} > {limit}"    # one word over, then random
            bad.append((why, replace(instr, **{name: start})))
    return bad


def bad_sizes(rng: random.Random, instr: Instr, cfg: ChipConfig) -> list[tuple[str, Instr]]:
    """Every size field zero or too large; and a zero size with a bad address."""
    if instr.op == Op.MATMUL:
        return [("m = 0", replace(instr, m=0)), ("k = 0", replace(instr, k=0)),
                ("n = 0", replace(instr, n=0)),
                ("k > K_MAX", replace(instr, k=rng.randint(cfg.k_max + 1, 255))),
                ("n = 0, a out of range", replace(instr, n=0, a=0xFFFF))]
    bad = [("len = 0", with_length(instr, 0)),
           ("len = 0, a out of range", replace(with_length(instr, 0), a=0xFFFF))]
    if instr.op == Op.SOFTMAX:
        bad.append(("len > SM_MAX", with_length(instr, rng.randint(cfg.sm_max + 1, 0xFFFF))))
    return bad


def illegal_opcode(rng: random.Random) -> Instr:
    fields = {name: rng.getrandbits(8) for name in ("m", "k", "n", "flags", "shift")}
    fields |= {name: rng.getrandbits(16) for name in ("a", "b", "c")}
    return Instr(rng.randint(len(Op), 255), mult=rng.randint(-(2**31), 2**31 - 1), **fields)


def error_programs(rng: random.Random, cfg: ChipConfig) -> list[Program]:
    programs = []
    for index in range(2):
        work = UNIT_WORK[Op.VMAX](rng, cfg, None)
        programs.append(through_the_unit(rng, cfg, f"illegal opcode {index}", work,
                                         illegal_opcode(rng)))
    load, store = dma_work(rng, cfg, None)
    for op, instr in ((Op.LOAD, load), (Op.STORE, store)):
        for why, bad in bad_sizes(rng, instr, cfg) + bad_addresses(rng, instr, cfg):
            programs.append(dma_program(rng, cfg, f"{op.name}: {why}", None, bad))
    for op, generate in UNIT_WORK.items():
        work = generate(rng, cfg, None)
        for why, bad in bad_sizes(rng, work.instr, cfg) + bad_addresses(rng, work.instr, cfg):
            programs.append(through_the_unit(rng, cfg, f"{op.name}: {why}", work, bad))
    for op in sorted(isa.PAGED_OPS):
        program = paged_program(rng, cfg, op, None)
        instr = next(i for i in program.instrs if i.op == op)
        for why, bad in bad_paged(rng, instr, cfg):
            instrs = [bad if i is instr else i for i in program.instrs]
            programs.append(Program(f"{op.name}: {why}", instrs, program.data))
        programs += [paged_program(rng, cfg, op, None, bad_page=True) for _ in range(2)]
    # no HALT: the fetch after the last instruction of external memory fails
    filler = isa.vmax(0, 1, 1)
    programs.append(Program("runs off the end", [filler] * (cfg.ext_words // isa.WORDS_PER_INSTR)))
    return programs


# --- bus errors ---------------------------------------------------------------------------------

READ_ERRORS = range(1500, 1504)  # word addresses the memory answers with SLVERR ..
WRITE_ERRORS = range(1600, 1602)  # .. and with DECERR on a write
FILLER = isa.vmax(0, 1, 1)


def bus_error_programs(rng: random.Random, cfg: ChipConfig) -> list[Program]:
    """Programs that meet the memory's error addresses; the instruction after never runs."""
    after = isa.store(0, 300, 8)  # must not run: ext[300 ..] stays 0
    data = [(400, int8_words(rng, 8)), (500, int8_words(rng, 64))]  # data, and a pool
    table = np.array([1, 1, 9], dtype=np.int64)  # header 1, entries 1, 9 (9: outside 4 pages)
    return [
        Program("LOAD reads error words", [isa.load(1498, 0, 8), after, isa.halt()], data),
        Program("STORE writes error words",
                [isa.load(400, 0, 8), isa.store(0, 1597, 8), after, isa.halt()], data),
        Program("PLOAD's block table reads as 0",
                [isa.pload(1500, 0, 500, 2, 3, 1, 4), after, isa.halt()], data),
        Program("PSTORE writes a row of error words",
                [isa.load(400, 0, 8), isa.pstore(700, 0, 1590, 4, 1, 0, 3), after, isa.halt()],
                [*data, (700, np.array([0, 2], dtype=np.int64))]),
        Program("PCOPY's pair reads as 0",
                [isa.pcopy(1502, 0, 500, 2, 2, 1, 4), after, isa.halt()], data),
        Program("a table whose header errs names a bad page",
                [isa.pload(1503, 0, 500, 2, 3, 1, 4), after, isa.halt()],
                [*data, (1504, table[1:])]),
        Program("a fetch from error words", [FILLER] * (READ_ERRORS.start // 4) + [isa.halt()]),
    ]


def set_bus_errors(dut, errors: machine.BusErrors) -> None:
    """The memory's error addresses, through its backdoor (axi_ram.v's plusarg variables)."""
    for kind, span in (("rd", READ_ERRORS), ("wr", WRITE_ERRORS)):
        getattr(dut.u_mem, f"{kind}_err_lo").value = span.start
        getattr(dut.u_mem, f"{kind}_err_hi").value = span.stop - 1
    assert errors == machine.BusErrors(frozenset(READ_ERRORS), frozenset(WRITE_ERRORS))


# --- the chip -----------------------------------------------------------------------------------


class Chip:
    """chip_harness with its clock, and its external memory behind the kit's backdoor."""

    def __init__(self, dut, cfg: ChipConfig):
        self.dut = dut
        self.cfg = cfg
        self.memory = Backdoor(dut.u_mem.mem, cfg.ext_words, "ext word")

    async def reset(self) -> None:
        start_clock(self.dut)
        await reset(self.dut, idle={"start": 0})

    async def run(self, limit: int, command: Command) -> int:
        """Pulse start, wait for done; return the cycles from start to done (= busy cycles).
        A done that has not risen `limit` cycles after start fails `command` there."""
        dut = self.dut
        dut.start.value = 1
        await RisingEdge(dut.clk)
        command = replace(command, start_ns=get_sim_time(unit="ns"))
        dut.start.value = 0
        await ReadOnly()
        assert (int(dut.busy.value), int(dut.done.value)) == (1, 0), failure(
            "busy must rise and done fall in the cycle after start")
        if not await settled_rise(dut.done, command.time_ns(limit)):
            command.fail(f"done did not rise by cycle {limit}", limit)
        cycles = int((get_sim_time(unit="ns") - command.start_ns) // CLOCK_NS)
        assert int(dut.busy.value) == 0, failure("busy and done are both high")
        await RisingEdge(dut.clk)
        return cycles


def differences(want: RunResult, chip: Chip, cycles: int) -> list[str]:
    """Every way the chip's status, counters and memory differ from the reference machine's."""
    dut = chip.dut
    problems = []
    status = (int(dut.error.value), int(dut.error_pc.value))
    if status != (want.error, want.error_pc):
        problems.append(f"error code: expected {want.error.name} ({int(want.error)}) at "
                        f"{want.error_pc}, got {status[0]} at {status[1]}")
    problems += counter_differences(want.counters, Counters.from_packed(int(dut.counters.value)))
    if cycles != want.counters.total:
        problems.append(f"start to done: {cycles} cycles, model cnt_total {want.counters.total}")
    memory = first_memory_difference(want.ext, chip.memory.read_all(), what="ext word")
    return problems + ([memory] if memory else [])


def config_of(dut) -> ChipConfig:
    return ChipConfig(**{name.lower(): int(getattr(dut, name).value)
                         for name in ChipConfig().verilog_parameters()})


@cocotb.test()
async def controller_runs_each_opcode_and_stops_on_each_error(dut):
    """Every opcode, every error code: memory, status and every counter equal the model's."""
    rng = block_rng(dut)
    cfg = config_of(dut)
    chip = Chip(dut, cfg)
    await chip.reset()
    programs = legal_programs(rng, cfg) + error_programs(rng, cfg)
    bus_errors = len(programs)
    programs += bus_error_programs(rng, cfg)
    errors = set()
    faults = machine.BusErrors()
    for index, program in enumerate(programs):
        if index == bus_errors:
            faults = machine.BusErrors(frozenset(READ_ERRORS), frozenset(WRITE_ERRORS))
            set_bus_errors(dut, faults)
        image = program.image(cfg)
        want = machine.run(image, cfg, bus_errors=faults)
        chip.memory.load(image)
        cycles = await chip.run(want.counters.total + WATCHDOG_MARGIN,
                                Command("controller", f"program {index} ({program.name})"))
        problems = differences(want, chip, cycles)
        assert not problems, failure(
            f"program {index} ({program.name}) differs from model.chip.machine.run:\n  "
            + "\n  ".join(problems) + "\n  program:\n" + program.listing())
        errors.add(want.error)
    # CORRUPTION needs a flipped bit, which no program makes: verif/tests/test_faults.py
    assert errors == set(ErrorCode) - {ErrorCode.CORRUPTION}, failure(
        f"only the error codes {errors} occurred")
    dut._log.info("%d programs match model.chip.machine.run", len(programs))
