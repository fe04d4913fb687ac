"""A block test for every RTL module, and a smoke run of the whole chip, on both simulators.

Each block is one simulation per simulator with many vectors, constrained-random from the seed
(the `seed` argument, conftest.py: RANDOM_SEED, else DEFAULT_SEED below), which every failure
message names together with the failing vector.

- systolic_array, requant, exp_lut, divu, dma (`verif/tests/blocks/datapath_cocotb.py`): checked
  against an independent Python computation of hw/ISA.md's definitions. `pe` has no test of its
  own: the systolic array is a grid of them, and its test checks every one's products and
  accumulation. Nor has `tile_buffer`: the matrix unit's test fills its 2 * ARRAY_N buffers
  through every write pattern (whole and partial wide reads, a word per buffer) and checks what
  they feed the array, every result and cycle.
- sram, rowmem (`verif/tests/blocks/sram_cocotb.py`, `rowmem_cocotb.py`): against a Python memory
  with the port behaviour their headers document (they hold words; `model/` has no arithmetic
  for them).
- matrix_unit, vector_unit, softmax_unit (`verif/blocks/<unit>_cocotb.py`, each wired to an SRAM by
  `hw/tb/<unit>_harness.v`): against the reference machine (`model.chip.machine`) running the same
  instruction on the same scratchpad, and cycle-exact against `model.chip.isa.exec_cycles`.
- pdma, the paged DMA (`verif/tests/blocks/pdma_cocotb.py`, `hw/tb/pdma_harness.v`: pdma, mem_if,
  axi_ram, sram; paged_geometry and rowmem inside): the same, on both memories, BAD_PAGE included.
- mem_if, the memory interface unit (`verif/tests/blocks/mem_if_cocotb.py`,
`hw/tb/mem_if_harness.v`):
  against cocotbext-axi's AxiRam with a pause generator on every channel, the protocol checker
  on the port; hw/ISA.md's schedule in advancing cycles, exactly.
- axi_checker, the protocol checker (`verif/tests/blocks/axi_checker_cocotb.py`,
  `hw/tb/axi_checker_harness.v`): negative tests, a deliberately broken port per rule
  (`hw/tb/axi_bad_manager.v`), each named with its exact cycle, channel and rule.
- controller (`verif/tests/blocks/controller_cocotb.py`): through the whole chip, targeted programs
(each
  opcode, each error code) against `model.chip.machine.run`: memory, status and every counter.

The smoke test runs one hand-assembled program through `chip_harness`
(`verif/tests/blocks/smoke_cocotb.py`); it shares the controller test's chip build.

A failure names the first wrong word with the unit, the cycle it was written in (each harness
logs its writes: hw/tb/write_log.v) and its inputs, and leaves that point in the run folder
(verif/tests/blocks/command.py). The negative test breaks the vector unit in a known element and
checks that the point is exactly there.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from model.chip.arith import sat8
from model.chip.isa import DIV_W, QUO_W, ChipConfig, exec_cycles
from model.chip.machine import int8_of
from model.paths import RTL_DIR, TB_DIR
from sim.runner import (
    CLOCK_NS,
    SimulationFailed,
    build,
    default_test_dir,
    failure_stop_ns,
    rtl_sources,
    run_test,
)
from sim.toolchain import SIMULATORS
from verif.kit.failure_point import POINT_FILE, FailurePoint, read_point, write_point
from verif.kit.units import UNITS_OF_MODULE
from verif.tests.blocks.command import DONE_MARGIN
from verif.tests.blocks.vector_unit_cocotb import KNOWN_VADD, known_operands
from verif.tests.broken_chips import RTL_MUTANTS, VADD_FAULT_ELEMENT, make_broken_block

BLOCKS_MODULE = "verif.tests.blocks.datapath_cocotb"
SMOKE_MODULE = "verif.tests.blocks.smoke_cocotb"
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
EXT_MEMORY_TB = [*MEMORY_TB, TB_DIR / "ext_memory.v"]  # a DMA unit's memory side
WRITE_LOG = [TB_DIR / "event_log.v", TB_DIR / "write_log.v"]  # a harness's log of a write port
CHIP_SOURCES = [*rtl_sources(), *MEMORY_TB, TB_DIR / "chip_harness.v"]
MATRIX_RTL = rtl("matrix_unit", "tile_buffer", "systolic_array", "pe", "requant", "sram")
SOFTMAX_RTL = rtl("softmax_unit", "exp_lut", "divu", "rowmem", "sram")

# toplevel, sources, parameters, cocotb module, cocotb test
BLOCKS = {
    "systolic_array": ("systolic_array", rtl("pe", "systolic_array"), {"ARRAY_N": 4},
                       BLOCKS_MODULE, "systolic_array_matches_numpy"),
    "requant": ("requant", rtl("requant"), {}, BLOCKS_MODULE, "requant_matches_the_formula"),
    "exp_lut": ("exp_lut", rtl("exp_lut"), {}, BLOCKS_MODULE, "exp_lut_matches_math_exp"),
    "divu": ("divu", rtl("divu"), {"DIV_W": DIV_W, "QUO_W": QUO_W}, BLOCKS_MODULE,
             "divu_matches_python"),
    "dma": ("dma_harness", [*rtl("dma", "mem_if", "sram"), *EXT_MEMORY_TB, *WRITE_LOG,
                            harness("dma")],
            {"SRAM_WORDS": 4096, "EXT_WORDS": 16384, "EXT_LAT": 3},
            BLOCKS_MODULE, "dma_moves_words_in_the_documented_cycles"),
    "matrix_unit": ("matrix_unit_harness", [*MATRIX_RTL, *WRITE_LOG, harness("matrix_unit")],
                    {"ARRAY_N": 4, "K_MAX": 64, "SRAM_WORDS": 4096},
                    "verif.tests.blocks.matrix_unit_cocotb",
                    "matrix_unit_matches_the_reference_machine"),
    "softmax_unit": ("softmax_unit_harness", [*SOFTMAX_RTL, *WRITE_LOG, harness("softmax_unit")],
                     {"SRAM_WORDS": 4096, "SM_MAX": 256}, "verif.tests.blocks.softmax_unit_cocotb",
                     "softmax_unit_matches_the_reference_machine"),
    "sram": ("sram", rtl("sram"), {"SRAM_WORDS": 4096, "LANES": 4},
             "verif.tests.blocks.sram_cocotb",
             "sram_reads_first_and_keeps_every_word"),
    "rowmem": ("rowmem", rtl("rowmem"), {"WIDTH": 16, "DEPTH": 256},
               "verif.tests.blocks.rowmem_cocotb",
               "rowmem_reads_combinationally_and_writes_on_the_edge"),
    "vector_unit": ("vector_unit_harness", [*rtl("vector_unit", "sram"), *WRITE_LOG,
                                            harness("vector_unit")],
                    {"SRAM_WORDS": 4096}, "verif.tests.blocks.vector_unit_cocotb",
                    "vector_unit_matches_the_reference_machine"),
    "pdma": ("pdma_harness", [*rtl("pdma", "paged_geometry", "rowmem", "sram", "mem_if"),
                              *EXT_MEMORY_TB, *WRITE_LOG, harness("pdma")],
             {"SRAM_WORDS": 1024, "EXT_WORDS": 4096, "EXT_LAT": 3},
             "verif.tests.blocks.pdma_cocotb", "pdma_matches_the_reference_machine"),
    # READS_MAX = 4, the least EXT_LAT = 2 allows: the stimulus reaches the limit
    "mem_if": ("mem_if_harness", [*rtl("mem_if"), TB_DIR / "axi_checker.v", harness("mem_if")],
               {"EXT_LAT": 2, "READS_MAX": 4}, "verif.tests.blocks.mem_if_cocotb",
               "mem_if_keeps_the_ideal_schedule_on_a_pausing_axi_ram"),
    # no RTL module: the header names hw/rtl as an include folder (sim.runner.include_dirs)
    "axi_checker": ("axi_checker_harness", [RTL_DIR / "chip_defs.vh", TB_DIR / "axi_checker.v",
                                            TB_DIR / "axi_bad_manager.v",
                                            harness("axi_checker")], {},
                    "verif.tests.blocks.axi_checker_cocotb", "axi_checker_names_each_broken_rule"),
    "controller": ("chip_harness", CHIP_SOURCES, CHIP_CONFIG.verilog_parameters(),
                   "verif.tests.blocks.controller_cocotb",
                   "controller_runs_each_opcode_and_stops_on_each_error"),
}


def unit_of_module(module: str) -> str:
    """The one unit a module belongs to, else (shared, or not a chip module) its own name."""
    units = UNITS_OF_MODULE.get(module, frozenset())
    return next(iter(units)) if len(units) == 1 else module


@pytest.mark.sim
@pytest.mark.timeout(600)
@pytest.mark.parametrize("sim", SIMULATORS)
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_block(block, sim, seed):
    toplevel, sources, parameters, module, testcase = BLOCKS[block]
    b = build(sim, toplevel, sources, parameters=parameters)
    run_dir = default_test_dir(b, seed)
    (run_dir / POINT_FILE).unlink(missing_ok=True)  # an earlier run's
    try:
        run_test(b, module, testcase=testcase, seed=seed, test_dir=run_dir)
    except SimulationFailed:
        name_the_block(block, run_dir)
        raise


def name_the_block(block: str, run_dir: Path) -> None:
    """A failing block test whose cocotb test placed no failure point (the datapath blocks
    check each vector as it comes out, and name the vector in their message) still names its
    unit (verif.kit.units) and the cycle its check failed in: when the test stopped."""
    if read_point(run_dir) is None:
        stop_ns = failure_stop_ns(run_dir / "results.xml")
        cycle = None if stop_ns is None else int(stop_ns // CLOCK_NS)
        write_point(run_dir, FailurePoint(unit=unit_of_module(block), cycle=cycle,
                                          time_ns=stop_ns, where=f"block {block}"))


@pytest.mark.sim
@pytest.mark.timeout(600)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_chip_smoke(sim, seed):
    b = build(sim, "chip_harness", CHIP_SOURCES, parameters=CHIP_CONFIG.verilog_parameters())
    run_test(b, SMOKE_MODULE, testcase="chip_runs_a_hand_assembled_program",
             seed=seed)


def broken_vector_unit(mutant: str, tmp_path: Path, seed: int) -> tuple[FailurePoint, str]:
    """Run the vector unit's block test on a copy broken by `mutant` (Icarus): it must fail,
    and leave a failure point in its run folder. Returns the point and the failure message."""
    toplevel, sources, parameters, module, testcase = BLOCKS["vector_unit"]
    broken = make_broken_block(RTL_MUTANTS[mutant], sources, tmp_path)
    run_dir = tmp_path / "run"
    with pytest.raises(SimulationFailed):
        run_test(build("icarus", toplevel, broken, parameters=parameters), module,
                 testcase=testcase, seed=seed, test_dir=run_dir)
    point = read_point(run_dir)
    assert point is not None, f"no failure point in {run_dir}"
    assert point.time_ns is not None and point.time_ns % CLOCK_NS == 0  # a cycle's edge
    failure = ET.parse(run_dir / "results.xml").find(".//testcase/failure")
    assert failure is not None and failure.get("type") == "LocatedError", failure
    return point, failure.get("message", "")


@pytest.mark.sim
@pytest.mark.timeout(120)
def test_a_broken_datapath_block_names_its_unit_the_cycle_and_the_vector(tmp_path, seed):
    """The divider's quotient is off by one (divider_quotient_off_by_one): its block test fails
    at its first vector's done, and the point names the softmax unit (the divider's) and the
    cycle the check failed in; the message names the operands."""
    toplevel, sources, parameters, module, testcase = BLOCKS["divu"]
    broken = make_broken_block(RTL_MUTANTS["divider_quotient_off_by_one"], sources, tmp_path)
    run_dir = tmp_path / "run"
    with pytest.raises(SimulationFailed):
        run_test(build("icarus", toplevel, broken, parameters=parameters), module,
                 testcase=testcase, seed=seed, test_dir=run_dir)
    name_the_block("divu", run_dir)
    point = read_point(run_dir)
    stop_ns = failure_stop_ns(run_dir / "results.xml")
    assert (point.unit, point.where, point.time_ns) == ("sm", "block divu", stop_ns)
    assert point.cycle == stop_ns // CLOCK_NS and point.cycle > QUO_W, "after a division's stages"
    message = ET.parse(run_dir / "results.xml").find(".//testcase/failure").get("message", "")
    assert re.search(r"\d+ / \d+: want \(\d+, \d+\), got \(\d+, \d+\)", message), message


@pytest.mark.sim
@pytest.mark.timeout(120)
def test_a_broken_vector_unit_is_located_at_its_fault(tmp_path, seed):
    """VADD writes element k wrong (vadd_flips_one_element): the run fails at its first case,
    KNOWN_VADD, named with unit vec, the cycle hw/ISA.md's schedule writes element k in
    (k + 1), the word c + k with both values, and its operands a[k] and b[k]; the run folder
    keeps the same point."""
    point, message = broken_vector_unit("vadd_flips_one_element", tmp_path, seed)
    k, vadd = VADD_FAULT_ELEMENT, KNOWN_VADD
    a, b = (int(int8_of(words)[k]) for words in known_operands(vadd.length))
    right = int(sat8(a + b)) & 0xFFFFFFFF
    assert (point.unit, point.cycle, point.instruction, point.pc) == ("vec", k + 1, str(vadd), None)
    assert point.where == f"seed {seed}: case 0 (known inputs)"
    assert message.startswith(f"seed {seed}: case 0 (known inputs): {vadd}: different value: "
                              f"sram word {vadd.c + k}: the reference machine wrote "
                              f"{right:#010x}, the unit wrote {right ^ 1:#010x}\n"), message
    assert f"\n  at: unit vec, cycle {k + 1} (at {point.time_ns:g} ns)\n" in message
    assert message.endswith(f"\n  inputs: a[{k}] = {a} (sram word {vadd.a + k}), "
                            f"b[{k}] = {b} (sram word {vadd.b + k})"), message


@pytest.mark.sim
@pytest.mark.timeout(120)
def test_a_vector_unit_that_never_finishes_is_located_where_the_test_gave_up(tmp_path, seed):
    """done never rises (vector_done_never_rises): the first case fails at the cycle the test
    gives up, DONE_MARGIN past KNOWN_VADD's documented busy cycles, named with unit vec."""
    point, message = broken_vector_unit("vector_done_never_rises", tmp_path, seed)
    limit = exec_cycles(KNOWN_VADD, ChipConfig()) + DONE_MARGIN
    assert (point.unit, point.cycle, point.instruction) == ("vec", limit, str(KNOWN_VADD))
    assert point.where == f"seed {seed}: case 0 (known inputs)"
    assert message == (f"seed {seed}: case 0 (known inputs): {KNOWN_VADD}: cmd_vadd: done did "
                       f"not rise by cycle {limit}\n  at: unit vec, cycle {limit} "
                       f"(at {point.time_ns:g} ns)")
