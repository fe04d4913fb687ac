"""Many tests in one simulator process (verif/runs/batching.py, verif.runs.launch.run_launches).

The groups: a simulation test's scope is its file and simulator, so the tests of one file on one
simulator share a process and nothing else does. A crash: when a job ends the process, the jobs
it finished keep their results, the job itself fails with a message that names it and says
what happened, and every job after it is run again alone and passes on its own.
"""

from __future__ import annotations

import json

import pytest

from sim.runner import JOBS_FILE
from sim.toolchain import SIMULATORS
from verif.runs.batching import scope_of
from verif.runs.launch import chip_build, decode_launch, launch, run_launches
from verif.runs.plans import SHORT_PLAN

DECODES = "verif/tests/test_decode.py"


def test_a_group_is_one_file_on_one_simulator():
    icarus = {scope_of(f"{DECODES}::test_chapter_decode[icarus-W{w}-seed1]") for w in (4, 8)}
    assert icarus == {f"{DECODES}::icarus"}
    assert scope_of(f"{DECODES}::test_fork_decode[verilator-seed1]") == f"{DECODES}::verilator"
    assert scope_of("verif/tests/test_chip.py::test_x[icarus-seed1]") != icarus.pop()
    pure = "model/tests/test_paged.py::test_fork[icarus_like]"
    assert scope_of(pure) == pure, "a test without a simulator parameter is its own group"


def jobs_in_process(run_dir) -> list[str]:
    """The jobs of the simulator process whose first job ran in ``run_dir``."""
    return [job["name"] for job in json.loads((run_dir / JOBS_FILE).read_text())]


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_the_tests_of_a_process_run_once_each_in_their_own_folders(tmp_path):
    """Three decodes in one process, into folders that do not exist yet: each passes there,
    and none is run again alone (only the first folder holds the process's files)."""
    build = chip_build("verilator")
    folders = [tmp_path / "new" / name for name in ("a", "b", "c")]
    runs = run_launches([decode_launch(build, "PlanDecodeTest", SHORT_PLAN, 1, run_dir=folder,
                                       node=f"t.py::{folder.name}[verilator]")
                         for folder in folders])
    assert all(run.passed for run in runs), [run.failure for run in runs]
    assert len(jobs_in_process(folders[0])) == 3
    assert not any((folder / JOBS_FILE).exists() for folder in folders[1:]), "run again alone"


@pytest.mark.sim
@pytest.mark.timeout(300)
@pytest.mark.parametrize("sim", SIMULATORS)
def test_a_test_after_another_in_its_process_starts_from_a_zero_scratchpad(tmp_path, sim):
    """A decode leaves its words in the scratchpad; the next test of the process writes noise
    over every word, powers the chip up, and finds every word zero (uvm_tests.PowerUpTest)."""
    build = chip_build(sim)
    runs = run_launches([
        decode_launch(build, "PlanDecodeTest", SHORT_PLAN, 1, run_dir=tmp_path / "decode",
                      node=f"t.py::decode[{sim}]"),
        launch(build, "PowerUpTest", {}, 1, run_dir=tmp_path / "power_up",
               node=f"t.py::power_up[{sim}]"),
    ])
    assert all(run.passed for run in runs), [run.failure for run in runs]
    assert len(jobs_in_process(tmp_path / "decode")) == 2


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_a_crash_names_its_test_and_the_tests_after_it_run_alone(tmp_path):
    build = chip_build("verilator")
    first, crash, last = "t.py::first[verilator]", "t.py::crash[verilator]", "t.py::last[verilator]"
    runs = run_launches([
        decode_launch(build, "PlanDecodeTest", SHORT_PLAN, 1, run_dir=tmp_path / "first",
                      node=first),
        launch(build, "ProcessCrashTest", {}, 1, run_dir=tmp_path / "crash", node=crash),
        decode_launch(build, "PlanDecodeTest", SHORT_PLAN, 1, run_dir=tmp_path / "last",
                      node=last),
    ])
    assert runs[0].passed, "a test the process finished before the crash keeps its result"
    assert len(jobs_in_process(tmp_path / "first")) == 3
    assert not runs[1].passed
    message = runs[1].failure
    assert "the simulator process ended before this test wrote its result" in message, message
    assert f"'{crash}'" in message and message.count("re-run") == 1, message
    assert first not in message and last not in message, message
    assert jobs_in_process(tmp_path / "crash") == ["t.py_crash_verilator"], "re-run alone"
    assert runs[2].passed and jobs_in_process(tmp_path / "last") == ["t.py_last_verilator"]
