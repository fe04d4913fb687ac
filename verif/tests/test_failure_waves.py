"""A failing simulation test is run again once, alone, with waves, and opened where it failed
(verif/runs/failure_waves.py and its pytest plugin).

The failure's time comes from the first of: the located failure point, the time the pyuvm run
recorded its failure, the time the failing cocotb test stopped. The end-to-end tests make real
runs fail on Icarus: a block test whose expectation is wrong on purpose (it fails 1 ns in), and
a decode on a chip whose requantizer floors (the scoreboard's first difference), and check the
waves folder, its FST, its save file and command file, and the marker at the failure's time.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import pywellen

from model.paths import REPO_ROOT, RTL_DIR
from sim.runner import SimulationFailed, build, run_test
from sim.wave_views import DUMP_TICK, scope_variables
from verif.kit.failure_point import FailurePoint, write_point
from verif.runs.failure_waves import (
    NO_TIME,
    SECTION,
    WAVES_ON_FAILURE,
    WAVES_RECORD,
    failure_time,
    read_record,
    request_of,
    rerun_launch,
    rerun_request,
    wanted,
    waves_folder,
)
from verif.runs.launch import chip_build, decode_launch, run_launches
from verif.runs.plans import SHORT_PLAN
from verif.runs.record import RESULT_FILE
from verif.tests.broken_chips import RTL_MUTANTS, make_broken_chip

PLUMBING = "sim.tests.plumbing_cocotb"  # its deliberately_wrong_expectation fails at 1 ns
WRONG = "deliberately_wrong_expectation"
PS_PER_NS = 1000  # both simulators dump in ps


def dump_tick(waves: Path) -> int:
    """The tick the simulator wrote into its dump, as a power of ten seconds."""
    scale = pywellen.Waveform(str(waves), stream_only=True).timescale
    return scale.unit.to_exponent() + round(math.log10(scale.factor))


def last_change(waves: Path) -> int:
    """The time of the dump's last change, in its ticks."""
    times: list[int] = []
    pywellen.Waveform(str(waves), stream_only=True).stream_time_steps(
        lambda time, *_: times.append(time), None)
    return times[-1]


def results_xml(folder: Path, stop_ns: float) -> None:
    """A cocotb results file with one failing test that stopped at ``stop_ns``."""
    (folder / "results.xml").write_text(textwrap.dedent(f"""\
        <testsuites><testsuite><testcase name="t"><properties>
        <property name="sim_time_unit" value="ns" />
        <property name="sim_time_stop" value="{stop_ns}" />
        </properties><failure message="wrong" /></testcase></testsuite></testsuites>"""))


def test_the_failure_time_is_the_point_then_the_recorded_failure_then_the_stop(tmp_path):
    assert failure_time(tmp_path) == (None, NO_TIME)
    results_xml(tmp_path, 900.0)
    assert failure_time(tmp_path)[0] == 900.0
    (tmp_path / RESULT_FILE).write_text(json.dumps(
        {"failure_time_ns": 700.0, "failure_type": "ScoreboardMismatch"}))
    assert failure_time(tmp_path) == (700.0, f"{RESULT_FILE}: ScoreboardMismatch recorded")
    write_point(tmp_path, FailurePoint(unit="dma", cycle=12, time_ns=650.0))
    time_ns, source = failure_time(tmp_path)
    assert time_ns == 650.0 and "unit dma, cycle 12" in source


def test_files_older_than_the_run_are_not_its_failure(tmp_path):
    write_point(tmp_path, FailurePoint(time_ns=650.0))
    results_xml(tmp_path, 900.0)
    later = max(p.stat().st_mtime for p in tmp_path.iterdir()) + 1
    assert failure_time(tmp_path, since=later) == (None, NO_TIME)


def test_the_run_again_is_switched_off_by_its_variable_and_by_waves(monkeypatch):
    monkeypatch.delenv(WAVES_ON_FAILURE, raising=False)
    monkeypatch.delenv("WAVES", raising=False)
    assert wanted()
    monkeypatch.setenv(WAVES_ON_FAILURE, "0")
    assert not wanted()
    monkeypatch.setenv(WAVES_ON_FAILURE, "1")
    monkeypatch.setenv("WAVES", "1")
    assert not wanted(), "a run with waves has them already"


def test_the_waves_folder_is_the_failing_folders_sibling():
    assert waves_folder(Path("/runs/icarus/node/seed7")) == Path("/runs/icarus/node/seed7-waves")


def requant_failure(test_dir: Path) -> SimulationFailed:
    with pytest.raises(SimulationFailed) as failed:
        run_test(build("icarus", "requant", [RTL_DIR / "requant.v"]), PLUMBING, testcase=WRONG,
                 seed=3, test_dir=test_dir)
    return failed.value


@pytest.mark.sim
@pytest.mark.timeout(120)
def test_a_failing_block_run_is_run_again_with_waves_opened_at_its_failure(tmp_path):
    run_dir = tmp_path / "seed3"
    failure = requant_failure(run_dir)
    wrapped = RuntimeError("a test's own error")
    wrapped.__cause__ = failure
    assert request_of(wrapped) is failure.request
    record = rerun_request(failure.request, "requant-test")
    folder = run_dir.with_name("seed3-waves")
    assert Path(record.folder) == folder and record.failed
    assert Path(record.waves) == folder / "requant.fst"
    assert dump_tick(record.waves) == DUMP_TICK, "the tick the viewers' files are written in"
    assert record.time_ns == 1.0, "the wrong expectation is checked after 1 ns"
    save, commands = Path(record.save_file).read_text(), Path(record.command_file).read_text()
    assert save_markers(save.splitlines()) == [PS_PER_NS, PS_PER_NS]
    assert "requant.y[7:0]" in save.splitlines()
    assert f"cursor_set {PS_PER_NS}" in commands.splitlines()
    assert read_record(run_dir / WAVES_RECORD) == record
    assert (run_dir / "results.xml").exists() and not (run_dir / "requant.fst").exists(), \
        "the failing run's folder keeps its own files, without waves"


def decode_waves(tmp_path: Path, mutant: str) -> tuple[dict, dict, object]:
    """A short decode on a broken chip, and its re-run with waves: (the failing run's result,
    the re-run's result, the waves record)."""
    sources = make_broken_chip(RTL_MUTANTS[mutant], tmp_path / "chip")
    launch = decode_launch(chip_build("icarus", sources), "PlanDecodeTest", SHORT_PLAN, 5,
                           run_dir=tmp_path / "seed5", node="broken-decode")
    (failing,) = run_launches([launch])
    record = rerun_launch(launch, "broken-decode")
    assert record.failed and Path(record.folder) == tmp_path / "seed5-waves"
    again = json.loads((tmp_path / "seed5-waves" / RESULT_FILE).read_text())
    assert again["failure_time_ns"] == failing.result["failure_time_ns"], \
        "alone, the run with waves fails at the same time"
    return failing.result, again, record


def save_markers(save: list[str]) -> list[int]:
    """The marker and named markers of a save file's '*' line (after its zoom)."""
    (line,) = (line for line in save if line.startswith("*"))
    return [int(time) for time in line.split()[1:]]


def assert_marked_at(record, time_ns: float) -> None:
    """The save file and the command file carry the marker at ``time_ns``, inside the FST."""
    marker = round(time_ns * PS_PER_NS)
    assert round(record.time_ns * PS_PER_NS) == marker
    save = Path(record.save_file).read_text().splitlines()
    assert save_markers(save) == [marker, marker], "the marker and named marker A"
    assert "chip_harness.u_chip.u_controller.pc_reg[16:0]" in save, "hw/gtkwave/chip.gtkw's"
    harness = {line for line in save if line.startswith("chip_harness.") and line.count(".") == 1}
    assert "chip_harness.run_cycle[31:0]" in harness, "the cycle the reports name"
    assert harness <= set(scope_variables(record.waves, "chip_harness")), "names the FST lacks"
    assert dump_tick(record.waves) == DUMP_TICK, "the tick the viewers' files are written in"
    assert marker <= last_change(record.waves)
    assert f"marker_set failure {marker}" in Path(record.command_file).read_text().splitlines()


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_a_failing_decode_is_run_again_alone_with_waves_at_the_same_failure(tmp_path):
    failing, again, record = decode_waves(tmp_path, "requant_floors")
    assert failing["failure_type"] == "ScoreboardMismatch"
    # the marker is at the first wrong write the scoreboard located, before it noticed
    located = failing["failure_point"]["time_ns"]
    assert again["failure_point"]["time_ns"] == located < failing["failure_time_ns"]
    assert_marked_at(record, located)


@pytest.mark.sim
@pytest.mark.timeout(300)
def test_a_hung_decode_is_opened_where_the_watchdog_stopped_it(tmp_path):
    failing, again, record = decode_waves(tmp_path, "done_never_rises")
    assert failing["failure_type"] == "ChipHung"
    point = failing["failure_point"]
    assert again["failure_point"] == point and point["unit"] == "controller"
    assert point["time_ns"] <= failing["failure_time_ns"]
    assert_marked_at(record, point["time_ns"])


FAILING_TEST = f"""
from pathlib import Path

from model.paths import RTL_DIR
from sim.runner import build, run_test


def test_wrong_expectation(tmp_path):
    run_test(build("icarus", "requant", [RTL_DIR / "requant.v"]), "{PLUMBING}",
             testcase="{WRONG}", seed=3, test_dir=Path(__file__).parent / "run")
"""


@pytest.mark.sim
@pytest.mark.timeout(120)
@pytest.mark.parametrize("switch", ["1", "0"], ids=["default", "switched-off"])
def test_pytest_reports_a_failures_waves_and_keeps_its_verdict(tmp_path, switch):
    """The plugin's section in the failure message the user sees; WAVES_ON_FAILURE=0: none."""
    (tmp_path / "test_failing.py").write_text(FAILING_TEST)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), WAVES_ON_FAILURE: switch}
    env.pop("WAVES", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "-p", "verif.runs.failure_waves", "test_failing.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "1 failed" in done.stdout
    assert "failed cocotb tests: deliberately_wrong_expectation" in done.stdout
    shown = SECTION in done.stdout
    assert shown == (switch == "1") == (tmp_path / "run-waves").exists()
    if shown:
        record = read_record(tmp_path / "run" / WAVES_RECORD)
        assert f"GTKWave:      {record.gtkwave}" in done.stdout
        assert f"Surfer:       {record.surfer}" in done.stdout
        assert f"save file:    {record.save_file}" in done.stdout
