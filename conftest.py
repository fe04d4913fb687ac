"""Seeds for the simulation tests: one by default, `--seeds N` for a regression.

A simulation test (marked `sim`) that takes a `seed` argument is parametrized with its seeds,
and the seed is part of its node id (`test_chapter_decode[icarus-W8-seed1]`), so parallel runs
of the same test with different seeds get different run folders. The first seed is RANDOM_SEED
if set, else the test module's DEFAULT_SEED, else 1; `--seeds N` adds the N - 1 seeds after
it. So the re-run command a failure prints (`RANDOM_SEED=7 pytest '...[icarus-W8-seed7]'`)
names a node that exists without --seeds. Each seed carries its position (`seed_index`, for the
suites' seed caps) and is a JUnit property of its test.
"""

from __future__ import annotations

import pytest

from sim.runner import seed_from_env


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--seeds", type=int, default=1, metavar="N",
                     help="run every seeded test with N seeds, from RANDOM_SEED (or the "
                          "module's DEFAULT_SEED) upwards")


def seeds_for(metafunc: pytest.Metafunc) -> list[int]:
    """The seeds one test function runs with."""
    first = seed_from_env(getattr(metafunc.module, "DEFAULT_SEED", 1))
    return [first + i for i in range(metafunc.config.getoption("seeds"))]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "seed_index(i): the seed is the i-th (from 0) of --seeds")


@pytest.hookimpl(trylast=True)  # after the markers: the seed ends the node id
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "seed" in metafunc.fixturenames and metafunc.definition.get_closest_marker("sim"):
        params = [pytest.param(seed, id=f"seed{seed}", marks=pytest.mark.seed_index(i))
                  for i, seed in enumerate(seeds_for(metafunc))]
        metafunc.parametrize("seed", params)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` first (a stable sort): under xdist they start early, instead of
    ending the run alone on one worker while the other waits."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_itemcollected(item: pytest.Item) -> None:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "seed" in callspec.params:
        item.user_properties.append(("seed", callspec.params["seed"]))
