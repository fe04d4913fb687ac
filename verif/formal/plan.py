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
)
