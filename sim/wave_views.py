"""A waveform opened at one moment: a GTKWave save file and a Surfer command file with the
marker (cursor) at that time and the view zoomed there, and the command lines that open them.

A dump's tick comes from the build's precision and its length from results.xml; only a block's
signals are read from the dump itself (pywellen).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pywellen

from model.paths import REPO_ROOT
from sim.runner import CLOCK_NS, TIMESCALE, run_stop_ns

SAVE_FILE = "waves.gtkw"
COMMAND_FILE = "waves.sucl"
WINDOW_CYCLES = 40  # the view: 20 clock periods either side of the moment
# GTKWave 3.3.118 reads the '*' line's zoom z as 2**-z time units per 200 pixels (its zoom base
# 2, its pixels per frame 200; the frame is at least one unit, so z <= 0). It starts the view at
# [timestart] only if the pane then ends within the dump, else at the dump's start.
GTKWAVE_FRAME = 200
MAX_ZOOM = 0.0
# GTKWave checks that end in single precision (2**-23 of each term): the margin left for it
FLOAT32_MARGIN = 2.0**-20
WINDOW_SIZE = (1600, 1000)  # the GTKWave window the save file asks for, and its panes
SST_WIDTH, SIGNALS_WIDTH = 260, 320
# the wave pane's width in that window (Debian's GTKWave 3.3.118, under Xvfb; checked by
# verif/tests/test_viewers.py): the zoom fits the window to it, the end of a run ends it
VIEW_PIXELS = 980
MARKER_NAME = "failure"  # GTKWave's named marker A and Surfer's marker, at the moment
NAMED_MARKER_A = "A"
# the lines of a save file this module writes itself
OWN_LINES = ("[*]", "[dumpfile", "[savefile]", "[timestart]", "*", "[markername", "[size]",
             "[pos]", "[sst_width]", "[signals_width]")
FILTER_LINE = re.compile(r"^(\^[<>]?\d+) (.+)$")  # a translate filter: ^N file, ^>N process
VECTOR_RANGE = re.compile(r"\[[^\]]*\]$")
SI_EXPONENTS = {"s": 0, "ms": -3, "us": -6, "ns": -9, "ps": -12, "fs": -15}
NOT_SIGNALS = ("Parameter",)  # constants a dump declares beside the signals


def tick_exponent(precision: str) -> int:
    """The power of ten seconds of a Verilog time such as ``1ps`` (-12) or ``10ps`` (-11)."""
    found = re.fullmatch(r"(1|10|100)\s*(s|ms|us|ns|ps|fs)", precision)
    if not found:
        raise ValueError(f"not a Verilog time precision: {precision!r}")
    return len(found[1]) - 1 + SI_EXPONENTS[found[2]]


DUMP_TICK = tick_exponent(TIMESCALE[1])  # a dump's tick is 10**DUMP_TICK s: -12, 1 ps


@dataclass(frozen=True)
class DumpTime:
    """How a dump counts time: its tick (10**exponent s) and its run's length in ns, if known."""

    run_ns: float | None
    exponent: int = DUMP_TICK


@dataclass(frozen=True)
class Layout:
    """What the viewers show: GTKWave's save-file lines after its header, Surfer's commands."""

    gtkwave: list[str]
    surfer: list[str]


@dataclass(frozen=True)
class Viewers:
    """A waveform's two viewer files and the command lines that open them."""

    save_file: Path
    command_file: Path
    gtkwave: str
    surfer: str


def template_layout(template: Path) -> Layout:
    """A save file's signals and panes, its filters' paths made absolute for any folder."""
    lines = [_absolute_filter(line) for line in Path(template).read_text().splitlines()
             if not line.startswith(OWN_LINES)]
    signals = [VECTOR_RANGE.sub("", line) for line in save_file_signals(lines)]
    return Layout(lines, [f"variable_add {name}" for name in signals])


def save_file_signals(lines: Sequence[str]) -> list[str]:
    """The signals a save file's lines show, as GTKWave names them (not its comments, blanks,
    flags, filters or settings)."""
    return [line for line in lines if _is_signal(line)]


def scope_layout(waves: Path, scope: str) -> Layout:
    """The variables of the dump's top-level scope ``scope``, its tree opened in GTKWave."""
    names = scope_variables(waves, scope)
    return Layout(["[sst_expanded] 1", f"[treeopen] {scope}.", "@22", *names],
                  [f"scope_add {scope}"])


def scope_variables(waves: Path, scope: str) -> list[str]:
    """The signals declared directly in the dump's top-level scope ``scope``, as GTKWave names
    them: ``scope.x[31:0]`` for a vector (harnesses declare ``[N-1:0]``), ``scope.x`` for a bit."""
    if not Path(waves).is_file():  # pywellen panics on a missing file
        raise FileNotFoundError(f"no waves at {waves}")
    dump = pywellen.Waveform(str(waves), stream_only=True)
    top = next((found for found in dump.scopes() if found.name == scope), None)
    if top is None:
        raise ValueError(f"{waves} has no top-level scope {scope}")
    return [f"{scope}.{_gtkwave_name(var)}" for var in top.vars()
            if var.var_type not in NOT_SIGNALS]


def _gtkwave_name(var: pywellen.Var) -> str:
    vector = var.is_bit_vector and var.bitwidth > 1  # a real or a string has no range
    return f"{var.name}[{var.bitwidth - 1}:0]" if vector else var.name


def _is_signal(line: str) -> bool:
    return bool(line) and (line[0].isalnum() or line[0] in "_\\")


def _absolute_filter(line: str) -> str:
    found = FILTER_LINE.match(line)
    if not found or Path(found[2]).is_absolute() or found[2] == "disabled":
        return line
    return f"{found[1]} {REPO_ROOT / found[2]}"


def write_viewers(folder: Path, waves: Path, time_ns: float | None, layout: Layout,
                  note: str = "") -> Viewers:
    """Write both viewer files into ``folder``, at ``time_ns`` (None: the whole run, no marker)."""
    waves, folder = Path(waves).resolve(), Path(folder).resolve()
    dump = DumpTime(run_stop_ns(waves.parent / "results.xml"))
    save, commands = folder / SAVE_FILE, folder / COMMAND_FILE
    save.write_text(save_file_text(waves, save, dump, time_ns, layout, note))
    commands.write_text(command_file_text(waves, dump, time_ns, layout, note))
    return Viewers(save, commands, f"gtkwave {shlex.quote(str(waves))} {shlex.quote(str(save))}",
                   f"surfer --command-file {shlex.quote(str(commands))}")


def save_file_text(waves: Path, save: Path, dump: DumpTime, time_ns: float | None,
                   layout: Layout, note: str = "") -> str:
    """A GTKWave save file: the marker and named marker A at ``time_ns``, the view from half a
    window before it (or ending with the run); without a time, the whole run and no marker."""
    window_ns = WINDOW_CYCLES * CLOCK_NS
    if time_ns is None:
        marker, start = -1, 0
        zoom = gtkwave_zoom(gtkwave_time(dump.run_ns or window_ns, dump.exponent))
    else:
        marker = gtkwave_time(time_ns, dump.exponent)
        zoom = gtkwave_zoom(gtkwave_time(window_ns, dump.exponent))
        start = view_start(marker, zoom, dump)
    lines = [f"[*] {note}" if note else "[*]",
             f'[dumpfile] "{waves}"', f'[savefile] "{save}"',
             "[size] {} {}".format(*WINDOW_SIZE), "[pos] -1 -1",
             f"[sst_width] {SST_WIDTH}", f"[signals_width] {SIGNALS_WIDTH}",
             f"[timestart] {start}", f"*{zoom:f} {marker} {marker}",
             *([f"[markername] {NAMED_MARKER_A}{MARKER_NAME}"] if time_ns is not None else []),
             *layout.gtkwave]
    return "\n".join(lines) + "\n"


def command_file_text(waves: Path, dump: DumpTime, time_ns: float | None, layout: Layout,
                      note: str = "") -> str:
    """A Surfer command file: the cursor and a marker at ``time_ns``, zoomed in around it."""
    lines = [f"# {note}" if note else "# Surfer command file",
             f"load_file {waves}", *layout.surfer, "zoom_fit"]
    if time_ns is not None:
        at = surfer_time(time_ns, dump.exponent)
        lines += ["zoom_in"] * surfer_zoom_ins(dump) + [
            f"cursor_set {at}", f"marker_set {MARKER_NAME} {at}", "goto_cursor"]
    return "\n".join(lines) + "\n"


def gtkwave_time(time_ns: float, exponent: int) -> int:
    """A time in GTKWave's unit for a dump ticking in 10**exponent s."""
    return round(time_ns * 10 ** (-9 - 3 * (exponent // 3)))


def surfer_time(time_ns: float, exponent: int) -> int:
    """A time in the dump's ticks (10**exponent s), as Surfer's commands take it."""
    return round(time_ns * 10 ** (-9 - exponent))


def gtkwave_zoom(window: int) -> float:
    """GTKWave's zoom showing ``window`` units across VIEW_PIXELS (to the save file's 6
    decimals, rounded towards showing more)."""
    zoom = -math.log2(max(window, 1) * GTKWAVE_FRAME / VIEW_PIXELS)
    return min(math.floor(zoom * 1e6) / 1e6, MAX_ZOOM)


def view_start(marker: int, zoom: float, dump: DumpTime) -> int:
    """Where GTKWave's view starts: half a window before the marker, or early enough that the
    pane ends within the run, as GTKWave ignores a [timestart] whose pane would pass the end of
    the dump."""
    start = marker - gtkwave_time(WINDOW_CYCLES * CLOCK_NS / 2, dump.exponent)
    if dump.run_ns is not None:
        end, view = gtkwave_time(dump.run_ns, dump.exponent), gtkwave_view(zoom)
        start = min(start, end - math.ceil(view + (end + view) * FLOAT32_MARGIN))
    return max(0, start)


def gtkwave_view(zoom: float, pixels: int = VIEW_PIXELS) -> float:
    """The time units a wave pane ``pixels`` wide shows at GTKWave's ``zoom``."""
    return pixels * 2 ** -zoom / GTKWAVE_FRAME


def surfer_zoom_ins(dump: DumpTime) -> int:
    """How many of Surfer's halvings take the whole run down to about WINDOW_CYCLES."""
    if dump.run_ns is None:
        return 0
    return max(0, round(math.log2(max(dump.run_ns, 1) / (WINDOW_CYCLES * CLOCK_NS))))
