"""The fault campaign (verif/faults): its sites against the RTL read a second way, its sampling
against the sites' bits, and a short seeded campaign on both simulators whose verdicts agree
with each other and, for directed faults, with what the program itself says must happen."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from model.chip import machine
from model.chip.isa import LEN_OPS, ChipConfig, ErrorCode, disassemble
from model.paths import RTL_DIR
from verif.faults.campaign import run_faults
from verif.faults.classify import OUTCOMES
from verif.faults.items import Fault
from verif.faults.plan import chip_fault, plan, workloads
from verif.faults.sites import bits_per_unit, chip_registers, flip_flops
from verif.faults.workloads import DIRECTED_DATA, DIRECTED_LEN, Workload, directed_program

SEED = 1
# make test's sampled faults: chip state (mostly scratchpad words, as the bits are), flip-flops
# alone (their X and timing differ most between simulators), each stratum outside the chip
SHORT, FLIP_FLOPS, OUTSIDE = 12, 8, 4
RUNS = [*workloads(SEED, programs=1, decodes=((8, 12),)), Workload("directed")]
DIRECTED = len(RUNS) - 1
PC, EVENTS, IR = "u_controller.pc_reg", "u_controller.ev_instr", "u_controller.ir_reg"


def clocked_registers(source: str) -> set[str]:
    """The names a module assigns with `<=` inside `always @(posedge ...)` blocks (a plain
    reading of the source, independent of Yosys)."""
    names = set()
    for block in re.split(r"\balways\b", source)[1:]:
        if block.lstrip().startswith("@(posedge"):
            body = re.split(r"\b(?:always|assign|endmodule)\b", block)[0]
            names |= set(re.findall(r"\b([a-z_]\w*)\s*(?:\[[^\]]*\])?\s*<=", body))
    return names


@pytest.mark.parametrize("module,instance", [("controller", "u_controller"),
                                             ("softmax_unit", "u_softmax_unit")])
def test_the_sites_are_every_clocked_register_of_a_unit(module, instance):
    found = {r.name.split("[")[0] for r in flip_flops() if r.path.startswith(instance + ".")
             and r.module == module}  # its generate blocks' registers too (parity)
    assert found == clocked_registers((RTL_DIR / f"{module}.v").read_text())


def test_chip_faults_fall_on_each_unit_as_its_share_of_the_chips_bits():
    cfg, rng, draws = ChipConfig(), random.Random(SEED), 20_000
    bits = bits_per_unit(chip_registers(cfg))
    got = Counter(chip_fault(rng, 0, 100, cfg).unit for _ in range(draws))
    for unit, unit_bits in bits.items():
        expected = draws * unit_bits / sum(bits.values())
        assert abs(got[unit] - expected) <= 5 * expected**0.5 + 1, unit


def highest_touched(image) -> int:
    """One past every address any instruction names, scratchpad or external (a bound read
    from the program's fields alone)."""
    return max(max(i.a, i.b, i.c) + (i.length if i.op in LEN_OPS else 0)
               for i in disassemble(image))


def directed_faults() -> dict[str, Fault]:
    """Faults whose verdict the directed program fixes (cycles from the reference machine's
    trace: the VADD's first EXEC cycles, when the rows are loaded, the PC names the VADD and
    element 8 of each operand is not yet read, port A reading the first row and port B the
    second; its CHECK, when the rows are loaded and not yet read)."""
    image = directed_program()
    vadd = machine.run(image, ChipConfig(), trace=True).trace[1]
    cycle, above = vadd.exec_start + 1, highest_touched(image)
    unread = vadd.exec_start - 1
    return {"untouched scratchpad": Fault("scratchpad", "u_sram.mem", "sram", above, 7, cycle,
                                          DIRECTED),
            "unread external": Fault("external", "other data", "memory", above, 3, cycle,
                                     DIRECTED),
            "input before its LOAD": Fault("external", "other data", "memory",
                                           DIRECTED_DATA + DIRECTED_LEN // 2, 0, 0, DIRECTED),
            "program counter": Fault("flip-flop", PC, "controller", 0, 3, cycle, DIRECTED),
            "event counter": Fault("flip-flop", EVENTS, "controller", 0, 5, cycle, DIRECTED),
            "loaded word before its read": Fault("scratchpad", "u_sram.mem", "sram",
                                                 DIRECTED_LEN // 2, 2, unread, DIRECTED),
            "second operand before its read": Fault("scratchpad", "u_sram.mem", "sram",
                                                    DIRECTED_LEN + 8, 6, cycle, DIRECTED),
            "instruction register": Fault("flip-flop", IR, "controller", 0, 100, cycle,
                                          DIRECTED)}


def sampled_flip_flops(count: int) -> list[Fault]:
    """``count`` chip faults of the plan's draw that fall on flip-flops, on the random program."""
    cfg, rng = ChipConfig(), random.Random(SEED)
    cycles = machine.run(RUNS[0].item(cfg).image(), cfg).counters.total
    draws = (chip_fault(rng, 0, cycles, cfg) for _ in itertools.count())
    return list(itertools.islice((f for f in draws if f.model == "flip-flop"), count))


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory):
    """The short campaign on each simulator, its chunks' files in this process's own folder
    (xdist runs this module's tests, and so this fixture, on more than one worker)."""
    work = tmp_path_factory.mktemp("faults")
    _, sampled = plan(SEED, SHORT, OUTSIDE, RUNS)
    faults = [*sampled, *sampled_flip_flops(FLIP_FLOPS), *directed_faults().values()]
    return {sim: run_faults(sim, RUNS, faults, SEED, jobs=1, chunks=1,
                            root=work / sim).records
            for sim in ("icarus", "verilator")}


def directed_alone(sim: str, detection: bool, work: Path) -> dict[str, dict]:
    """The directed faults by themselves, on the directed program alone (files under ``work``)."""
    faults = [Fault(**{**f.as_dict(), "workload": 0}) for f in directed_faults().values()]
    return directed(run_faults(sim, [RUNS[DIRECTED]], faults, SEED, jobs=1, chunks=1,
                               root=work.resolve() / f"directed-{sim}-{detection}",
                               detection=detection).records)


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    """The directed faults on the chip without its parity checks (the `before` campaign's),
    on Icarus (its build takes seconds)."""
    return directed_alone("icarus", False, tmp_path_factory.mktemp("before"))


def directed(records: list[dict]) -> dict[str, dict]:
    return dict(zip(directed_faults(), records[-len(directed_faults()):], strict=True))


def test_icarus_and_verilator_classify_every_fault_alike(campaigns):
    assert campaigns["icarus"] == campaigns["verilator"]
    assert len(campaigns["verilator"]) == (SHORT + FLIP_FLOPS + 2 * OUTSIDE
                                           + len(directed_faults()))
    assert set(Counter(r["outcome"] for r in campaigns["verilator"])) <= set(OUTCOMES)


def test_a_scratchpad_word_the_program_never_touches_is_masked_but_latent(campaigns):
    record = directed(campaigns["verilator"])["untouched scratchpad"]
    assert (record["outcome"], record["latent"]) == ("masked", f"scratchpad[{record['index']}]")


def test_an_external_word_is_latent_unread_and_corrupts_read(campaigns):
    records = directed(campaigns["verilator"])
    unread = records["unread external"]
    assert (unread["outcome"], unread["latent"]) == ("masked", f"external[{unread['index']}]")
    assert records["input before its LOAD"]["outcome"] == "sdc"


def test_a_flipped_program_counter_is_never_masked_silently(campaigns):
    assert directed(campaigns["verilator"])["program counter"]["outcome"] != "masked"


CHECKED = ("event counter", "loaded word before its read", "second operand before its read",
           "instruction register")


@pytest.mark.parametrize("fault", CHECKED)
def test_each_parity_check_reports_its_flipped_bit_as_corruption(campaigns, fault):
    """The counters', the scratchpad's and the instruction register's parity (hw/ISA.md,
    "CORRUPTION"): the flip is reported, on both simulators."""
    for sim in ("icarus", "verilator"):
        record = directed(campaigns[sim])[fault]
        assert (record["outcome"], record["error"]) == ("detected", ErrorCode.CORRUPTION), sim


UNREAD = ("untouched scratchpad",)  # masked: no read port ever presents it


def test_the_parity_checks_report_their_flips_and_nothing_else(tmp_path):
    """The mutation run's fault stage (verif/mutation/rtl_run.py): the directed faults alone,
    with the checks on Verilator and without them on Icarus; a chip whose check is broken misses
    a flip, or reports a fault-free run (each golden run is compared first) or a word no unit
    read."""
    records = directed_alone("verilator", True, tmp_path)
    assert {name: (records[name]["outcome"], records[name]["error"]) for name in CHECKED} == {
        name: ("detected", ErrorCode.CORRUPTION) for name in CHECKED}
    assert [records[name]["outcome"] for name in UNREAD] == ["masked"] * len(UNREAD)
    without = directed_alone("icarus", False, tmp_path)
    assert all(without[name]["error"] != ErrorCode.CORRUPTION for name in without)


@pytest.mark.parametrize("fault", ["event counter", "loaded word before its read"])
def test_without_the_parity_checks_the_same_flip_is_a_silent_corruption(before, fault):
    """The `before` campaign's chip: the counter flip and the scratchpad flip that the checks
    report reach an output unreported."""
    assert before[fault]["outcome"] == "sdc"
