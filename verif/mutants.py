"""Deliberately broken chips for negative tests, made on a temporary copy of hw/.

Each mutant is one textual change to one RTL line. `make_mutant` copies hw/ into a folder the
caller owns (a pytest tmp_path), applies the change there and returns the source list to build:
the working tree is never touched. If the RTL changes so that the line is gone, the mutant says
so instead of silently testing the unbroken chip.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from sim.runner import REPO_ROOT
from verif.launch import chip_sources

HW_DIR = REPO_ROOT / "hw"


@dataclass(frozen=True)
class Mutant:
    """A one-line change: `original` (unique in `path`) becomes `broken`."""

    name: str
    path: str  # relative to hw/
    original: str
    broken: str
    what: str


MUTANTS = {m.name: m for m in (
    Mutant("cnt_mat_misses_a_cycle", "rtl/controller.v",
           "if (sel_mat) begin", "if (sel_mat && !unit_done) begin",
           "cnt_mat does not count the matrix unit's last cycle"),
    Mutant("requant_floors", "rtl/requant.v",
           "= shifted + {63'd0, (rem > threshold)};", "= shifted;",
           "requant's rounding shift floors instead of rounding half away from zero"),
    Mutant("done_never_rises", "rtl/controller.v",
           "assign done     = (state_reg == S_DONE);", "assign done     = 1'b0;",
           "the chip never raises done"),
    Mutant("cnt_sm_unknown", "rtl/controller.v",
           "cnt_sm    <= 32'd0;", "cnt_sm    <= 32'bx;",
           "cnt_sm is cleared to X (visible on Icarus only)"),
)}


class MutantDoesNotApply(RuntimeError):
    """The RTL no longer has the line a mutant changes: update verif/mutants.py."""


def make_mutant(mutant: Mutant, workdir: Path) -> list[Path]:
    """Copy hw/ under `workdir`, break it, and return the chip's sources in the copy."""
    copy = Path(workdir) / f"hw-{mutant.name}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(HW_DIR, copy, ignore=shutil.ignore_patterns("gtkwave", "*.md"))
    target = copy / mutant.path
    text = target.read_text()
    if text.count(mutant.original) != 1:
        raise MutantDoesNotApply(f"{mutant.name}: {mutant.path} has {text.count(mutant.original)}"
                                 f" copies of {mutant.original!r}, expected exactly one")
    target.write_text(text.replace(mutant.original, mutant.broken))
    return chip_sources(copy / "rtl", copy / "tb")
