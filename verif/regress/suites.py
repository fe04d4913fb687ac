"""Regression suites: named lists of test x simulator x seed count; adding a test is one line.

An `Entry` names a test (a folder, file or file::function), optionally narrowed to simulators and
parameter ids, and caps its seeds (a test whose stimulus ignores the seed runs once)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from sim.toolchain import SIMULATORS

DECODES = "verif/tests/test_decode.py"
CHIP = "verif/tests/test_chip.py"
SERVING = "verif/tests/test_serving.py"
CHIP_GATHER = "verif/tests/test_chip_gather.py"
TRAINED = "verif/tests/test_trained_decode.py"
BLOCKS = "verif/tests/test_blocks.py"
SCALE = "verif/tests/test_regress_scale.py"
MEM_PROFILES = "verif/tests/test_mem_profiles.py"


@dataclass(frozen=True)
class Entry:
    """One line of a suite: a test, on some simulators, with at most `seeds` seeds."""

    test: str  # a pytest node id prefix: "model/tests", "file.py", "file.py::test_name"
    sims: tuple[str, ...] = SIMULATORS
    ids: tuple[str, ...] = ()  # parameter ids the case must have, e.g. ("W8",)
    seeds: int | None = None  # None: as many as --seeds; 1: the seed does not matter

    def matches(self, item: pytest.Item) -> bool:
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


# make run's suite: the chapter's decodes and the flows beyond them (the longest first), then the
# chapter's own checks (its six tests) and its exercises' checks, not all of model/tests
PAGED, HOST, TINY_LM = "model/tests/test_paged.py", "model/tests/test_host.py", \
    "model/tests/test_tiny_lm.py"
CHAPTER = [
    Entry(f"{SERVING}::test_serving_workload", seeds=1),
    Entry(f"{SERVING}::test_serving_batch_sweep", seeds=1),
    Entry(f"{DECODES}::test_chapter_decode", seeds=1),
    Entry(f"{DECODES}::test_page_size_decode", seeds=1),  # exercise 1
    Entry(f"{DECODES}::test_sinks_decode", seeds=1),  # exercise 3
    Entry(f"{CHIP_GATHER}::test_chip_gather_decodes_as_host_gather", seeds=1),
    Entry(f"{MEM_PROFILES}::test_chapter_decode_under_a_memory_profile", seeds=1),
    Entry(TRAINED, seeds=1),  # the trained model's decodes (issue 23), greedy and forced
    # (1) the page table against a shadow model under random operations
    Entry(f"{PAGED}::test_random_operations_match_the_shadow"),
    Entry("model/tests/test_paged_stateful.py"),
    # (2) exhaustion raises OutOfPages and changes nothing
    Entry(f"{PAGED}::test_exhaustion_raises_at_the_seventh_row_and_changes_nothing"),
    Entry(f"{PAGED}::test_random_operations_match_the_shadow_when_the_pool_runs_out"),
    # (3) the pages in use follow the window rule
    Entry(f"{PAGED}::test_pages_in_use_follow_the_window_rule_exactly"),
    Entry(f"{HOST}::test_pages_in_use_follow_the_window_rule_exactly"),
    # (4) the paged host and a plain host give the same integers
    Entry(f"{HOST}::test_paged_host_equals_plain_host_in_every_integer"),
    # (5) the window is a window
    Entry(f"{TINY_LM}::test_a_window_at_least_as_long_as_the_context_is_full_attention"),
    Entry(f"{TINY_LM}::test_a_window_of_3_changes_a_random_model"),
    Entry(f"{TINY_LM}::test_windowed_step_equals_a_recomputation_over_exactly_the_last_w_tokens"),
    Entry(f"{HOST}::test_chip_follows_the_windowed_float_reference"),
    # (6) the structured model follows its rule under every window
    Entry(f"{TINY_LM}::test_structured_model_follows_the_rule_under_every_window"),
    Entry(f"{HOST}::test_structured_model_follows_the_rule_on_the_chip"),
    # exercises 2 (admission), 3 (sinks) and 4 (prefix alignment); 5 is the mutation run
    Entry("model/tests/test_admission.py"),
    Entry("model/tests/test_sinks.py"),
    Entry("model/tests/test_prefix_alignment.py"),
]

SUITES: dict[str, list[Entry]] = {
    "smoke": [
        Entry(f"{DECODES}::test_chapter_decode", ids=("W8",), seeds=1),
        Entry(f"{DECODES}::test_fork_decode", sims=("verilator",)),
        Entry(f"{CHIP}::test_error_paths_stop_the_chip_with_the_documented_code", seeds=1),
    ],
    "chapter": CHAPTER,
    "full": [Entry("model/tests"), Entry("sim/tests"), Entry("verif/tests")],  # every test
    "code-coverage": [  # Verilator line/branch/toggle closure (verif/TESTPLAN.md, "Code coverage"):
        # CODE_COVERAGE=1 make regress SUITE=code-coverage, then
        # python -m scripts.coverage code --check
        Entry(BLOCKS, sims=("verilator",), seeds=1),
        Entry(f"{CHIP}::test_random_programs_match_the_reference_machine", sims=("verilator",),
              seeds=1),
        Entry(f"{CHIP}::test_error_paths_stop_the_chip_with_the_documented_code",
              sims=("verilator",), seeds=1),
    ],
    "tiny": [  # the regression machinery's own tests (Dask, shards): four quick pure-Python
        # tests and one decode, which writes functional coverage for the reports to merge
        Entry(f"{SCALE}::test_a_shard_is_i_of_n"),
        Entry(f"{SCALE}::test_shards_are_deterministic_and_balanced"),
        Entry(f"{SCALE}::test_junit_addresses_are_pytests_own"),
        Entry("verif/tests/test_reporting.py::"
              "test_rerun_commands_turn_waves_on_for_simulations_only"),
        Entry(f"{DECODES}::test_fork_decode", sims=("verilator",), seeds=1),
    ],
}
FULL_LENGTH_SUITES = ("full",)  # suites whose flows run at full length on every simulator


def suite_paths(suite: str) -> list[str]:
    """The files and folders of a suite's tests, in order: collecting only those starts faster."""
    return list(dict.fromkeys(entry.test.split("::")[0] for entry in SUITES[suite]))


def select(suite: str, items: list[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """(kept, dropped): the collected tests that are in the suite, and the others."""
    entries = SUITES[suite]
    kept = [item for item in items if any(entry.matches(item) for entry in entries)]
    chosen = set(kept)
    return kept, [item for item in items if item not in chosen]
