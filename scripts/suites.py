"""Regression suites: named lists of test x simulator x seed count.

A suite is a list of `Entry` lines. An entry names a pytest test (a folder, a file, or
file::function), optionally narrows it to some simulators and parameter ids (`ids=("W8",)`
keeps only the W8 case of a parametrized test), and caps its seeds: a test whose stimulus
does not depend on the seed (the structured model decodes greedily) runs once however many
seeds the regression asks for. To add a test to a suite, add one line.

    make regress SUITE=full SEEDS=20 JOBS=2

`select` is what the pytest plugin (scripts/regress_plugin.py) uses to keep a suite's tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from sim.toolchain import SIMULATORS

DECODES = "verif/tests/test_decode.py"
CHIP = "verif/tests/test_chip.py"
SERVING = "verif/tests/test_serving.py"
CHIP_GATHER = "verif/tests/test_chip_gather.py"
BLOCKS = "sim/tests/test_blocks.py"
SCALE = "scripts/tests/test_regress_scale.py"


@dataclass(frozen=True)
class Entry:
    """One line of a suite: a test, on some simulators, with at most `seeds` seeds."""

    test: str  # a pytest node id prefix: "model/tests", "file.py", "file.py::test_name"
    sims: tuple[str, ...] = SIMULATORS
    ids: tuple[str, ...] = ()  # parameter ids the case must have, e.g. ("W8",)
    seeds: int | None = None  # None: as many as --seeds; 1: the seed does not matter

    def matches(self, item: pytest.Item) -> bool:
        """Whether the collected test `item` is one of this entry's cases."""
        nodeid = item.nodeid
        if nodeid != self.test and not nodeid.startswith((f"{self.test}/", f"{self.test}::",
                                                         f"{self.test}[")):
            return False
        callspec = getattr(item, "callspec", None)
        sim = callspec.params.get("sim") if callspec is not None else None
        case_ids = nodeid.partition("[")[2].rstrip("]").split("-")
        return ((sim is None or sim in self.sims)
                and all(i in case_ids for i in self.ids)
                and (self.seeds is None or seed_index(item) < self.seeds))


def seed_index(item: pytest.Item) -> int:
    """0 for the first seed of a seeded test (and for a test without seeds), 1, 2, ...after."""
    marker = item.get_closest_marker("seed_index")  # set by conftest.py
    return marker.args[0] if marker else 0


CHAPTER = [  # make run's: the software checks, the three decodes, the RTL exercises, serving
    Entry("model/tests"),
    Entry(f"{DECODES}::test_chapter_decode", seeds=1),
    Entry(f"{DECODES}::test_page_size_decode", seeds=1),
    Entry(f"{DECODES}::test_sinks_decode", seeds=1),
    Entry(f"{SERVING}::test_serving_workload", seeds=1),
    Entry(f"{SERVING}::test_serving_batch_sweep", seeds=1),
    Entry(f"{CHIP_GATHER}::test_chip_gather_decodes_as_host_gather", seeds=1),
]

SUITES: dict[str, list[Entry]] = {
    "smoke": [
        Entry(f"{DECODES}::test_chapter_decode", ids=("W8",), seeds=1),
        Entry(f"{DECODES}::test_fork_decode", sims=("verilator",)),
        Entry(f"{CHIP}::test_error_paths_stop_the_chip_with_the_documented_code", seeds=1),
    ],
    "chapter": CHAPTER,
    "full": [
        *CHAPTER,
        Entry(f"{DECODES}::test_random_model_decodes"),
        Entry(f"{DECODES}::test_fork_decode"),
        Entry(f"{DECODES}::test_counter_mutant_fails_the_scoreboard", seeds=1),
        Entry(f"{DECODES}::test_requant_mutant_fails_the_scoreboard", seeds=1),
        Entry(f"{DECODES}::test_watchdog_stops_a_chip_that_never_finishes", seeds=1),
        Entry(f"{DECODES}::test_unknown_output_is_an_error", seeds=1),
        Entry(f"{CHIP}::test_random_programs_match_the_reference_machine"),
        Entry(f"{CHIP}::test_error_paths_stop_the_chip_with_the_documented_code", seeds=1),
        Entry("verif/tests/test_mem_profiles.py"),
        Entry("sim/tests"),
        Entry("verif/tests/test_decode_units.py"),
        Entry("verif/tests/test_write_monitor.py", seeds=1),
        Entry(CHIP_GATHER),
        Entry("verif/tests/test_code_coverage.py", seeds=1),
        Entry("model/tests"),
        Entry("scripts/tests"),
    ],
    "code-coverage": [  # Verilator line/branch/toggle closure (verif/TESTPLAN.md, "Code coverage"):
        # CODE_COVERAGE=1 make regress SUITE=code-coverage; python -m verif.code_coverage --check
        Entry(BLOCKS, sims=("verilator",), seeds=1),
        Entry(f"{CHIP}::test_random_programs_match_the_reference_machine", sims=("verilator",),
              seeds=1),
        Entry(f"{CHIP}::test_error_paths_stop_the_chip_with_the_documented_code",
              sims=("verilator",), seeds=1),
    ],
    "selftest": [  # a quick suite for the sharding test (scripts/tests/test_regress_scale.py)
        Entry(f"{SCALE}::test_a_shard_is_i_of_n"),
        Entry(f"{SCALE}::test_shards_are_deterministic_and_balanced"),
        Entry(f"{SCALE}::test_junit_addresses_are_pytests_own"),
        Entry("scripts/tests/test_reporting.py::test_rerun_commands_turn_waves_on_for_simulations_only"),
        Entry(f"{CHIP}::test_error_paths_stop_the_chip_with_the_documented_code",
              sims=("verilator",), seeds=1),
    ],
}


def select(suite: str, items: list[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """(kept, dropped): the collected tests that are in the suite, and the others."""
    entries = SUITES[suite]
    kept = [item for item in items if any(entry.matches(item) for entry in entries)]
    chosen = set(kept)
    return kept, [item for item in items if item not in chosen]
