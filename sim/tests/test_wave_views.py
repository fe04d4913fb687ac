"""The viewers' files of a failure: read back, they put the marker and the cursor at the given
time, in each viewer's units, and show the signals (sim/wave_views.py); the FST facts they are
written from (sim/fst.py) are read from files made here byte by byte, in fstapi's layout."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import pytest

from model.paths import GTKWAVE_SAVE_FILE, REPO_ROOT
from sim.fst import HIER_GZIP, HIER_LZ4, FstHeader, lz4_block, read_header, scope_variables
from sim.runner import CLOCK_NS
from sim.wave_views import (
    MARKER_NAME,
    WINDOW_CYCLES,
    Layout,
    command_file_text,
    save_file_text,
    scope_layout,
    template_layout,
    write_viewers,
)

PS = -12  # the tick both simulators dump with


# ---- FST files made by hand -----------------------------------------------------------------


def scope(name: str) -> bytes:
    return bytes([254, 0]) + name.encode() + b"\0\0"


def var(name: str, width: int, kind: int = 16) -> bytes:
    return bytes([kind, 0]) + name.encode() + b"\0" + bytes([width, 0])


UPSCOPE = bytes([255])
ATTRIBUTE = bytes([252, 0, 3]) + b"/src/block.v\0" + bytes([1])
HIERARCHY = b"".join([
    ATTRIBUTE, scope("other"), var("stray", 1), UPSCOPE,
    scope("block"), var("clk", 1), var("data [31:0]", 32), var("WIDTH [31:0]", 32, kind=2),
    scope("inner"), var("deep", 1), UPSCOPE, var("done", 1), UPSCOPE])


def lz4_literals(data: bytes) -> bytes:
    """A valid LZ4 block of literals only (what the decoder must read, no compressor needed)."""
    if len(data) < 15:
        return bytes([len(data) << 4]) + data
    rest = len(data) - 15
    return bytes([0xF0]) + b"\xff" * (rest // 255) + bytes([rest % 255]) + data


def fst_file(path: Path, end: int = 5_000_000, exponent: int = PS,
             hierarchy: bytes = HIERARCHY, kind: int = HIER_GZIP) -> Path:
    header = (struct.pack(">QQQ", 329, 0, end) + bytes(48) + struct.pack(">b", exponent)).ljust(
        329, b"\0")
    packed = gzip.compress(hierarchy) if kind == HIER_GZIP else lz4_literals(hierarchy)
    block = struct.pack(">QQ", 16 + len(packed), len(hierarchy)) + packed
    path.write_bytes(bytes([0]) + header + bytes([kind]) + block)
    return path


@pytest.mark.parametrize("kind", [HIER_GZIP, HIER_LZ4], ids=["gzip", "lz4"])
def test_an_fst_file_gives_its_tick_span_and_top_scope_signals(tmp_path, kind):
    """Icarus packs the hierarchy with gzip, Verilator with LZ4; a nested scope's signals, a
    parameter and another top scope's signals are left out."""
    waves = fst_file(tmp_path / "dump.fst", end=7_000, exponent=-11, kind=kind)
    assert read_header(waves) == FstHeader(0, 7_000, -11)
    assert scope_variables(waves, "block") == ["block.clk", "block.data[31:0]", "block.done"]


def test_lz4_copies_matches_that_overlap_their_own_output():
    assert lz4_block(bytes([0x44]) + b"abcd" + bytes([4, 0, 0x10]) + b".") == b"abcdabcdabcd."
    assert lz4_block(bytes([0x12]) + b"a" + bytes([1, 0])) == b"a" * 7
    assert lz4_block(lz4_literals(bytes(range(200)) * 3)) == bytes(range(200)) * 3


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


@pytest.mark.parametrize(("exponent", "gtkwave_per_ns", "surfer_per_ns"),
                         [(-12, 1000, 1000), (-11, 1000, 100), (-9, 1, 1)])
def test_the_marker_and_cursor_sit_at_the_time_in_each_viewers_units(exponent, gtkwave_per_ns,
                                                                      surfer_per_ns):
    """GTKWave counts in the SI unit at or below the tick, Surfer in ticks."""
    header = FstHeader(0, 10**6 * surfer_per_ns, exponent)  # a run of 1 ms
    text = save_file_text(Path("/r/dump.fst"), Path("/r/waves.gtkw"), header, 1234.0, LAYOUT)
    zoom, marker, named = gtkw_markers(text)
    assert marker == named[0] == 1234 * gtkwave_per_ns
    assert gtkw_line(text, "[markername]") == f"A{MARKER_NAME}"
    shown = 1000 * 2 ** -zoom  # the wave pane's units at this zoom
    start = int(gtkw_line(text, "[timestart]"))
    assert start < marker < start + shown
    window = WINDOW_CYCLES * CLOCK_NS * gtkwave_per_ns
    assert window <= shown and (shown < 2 * window or zoom == 0), "zoomed to about the window"
    commands = surfer_commands(command_file_text(Path("/r/dump.fst"), header, 1234.0, LAYOUT))
    assert commands["cursor_set"] == [str(1234 * surfer_per_ns)]
    assert commands["marker_set"] == [f"{MARKER_NAME} {1234 * surfer_per_ns}"]


def test_surfer_zooms_in_from_the_whole_run_to_about_the_window():
    header = FstHeader(0, 400_000 * 2**6, PS)  # 64 windows of 400 ns, in ps
    text = command_file_text(Path("/r/dump.fst"), header, 5.0, LAYOUT)
    commands = surfer_commands(text)
    assert len(commands["zoom_in"]) == 6
    names = [line.split()[0] for line in text.splitlines() if not line.startswith("#")]
    assert names[:3] == ["load_file", "variable_add", "zoom_fit"]
    assert names[-3:] == ["cursor_set", "marker_set", "goto_cursor"]


def test_without_a_time_the_viewers_show_the_whole_run_without_a_marker():
    header = FstHeader(0, 5_000_000, PS)
    zoom, marker, named = gtkw_markers(
        save_file_text(Path("/r/dump.fst"), Path("/r/w.gtkw"), header, None, LAYOUT))
    assert marker == -1 and named == [-1]
    assert 1000 * 2 ** -zoom >= 5_000_000
    commands = surfer_commands(command_file_text(Path("/r/dump.fst"), header, None, LAYOUT))
    assert "cursor_set" not in commands and "zoom_in" not in commands


def test_the_chip_save_file_is_the_projects_with_the_marker_and_absolute_filters(tmp_path):
    waves = fst_file(tmp_path / "chip_harness.fst")
    viewers = write_viewers(tmp_path, waves, 2500.0, template_layout(GTKWAVE_SAVE_FILE))
    text = viewers.save_file.read_text()
    assert gtkw_line(text, "[dumpfile]") == f'"{waves.resolve()}"'
    assert gtkw_markers(text)[1] == 2_500_000
    assert text.count("\n*") == 1, "the template's own zoom line is replaced, not kept"
    assert f"^1 {REPO_ROOT / 'hw/gtkwave/state.filter'}" in text
    assert "chip_harness.u_chip.u_controller.pc_reg[16:0]" in text
    commands = surfer_commands(viewers.command_file.read_text())
    assert commands["load_file"] == [str(waves.resolve())]
    assert "chip_harness.u_chip.u_controller.pc_reg" in commands["variable_add"]
    assert viewers.gtkwave == f"gtkwave {waves.resolve()} {viewers.save_file}"
    assert viewers.surfer == f"surfer --command-file {viewers.command_file}"


def test_a_blocks_save_file_lists_its_harness_signals(tmp_path):
    waves = fst_file(tmp_path / "block.fst")
    viewers = write_viewers(tmp_path, waves, 10.0, scope_layout(waves, "block"))
    lines = viewers.save_file.read_text().splitlines()
    assert lines[-4:] == ["@22", "block.clk", "block.data[31:0]", "block.done"]
    assert "[treeopen] block." in lines
    assert surfer_commands(viewers.command_file.read_text())["scope_add"] == ["block"]
