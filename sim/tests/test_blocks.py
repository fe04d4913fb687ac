"""The chip's blocks and a smoke run of the whole chip, on both simulators.

Each block is one simulation per simulator with many vectors, checked against an independent
Python computation (`sim/tests/blocks_cocotb.py`). The smoke test runs one hand-assembled
program through `chip_harness` (`sim/tests/smoke_cocotb.py`). The seed comes from the `seed`
argument (conftest.py: RANDOM_SEED, else DEFAULT_SEED below) and is printed in every failure
message.
"""

from __future__ import annotations

import pytest

from model.exp_table import RTL_PATH, render_verilog
from sim.runner import RTL_DIR, TB_DIR, build, rtl_sources, run_test
from sim.toolchain import SIMULATORS

BLOCKS_MODULE = "sim.tests.blocks_cocotb"
SMOKE_MODULE = "sim.tests.smoke_cocotb"
DEFAULT_SEED = 20240601


def rtl(*names: str) -> list:
    return [RTL_DIR / f"{name}.v" for name in names]


# toplevel, sources, parameters, cocotb test
BLOCKS = {
    "systolic_array": ("systolic_array", rtl("pe", "systolic_array"), {"ARRAY_N": 4},
                       "systolic_array_matches_numpy"),
    "requant": ("requant", rtl("requant"), {}, "requant_matches_the_formula"),
    "exp_lut": ("exp_lut", rtl("exp_lut"), {}, "exp_lut_matches_math_exp"),
    "divu": ("divu", rtl("divu"), {"DIV_W": 32}, "divu_matches_python"),
    "dma": ("dma_harness", [*rtl("dma", "sram"), TB_DIR / "ext_mem.v", TB_DIR / "dma_harness.v"],
            {"SRAM_WORDS": 4096, "EXT_WORDS": 16384, "EXT_LAT": 3},
            "dma_moves_words_in_the_documented_cycles"),
}


def test_exp_lut_is_the_generated_file():
    """hw/rtl/exp_lut.v is exactly what `python -m model.exp_table` writes."""
    assert RTL_PATH.read_text() == render_verilog(), "re-run `python -m model.exp_table`"


@pytest.mark.sim
@pytest.mark.timeout(600)
@pytest.mark.parametrize("sim", SIMULATORS)
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_block(block, sim, seed):
    toplevel, sources, parameters, testcase = BLOCKS[block]
    b = build(sim, toplevel, sources, parameters=parameters)
    run_test(b, BLOCKS_MODULE, testcase=testcase, seed=seed)


@pytest.mark.sim
@pytest.mark.timeout(600)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chip_smoke(sim, seed):
    sources = [*rtl_sources(), TB_DIR / "ext_mem.v", TB_DIR / "chip_harness.v"]
    b = build(sim, "chip_harness", sources, parameters={"EXT_LAT": 2, "ARRAY_N": 4})
    run_test(b, SMOKE_MODULE, testcase="chip_runs_a_hand_assembled_program",
             seed=seed)
