"""Simulation tests that share a build run in one simulator process: a pytest plugin.

A test declares its simulation with ``@pytest.mark.sim_job(launch=factory)`` and reads its own run
from the ``sim_run`` fixture. A group is the tests of one file on one simulator: the first to ask
launches the whole group, and under pytest-xdist a group goes to one worker whole."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace

import pytest
from xdist.scheduler import LoadScopeScheduling

from sim.mem_profile import IDEAL, PROFILES
from verif.runs.launch import DecodeRun, Launch, run_launches

BATCHED_DIST = ("load", "loadscope")  # the modes this plugin's scheduler replaces
_SIM_PARAM = re.compile(r"\[(icarus|verilator)[-\]]")


def scope_of(nodeid: str) -> str:
    """A simulation test's group: its file and simulator; any other test is its own group."""
    found = _SIM_PARAM.search(nodeid)
    if not found:
        return nodeid
    return f"{nodeid.split('::')[0]}::{found[1]}"


class SimScopeScheduling(LoadScopeScheduling):
    """xdist's load-scope scheduling, the scope of a test being ``scope_of`` its node id."""

    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log) -> SimScopeScheduling | None:
    """Load-scope scheduling by ``scope_of`` for the load modes (xdist's hook)."""
    if config.getvalue("dist") not in BATCHED_DIST:
        return None
    return SimScopeScheduling(config, log)


# ---- the plugin ---------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sim_job(launch): the test's simulation (the Launch "
                            "launch(node=..., **params) makes), shared with its group")
    config.pluginmanager.register(Batcher(config), "sim_batcher")


def launch_of(item: pytest.Item) -> Launch:
    """The test's Launch; a ``profile`` parameter becomes the memory profile's plusargs."""
    factory: Callable[..., Launch] = item.get_closest_marker("sim_job").kwargs["launch"]
    params = dict(item.callspec.params)
    profile = PROFILES[params.pop("profile", IDEAL)]
    launch = factory(node=item.nodeid, **params)
    if profile.ideal:
        return launch
    return replace(launch, plusargs=tuple(profile.plusargs(launch.seed)))


class Batcher:
    """The runs of this pytest process's simulation tests, launched a group at a time."""

    def __init__(self, config: pytest.Config):
        dist = config.getoption("dist", "no") if config.pluginmanager.has_plugin("xdist") \
            else "no"
        self.batched = dist == "no" or dist in BATCHED_DIST
        self.runs: dict[str, DecodeRun] = {}

    def run_for(self, item: pytest.Item) -> DecodeRun:
        if item.nodeid not in self.runs:
            group = [item]
            if self.batched:
                group = [other for other in item.session.items
                         if other.get_closest_marker("sim_job") is not None
                         and other.nodeid not in self.runs
                         and scope_of(other.nodeid) == scope_of(item.nodeid)]
            self.launch([(other.nodeid, launch_of(other)) for other in group])
        return self.runs[item.nodeid]

    def launch(self, launches: list[tuple[str, Launch]]) -> None:
        """One simulator process per build (and plusargs), in the group's order."""
        by_batch: dict[tuple, list[tuple[str, Launch]]] = defaultdict(list)
        for nodeid, launch in launches:
            by_batch[launch.batch].append((nodeid, launch))
        for members in by_batch.values():
            runs = run_launches([launch for _, launch in members])
            self.runs.update(zip((nodeid for nodeid, _ in members), runs, strict=True))


@pytest.fixture
def sim_run(request: pytest.FixtureRequest) -> DecodeRun:
    """This simulation test's own run (launched with its group)."""
    return request.config.pluginmanager.get_plugin("sim_batcher").run_for(request.node)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A batched test may launch its whole group: its wall-clock limit is the group's."""
    totals: dict[str, float] = defaultdict(float)
    batched = [item for item in items if item.get_closest_marker("sim_job") is not None]
    for item in batched:
        marker = item.get_closest_marker("timeout")
        totals[scope_of(item.nodeid)] += marker.args[0] if marker else 300
    for item in batched:
        item.add_marker(pytest.mark.timeout(totals[scope_of(item.nodeid)]), append=False)
