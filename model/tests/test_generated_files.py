"""The generated HDL-side files are fresh, and the documents that restate them agree.

Every file `python -m model.chip.rtl_defs` writes (the RTL header hw/rtl/chip_defs.vh, the exp table
module hw/rtl/exp_lut.v, the GTKWave translate filters) must be exactly what it writes from
today's Python definitions; hw/ISA.md's tables of the counters bus and of the parameters must
say what those definitions say. No simulator is needed.
"""

from __future__ import annotations

import re
from itertools import takewhile

import pytest

from model.chip.isa import N_OPCODES, PARAMETER_RANGES, ChipConfig
from model.chip.machine import COUNTER_FIELDS, COUNTERS_W, Counters, counter_fields_at
from model.chip.rtl_defs import GENERATED, HW_DIR

ISA_MD = HW_DIR / "ISA.md"
SAVE_FILE = HW_DIR / "gtkwave" / "chip.gtkw"
REPO_ROOT = HW_DIR.parent


@pytest.mark.parametrize("path", sorted(GENERATED), ids=lambda p: p.name)
def test_the_committed_file_is_what_the_generator_writes(path):
    assert path.read_text() == GENERATED[path](), "re-run `python -m model.chip.rtl_defs`"


def test_the_save_file_uses_the_generated_filters():
    """chip.gtkw's `^N path` lines name generated filters (paths from the repository root)."""
    filters = re.findall(r"^\^\d+ (\S+)$", SAVE_FILE.read_text(), flags=re.MULTILINE)
    assert filters, "chip.gtkw installs no translate filter"
    assert {REPO_ROOT / path for path in filters} <= set(GENERATED)


def _table_rows(heading: str) -> list[list[str]]:
    """The body rows of the first table after `heading` in hw/ISA.md, cells without backticks."""
    after = ISA_MD.read_text().split(heading, 1)[1]
    lines = after[after.index("\n|") + 1 :].splitlines()
    table = list(takewhile(lambda line: line.startswith("|"), lines))
    return [[cell.strip().strip("`") for cell in line.strip("|").split("|")] for line in table[2:]]


def test_isa_md_lays_out_the_counters_bus_as_the_model_does():
    rows = _table_rows("### Counters")
    described = [(name, bits) for name, _, bits, _ in rows]
    layout = [(f.hw_name, f"[{f.lsb + f.bits - 1}:{f.lsb}]") for f in COUNTER_FIELDS]
    assert described == layout, "update hw/ISA.md's Counters table"
    assert f"`COUNTERS_W` = {COUNTERS_W}" in ISA_MD.read_text()


def test_isa_md_gives_the_parameters_defaults_and_ranges():
    rows = _table_rows("## Sizes")
    defaults = ChipConfig().verilog_parameters()
    expected = [(name, str(defaults[name]), f"{low} .. {high}")
                for name, (low, high) in PARAMETER_RANGES.items()]
    assert [(name, default, legal) for name, default, legal, _ in rows] == expected


def test_chip_config_refuses_a_parameter_outside_its_range():
    with pytest.raises(ValueError, match=r"K_MAX=1 is outside its range 2\.\.255"):
        ChipConfig(k_max=1)


def test_the_bus_round_trips_and_names_the_counter_of_a_bit():
    counters = Counters(total=2**32 - 1, sat=7, ops=tuple(range(1, N_OPCODES + 1)), sm_range=255,
                        pt_words=2**32 - 1)
    assert Counters.from_packed(counters.packed()) == counters
    assert counters.packed() < 2**COUNTERS_W
    sm = next(f for f in COUNTER_FIELDS if f.name == "sm")
    assert [f.hw_name for f in counter_fields_at([sm.lsb, sm.lsb + 31])] == ["cnt_sm"]
    assert sm.digits("x" * 8 + "1" * (COUNTERS_W - 8)) == "1" * 32
