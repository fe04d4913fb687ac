"""Every kind of save file the project hands a user, opened in GTKWave under Xvfb and asked
through its Tcl interface what it shows: the marker at the failure and on screen; the window
spanning the cycles around it, zoomed there; every signal of the save file found in the dump;
the values the failure names, read at the marker. Kinds (KINDS, one entry each): a failing
decode's waves on each simulator, a hang's (the watchdog's point), a block test's, a formal
counterexample's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
import pywellen

from model.chip.rtl_defs import AxiRule
from model.paths import BUILD_ROOT, RTL_DIR
from sim.runner import CLOCK_NS, SimulationFailed, build, run_test
from sim.wave_views import SI_EXPONENTS, VIEW_PIXELS, WINDOW_CYCLES, save_file_signals
from verif.formal.counterexample import read_vcd
from verif.formal.negative import run_negative
from verif.formal.plan import NegativeCheck
from verif.kit.failure_point import read_point
from verif.runs.failure_waves import rerun_launch, rerun_request
from verif.runs.launch import chip_build, decode_launch
from verif.runs.plans import SHORT_PLAN
from verif.tests.broken_chips import RTL_MUTANTS, make_broken_chip

VIEWER_TOOLS = ("gtkwave", "Xvfb")
pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in VIEWER_TOOLS),
    reason="GTKWave or Xvfb is missing: scripts/ensure_system_packages.sh installs both")

SCREEN = "1920x1200x24"  # a user's screen, larger than the window a save file asks for
OPEN_TIMEOUT_S = 60
CONTROLLER = "chip_harness.u_chip.u_controller"


@dataclass(frozen=True)
class Expected:
    """What a save file must show in GTKWave, in ns: the marker, the window the view must span,
    the signals of the save file, and values at the marker (signal: GTKWave's text)."""

    waves: Path
    save_file: Path
    marker_ns: float
    window_ns: tuple[float, float]
    signals: list[str]
    at_marker: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Shown:
    """What GTKWave reported, in ns, with its wave pane's width and the signals it displays."""

    marker_ns: float
    named_a_ns: float
    start_ns: float
    end_ns: float
    pane_pixels: int
    signals: list[str]
    at_marker: dict[str, str]


# ---- GTKWave, asked through Tcl ---------------------------------------------------------------


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    """A display of an Xvfb server of this module's own, on a number the server picks free."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", SCREEN,
                               "-nolisten", "tcp"], pass_fds=(write_end,),
                              stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as announced:
        number = announced.readline().strip()
    try:
        assert number, "Xvfb announced no display"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


QUERY = """\
proc report {{out}} {{
    puts $out "dimension [gtkwave::getTimeDimension]"
    puts $out "marker [gtkwave::getMarker]"
    puts $out "named_a [gtkwave::getNamedMarker A]"
    puts $out "start [gtkwave::getWindowStartTime]"
    puts $out "end [gtkwave::getWindowEndTime]"
    puts $out "pane [gtkwave::getWaveWidth]"
    foreach name [gtkwave::getDisplayedSignals] {{ puts $out "signal $name" }}
    foreach name {{{names}}} {{
        puts $out "value $name [gtkwave::getTraceValueAtMarkerFromName $name]"
    }}
}}
set out [open {{{answers}}} w]
if {{[catch {{report $out}} problem]}} {{ puts $out "error $problem" }}
close $out
gtkwave::/File/Quit
"""


def open_in_gtkwave(waves: Path, save_file: Path, display: str, folder: Path,
                    names: list[str]) -> Shown:
    """Open ``waves`` with ``save_file`` as a user does and ask GTKWave what it shows."""
    script, answers = folder / "query.tcl", folder / "answers.txt"
    script.write_text(QUERY.format(names=" ".join(names), answers=answers))
    done = subprocess.run(["gtkwave", "-S", str(script), str(waves), str(save_file)],
                          env={**os.environ, "DISPLAY": display}, capture_output=True,
                          text=True, timeout=OPEN_TIMEOUT_S)
    assert answers.exists(), f"GTKWave answered nothing:\n{done.stdout}\n{done.stderr}"
    return shown(answers.read_text().splitlines())


def shown(lines: list[str]) -> Shown:
    """GTKWave's answers (one 'key value' a line), its times in ns."""
    pairs = [line.partition(" ")[::2] for line in lines]
    errors = [value for key, value in pairs if key == "error"]
    assert not errors, f"GTKWave's Tcl interface failed: {errors}"
    found = dict(pairs)
    ns = 10.0 ** (SI_EXPONENTS[found["dimension"].strip() + "s"] + 9)
    values = dict(value.partition(" ")[::2] for key, value in pairs if key == "value")
    return Shown(int(found["marker"]) * ns, int(found["named_a"]) * ns,
                 int(found["start"]) * ns, int(found["end"]) * ns, int(found["pane"]),
                 [value.strip() for key, value in pairs if key == "signal"], values)


# ---- the kinds of save file ---------------------------------------------------------------------


def dump_end_ns(waves: Path) -> float:
    """The time of the dump's last change, in ns."""
    dump = pywellen.Waveform(str(waves), stream_only=True)
    ticks: list[int] = []
    dump.stream_time_steps(lambda time, *_: ticks.append(time), None)
    scale = dump.timescale
    return ticks[-1] * scale.factor * 10.0 ** (scale.unit.to_exponent() + 9)


def around(moment_ns: float, end_ns: float) -> tuple[float, float]:
    """The cycles the view must span: WINDOW_CYCLES around the moment, within the dump."""
    half = WINDOW_CYCLES * CLOCK_NS / 2
    return max(0.0, moment_ns - half), min(end_ns, moment_ns + half)


def broken_decode(sim: str, mutant: str, workdir: Path) -> Expected:
    """A short decode on a broken chip, run with waves as the failure plugin reruns it; its
    save file should show the located failure point: the cycle, pc and opcode there. The broken
    copy lies at one path for every session, so ccache keeps Verilator's build (15 s -> 1 s)."""
    sources = make_broken_chip(RTL_MUTANTS[mutant], BUILD_ROOT / "viewers" / sim)
    run_dir = workdir / "seed5"
    run_dir.mkdir()
    launch = decode_launch(chip_build(sim, sources, waves=True), "PlanDecodeTest", SHORT_PLAN,
                           5, run_dir=run_dir, node=f"broken-{mutant}")
    record = rerun_launch(launch, f"broken-{mutant}")
    point = read_point(Path(record.folder))
    assert record.failed and point is not None and point.time_ns == record.time_ns
    waves, save_file = Path(record.waves), Path(record.save_file)
    return Expected(waves, save_file, point.time_ns, around(point.time_ns, dump_end_ns(waves)),
                    save_file_signals(save_file.read_text().splitlines()),
                    {"chip_harness.run_cycle[31:0]": str(point.cycle),
                     f"{CONTROLLER}.pc_reg[16:0]": str(point.pc),
                     f"{CONTROLLER}.opcode[7:0]": point.instruction.split()[0]})


def failing_block(workdir: Path) -> Expected:
    """A block test that fails 1 ns in, run again with waves: its save file lists the harness's
    signals read from the dump (no template), with the marker where it failed."""
    with pytest.raises(SimulationFailed) as failed:
        run_test(build("icarus", "requant", [RTL_DIR / "requant.v"]), "sim.tests.plumbing_cocotb",
                 testcase="deliberately_wrong_expectation", seed=3, test_dir=workdir / "seed3")
    record = rerun_request(failed.value.request, "requant-test")
    waves, save_file = Path(record.waves), Path(record.save_file)
    assert record.failed and record.time_ns is not None
    return Expected(waves, save_file, record.time_ns, around(record.time_ns, dump_end_ns(waves)),
                    save_file_signals(save_file.read_text().splitlines()))


def formal_counterexample(workdir: Path) -> Expected:
    """A broken AXI4 manager's formal counterexample (verif/formal/negative.py): its save file
    must show the failing channel at the cycle the bad manager's header names, found in the
    trace by the rules' own cycle count."""
    check = NegativeCheck(AxiRule.WLAST)
    verdict = run_negative(check, work_root=workdir)
    assert verdict.caught and verdict.trace and verdict.save_file, verdict
    cycle, _ = check.expected()
    waves, save_file = Path(verdict.trace), Path(verdict.save_file)
    vcd = read_vcd(waves)
    marker_ns = vcd.rules_cycle_time(cycle) * 10.0 ** (vcd.exponent + 9)
    return Expected(waves, save_file, marker_ns, around(marker_ns, dump_end_ns(waves)),
                    save_file_signals(save_file.read_text().splitlines()))


# each kind: a function of a scratch folder that makes a save file and says what it must show
KINDS = [
    pytest.param(partial(broken_decode, "icarus", "requant_floors"), id="failure-icarus",
                 marks=pytest.mark.sim),
    pytest.param(partial(broken_decode, "verilator", "requant_floors"), id="failure-verilator",
                 marks=pytest.mark.sim),
    pytest.param(partial(broken_decode, "icarus", "done_never_rises"), id="hang-icarus",
                 marks=pytest.mark.sim),
    pytest.param(failing_block, id="block-failure-icarus", marks=pytest.mark.sim),
    pytest.param(formal_counterexample, id="formal-counterexample"),
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", KINDS)
def test_a_save_file_opens_at_its_moment_in_gtkwave(kind: Callable[[Path], Expected],
                                                    tmp_path, display):
    expected = kind(tmp_path)
    seen = open_in_gtkwave(expected.waves, expected.save_file, display, tmp_path,
                           list(expected.at_marker))
    assert seen.pane_pixels == VIEW_PIXELS, "the pane width sim/wave_views.py zooms for"
    pixel = (seen.end_ns - seen.start_ns) / seen.pane_pixels
    assert seen.marker_ns == seen.named_a_ns == pytest.approx(expected.marker_ns)
    assert seen.start_ns <= seen.marker_ns <= seen.end_ns + pixel, "the marker on screen"
    first, last = expected.window_ns
    assert seen.start_ns <= first and seen.end_ns + pixel >= last, \
        f"{seen.start_ns}..{seen.end_ns} ns shown, {first}..{last} ns wanted"
    assert seen.end_ns - seen.start_ns <= 1.5 * WINDOW_CYCLES * CLOCK_NS, "zoomed to the window"
    missing = [name for name in expected.signals if name not in seen.signals]
    assert not missing, f"signals of the save file GTKWave did not find: {missing}"
    assert seen.at_marker == expected.at_marker
