"""Deliberately broken chips and blocks for the negative tests, built from a copy of hw/.

Each is a verif.mutation.framework Mutant: one whole RTL line replaced. `make_broken_chip` breaks a
copy under a folder the caller owns (a pytest tmp_path) and returns the chip's sources in the copy,
`make_broken_block` a block test's; the working tree is never touched, and a line that has
drifted fails loudly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from verif.mutation.framework import REPO_ROOT, Mutant, apply
from verif.runs.launch import chip_sources

CONTROLLER, REQUANT = "hw/rtl/controller.v", "hw/rtl/requant.v"
DIVIDER = "hw/rtl/divu.v"
VECTOR_UNIT = "hw/rtl/vector_unit.v"
VADD_FAULT_ELEMENT = 5  # vadd_flips_one_element's element

RTL_MUTANTS = {m.name: m for m in (
    Mutant("cnt_mat_misses_a_cycle", CONTROLLER,
           "cnt_mat + {{(`CNT_MAT_W-1){1'b0}}, counting && sel_mat};",
           "cnt_mat + {{(`CNT_MAT_W-1){1'b0}}, counting && sel_mat && !unit_done};",
           "cnt_mat does not count the matrix unit's last cycle", "rtl"),
    Mutant("requant_floors", REQUANT,
           "wire        [63:0] r         = shifted + {63'd0, (rem > threshold)};",
           "wire        [63:0] r         = shifted;",
           "requant's rounding shift floors instead of rounding half away from zero", "rtl"),
    Mutant("done_never_rises", CONTROLLER, "assign done     = (state_reg == `CTL_DONE);",
           "assign done     = 1'b0;", "the chip never raises done", "rtl"),
    Mutant("cnt_sm_unknown", CONTROLLER,
           "wire [`CNT_SM_W-1:0] cnt_sm_next = starting ? {`CNT_SM_W{1'b0}} :",
           "wire [`CNT_SM_W-1:0] cnt_sm_next = starting ? {`CNT_SM_W{1'bx}} :",
           "start clears cnt_sm to X (visible on Icarus only)", "rtl"),
    Mutant("store_writes_one_more_word", CONTROLLER, "assign op_len   = w0[15:0];",
           "assign op_len   = w0[15:0] + {15'd0, opcode == `OP_STORE};",
           "every STORE writes one word more, past its end (after a decode step's new value "
           "rows: the word after the output region)", "rtl"),
    Mutant("vadd_flips_one_element", VECTOR_UNIT,
           "assign sram_wdata   = is_vadd              ? {{24{sum_sat[7]}}, sum_sat} :",
           "assign sram_wdata   = is_vadd              ? {{24{sum_sat[7]}}, sum_sat ^ "
           f"{{7'd0, elem == 16'd{VADD_FAULT_ELEMENT}}}}} :",
           f"VADD writes element {VADD_FAULT_ELEMENT} with bit 0 flipped (the vector unit's "
           "negative block test)", "rtl"),
    Mutant("vector_done_never_rises", VECTOR_UNIT, "assign done         = last;",
           "assign done         = 1'b0;", "the vector unit never raises done", "rtl"),
    Mutant("divider_quotient_off_by_one", DIVIDER, "assign quotient  = quo_reg[QUO_W-1];",
           "assign quotient  = quo_reg[QUO_W-1] ^ {{(QUO_W-1){1'b0}}, 1'b1};",
           "the divider's quotient has bit 0 flipped (a datapath block's negative test)", "rtl"),
)}


def make_broken_chip(mutant: Mutant, workdir: Path) -> list[Path]:
    """Copy hw/ under `workdir`, break it, and return the chip's sources in the copy."""
    root = apply(mutant, workdir, ["hw"])
    return chip_sources(root / "hw" / "rtl", root / "hw" / "tb")


def make_broken_block(mutant: Mutant, sources: Sequence[Path], workdir: Path) -> list[Path]:
    """Copy hw/ under `workdir`, break it, and return a block test's `sources` (files of the
    working tree's hw/) in the copy."""
    root = apply(mutant, workdir, ["hw"])
    return [root / Path(source).relative_to(REPO_ROOT) for source in sources]
