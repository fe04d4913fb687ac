"""The chip agent's configuration: the handles its driver and monitors work through.

The page-table agent and the scoreboard read it too: they write into, and predict, the same chip.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.chip.isa import ChipConfig
from model.compiler.layout import Layout
from verif.kit.bfm import ChipBfm
from verif.runs.record import RunRecorder

CHIP_CFG = "chip_cfg"  # its ConfigDB key
DEFAULT_WATCHDOG_MARGIN = 1000  # cycles beyond the program's closed-form cost


@dataclass
class ChipAgentConfig:
    """The BFM (the Python side of a virtual interface), the chip, the steps' memory layout
    (None for bare programs), and the recorder that keeps a failure and names the run."""

    bfm: ChipBfm
    chip: ChipConfig
    recorder: RunRecorder
    layout: Layout | None = None
    watchdog_margin: int = DEFAULT_WATCHDOG_MARGIN
