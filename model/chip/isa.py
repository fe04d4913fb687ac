"""The chip's instruction set as data: opcodes, the 4-word encoding, an assembler, cycle costs.

Everything here follows `hw/ISA.md`, which is the specification; the reference machine
(`model.chip.machine`) and the compiler build on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

WORDS_PER_INSTR = 4
DIV_W = 32  # the SOFTMAX divider's dividend, divisor and remainder width
QUO_W = 7  # the divider's quotient width, a stage per bit: SOFTMAX's quotients are 0 .. 127
OPCODE_BITS = 8  # word 0's [31:24]
ERROR_BITS = 4  # the chip's `error` port


class Op(IntEnum):
    HALT = 0x00
    LOAD = 0x01
    STORE = 0x02
    MATMUL = 0x03
    VADD = 0x04
    VMAX = 0x05
    ARGMAX = 0x06
    SOFTMAX = 0x07
    PLOAD = 0x08
    PSTORE = 0x09
    PCOPY = 0x0A


OPCODES = frozenset(int(op) for op in Op)

# ev_ops is indexed by opcode, so the opcodes are 0 .. N_OPCODES-1: a new one takes the next
N_OPCODES = len(Op)


class ErrorCode(IntEnum):
    OK = 0
    ILLEGAL_OPCODE = 1
    BAD_ADDRESS = 2
    BAD_SIZE = 3
    BAD_PAGE = 4  # a paged instruction's block table names a page outside the pool
    BUS_ERROR = 5  # the memory answered SLVERR or DECERR (hw/ISA.md, "Errors")
    CORRUPTION = 6  # a parity check found a flipped bit (hw/ISA.md, "CORRUPTION")


FLAG_BT = 0x01  # MATMUL: B is stored transposed (n rows of k)
FLAG_RAW = 0x02  # MATMUL: write the int32 accumulators, no requant

LEN_OPS = frozenset({Op.LOAD, Op.STORE, Op.VADD, Op.VMAX, Op.ARGMAX, Op.SOFTMAX})
# The paged instructions (hw/ISA.md, "Paged instructions"): rows of a pool through a block table.
PAGED_OPS = frozenset({Op.PLOAD, Op.PSTORE, Op.PCOPY})
PAGE_SHIFT_MAX = 15  # pages of 1 .. 2^15 rows
PT_ENTRIES = 64  # the paged unit's entry buffer: the most entries one PLOAD or PSTORE reads


# The legal range of each Verilog parameter (hw/ISA.md, "Sizes"): ChipConfig refuses others and
# every RTL module checks its parameters against the same bounds (hw/rtl/chip_defs.vh).
PARAMETER_RANGES: dict[str, tuple[int, int]] = {
    "ARRAY_N": (1, 64),  # the systolic array's rows and columns
    "K_MAX": (2, 255),  # k is an 8-bit field; a tile buffer needs an address bit
    "SRAM_WORDS": (2, 65536),  # SRAM addresses are 16-bit fields; the SRAM needs an address bit
    "EXT_WORDS": (4, 65536),  # room for one instruction; external addresses are 16 bits
    "EXT_LAT": (1, 200),  # the ideal memory's read latency; mem_if's reads outstanding: L + 2
    "SM_MAX": (2, 32768),  # the softmax row memory: an address bit, addresses below 2^15
}


@dataclass(frozen=True)
class ChipConfig:
    """The chip's Verilog parameters (hw/ISA.md, "Sizes"); both implementations use the same."""

    array_n: int = 4
    k_max: int = 64
    sram_words: int = 4096
    ext_words: int = 16384
    ext_lat: int = 2
    sm_max: int = 256

    def verilog_parameters(self) -> dict[str, int]:
        return {
            "ARRAY_N": self.array_n,
            "K_MAX": self.k_max,
            "SRAM_WORDS": self.sram_words,
            "EXT_WORDS": self.ext_words,
            "EXT_LAT": self.ext_lat,
            "SM_MAX": self.sm_max,
        }

    def __post_init__(self) -> None:
        for name, value in self.verilog_parameters().items():
            low, high = PARAMETER_RANGES[name]
            if not low <= value <= high:
                raise ValueError(f"{name}={value} is outside its range {low}..{high}")


@dataclass(frozen=True)
class Instr:
    """One decoded instruction. `length` is the 16-bit `len` field of the vector-like ops."""

    op: int
    m: int = 0
    k: int = 0
    n: int = 0
    a: int = 0
    b: int = 0
    c: int = 0
    flags: int = 0
    shift: int = 0
    mult: int = 0

    @property
    def length(self) -> int:
        return (self.k << 8) | self.n

    @property
    def row(self) -> int:
        """Paged instructions: word 3's [31:16], the first table row (PCOPY: the first slot)."""
        return (self.mult >> 16) & 0xFFFF

    @property
    def pages(self) -> int:
        """Paged instructions: word 3's [15:0], the pool's size in pages."""
        return self.mult & 0xFFFF

    @property
    def name(self) -> str:
        try:
            return Op(self.op).name
        except ValueError:
            return f"OP_{self.op:#04x}"

    def __str__(self) -> str:
        if self.op == Op.MATMUL:
            return (f"MATMUL a={self.a} b={self.b} c={self.c} m={self.m} k={self.k} n={self.n} "
                    f"flags={self.flags:#x} shift={self.shift} mult={self.mult}")
        if self.op in LEN_OPS:
            return f"{self.name} a={self.a} b={self.b} c={self.c} len={self.length}"
        if self.op in PAGED_OPS:
            return (f"{self.name} table={self.a} sram={self.b} pool={self.c} "
                    f"row_words={self.m} len={self.length} page_shift={self.shift} "
                    f"row={self.row} pages={self.pages}")
        return self.name


def encode(instr: Instr) -> list[int]:
    """The four 32-bit words of an instruction (hw/ISA.md, "Instruction word")."""
    _check_field("op", instr.op, OPCODE_BITS)
    for name in ("m", "k", "n", "flags", "shift"):
        _check_field(name, getattr(instr, name), 8)
    for name in ("a", "b", "c"):
        _check_field(name, getattr(instr, name), 16)
    if not -(2**31) <= instr.mult < 2**31:
        raise ValueError(f"mult {instr.mult} does not fit a signed 32-bit field")
    return [
        (instr.op << 24) | (instr.m << 16) | (instr.k << 8) | instr.n,
        (instr.a << 16) | instr.b,
        (instr.c << 16) | (instr.flags << 8) | instr.shift,
        instr.mult & 0xFFFFFFFF,
    ]


def decode(words: Sequence[int]) -> Instr:
    """The inverse of `encode`, for any four words (unknown opcodes decode; the chip rejects)."""
    w0, w1, w2, w3 = (int(w) & 0xFFFFFFFF for w in words)
    mult = w3 - (1 << 32) if w3 & 0x80000000 else w3
    return Instr(
        op=w0 >> 24, m=(w0 >> 16) & 0xFF, k=(w0 >> 8) & 0xFF, n=w0 & 0xFF,
        a=w1 >> 16, b=w1 & 0xFFFF, c=w2 >> 16, flags=(w2 >> 8) & 0xFF, shift=w2 & 0xFF,
        mult=mult,
    )


def _check_field(name: str, value: int, bits: int) -> None:
    if not 0 <= value < (1 << bits):
        raise ValueError(f"field {name}={value} does not fit {bits} unsigned bits")


def _split_len(length: int) -> tuple[int, int]:
    _check_field("len", length, 16)
    return length >> 8, length & 0xFF


# --- the assembler: one function per instruction, in the order of ISA.md's table ------------


def halt() -> Instr:
    return Instr(Op.HALT)


def load(ext: int, sram: int, length: int) -> Instr:
    """ext[ext .. ext+length) -> sram[sram ..)."""
    k, n = _split_len(length)
    return Instr(Op.LOAD, k=k, n=n, a=ext, b=sram)


def store(sram: int, ext: int, length: int) -> Instr:
    """sram[sram .. sram+length) -> ext[ext ..)."""
    k, n = _split_len(length)
    return Instr(Op.STORE, k=k, n=n, a=ext, b=sram)


def matmul(a: int, b: int, c: int, m: int, k: int, n: int, *, mult: int = 0, shift: int = 0,
           b_transposed: bool = False, raw: bool = False) -> Instr:
    """C (m x n) = A (m x k) x B (k x n), requantized with (mult, shift) unless raw."""
    flags = (FLAG_BT if b_transposed else 0) | (FLAG_RAW if raw else 0)
    return Instr(Op.MATMUL, m=m, k=k, n=n, a=a, b=b, c=c, flags=flags, shift=shift, mult=mult)


def vadd(a: int, b: int, c: int, length: int) -> Instr:
    k, n = _split_len(length)
    return Instr(Op.VADD, k=k, n=n, a=a, b=b, c=c)


def vmax(a: int, c: int, length: int) -> Instr:
    k, n = _split_len(length)
    return Instr(Op.VMAX, k=k, n=n, a=a, c=c)


def argmax(a: int, c: int, length: int) -> Instr:
    k, n = _split_len(length)
    return Instr(Op.ARGMAX, k=k, n=n, a=a, c=c)


def softmax(a: int, c: int, length: int) -> Instr:
    k, n = _split_len(length)
    return Instr(Op.SOFTMAX, k=k, n=n, a=a, c=c)


def _paged(op: Op, table: int, sram: int, pool: int, row_words: int, length: int,
           page_shift: int, pages: int, row: int) -> Instr:
    k, n = _split_len(length)
    _check_field("row", row, 16)
    _check_field("pages", pages, 16)
    word3 = (row << 16) | pages
    mult = word3 - (1 << 32) if word3 & 0x80000000 else word3
    return Instr(op, m=row_words, k=k, n=n, a=table, b=sram, c=pool, shift=page_shift, mult=mult)


def pload(table: int, sram: int, pool: int, row_words: int, length: int, page_shift: int,
          pages: int, row: int = 0) -> Instr:
    """Table rows row .. row+length-1 of the pool, through the block table, into sram[sram ..)."""
    return _paged(Op.PLOAD, table, sram, pool, row_words, length, page_shift, pages, row)


def pstore(table: int, sram: int, pool: int, row_words: int, length: int, page_shift: int,
           pages: int, row: int = 0) -> Instr:
    """sram[sram ..) into table rows row .. row+length-1 of the pool, through the table."""
    return _paged(Op.PSTORE, table, sram, pool, row_words, length, page_shift, pages, row)


def pcopy(pair: int, sram: int, pool: int, row_words: int, length: int, page_shift: int,
          pages: int, row: int = 0) -> Instr:
    """Slots row .. row+length-1 of page ext[pair] copied to page ext[pair + 1], via sram."""
    return _paged(Op.PCOPY, pair, sram, pool, row_words, length, page_shift, pages, row)


def assemble(program: Iterable[Instr]) -> list[int]:
    """The words of a program; a HALT is appended when the program does not end with one."""
    instrs = list(program)
    if not instrs or instrs[-1].op != Op.HALT:
        instrs.append(halt())
    return [word for instr in instrs for word in encode(instr)]


def disassemble(words: Sequence[int]) -> list[Instr]:
    """Decode words up to and including the first HALT."""
    out = []
    for pc in range(0, len(words) - WORDS_PER_INSTR + 1, WORDS_PER_INSTR):
        instr = decode(words[pc:pc + WORDS_PER_INSTR])
        out.append(instr)
        if instr.op == Op.HALT:
            break
    return out


def instruction_at(words: Sequence[int], pc: int | None) -> str:
    """The listing of the instruction at ``pc`` of a program, or why there is none."""
    if pc is None or pc < 0 or pc + WORDS_PER_INSTR > len(words):
        return f"none: pc {pc} is outside the program's {len(words)} words"
    try:
        return str(decode(words[pc:pc + WORDS_PER_INSTR]))
    except ValueError as error:
        return f"not an instruction ({error})"


# --- cycle costs (hw/ISA.md, "Cycle costs") ---------------------------------------------------


# hw/ISA.md, "The memory interface unit": a read stream commanded in cycle c has its first word
# due in c + L + READ_STAGES; a fence is due FENCE_CYCLES after the stream's last push.
READ_STAGES = 2
FENCE_CYCLES = 3
NO_FETCH_OVERHEAD = 2  # pc + 4 > EXT_WORDS: FETCH reads nothing (one cycle), then CHECK fails


def read_cycles(words: int, cfg: ChipConfig) -> int:
    """A read stream commanded in cycle 0 on the ideal memory, until its last word is due."""
    return words + cfg.ext_lat + READ_STAGES


def fetch_cycles(cfg: ChipConfig) -> int:
    """FETCH: a read stream of the instruction's words."""
    return read_cycles(WORDS_PER_INSTR, cfg)


def overhead_cycles(cfg: ChipConfig) -> int:
    """FETCH + CHECK: paid by every instruction, HALT and a failing one included."""
    return fetch_cycles(cfg) + 1


def matmul_cycles(m: int, k: int, n: int, cfg: ChipConfig, b_transposed: bool = False) -> int:
    """MATMUL: the set-up cycle, then per tile its wide reads (ARRAY_N words each), the last
    read's cycle, the array's beats and the writes."""
    size = cfg.array_n
    chunks = -(-k // size)  # wide reads per A row (and per column of a transposed B)
    total = 1
    for i0 in range(0, m, size):
        rows = min(size, m - i0)
        for j0 in range(0, n, size):
            cols = min(size, n - j0)
            b_reads = cols * chunks if b_transposed else k
            total += rows * chunks + b_reads + 1 + (k + 2 * size - 1) + rows * cols
    return total


@dataclass(frozen=True)
class PagedGeometry:
    """What a paged instruction's fields imply (hw/ISA.md, "Paged instructions")."""

    page_size: int  # P = 2^shift, the instruction's page field
    words: int  # n = len * row_words: the words moved
    first_entry: int  # j_lo: the first table entry read (PLOAD, PSTORE)
    entries: int  # E: the entries read after the header (PCOPY: 1, its second page)
    page_words: int  # P * row_words
    pool_words: int  # pages * P * row_words

    @property
    def table_words(self) -> int:
        """Block-table words read: the header (PCOPY: the source page) and E entries."""
        return self.entries + 1


def table_entries(row: int, length: int, page_shift: int) -> tuple[int, int]:
    """(j_lo, E): the first block-table entry a PLOAD or PSTORE of these table rows reads, and
    how many: every entry the rows may need whatever the header's slot (hw/ISA.md)."""
    first_entry = row >> page_shift
    last_entry = ((1 << page_shift) - 1 + row + length - 1) >> page_shift
    return first_entry, last_entry - first_entry + 1


def paged_geometry(instr: Instr) -> PagedGeometry:
    page_size = 1 << instr.shift
    if instr.op == Op.PCOPY:
        first_entry, entries = 0, 1
    else:
        first_entry, entries = table_entries(instr.row, instr.length, instr.shift)
    page_words = page_size * instr.m
    return PagedGeometry(page_size, instr.length * instr.m, first_entry, entries, page_words,
                         instr.pages * page_words)


def paged_exec_cycles(instr: Instr, cfg: ChipConfig) -> int:
    """EXEC of a paged instruction that runs to the end (hw/ISA.md, "Cycle costs")."""
    words = paged_geometry(instr).words
    table = table_phase_cycles(instr, cfg)
    if instr.op == Op.PLOAD:
        return table + read_cycles(words, cfg)
    if instr.op == Op.PSTORE:
        return table + words + FENCE_CYCLES  # its first scratchpad read is the verdict's cycle
    return table + read_cycles(words, cfg) + store_cycles(words)


def store_cycles(words: int) -> int:
    """A STORE's: read the scratchpad, push a cycle later, the fence after the last push."""
    return words + 1 + FENCE_CYCLES


def table_phase_cycles(instr: Instr, cfg: ChipConfig) -> int:
    """A paged instruction's table phase (header, then E entries): all of EXEC on BAD_PAGE."""
    return 1 + read_cycles(paged_geometry(instr).entries, cfg)


def exec_cycles(instr: Instr, cfg: ChipConfig) -> int:
    """EXEC of a legal instruction: the cycles its unit is busy."""
    op = Op(instr.op)
    if op == Op.HALT:
        return 0
    if op in PAGED_OPS:
        return paged_exec_cycles(instr, cfg)
    if op == Op.LOAD:
        return read_cycles(instr.length, cfg)
    if op == Op.STORE:
        return store_cycles(instr.length)
    if op == Op.MATMUL:
        return matmul_cycles(instr.m, instr.k, instr.n, cfg, bool(instr.flags & FLAG_BT))
    if op in (Op.VADD, Op.VMAX, Op.ARGMAX):
        return instr.length + 1
    return softmax_cycles(instr.length)


def softmax_cycles(length: int) -> int:
    """SOFTMAX: the maximum and exponentials passes (length + 1 each), then one division
    entering the divider a cycle, each written QUO_W cycles later."""
    return 2 * (length + 1) + length + QUO_W


def program_cycles(program: Sequence[Instr] | Sequence[int], cfg: ChipConfig) -> int:
    """The cycles a program (instructions or words) takes by hw/ISA.md's closed form, up to its
    HALT or illegal opcode; an upper bound, as a watchdog needs, if a later check stops it."""
    instrs = program if len(program) and isinstance(program[0], Instr) else disassemble(program)
    total = 0
    for instr in instrs:
        total += overhead_cycles(cfg)
        if instr.op not in OPCODES:
            break
        total += exec_cycles(instr, cfg)
    return total


UNIT_OF = {
    Op.LOAD: "dma", Op.STORE: "dma", Op.MATMUL: "mat",
    Op.VADD: "vec", Op.VMAX: "vec", Op.ARGMAX: "vec", Op.SOFTMAX: "sm",
    Op.PLOAD: "dma", Op.PSTORE: "dma", Op.PCOPY: "dma",
}
