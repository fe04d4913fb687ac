"""Constrained-random programs for the chip: legal by construction, seeded, reproducible.

The constraints are the ISA's rules for a defined result, so the RTL and the reference machine
must agree on every word; sizes lean towards the edges (1, K_MAX, tile boundaries, pages of one
row, the 64-entry table buffer).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from model.chip import isa
from model.chip.geometry import page_of, page_shift_of
from model.chip.isa import ChipConfig, Instr

MAX_INSTRS = 14
DATA_BASE = 1024  # external words: program below, input data from here
OUT_BASE = 4096  # stored results from here
DATA_WORDS = 2048
TABLE_BASE = DATA_BASE + DATA_WORDS  # block tables, up to OUT_BASE
BAD_TABLE_CHANCE = 0.05  # a paged instruction's table names a page outside the pool


@dataclass(frozen=True)
class RandomProgram:
    """A program and its memory image; `ext_used` bounds every external word it touches."""

    seed: int
    instrs: tuple[Instr, ...]
    image: np.ndarray  # int64 words, program at address 0
    ext_used: int
    stops_at: int | None = None  # the instruction whose table stops the run (BAD_PAGE), if any


def edge_biased(rng: random.Random, lo: int, hi: int, edges: tuple[int, ...] = ()) -> int:
    """A size in [lo, hi], often one of the edges."""
    candidates = [e for e in (lo, hi, *edges) if lo <= e <= hi]
    if rng.random() < 0.3:
        return rng.choice(candidates)
    return rng.randint(lo, hi)


def random_word(rng: random.Random) -> int:
    """A 32-bit word whose low byte is often an int8 extreme; the upper bits are noise."""
    low = rng.choice([0x80, 0x7F, 0x00, 0xFF, rng.randrange(256), rng.randrange(256)])
    return (rng.getrandbits(24) << 8) | low


def random_mult(rng: random.Random) -> int:
    return rng.choice([
        rng.randint(1 << 30, (1 << 31) - 1),
        rng.randint(-(1 << 31), (1 << 31) - 1),
        -(1 << 31),
        (1 << 31) - 1,
        0,
    ])


def random_shift(rng: random.Random) -> int:
    """Mostly the compiler's range 0..31, sometimes the rest of the 8-bit field."""
    return rng.randint(0, 31) if rng.random() < 0.95 else rng.randint(32, 255)


class _Scratchpad:
    """Hands out disjoint scratchpad ranges, so operands and results never overlap by accident."""

    def __init__(self, rng: random.Random, cfg: ChipConfig):
        self.rng = rng
        self.cfg = cfg
        self.next_free = rng.randrange(0, 64)
        self.filled: list[tuple[int, int]] = []  # ranges holding loaded or computed data

    def take(self, length: int) -> int | None:
        start = self.next_free + self.rng.randrange(0, 8)
        if start + length > self.cfg.sram_words:
            return None
        self.next_free = start + length
        return start

    def operand(self, length: int) -> int | None:
        """A range of `length` words inside data already written, else None."""
        fitting = [(s, n) for s, n in self.filled if n >= length]
        if not fitting:
            return None
        start, size = self.rng.choice(fitting)
        return start + self.rng.randint(0, size - length)


def generate(seed: int, cfg: ChipConfig | None = None) -> RandomProgram:
    """One legal random program with its image: random data loaded, computed on, stored back."""
    cfg = cfg or ChipConfig()
    rng = random.Random(seed)
    image = np.zeros(OUT_BASE, dtype=np.int64)
    image[DATA_BASE:DATA_BASE + DATA_WORDS] = [random_word(rng) for _ in range(DATA_WORDS)]
    pad = _Scratchpad(rng, cfg)
    tables = _Tables(rng, image, _random_pool(rng))
    instrs: list[Instr] = []
    for _ in range(rng.randint(1, 3)):
        instrs.append(_load(rng, pad))
    out_next = OUT_BASE
    while len(instrs) < MAX_INSTRS - 1 and rng.random() < 0.85 and tables.stops_at is None:
        if rng.random() < 0.12:
            store = _store(rng, pad, out_next)
            if store is not None:
                instrs.append(store)
                out_next += store.length
            continue
        instr = _compute(rng, pad, cfg, tables, len(instrs))
        if instr is not None:
            instrs.append(instr)
    if pad.filled and tables.stops_at is None:
        start, size = pad.filled[-1]
        instrs.append(isa.store(start, out_next, size))
        out_next += size
    words = isa.assemble(instrs)
    image[: len(words)] = words
    return RandomProgram(seed, tuple(instrs), image, out_next, tables.stops_at)


def _load(rng: random.Random, pad: _Scratchpad) -> Instr:
    length = edge_biased(rng, 1, 300, (2, 64, 256))
    ext = DATA_BASE + rng.randint(0, DATA_WORDS - length)
    sram = pad.take(length)
    assert sram is not None, "the first loads always fit"
    pad.filled.append((sram, length))
    return isa.load(ext, sram, length)


def _store(rng: random.Random, pad: _Scratchpad, out_next: int) -> Instr | None:
    start, size = rng.choice(pad.filled)
    length = rng.randint(1, size)
    return isa.store(start + size - length, out_next, length)


def _compute(rng: random.Random, pad: _Scratchpad, cfg: ChipConfig, tables: _Tables,
             index: int) -> Instr | None:
    kind = rng.choice(["matmul"] * 4 + ["vadd", "vmax", "argmax", "softmax", "load"]
                      + ["pload", "pload", "pstore", "pcopy"])
    if kind == "load":
        return _load(rng, pad) if pad.next_free < cfg.sram_words - 400 else None
    if kind == "matmul":
        return _matmul(rng, pad, cfg)
    if kind in ("pload", "pstore", "pcopy"):
        return _paged(rng, pad, tables, kind, index)
    length = edge_biased(rng, 1, 64 if kind != "softmax" else 48, (2, 16))
    if kind == "softmax" and rng.random() < 0.05:
        length = cfg.sm_max
    a = pad.operand(length)
    if a is None:
        return None
    out_len = length if kind in ("vadd", "softmax") else 1
    if kind == "vadd" and rng.random() < 0.2:
        b = pad.operand(length)
        if b is None or (b != a and abs(b - a) < length):
            return None  # only an exact in-place write is defined, not a partial overlap
        return isa.vadd(a, b, a, length)
    b = pad.operand(length) if kind == "vadd" else None
    c = pad.take(out_len)
    if c is None or (kind == "vadd" and b is None):
        return None
    pad.filled.append((c, out_len))  # only now: an operand must never be the unwritten result
    if kind == "vadd":
        return isa.vadd(a, b, c, length)
    return {"vmax": isa.vmax, "argmax": isa.argmax, "softmax": isa.softmax}[kind](a, c, length)


def _matmul(rng: random.Random, pad: _Scratchpad, cfg: ChipConfig) -> Instr | None:
    n_tile = cfg.array_n
    m = edge_biased(rng, 1, 2 * n_tile + 1, (n_tile, n_tile + 1))
    k = edge_biased(rng, 1, cfg.k_max, (2, n_tile))
    n = edge_biased(rng, 1, 3 * n_tile + 1, (n_tile, n_tile + 1))
    a, b = pad.operand(m * k), pad.operand(k * n)
    if a is None or b is None:
        return None
    c = pad.take(m * n)
    if c is None:
        return None
    pad.filled.append((c, m * n))
    raw = rng.random() < 0.15
    return isa.matmul(a, b, c, m, k, n, mult=random_mult(rng), shift=random_shift(rng),
                      b_transposed=rng.random() < 0.5, raw=raw)


# ---- paged instructions ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Pool:
    """One pool laid over the random data: `pages` pages of `page_size` rows of row_words."""

    base: int
    row_words: int
    page_size: int  # a power of two: the instruction encodes its log2
    pages: int


def _random_pool(rng: random.Random) -> _Pool:
    row_words = edge_biased(rng, 1, 16, (8,))
    page_size = 1 << rng.choice([0, 0, 1, 2, 2, 3, 4, 5])
    most = DATA_WORDS // (page_size * row_words)
    if most == 0:
        page_size, most = 1, DATA_WORDS // row_words
    pages = edge_biased(rng, 1, min(most, 40), (2,))
    pool_words = pages * page_size * row_words
    return _Pool(DATA_BASE + rng.randint(0, DATA_WORDS - pool_words), row_words, page_size,
                 pages)


class _Tables:
    """Writes each paged instruction's block table (or PCOPY's page pair) into the image: random
    headers, pages reused and out of order, noise in unused entries, now and then a page outside
    the pool, which stops the program with BAD_PAGE (``stops_at``)."""

    def __init__(self, rng: random.Random, image: np.ndarray, pool: _Pool):
        self.rng = rng
        self.image = image
        self.pool = pool
        self.next_free = TABLE_BASE
        self.stops_at: int | None = None  # the instruction a bad table stops

    def page(self) -> int:
        return self.rng.randrange(self.pool.pages)

    def bad_page(self) -> int:
        """A page outside the pool, or outside external memory altogether."""
        return self.rng.choice([self.pool.pages, self.pool.pages + self.rng.randrange(1000),
                                0xFFFF, 0x10000, 0xFFFFFFFF])

    def place(self, words: list[int]) -> int | None:
        start = self.next_free + self.rng.randrange(0, 4)
        if start + len(words) > OUT_BASE:
            return None
        self.image[start : start + len(words)] = words
        self.next_free = start + len(words)
        return start

    def view(self, row: int, length: int, bad: bool) -> int | None:
        """A block table for table rows row .. row+length-1: header, then the entries."""
        pool, rng = self.pool, self.rng
        first = rng.randrange(pool.page_size)
        last_entry = page_of(pool.page_size - 1 + row + length - 1, pool.page_size)
        used = range(page_of(first + row, pool.page_size),
                     page_of(first + row + length - 1, pool.page_size) + 1)
        entries = [self.page() if j in used else rng.getrandbits(32)
                   for j in range(last_entry + 1)]
        if rng.random() < 0.3 and len(entries) > 1:  # one page for several table pages
            for j in used:
                entries[j] = entries[used[0]]
        if bad:
            if rng.random() < 0.3:
                first = pool.page_size + rng.randrange(4)  # the header is not a slot
            else:
                entries[rng.choice(used)] = self.bad_page()
        return self.place([first, *entries])

    def pair(self, bad: bool) -> int | None:
        src, dst = self.page(), self.page()
        if bad:
            src, dst = ((self.bad_page(), dst) if self.rng.random() < 0.5
                        else (src, self.bad_page()))
        return self.place([src, dst])


def _paged(rng: random.Random, pad: _Scratchpad, tables: _Tables, kind: str,
           index: int) -> Instr | None:
    pool = tables.pool
    fields = (pool.base, pool.row_words)
    bad = rng.random() < BAD_TABLE_CHANCE
    if kind == "pcopy":
        row = rng.randrange(pool.page_size)
        length = edge_biased(rng, 1, pool.page_size - row)
        table, sram = tables.pair(bad), pad.take(length * pool.row_words)
        instr = isa.pcopy
    else:
        row = rng.choice([0, 0, rng.randrange(3 * pool.page_size)])
        # the longest run of rows whose table fits the unit's entry buffer (E <= PT_ENTRIES)
        fits = (isa.PT_ENTRIES - 1 + page_of(row, pool.page_size)) * pool.page_size - row + 1
        most = max(1, min(fits, 300 // pool.row_words))
        length = edge_biased(rng, 1, most, (pool.page_size, pool.page_size + 1))
        table = tables.view(row, length, bad)
        if kind == "pload":
            sram, instr = pad.take(length * pool.row_words), isa.pload
        else:
            sram, instr = pad.operand(length * pool.row_words), isa.pstore
    if table is None or sram is None:
        return None
    if kind != "pstore":
        pad.filled.append((sram, length * pool.row_words))
    if bad:
        tables.stops_at = index
    shift = page_shift_of(pool.page_size)  # the instruction's page field
    return instr(table, sram, *fields, length, shift, pool.pages, row=row)
