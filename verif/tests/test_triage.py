"""Triage's map from RTL modules to the units a report can name (verif/kit/units.py)."""

from __future__ import annotations

import pytest

from model.chip.isa import UNIT_OF
from model.paths import RTL_DIR
from verif.kit import units
from verif.tests.test_blocks import unit_of_module


def test_every_rtl_module_has_its_units_or_is_every_units():
    modules = {path.stem for path in RTL_DIR.glob("*.v")}
    assert modules == set(units.UNITS_OF_MODULE) | set(units.SHARED_MODULES)


def test_the_units_are_those_reports_name():
    named = {*UNIT_OF.values(), "controller"}
    assert set().union(*units.UNITS_OF_MODULE.values()) == named


def test_a_report_points_right_only_at_one_of_the_modules_units():
    assert units.pointed_right("divu", "sm") is True
    assert units.pointed_right("rowmem", "rowmem") is True  # a block test names its module
    assert units.pointed_right("divu", "mat") is False
    assert units.pointed_right("divu", None) is False  # a report that named no unit
    assert units.pointed_right("sram", "dma") is None
    with pytest.raises(KeyError, match=r"no units in verif/kit/units\.py"):
        units.pointed_right("new_unit", "dma")


def test_a_block_names_its_one_unit_else_itself():
    assert unit_of_module("divu") == "sm"
    assert unit_of_module("rowmem") == "rowmem"  # three units share it
    assert unit_of_module("axi_checker") == "axi_checker"  # a testbench module


def test_the_share_counts_caught_mutants_of_modules_with_a_unit():
    records = [{"counts_as_caught": True, "triage": True},
               {"counts_as_caught": True, "triage": False},
               {"counts_as_caught": True, "triage": None},
               {"counts_as_caught": False, "triage": None}]
    assert units.share(records) == (1, 2)
