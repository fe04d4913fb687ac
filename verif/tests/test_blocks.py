"""A block test for every RTL module, and a smoke run of the whole chip, on both simulators.

Each block is one simulation per simulator with many vectors, constrained-random from the seed
(the `seed` argument, conftest.py: RANDOM_SEED, else DEFAULT_SEED below), which every failure
message names together with the failing vector.

- systolic_array, requant, exp_lut, divu, dma (`verif/blocks/datapath_cocotb.py`): checked
  against an independent Python computation of hw/ISA.md's definitions. `pe` has no test of its
  own: the systolic array is a grid of them, and its test checks every one's products and
  accumulation.
- sram, rowmem (`verif/blocks/sram_cocotb.py`, `rowmem_cocotb.py`): against a Python memory
  with the port behaviour their headers document (they hold words; `model/` has no arithmetic
  for them).
- matrix_unit, vector_unit, softmax_unit (`verif/blocks/<unit>_cocotb.py`, each wired to an SRAM by
  `hw/tb/<unit>_harness.v`): against the reference machine (`model.machine`) running the same
  instruction on the same scratchpad, and cycle-exact against `model.isa.exec_cycles`.
- pdma, the paged DMA (`verif/blocks/pdma_cocotb.py`, `hw/tb/pdma_harness.v`: pdma, mem_if,
  axi_ram, sram; paged_geometry and rowmem inside): the same, on both memories, BAD_PAGE included.
- mem_if, the memory interface unit (`verif/blocks/mem_if_cocotb.py`, `hw/tb/mem_if_harness.v`):
  against cocotbext-axi's AxiRam with a pause generator on every channel, the protocol checker
  on the port; hw/ISA.md's schedule in advancing cycles, exactly.
- axi_checker, the protocol checker (`verif/blocks/axi_checker_cocotb.py`,
  `hw/tb/axi_checker_harness.v`): negative tests, a deliberately broken port per rule
  (`hw/tb/axi_bad_manager.v`), each named with its exact cycle, channel and rule.
- controller (`verif/blocks/controller_cocotb.py`): through the whole chip, targeted programs (each
  opcode, each error code) against `model.machine.run`: memory, status and every counter.

The smoke test runs one hand-assembled program through `chip_harness`
(`verif/blocks/smoke_cocotb.py`); it shares the controller test's chip build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from model.isa import ChipConfig
from model.paths import RTL_DIR, TB_DIR
from sim.runner import build, rtl_sources, run_test
from sim.toolchain import SIMULATORS

BLOCKS_MODULE = "verif.blocks.datapath_cocotb"
SMOKE_MODULE = "verif.blocks.smoke_cocotb"
DEFAULT_SEED = 20240601


def rtl(*names: str) -> list:
    return [RTL_DIR / f"{name}.v" for name in names]


def harness(name: str) -> Path:
    return TB_DIR / f"{name}_harness.v"


# The controller's test and the smoke test share one chip build, smaller than the default chip
# (the pyuvm tests run that one): the fetch check's end of memory is 512 instructions away, the
# whole external memory is compared after every program, and the limits are not the defaults.
CHIP_CONFIG = ChipConfig(sram_words=1024, ext_words=2048)
MEMORY_TB = [TB_DIR / "axi_ram.v", TB_DIR / "axi_checker.v"]  # the AXI memory and its checker
CHIP_SOURCES = [*rtl_sources(), *MEMORY_TB, TB_DIR / "chip_harness.v"]
MATRIX_RTL = rtl("matrix_unit", "systolic_array", "pe", "requant", "rowmem", "sram")
SOFTMAX_RTL = rtl("softmax_unit", "exp_lut", "divu", "rowmem", "sram")

# toplevel, sources, parameters, cocotb module, cocotb test
BLOCKS = {
    "systolic_array": ("systolic_array", rtl("pe", "systolic_array"), {"ARRAY_N": 4},
                       BLOCKS_MODULE, "systolic_array_matches_numpy"),
    "requant": ("requant", rtl("requant"), {}, BLOCKS_MODULE, "requant_matches_the_formula"),
    "exp_lut": ("exp_lut", rtl("exp_lut"), {}, BLOCKS_MODULE, "exp_lut_matches_math_exp"),
    "divu": ("divu", rtl("divu"), {"DIV_W": 32}, BLOCKS_MODULE, "divu_matches_python"),
    "dma": ("dma_harness", [*rtl("dma", "mem_if", "sram"), *MEMORY_TB, harness("dma")],
            {"SRAM_WORDS": 4096, "EXT_WORDS": 16384, "EXT_LAT": 3},
            BLOCKS_MODULE, "dma_moves_words_in_the_documented_cycles"),
    "matrix_unit": ("matrix_unit_harness", [*MATRIX_RTL, harness("matrix_unit")],
                    {"ARRAY_N": 4, "K_MAX": 64, "SRAM_WORDS": 4096},
                    "verif.blocks.matrix_unit_cocotb",
                    "matrix_unit_matches_the_reference_machine"),
    "softmax_unit": ("softmax_unit_harness", [*SOFTMAX_RTL, harness("softmax_unit")],
                     {"SRAM_WORDS": 4096, "SM_MAX": 256}, "verif.blocks.softmax_unit_cocotb",
                     "softmax_unit_matches_the_reference_machine"),
    "sram": ("sram", rtl("sram"), {"SRAM_WORDS": 4096}, "verif.blocks.sram_cocotb",
             "sram_reads_first_and_keeps_every_word"),
    "rowmem": ("rowmem", rtl("rowmem"), {"WIDTH": 16, "DEPTH": 256},
               "verif.blocks.rowmem_cocotb",
               "rowmem_reads_combinationally_and_writes_on_the_edge"),
    "vector_unit": ("vector_unit_harness", [*rtl("vector_unit", "sram"), harness("vector_unit")],
                    {"SRAM_WORDS": 4096}, "verif.blocks.vector_unit_cocotb",
                    "vector_unit_matches_the_reference_machine"),
    "pdma": ("pdma_harness", [*rtl("pdma", "paged_geometry", "rowmem", "sram", "mem_if"),
                              *MEMORY_TB, harness("pdma")],
             {"SRAM_WORDS": 1024, "EXT_WORDS": 4096, "EXT_LAT": 3},
             "verif.blocks.pdma_cocotb", "pdma_matches_the_reference_machine"),
    # READS_MAX = 4, the least EXT_LAT = 2 allows: the stimulus reaches the limit
    "mem_if": ("mem_if_harness", [*rtl("mem_if"), TB_DIR / "axi_checker.v", harness("mem_if")],
               {"EXT_LAT": 2, "READS_MAX": 4}, "verif.blocks.mem_if_cocotb",
               "mem_if_keeps_the_ideal_schedule_on_a_pausing_axi_ram"),
    # no RTL module: the header names hw/rtl as an include folder (sim.runner.include_dirs)
    "axi_checker": ("axi_checker_harness", [RTL_DIR / "chip_defs.vh", TB_DIR / "axi_checker.v",
                                            TB_DIR / "axi_bad_manager.v",
                                            harness("axi_checker")], {},
                    "verif.blocks.axi_checker_cocotb", "axi_checker_names_each_broken_rule"),
    "controller": ("chip_harness", CHIP_SOURCES, CHIP_CONFIG.verilog_parameters(),
                   "verif.blocks.controller_cocotb",
                   "controller_runs_each_opcode_and_stops_on_each_error"),
}


@pytest.mark.sim
@pytest.mark.timeout(600)
@pytest.mark.parametrize("sim", SIMULATORS)
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_block(block, sim, seed):
    toplevel, sources, parameters, module, testcase = BLOCKS[block]
    b = build(sim, toplevel, sources, parameters=parameters)
    run_test(b, module, testcase=testcase, seed=seed)


@pytest.mark.sim
@pytest.mark.timeout(600)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chip_smoke(sim, seed):
    b = build(sim, "chip_harness", CHIP_SOURCES, parameters=CHIP_CONFIG.verilog_parameters())
    run_test(b, SMOKE_MODULE, testcase="chip_runs_a_hand_assembled_program",
             seed=seed)
