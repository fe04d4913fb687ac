"""The viewers' files of a failure: read back, they put the marker and the cursor at the given
time, in each viewer's units, and show the signals (sim/wave_views.py). What they know of a dump
is the build's tick, the run's length from its results file, and a block harness's signals,
read by pywellen from a dump written here by hand (VCD: a few lines of text)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from model.paths import GTKWAVE_SAVE_FILE, REPO_ROOT
from sim.runner import CLOCK_NS, TIMESCALE, run_stop_ns
from sim.wave_views import (
    DUMP_TICK,
    MARKER_NAME,
    VIEW_PIXELS,
    WINDOW_CYCLES,
    WINDOW_SIZE,
    DumpTime,
    Layout,
    command_file_text,
    gtkwave_view,
    gtkwave_zoom,
    save_file_signals,
    save_file_text,
    scope_layout,
    scope_variables,
    template_layout,
    tick_exponent,
    write_viewers,
)

PS = -12  # the tick both simulators dump with


# ---- what the viewers know of a dump --------------------------------------------------------


def test_a_dump_ticks_in_the_builds_precision():
    assert DUMP_TICK == tick_exponent(TIMESCALE[1]) == PS
    assert [tick_exponent(t) for t in ("10ps", "100ps", "1ns", "1 fs", "1s")] == [-11, -10, -9,
                                                                                   -15, 0]
    with pytest.raises(ValueError, match="precision"):
        tick_exponent("2ps")


def results_xml(folder: Path, *stops: str) -> Path:
    """A cocotb results file whose tests stopped at ``stops`` ("<value> <unit>")."""
    cases = "".join(
        f'<testcase name="t{i}"><properties><property name="sim_time_unit" value="{unit}" />'
        f'<property name="sim_time_stop" value="{value}" /></properties></testcase>'
        for i, (value, unit) in enumerate(stop.split() for stop in stops))
    path = folder / "results.xml"
    path.write_text(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
    return path


def test_a_run_lasts_until_its_last_cocotb_test_stopped(tmp_path):
    assert run_stop_ns(tmp_path / "results.xml") is None
    assert run_stop_ns(results_xml(tmp_path, "300 ns", "2.5 us", "900 ns")) == 2500.0


VCD = textwrap.dedent("""\
    $timescale 1ps $end
    $scope module other $end $var wire 1 ! stray $end $upscope $end
    $scope module block $end
    $var wire 1 " clk $end
    $var wire 32 # data [31:0] $end
    $var parameter 32 $ WIDTH [31:0] $end
    $var integer 32 % count $end
    $var real 64 & level $end
    $scope module inner $end $var wire 1 ' deep $end $upscope $end
    $var reg 1 ( done $end
    $upscope $end
    $enddefinitions $end
    #0
    0" b0 # b100000 $ b0 % r0 & 0' 0(
    #5000
    1(
    """)
BLOCK_SIGNALS = ["block.clk", "block.data[31:0]", "block.count[31:0]", "block.level",
                 "block.done"]


def dump(path: Path) -> Path:
    path.write_text(VCD)
    return path


def test_a_dumps_top_scope_gives_its_signals_as_gtkwave_names_them(tmp_path):
    """A nested scope's signals, a parameter and another top scope's signals are left out;
    a vector is named with its range, a bit and a real without."""
    waves = dump(tmp_path / "block.vcd")
    assert scope_variables(waves, "block") == BLOCK_SIGNALS
    with pytest.raises(ValueError, match="no top-level scope"):
        scope_variables(waves, "inner")
    with pytest.raises(FileNotFoundError):
        scope_variables(tmp_path / "none.fst", "block")


# ---- the viewers' files, read back ----------------------------------------------------------


def gtkw_line(text: str, key: str) -> str:
    return next(line[len(key):].strip() for line in text.splitlines() if line.startswith(key))


def gtkw_markers(text: str) -> tuple[float, int, list[int]]:
    """(zoom, primary marker, named markers) of a save file's '*' line."""
    zoom, marker, *named = gtkw_line(text, "*").split()
    return float(zoom), int(marker), [int(n) for n in named]


def surfer_commands(text: str) -> dict[str, list[str]]:
    """Each command of a command file, with the arguments of its every use."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        command = line.split("#")[0].strip()
        if command:
            name, _, rest = command.partition(" ")
            found.setdefault(name, []).append(rest)
    return found


LAYOUT = Layout(["@22", "block.data[31:0]"], ["variable_add block.data"])


def test_gtkwaves_zoom_is_log2_of_time_units_per_200_pixels():
    """What GTKWave 3.3.118 showed, asked through its Tcl interface: at the zoom -9 the old
    save files carried, 2508 ps across its 980-pixel pane (the issue's 'about 2 ns'); a zoom is
    never above 0 (a frame of at least one unit)."""
    assert gtkwave_view(-9.0, 980) == pytest.approx(2508, abs=1)
    assert gtkwave_view(gtkwave_zoom(400_000)) == pytest.approx(400_000, rel=1e-5)
    assert gtkwave_view(gtkwave_zoom(400_000)) >= 400_000, "rounded towards showing more"
    assert gtkwave_zoom(1) == 0.0


def gtkwave_window(text: str) -> tuple[int, float]:
    """(first, last) time GTKWave shows for a save file, in the width it asks for."""
    start = int(gtkw_line(text, "[timestart]"))
    assert gtkw_line(text, "[size]") == "{} {}".format(*WINDOW_SIZE)
    return start, start + gtkwave_view(gtkw_markers(text)[0], VIEW_PIXELS)


@pytest.mark.parametrize(("exponent", "gtkwave_per_ns", "surfer_per_ns"),
                         [(-12, 1000, 1000), (-11, 1000, 100), (-9, 1, 1)])
def test_the_marker_and_cursor_sit_at_the_time_in_each_viewers_units(exponent, gtkwave_per_ns,
                                                                      surfer_per_ns):
    """GTKWave counts in the SI unit at or below the tick, Surfer in ticks; GTKWave's view is
    the window, half of it either side of the marker."""
    run = DumpTime(10.0**6, exponent)  # a run of 1 ms
    text = save_file_text(Path("/r/dump.fst"), Path("/r/waves.gtkw"), run, 1234.0, LAYOUT)
    _, marker, named = gtkw_markers(text)
    assert marker == named[0] == 1234 * gtkwave_per_ns
    assert gtkw_line(text, "[markername]") == f"A{MARKER_NAME}"
    half = WINDOW_CYCLES * CLOCK_NS * gtkwave_per_ns / 2
    first, last = gtkwave_window(text)
    assert first == marker - half
    assert last == pytest.approx(marker + half, rel=1e-5) and last >= marker + half
    commands = surfer_commands(command_file_text(Path("/r/dump.fst"), run, 1234.0, LAYOUT))
    assert commands["cursor_set"] == [str(1234 * surfer_per_ns)]
    assert commands["marker_set"] == [f"{MARKER_NAME} {1234 * surfer_per_ns}"]


@pytest.mark.parametrize("time_ns", [9990.0, 10_000.0, 50.0])
def test_near_either_end_of_the_run_the_view_stays_inside_it(time_ns):
    """GTKWave ignores a [timestart] whose pane would pass the dump's end (it shows the run from
    0 instead): near the end the view ends with the run (a marker at its very end in the pane's
    last pixel), near the start it starts at 0."""
    run = DumpTime(10_000.0)
    text = save_file_text(Path("/r/dump.fst"), Path("/r/waves.gtkw"), run, time_ns, LAYOUT)
    first, last = gtkwave_window(text)
    window = WINDOW_CYCLES * CLOCK_NS * 1000
    pixel = window / VIEW_PIXELS
    assert 0 <= first <= time_ns * 1000 <= last + pixel and last < 10_000_000
    assert last - first == pytest.approx(window, rel=1e-5)
    assert first == 0 or last > 10_000_000 - pixel, "ends less than a pixel short of the run"


def test_surfer_zooms_in_from_the_whole_run_to_about_the_window():
    run = DumpTime(400.0 * 2**6)  # 64 windows of 400 ns
    text = command_file_text(Path("/r/dump.fst"), run, 5.0, LAYOUT)
    commands = surfer_commands(text)
    assert len(commands["zoom_in"]) == 6
    names = [line.split()[0] for line in text.splitlines() if not line.startswith("#")]
    assert names[:3] == ["load_file", "variable_add", "zoom_fit"]
    assert names[-3:] == ["cursor_set", "marker_set", "goto_cursor"]


def test_without_a_time_the_viewers_show_the_whole_run_without_a_marker():
    run = DumpTime(5000.0)
    text = save_file_text(Path("/r/dump.fst"), Path("/r/w.gtkw"), run, None, LAYOUT)
    _, marker, named = gtkw_markers(text)
    assert marker == -1 and named == [-1]
    assert gtkwave_window(text) == (0, pytest.approx(5_000_000, rel=1e-5)), "the run, in ps"
    commands = surfer_commands(command_file_text(Path("/r/dump.fst"), run, None, LAYOUT))
    assert "cursor_set" not in commands and "zoom_in" not in commands


def test_a_run_of_unknown_length_is_shown_from_its_start_a_window_wide(tmp_path):
    """No results file (the simulator died): GTKWave shows a window from 0, Surfer the whole
    run, zoomed in not at all."""
    viewers = write_viewers(tmp_path, dump(tmp_path / "block.vcd"), 300.0, LAYOUT)
    assert surfer_commands(viewers.command_file.read_text()).get("zoom_in") is None
    viewers = write_viewers(tmp_path, tmp_path / "block.vcd", None, LAYOUT)
    text = viewers.save_file.read_text()
    window = WINDOW_CYCLES * CLOCK_NS * 1000
    assert gtkw_markers(text)[1] == -1
    assert gtkwave_window(text) == (0, pytest.approx(window, rel=1e-5))


def test_the_chip_save_file_is_the_projects_with_the_marker_and_absolute_filters(tmp_path):
    waves = tmp_path / "chip_harness.fst"  # not read: the chip's layout is the project's
    results_xml(tmp_path, "400 us")  # 1000 windows: Surfer halves its view 10 times
    viewers = write_viewers(tmp_path, waves, 2500.0, template_layout(GTKWAVE_SAVE_FILE))
    text = viewers.save_file.read_text()
    assert gtkw_line(text, "[dumpfile]") == f'"{waves.resolve()}"'
    assert gtkw_markers(text)[1] == 2_500_000
    assert text.count("\n*") == 1, "the template's own zoom line is replaced, not kept"
    assert text.count("\n[size]") == 1, "and its window's size"
    assert f"^1 {REPO_ROOT / 'hw/gtkwave/state.filter'}" in text
    assert "chip_harness.u_chip.u_controller.pc_reg[16:0]" in text
    commands = surfer_commands(viewers.command_file.read_text())
    assert commands["load_file"] == [str(waves.resolve())]
    assert len(commands["zoom_in"]) == 10
    assert "chip_harness.u_chip.u_controller.pc_reg" in commands["variable_add"]
    assert viewers.gtkwave == f"gtkwave {waves.resolve()} {viewers.save_file}"
    assert viewers.surfer == f"surfer --command-file {viewers.command_file}"


def test_a_blocks_save_file_lists_its_harness_signals(tmp_path):
    waves = dump(tmp_path / "block.vcd")
    viewers = write_viewers(tmp_path, waves, 10.0, scope_layout(waves, "block"))
    lines = viewers.save_file.read_text().splitlines()
    assert lines[-6:] == ["@22", *BLOCK_SIGNALS]
    assert save_file_signals(lines) == BLOCK_SIGNALS
    assert "[treeopen] block." in lines
    assert surfer_commands(viewers.command_file.read_text())["scope_add"] == ["block"]
