"""The units of each RTL module: what a failure report can point at (verif.kit.failure_point).

Triage (verif/mutation/rtl_run.py) asks whether a caught mutant's report points at a unit of the
module it broke; sram and chip_top belong to every unit and are left out of that share."""

from __future__ import annotations

# the units a report names (model.chip.isa.UNIT_OF's, and the controller's own)
UNITS_OF_MODULE: dict[str, frozenset[str]] = {
    module: frozenset(units) for module, units in {
        "controller": {"controller"},
        "paged_geometry": {"controller", "dma"},
        "mem_if": {"controller", "dma"},
        "dma": {"dma"}, "pdma": {"dma"},
        "matrix_unit": {"mat"}, "tile_buffer": {"mat"}, "systolic_array": {"mat"},
        "pe": {"mat"}, "requant": {"mat"},
        "rowmem": {"sm", "dma"},
        "vector_unit": {"vec"},
        "softmax_unit": {"sm"}, "divu": {"sm"}, "exp_lut": {"sm"},
    }.items()}
SHARED_MODULES = ("sram", "chip_top")  # every unit's: left out of the share


def pointed_right(module: str, unit: str | None) -> bool | None:
    """True when ``unit`` is one of ``module``'s units (or the module itself), False when not
    (or no unit was named), None when the module is every unit's (it does not count)."""
    if module not in UNITS_OF_MODULE:
        if module in SHARED_MODULES:
            return None
        raise KeyError(f"module {module!r} has no units in verif/kit/units.py: add it "
                       f"to UNITS_OF_MODULE or SHARED_MODULES")
    return unit == module or unit in UNITS_OF_MODULE[module]


def share(records: list[dict]) -> tuple[int, int]:
    """(pointed at the right unit, counted) over the caught mutants' records."""
    counted = [r for r in records if r["counts_as_caught"] and r["triage"] is not None]
    return sum(r["triage"] for r in counted), len(counted)
