"""The formal plan: each block's property file, the RTL it checks, the parameters it is proven
at, its checks (full and quick) and, where a proof is bounded or narrowed, why."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from model.chip.rtl_defs import AxiChannel, AxiRule
from model.paths import HW_DIR, RTL_DIR
from verif.formal.sby import FORMAL_DIR, Check

BAD_MANAGER = HW_DIR / "tb" / "axi_bad_manager.v"
BAD_MANAGER_CHECK = Check("bmc", 10)  # the script's last handshake is in cycle 7
# a line of the bad manager's header: the rule, what it breaks, the cycle and channel it names
BAD_LINE = re.compile(r"^//\s+([A-Z0-9_]+)\s.*\scycle (\d+), ([A-Z]+)\b")


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
    # proven with the invariants of hw/formal/dma_invariants.vh (the unit's formal hook)
    Block("dma", ("dma",), (Check("prove", 1), Check("cover", 7)),
          (Check("prove", 1), Check("cover", 7))),
    # proven with the invariants of hw/formal/controller_invariants.vh (its formal hook)
    Block("controller", ("controller", "paged_geometry"), (Check("prove", 2), Check("cover", 12)),
          (Check("bmc", 3), Check("cover", 12)), parameters={"EXT_WORDS": 256},
          narrowed="EXT_WORDS = 256 (a run of at most 64 instructions): EV_OPS_SUM's induction "
                   "step adds eleven 16-bit counts, and at the chip's 16384 instructions a run "
                   "it does not finish in 150 s (256: 43-73 s, 16: 21 s); every other property "
                   "closes at full width (2.7 s without EV_OPS_SUM)"),
    # proven with the invariants of hw/formal/pdma_invariants.vh (its formal hook; the entry
    # buffer's words come out of rowmem under FORMAL)
    Block("pdma", ("pdma", "rowmem", "paged_geometry"), (Check("prove", 1), Check("cover", 12)),
          (Check("bmc", 3), Check("cover", 11)),
          narrowed="len <= 2, row_words = 1, page_shift <= 1, pages <= 4 (assumed in "
                   "hw/formal/pdma.sv): IN_POOL is nonlinear (page * P * row_words against "
                   "pages * P * row_words) and at the chip's widths bmc 8 takes 150 s"),
    # proven with the invariants of hw/formal/mem_if_invariants.vh (its formal hook); a check
    # of the AR/AW addresses against the streams' words made each bmc step past 6 take minutes,
    # so it is not in the file
    Block("mem_if", ("mem_if",), (Check("prove", 2), Check("cover", 8)),
          (Check("bmc", 3), Check("cover", 8)),
          parameters={"EXT_LAT": 1, "READS_MAX": 3, "RBUF": 2, "WBUF": 2},
          narrowed="EXT_LAT = 1, READS_MAX = 3 (the least that EXT_LAT allows), RBUF = WBUF = 2: "
                   "the chip's values lengthen the schedule's delay line and the buffers, not the "
                   "logic, and every state of a full buffer or of the reads limit is reached in "
                   "fewer cycles"),
)


@dataclass(frozen=True)
class NegativeCheck:
    """One broken manager of hw/tb/axi_bad_manager.v under every AXI4 rule (the wrapper
    hw/formal/axi_bad_manager.sv, FAULT fixed): caught on its own rule at the cycle and channel
    the bad manager's header names, or (NONE, the clean exchange) passing."""

    fault: AxiRule
    check: Check = BAD_MANAGER_CHECK

    top = "axi_bad_manager_fv"

    @property
    def job(self) -> str:
        return f"axi_bad_manager_{self.fault.name.lower()}"

    def sources(self) -> list[Path]:
        return [BAD_MANAGER, FORMAL_DIR / "axi_bad_manager.sv"]

    def expected(self) -> tuple[int, AxiChannel] | None:
        """The cycle and channel the bad manager's header names for this fault (None: none)."""
        for line in BAD_MANAGER.read_text().splitlines():
            found = BAD_LINE.match(line)
            if found and found[1] == self.fault.name:
                return int(found[2]), AxiChannel[found[3]]
        return None


NEGATIVE: tuple[NegativeCheck, ...] = tuple(NegativeCheck(rule) for rule in AxiRule)
