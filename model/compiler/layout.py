"""Where a step program keeps everything: external memory and the scratchpad.

External memory has one ``Layout`` for every step a run meets, so a testbench loads the weights
once. In the ``Scratchpad`` request i's cached rows sit right before its new row, so its scores
and weighted sum each reduce over one contiguous matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from model.chip.geometry import page_shift_of
from model.chip.isa import WORDS_PER_INSTR, ChipConfig, table_entries
from model.compiler.quantize import WEIGHT_NAMES
from model.lm.tiny_lm import TinyLM

BATCH_MAX = 8  # requests per chip run: the program room of a serving layout is sized for it


def program_room(max_batch: int) -> int:
    """Words of the longest program of up to ``max_batch`` requests: per request five
    projections, five attention instructions, two paged stores and an ARGMAX; then two loads,
    four stores, the VADD, two PCOPYs and the HALT."""
    return WORDS_PER_INSTR * (10 + 13 * max_batch)


@dataclass(frozen=True)
class Pool:
    """Chip gather's KV pool: ``n_pages`` pages of ``page_size`` rows of ``dim`` words."""

    page_size: int
    n_pages: int
    dim: int

    @property
    def page_shift(self) -> int:
        return page_shift_of(self.page_size)

    @property
    def words(self) -> int:
        """Words of one pool (the keys', or the values')."""
        return self.n_pages * self.page_size * self.dim


@dataclass(frozen=True)
class Layout:
    """External-memory addresses, the same for every step of a run (the module docstring)."""

    dim: int
    vocab: int
    max_context: int
    max_batch: int
    program_words: int  # the program room at address 0: the chip starts there
    weights: int
    weight_words: int
    x: int  # max_batch rows of dim
    kc: int  # max_batch slots of max_context - 1 cached key rows (host gather)
    vc: int
    logits: int  # max_batch rows of vocab
    tokens: int  # max_batch words
    k_new: int  # max_batch rows of dim
    v_new: int
    tables: int  # max_batch block tables of table_words (chip gather)
    table_words: int
    pair: int  # the copy-on-write pair: source page, destination page
    k_pool: int
    v_pool: int
    end: int  # one past the last word used
    pool: Pool | None = None  # chip gather's pool; None: host gather, no tables or pools

    program: int = 0

    @classmethod
    def for_model(cls, model: TinyLM, cfg: ChipConfig, max_batch: int = 1,
                  pool: Pool | None = None) -> Layout:
        d, vocab, n = model.dim, model.vocab, max_context(cfg)
        if not 1 <= max_batch <= BATCH_MAX:
            raise ValueError(f"a layout holds 1..{BATCH_MAX} requests, got {max_batch}")
        program_words = program_room(max_batch)
        weight_words = 4 * d * d + d * vocab
        places, address = {}, program_words + weight_words
        table_words = _table_words(n, pool) if pool else 0
        pool_words = pool.words if pool else 0
        for name, size in (("x", max_batch * d), ("kc", max_batch * (n - 1) * d),
                           ("vc", max_batch * (n - 1) * d), ("logits", max_batch * vocab),
                           ("tokens", max_batch), ("k_new", max_batch * d),
                           ("v_new", max_batch * d), ("tables", max_batch * table_words),
                           ("pair", 2 if pool else 0), ("k_pool", pool_words),
                           ("v_pool", pool_words)):
            places[name] = address
            address += size
        layout = cls(dim=d, vocab=vocab, max_context=n, max_batch=max_batch,
                     program_words=program_words, weights=program_words,
                     weight_words=weight_words, table_words=table_words, end=address, pool=pool,
                     **places)
        if layout.end > cfg.ext_words:
            where = f"a pool of {pool.n_pages} pages of {pool.page_size} rows" if pool else ""
            raise ValueError(f"the layout of {max_batch} requests {where} ends at {layout.end}; "
                             f"the chip has {cfg.ext_words} external words")
        return layout

    def kc_slot(self, index: int) -> int:
        """Where request ``index``'s cached key rows start (host gather)."""
        return self.kc + self._slot(index) * (self.max_context - 1) * self.dim

    def vc_slot(self, index: int) -> int:
        return self.vc + self._slot(index) * (self.max_context - 1) * self.dim

    def table(self, index: int) -> int:
        """Where request ``index``'s block table starts (chip gather)."""
        return self.tables + self._slot(index) * self.table_words

    def _slot(self, index: int) -> int:
        if not 0 <= index < self.max_batch:
            raise ValueError(f"request slot {index} is outside 0..{self.max_batch - 1}")
        return index

    @property
    def outputs(self) -> tuple[int, int]:
        """The words a program stores [start, end): logits, tokens, k_new, v_new."""
        return self.logits, self.tables

    @property
    def pools(self) -> tuple[int, int]:
        """Both pools' words [start, end): keys, then values."""
        return self.k_pool, self.end


def _table_words(max_context: int, pool: Pool) -> int:
    """Room for the longest block table a step reads (a PSTORE of row max_context - 1)."""
    first, entries = table_entries(max_context - 1, 1, pool.page_shift)
    return 1 + first + entries


def max_context(cfg: ChipConfig) -> int:
    """The longest context a step can attend: one MATMUL (k <= K_MAX) and one SOFTMAX over it."""
    return min(cfg.k_max, cfg.sm_max)


@dataclass(frozen=True)
class Scratchpad:
    """Scratchpad addresses of one program: the weights, then B-row matrices, ``k_new`` and
    ``v_new`` each after room for the longest context's cached rows."""

    weights: dict[str, int]
    x: int
    q: int
    k_new: int
    v_new: int
    scores: int
    probs: int
    attn: int
    out: int
    hidden: int
    logits: int
    tokens: int
    end: int

    @classmethod
    def for_batch(cls, model: TinyLM, contexts: Sequence[int]) -> Scratchpad:
        weights, address = {}, 0
        for name in WEIGHT_NAMES:
            weights[name] = address
            address += getattr(model, name).size
        d, rows, longest = model.dim, len(contexts) * model.dim, max(contexts)
        cached = (longest - 1) * d  # room before row 0 for the cached rows
        places = {}
        for name, size, room_before in (
                ("x", rows, 0), ("q", rows, 0), ("k_new", rows, cached), ("v_new", rows, cached),
                ("scores", longest, 0), ("probs", longest, 0), ("attn", rows, 0),
                ("out", rows, 0), ("hidden", rows, 0), ("logits", len(contexts) * model.vocab, 0),
                ("tokens", len(contexts), 0)):
            places[name] = address + room_before
            address += room_before + size
        return cls(weights=weights, end=address, **places)

    def keys_of(self, index: int, context: int, dim: int) -> int:
        """Request ``index``'s keys [kc; k_new]: its context - 1 cached rows end at its row."""
        return self.k_new + (index - context + 1) * dim

    def values_of(self, index: int, context: int, dim: int) -> int:
        return self.v_new + (index - context + 1) * dim
