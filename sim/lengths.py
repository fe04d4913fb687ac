"""How long a flow runs on each simulator: the one rule every test and plan reads.

A long flow runs a shorter version of the same check on Icarus (about 25 times slower than
Verilator on the chip); FULL_LENGTH=1 runs every flow at full length, FULL_LENGTH=chapter only
the chapter's own decodes."""

from __future__ import annotations

import os

FULL_LENGTH_ENV = "FULL_LENGTH"
CHAPTER_FLOW = "chapter"


def full_length(flow: str = "") -> bool:
    """Whether FULL_LENGTH asks for this flow at full length on every simulator."""
    value = os.environ.get(FULL_LENGTH_ENV, "")
    return value == "1" or (bool(flow) and value == flow)


def runs_full(sim: str, flow: str = "") -> bool:
    """Whether a flow runs at full length on ``sim``: always on Verilator, else when asked."""
    return sim == "verilator" or full_length(flow)


def run_length(sim: str, full: int, short: int, flow: str = "") -> int:
    """A flow's length on ``sim``: ``full`` when it runs full (`runs_full`), else ``short``."""
    return full if runs_full(sim, flow) else short
