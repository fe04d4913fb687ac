"""The reference machine: runs a program on a memory image, bit-exact and cycle-exact.

The prediction every RTL run is checked against, following `hw/ISA.md` and nothing else, one
numpy operation per instruction. With ``trace=True`` it keeps each instruction's cycles and
writes, so verif/scoreboard/locate.py can name the first one a failing run got wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from itertools import accumulate

import numpy as np

from model.chip import arith
from model.chip.geometry import pool_rows
from model.chip.isa import (
    FLAG_BT,
    FLAG_RAW,
    N_OPCODES,
    NO_FETCH_OVERHEAD,
    OPCODES,
    PAGE_SHIFT_MAX,
    PAGED_OPS,
    PT_ENTRIES,
    UNIT_OF,
    WORDS_PER_INSTR,
    ChipConfig,
    ErrorCode,
    Instr,
    Op,
    assemble,
    decode,
    exec_cycles,
    fetch_cycles,
    overhead_cycles,
    paged_geometry,
    table_phase_cycles,
)

WORD_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class CounterField:
    """One counter of the chip's packed `counters` bus (hw/ISA.md, "Counters"); a per-opcode
    field holds opcode i's count in bits [lsb + width*i +: width]."""

    name: str  # the `Counters` field
    hw_name: str  # the RTL's register name; its macros are the upper-case name (CNT_TOTAL, ..)
    width: int  # bits of one count: counts wrap modulo 2^width
    per_opcode: bool = False
    lsb: int = 0  # the field's lowest bit in the bus

    @property
    def count(self) -> int:
        return N_OPCODES if self.per_opcode else 1

    @property
    def bits(self) -> int:
        return self.width * self.count

    def unpack(self, bus: int) -> int | tuple[int, ...]:
        """This field's value in `bus`: an int, or one int per opcode."""
        counts = _split(bus >> self.lsb, self.width, self.count)
        return counts if self.per_opcode else counts[0]

    def digits(self, bus_text: str) -> str:
        """This field's part of the bus written in binary, top bit first, X and Z included."""
        end = len(bus_text) - self.lsb
        return bus_text[end - self.bits : end]

    def pack(self, value: int | Sequence[int]) -> int:
        """`value` placed at this field's bits (each count reduced modulo 2^width)."""
        counts = value if self.per_opcode else (value,)
        return _join(counts, self.width) << self.lsb


def _split(value: int, width: int, count: int) -> tuple[int, ...]:
    mask = (1 << width) - 1
    return tuple((value >> (width * i)) & mask for i in range(count))


def _join(counts: Sequence[int], width: int) -> int:
    mask = (1 << width) - 1
    return sum((int(c) & mask) << (width * i) for i, c in enumerate(counts))


def _laid_out(fields: Sequence[CounterField]) -> tuple[CounterField, ...]:
    """The fields placed one after the other, the first at bit 0."""
    offsets = accumulate((f.bits for f in fields[:-1]), initial=0)
    return tuple(replace(f, lsb=lsb) for f, lsb in zip(fields, offsets, strict=True))


def counter(hw_name: str, width: int, *, per_opcode: bool = False, cycles: bool = False,
            events_from: tuple[str, ...] = ()):
    """A field of ``Counters``; ``events_from`` names the units whose reported events it counts
    (none: the controller counts from its own state and checks)."""
    metadata = {"counter": CounterField("", hw_name, width, per_opcode), "cycles": cycles,
                "events_from": events_from}
    return field(default=(0,) * N_OPCODES if per_opcode else 0, metadata=metadata)


@dataclass
class Counters:
    """The chip's counters, defined once, in hw/ISA.md's order (the bus's, from bit 0 up): a new
    one is a line here, its logic in controller.v, then `python -m model.chip.rtl_defs`."""

    total: int = counter("cnt_total", 32, cycles=True)  # every cycle of the run
    dma: int = counter("cnt_dma", 32, cycles=True)  # EXEC of the DMA's instructions
    mat: int = counter("cnt_mat", 32, cycles=True)
    vec: int = counter("cnt_vec", 32, cycles=True)
    sm: int = counter("cnt_sm", 32, cycles=True)
    instr: int = counter("ev_instr", 32)  # instructions that passed their check
    sat: int = counter("ev_sat", 32, events_from=("mat", "vec"))  # outputs clamped to int8
    ops: tuple[int, ...] = counter("ev_ops", 16, per_opcode=True)  # ev_instr, per opcode
    # words moved by LOAD, STORE, paged ops
    dma_words: int = counter("ev_dma_words", 32, events_from=("dma",))
    sm_max_len: int = counter("ev_sm_max_len", 16)  # the longest SOFTMAX len
    # the largest max - min of a SOFTMAX input
    sm_range: int = counter("ev_sm_range", 8, events_from=("sm",))
    pt_words: int = counter("ev_pt_words", 32, events_from=("dma",))  # block-table words read
    # cycles frozen on memory (also in total): 0 on the machine's ideal memory, not in CYCLE_NAMES
    wait: int = counter("cnt_wait", 32)

    def cycles(self) -> tuple[int, ...]:
        """The cycle counters (total first), in ISA.md's order."""
        return tuple(getattr(self, name) for name in CYCLE_NAMES)

    def op_count(self, op: Op) -> int:
        return self.ops[int(op)]

    def as_dict(self) -> dict[str, int | list[int]]:
        """Every counter by name; `ops` as a list (what a JSON round trip gives back)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v
                for f in fields(self)}

    @classmethod
    def from_packed(cls, bus: int) -> Counters:
        """From the value of the chip's `counters` bus."""
        return cls(**{f.name: f.unpack(bus) for f in COUNTER_FIELDS})

    def packed(self) -> int:
        """The value the chip's `counters` bus shows for these counts."""
        return sum(f.pack(getattr(self, f.name)) for f in COUNTER_FIELDS)

    def wrapped(self) -> None:
        """Reduce every counter modulo 2^width, as the RTL's registers hold them."""
        for name, width in COUNTER_WIDTHS.items():
            mask = (1 << width) - 1
            value = getattr(self, name)
            setattr(self, name, tuple(v & mask for v in value) if isinstance(value, tuple)
                    else value & mask)


COUNTER_FIELDS: tuple[CounterField, ...] = _laid_out(tuple(
    replace(f.metadata["counter"], name=f.name) for f in fields(Counters)))
COUNTERS_W = sum(f.bits for f in COUNTER_FIELDS)  # the width of the bus
COUNTER_WIDTHS = {f.name: f.width for f in COUNTER_FIELDS}
CYCLE_NAMES = tuple(f.name for f in fields(Counters) if f.metadata["cycles"])
# the units whose reported events each event counter counts (none: the controller's own)
EVENTS_FROM = {f.name: f.metadata["events_from"] for f in fields(Counters)}
_OPS = next(f for f in COUNTER_FIELDS if f.per_opcode)


def differing_counters(expected: Counters, got: Counters) -> list[str]:
    """The names of the counters that differ, in hw/ISA.md's order."""
    return [f.name for f in fields(Counters)
            if _counted(expected, f.name) != _counted(got, f.name)]


def _counted(counters: Counters, name: str) -> int | tuple[int, ...]:
    """A counter's value; a per-opcode one as a tuple, however it was made."""
    value = getattr(counters, name)
    return tuple(value) if isinstance(value, list) else value


def counter_differences(expected: Counters, got: Counters) -> list[str]:
    """One line per counter that differs, in hw/ISA.md's order; a per-opcode counter gives
    one line per differing opcode, named by it: 'counter ops[MATMUL]: expected 4, got 3'."""
    lines = []
    for name in differing_counters(expected, got):
        want, have = _counted(expected, name), _counted(got, name)
        if isinstance(want, tuple):
            lines += [f"counter {name}[{_opcode_name(i)}]: expected {w}, got {h}"
                      for i, (w, h) in enumerate(zip(want, have, strict=True)) if w != h]
        else:
            lines.append(f"counter {name}: expected {want}, got {have}")
    return lines


def _opcode_name(index: int) -> str:
    return Op(index).name if index < N_OPCODES else str(index)


def counter_fields_at(bits: Iterable[int]) -> list[CounterField]:
    """The counters that hold any of these bus bits, in bus order."""
    wanted = set(bits)
    return [f for f in COUNTER_FIELDS if any(f.lsb <= bit < f.lsb + f.bits for bit in wanted)]


def unpack_ops(packed: int) -> tuple[int, ...]:
    """ev_ops on its own as per-opcode counts: opcode i in bits [16i+15:16i]."""
    return _split(packed, _OPS.width, _OPS.count)


def pack_ops(ops: Sequence[int]) -> int:
    """The inverse of `unpack_ops`."""
    return _join(ops, _OPS.width)


@dataclass
class Executed:
    """One instruction the machine executed, HALT and a stopping one included."""

    pc: int
    instr: Instr
    start: int  # the first cycle of its FETCH, counted from the run's first (0)
    exec_start: int  # the first cycle of its EXEC (FETCH and CHECK done)
    end: int  # the cycle after its last
    sram: dict[int, int] = field(default_factory=dict)  # scratchpad words written: final value
    ext: dict[int, int] = field(default_factory=dict)  # external words written: final value

    @property
    def unit(self) -> str:
        """The unit that executes it; the controller for HALT and an illegal opcode."""
        return UNIT_OF.get(self.instr.op, "controller")


@dataclass
class RunResult:
    """The machine's state when the program stopped."""

    ext: np.ndarray  # final external memory, uint32 words
    sram: np.ndarray  # final scratchpad, uint32 words
    counters: Counters
    error: ErrorCode
    error_pc: int
    # every external address a STORE wrote, ascending, once each; its final value is ext[address]
    written: tuple[int, ...] = ()
    trace: list[Executed] = field(default_factory=list)  # with trace=True: every instruction
    # every scratchpad address an instruction wrote, likewise (a block test's expected writes)
    sram_written: tuple[int, ...] = ()

    def writes(self) -> dict[int, int]:
        """The words the program wrote to external memory: address -> final value."""
        return {address: int(self.ext[address]) for address in self.written}

    def sram_writes(self) -> dict[int, int]:
        """The words the program wrote to the scratchpad: address -> final value."""
        return {address: int(self.sram[address]) for address in self.sram_written}


@dataclass(frozen=True)
class BusErrors:
    """Word addresses where the memory answers SLVERR/DECERR (hw/ISA.md, "BUS_ERROR"): a read
    of one returns 0, a write to one is refused; either stops the run after its instruction."""

    read: frozenset[int] = frozenset()
    write: frozenset[int] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.read or self.write)


class MachineError(RuntimeError):
    """The program stopped on an error; carries what the chip would report."""

    def __init__(self, result: RunResult, instr: Instr | None):
        where = f"instruction at {result.error_pc} ({instr})" if instr else f"pc {result.error_pc}"
        super().__init__(f"{result.error.name} at {where}")
        self.result = result
        self.instr = instr


def words(values) -> np.ndarray:
    """Any integers (signed or unsigned) as 32-bit memory words."""
    return (np.asarray(values, dtype=np.int64) & WORD_MASK).astype(np.uint32)


def int8_of(mem_words: np.ndarray) -> np.ndarray:
    """The int8 operand in each word's low byte."""
    return (np.asarray(mem_words) & 0xFF).astype(np.uint8).view(np.int8).astype(np.int64)


def run_instruction(instr: Instr, sram: np.ndarray, cfg: ChipConfig | None = None) -> RunResult:
    """One instruction (then HALT) on a scratchpad holding ``sram``: a block test's prediction."""
    machine = Machine(assemble([instr]), cfg)
    machine.sram[:] = sram
    return machine.run(raise_on_error=True)


@dataclass(frozen=True)
class Checked:
    """An instruction's FETCH and CHECK: a function of its four words and the chip's sizes."""

    instr: Instr
    error: ErrorCode  # OK, ILLEGAL_OPCODE, BAD_SIZE or BAD_ADDRESS
    cost: int = 0  # EXEC's cycles when it runs to the end (a legal instruction's)
    unit: str = ""  # the counter those cycles go to (model.chip.isa.UNIT_OF; none for HALT)


@lru_cache(maxsize=4096)
def check(words: tuple[int, int, int, int], cfg: ChipConfig) -> Checked:
    """Decode and check one instruction's words (cached: a step's program repeats run to run)."""
    instr = decode(words)
    if instr.op not in OPCODES:
        return Checked(instr, ErrorCode.ILLEGAL_OPCODE)
    if not _sizes_ok(instr, cfg):
        return Checked(instr, ErrorCode.BAD_SIZE)
    if not _addresses_ok(instr, cfg):
        return Checked(instr, ErrorCode.BAD_ADDRESS)
    return Checked(instr, ErrorCode.OK, exec_cycles(instr, cfg), UNIT_OF.get(instr.op, ""))


def _sizes_ok(i: Instr, cfg: ChipConfig) -> bool:
    if i.op in PAGED_OPS:
        return _paged_sizes_ok(i)
    if i.op == Op.HALT:
        return True
    if i.op == Op.MATMUL:
        return min(i.m, i.k, i.n) > 0 and i.k <= cfg.k_max
    if i.op == Op.SOFTMAX:
        return 0 < i.length <= cfg.sm_max
    return i.length > 0


def _addresses_ok(i: Instr, cfg: ChipConfig) -> bool:
    sram, ext = cfg.sram_words, cfg.ext_words
    ranges: list[tuple[int, int, int]]  # (start, length, memory size)
    if i.op in PAGED_OPS:
        return _paged_addresses_ok(i, cfg)
    if i.op == Op.HALT:
        ranges = []
    elif i.op in (Op.LOAD, Op.STORE):
        ranges = [(i.a, i.length, ext), (i.b, i.length, sram)]
    elif i.op == Op.MATMUL:
        ranges = [(i.a, i.m * i.k, sram), (i.b, i.k * i.n, sram), (i.c, i.m * i.n, sram)]
    elif i.op == Op.VADD:
        ranges = [(i.a, i.length, sram), (i.b, i.length, sram), (i.c, i.length, sram)]
    elif i.op in (Op.VMAX, Op.ARGMAX):
        ranges = [(i.a, i.length, sram), (i.c, 1, sram)]
    else:
        ranges = [(i.a, i.length, sram), (i.c, i.length, sram)]
    return all(start + length <= size for start, length, size in ranges)


def _paged_sizes_ok(i: Instr) -> bool:
    if min(i.m, i.length, i.pages) == 0 or i.shift > PAGE_SHIFT_MAX:
        return False
    geo = paged_geometry(i)
    if i.op == Op.PCOPY:
        return i.row + i.length <= geo.page_size
    return geo.entries <= PT_ENTRIES


def _paged_addresses_ok(i: Instr, cfg: ChipConfig) -> bool:
    geo = paged_geometry(i)
    table = 2 if i.op == Op.PCOPY else 1 + geo.first_entry + geo.entries  # words from a
    return (i.b + geo.words <= cfg.sram_words and i.a + table <= cfg.ext_words
            and i.c + geo.pool_words <= cfg.ext_words)


class Machine:
    """One chip: external memory, scratchpad, counters. `run()` executes from address 0."""

    def __init__(self, image, cfg: ChipConfig | None = None,
                 bus_errors: BusErrors | None = None, trace: bool = False):
        self.cfg = cfg or ChipConfig()
        self.tracing = trace
        self.trace: list[Executed] = []
        self.bus_errors = bus_errors or BusErrors()
        image = words(image)
        if image.size > self.cfg.ext_words:
            raise ValueError(
                f"memory image has {image.size} words, the chip addresses {self.cfg.ext_words}"
            )
        self.ext = np.zeros(self.cfg.ext_words, dtype=np.uint32)
        self.ext[: image.size] = image
        self.sram = np.zeros(self.cfg.sram_words, dtype=np.uint32)
        self.counters = Counters()
        self.stored = np.zeros(self.cfg.ext_words, dtype=bool)  # external words a STORE wrote
        self.sram_stored = np.zeros(self.cfg.sram_words, dtype=bool)  # scratchpad words written

    def run(self, raise_on_error: bool = False) -> RunResult:
        """Execute until HALT or an error; with raise_on_error an error raises MachineError."""
        pc = 0
        fetch_errors = self.bus_errors.read
        while True:
            if fetch_errors and fetch_errors.intersection(range(pc, pc + WORDS_PER_INSTR)):
                self.counters.total += fetch_cycles(self.cfg)  # stopped after FETCH
                return self._stop(ErrorCode.BUS_ERROR, pc, None, raise_on_error)
            start = self.counters.total
            checked = self._fetch_and_check(pc)
            if checked is None:
                self.counters.total += NO_FETCH_OVERHEAD
                return self._stop(ErrorCode.BAD_ADDRESS, pc, None, raise_on_error)
            instr = checked.instr
            self.counters.total += overhead_cycles(self.cfg)
            if self.tracing:
                total = self.counters.total
                self.trace.append(Executed(pc, instr, start, total, total))
            if checked.error != ErrorCode.OK:
                return self._stop(checked.error, pc, instr, raise_on_error)
            self.counters.instr += 1
            self._count_op(instr.op)
            if instr.op == Op.HALT:
                return self._stop(ErrorCode.OK, pc, instr, raise_on_error)
            error = ErrorCode.OK
            if self.bus_errors:
                error = self._execute_on_bus_errors(instr)
            elif instr.op in PAGED_OPS and not self._pages_ok(instr):
                error = ErrorCode.BAD_PAGE
            else:
                self._execute(instr)
            if error != ErrorCode.OK:
                return self._paged_stop(pc, instr, error, raise_on_error)
            self.counters.total += checked.cost
            if self.tracing:
                self.trace[-1].end = self.counters.total
            setattr(self.counters, checked.unit,
                    getattr(self.counters, checked.unit) + checked.cost)
            pc += WORDS_PER_INSTR
            if self._bus_failed:
                return self._stop(ErrorCode.BUS_ERROR, pc - WORDS_PER_INSTR, instr,
                                  raise_on_error)

    def _count_op(self, op: int) -> None:
        ops = list(self.counters.ops)
        ops[op] += 1
        self.counters.ops = tuple(ops)

    def _stop(self, error, pc, instr, raise_on_error) -> RunResult:
        self.counters.wrapped()
        result = RunResult(self.ext.copy(), self.sram.copy(), self.counters, error, pc)
        result.written = tuple(np.flatnonzero(self.stored).tolist())
        result.trace = self.trace
        result.sram_written = tuple(np.flatnonzero(self.sram_stored).tolist())
        if error != ErrorCode.OK and raise_on_error:
            raise MachineError(result, instr)
        return result

    # --- fetch and check ----------------------------------------------------------------------

    def _fetch_and_check(self, pc: int) -> Checked | None:
        """The instruction at ``pc`` and its check; None when its words run off the memory."""
        if pc + WORDS_PER_INSTR > self.cfg.ext_words:
            return None
        return check(tuple(self.ext[pc : pc + WORDS_PER_INSTR].tolist()), self.cfg)

    # --- execution ------------------------------------------------------------------------------

    def _execute(self, i: Instr) -> None:
        if i.op in PAGED_OPS:
            self._execute_paged(i)
        elif i.op == Op.LOAD:
            self._write_sram(i.b, self.ext[i.a : i.a + i.length])
            self.counters.dma_words += i.length
        elif i.op == Op.STORE:
            self.ext[i.a : i.a + i.length] = self.sram[i.b : i.b + i.length]
            self.stored[i.a : i.a + i.length] = True
            self._trace_ext(range(i.a, i.a + i.length), self.sram[i.b : i.b + i.length])
            self.counters.dma_words += i.length
        elif i.op == Op.MATMUL:
            self._matmul(i)
        elif i.op == Op.VADD:
            total = self._int8(i.a, i.length) + self._int8(i.b, i.length)
            self._count_saturations(total)
            self._write_sram(i.c, arith.sat8(total))
        elif i.op == Op.VMAX:
            self._write_sram(i.c, [self._int8(i.a, i.length).max()])
        elif i.op == Op.ARGMAX:
            self._write_sram(i.c, [np.argmax(self._int8(i.a, i.length))])  # first maximum
        else:
            scores = self._int8(i.a, i.length)
            self.counters.sm_max_len = max(self.counters.sm_max_len, i.length)
            self.counters.sm_range = max(self.counters.sm_range,
                                         int(scores.max()) - int(scores.min()))
            self._write_sram(i.c, arith.softmax_int(scores))

    def _write_sram(self, start: int, values) -> None:
        """Scratchpad words start .. start + len(values) - 1 become ``values`` (as words)."""
        values = words(values).reshape(-1)
        self.sram[start : start + values.size] = values
        self.sram_stored[start : start + values.size] = True
        if self.tracing:
            self.trace[-1].sram.update(zip(range(start, start + values.size), values.tolist(),
                                           strict=True))

    def _int8(self, start: int, length: int) -> np.ndarray:
        return int8_of(self.sram[start : start + length])

    def _matmul(self, i: Instr) -> None:
        a = self._int8(i.a, i.m * i.k).reshape(i.m, i.k)
        if i.flags & FLAG_BT:
            b = self._int8(i.b, i.k * i.n).reshape(i.n, i.k).T
        else:
            b = self._int8(i.b, i.k * i.n).reshape(i.k, i.n)
        acc = a @ b  # int64, exact
        if i.flags & FLAG_RAW:
            out = acc
        else:
            unclamped = arith.requant_unclamped(acc, i.mult, i.shift)
            self._count_saturations(unclamped)
            out = arith.sat8(unclamped)
        self._write_sram(i.c, out.reshape(-1))

    def _count_saturations(self, values: np.ndarray) -> None:
        values = np.asarray(values)
        clamped = (values < arith.INT8_MIN) | (values > arith.INT8_MAX)
        self.counters.sat += int(clamped.sum())

    # --- paged instructions (hw/ISA.md, "Paged instructions") -----------------------------------

    def _table_rows(self, i: Instr) -> np.ndarray:
        """The physical pool row (page * P + slot) of each row a valid PLOAD or PSTORE moves."""
        return pool_rows(self.ext[i.a :], i.row, i.length, i.shift)

    def _pages_ok(self, i: Instr) -> bool:
        """Every page the instruction follows lies in the pool (else BAD_PAGE)."""
        if i.op == Op.PCOPY:
            return int(self.ext[i.a]) < i.pages and int(self.ext[i.a + 1]) < i.pages
        first = int(self.ext[i.a])
        if first >= 1 << i.shift:
            return False
        used = (first + i.row + np.arange(i.length)) >> i.shift
        return bool((self.ext[i.a + 1 + np.unique(used)] < i.pages).all())

    def _paged_stop(self, pc: int, i: Instr, error: ErrorCode,
                    raise_on_error: bool) -> RunResult:
        """Stop on BAD_PAGE or BUS_ERROR after the table phase: nothing was written."""
        cost = table_phase_cycles(i, self.cfg)
        self.counters.total += cost
        self.counters.dma += cost
        if self.tracing:
            self.trace[-1].end = self.counters.total
        self.counters.pt_words += paged_geometry(i).table_words
        return self._stop(error, pc, i, raise_on_error)

    # --- bus errors (hw/ISA.md, "BUS_ERROR") ---------------------------------------------------

    _bus_failed = False  # the instruction just executed met a bus error

    def _execute_on_bus_errors(self, i: Instr) -> ErrorCode:
        """Execute reading 0 from an error address and refused a write to one; returns the error
        that stops a paged instruction at its table phase, else OK (and sets `_bus_failed`)."""
        read = np.array(sorted(self.bus_errors.read), dtype=np.int64)
        write = np.array(sorted(self.bus_errors.write), dtype=np.int64)
        kept_read, kept_write = self.ext[read].copy(), self.ext[write].copy()
        was_stored = self.stored.copy()
        self.ext[read] = 0
        table = self._table_words(i)
        if i.op in PAGED_OPS and not self._pages_ok(i):
            self.ext[read] = kept_read
            return (ErrorCode.BUS_ERROR if np.isin(table, read).any() else ErrorCode.BAD_PAGE)
        reads, writes = self.data_addresses(i)
        self._execute(i)
        unwritten = ~(self.stored[read] & ~was_stored[read])  # not written by this instruction
        self.ext[read[unwritten]] = kept_read[unwritten]
        refused = np.isin(write, writes)
        self.ext[write[refused]] = kept_write[refused]
        self.stored[write[refused]] = was_stored[write[refused]]
        self._bus_failed = bool(np.isin(np.concatenate([table, reads]), read).any()
                                or refused.any())
        return ErrorCode.OK

    def _table_words(self, i: Instr) -> np.ndarray:
        """The block-table words a paged instruction reads (none for the others)."""
        if i.op not in PAGED_OPS:
            return np.zeros(0, dtype=np.int64)
        geo = paged_geometry(i)
        start = i.a + 1 + geo.first_entry
        return np.array([i.a, *range(start, start + geo.entries)], dtype=np.int64)

    def data_addresses(self, i: Instr) -> tuple[np.ndarray, np.ndarray]:
        """(read, written) external addresses of an instruction's data, not its table, in the
        order it moves them to or from scratchpad words b, b + 1, ..."""
        none = np.zeros(0, dtype=np.int64)
        span = np.arange(i.a, i.a + i.length, dtype=np.int64)
        if i.op == Op.LOAD:
            return span, none
        if i.op == Op.STORE:
            return none, span
        if i.op == Op.PCOPY:
            slots = i.row + np.arange(i.length)
            src, dst = (int(self.ext[i.a + k]) << i.shift for k in (0, 1))
            return self._pool_words(i, src | slots), self._pool_words(i, dst | slots)
        if i.op in (Op.PLOAD, Op.PSTORE):
            rows = self._pool_words(i, self._table_rows(i))
            return (rows, none) if i.op == Op.PLOAD else (none, rows)
        return none, none

    def _pool_words(self, i: Instr, pool_rows: np.ndarray) -> np.ndarray:
        """External addresses of the rows' words, row by row."""
        starts = i.c + pool_rows * i.m
        return (starts[:, None] + np.arange(i.m)[None, :]).reshape(-1)

    def _write_ext(self, addresses: np.ndarray, values: np.ndarray) -> None:
        """Write in order: an address named twice (a page listed twice) keeps the later value."""
        last = addresses.size - 1 - np.unique(addresses[::-1], return_index=True)[1]
        self.ext[addresses[last]] = values[last]
        self.stored[addresses] = True
        self._trace_ext(addresses[last].tolist(), np.asarray(values)[last])

    def _trace_ext(self, addresses, values: np.ndarray) -> None:
        if self.tracing:
            self.trace[-1].ext.update(zip(addresses, values.tolist(), strict=True))

    def _execute_paged(self, i: Instr) -> None:
        geo = paged_geometry(i)
        sram = slice(i.b, i.b + geo.words)
        if i.op == Op.PCOPY:
            slots = i.row + np.arange(i.length)
            src, dst = (int(self.ext[i.a + k]) << i.shift for k in (0, 1))
            self._write_sram(i.b, self.ext[self._pool_words(i, src | slots)])
            self._write_ext(self._pool_words(i, dst | slots), self.sram[sram])
        elif i.op == Op.PLOAD:
            self._write_sram(i.b, self.ext[self._pool_words(i, self._table_rows(i))])
        else:
            self._write_ext(self._pool_words(i, self._table_rows(i)), self.sram[sram])
        self.counters.dma_words += geo.words
        self.counters.pt_words += geo.table_words


def run(image, cfg: ChipConfig | None = None, raise_on_error: bool = False,
        bus_errors: BusErrors | None = None, trace: bool = False) -> RunResult:
    """Run the program at address 0 of `image` (a sequence of words) on a fresh machine."""
    return Machine(image, cfg, bus_errors, trace).run(raise_on_error=raise_on_error)
