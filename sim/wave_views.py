"""A waveform opened at one moment: a GTKWave save file and a Surfer command file that load the
waves, show the signals, put the marker (GTKWave) and the cursor (Surfer) at that time, zoom
there, and the two command lines that open them.

GTKWave reads a save file's ``*<zoom> <marker> <named markers...>`` line and ``[timestart]``
in its own time unit: the SI unit at or below the dump's tick (a dump that ticks in 10 ps is
shown in ps), and its zoom is log2 of the pixels per unit (0 down to -62). Surfer runs a
command file's lines after starting (``load_file``, ``variable_add``, ``scope_add``,
``zoom_fit``, ``zoom_in`` halving the view, ``cursor_set`` and ``marker_set <name>`` in the
dump's ticks, ``goto_cursor``; ``#`` starts a comment). Both simulators dump with a 1 ps tick
(sim.runner.TIMESCALE's precision), read from the file itself (sim.fst). The view spans
WINDOW_CYCLES clock periods (sim.runner.CLOCK_NS) around the moment.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from model.paths import REPO_ROOT
from sim.fst import FstHeader, read_header, scope_variables
from sim.runner import CLOCK_NS

SAVE_FILE = "waves.gtkw"
COMMAND_FILE = "waves.sucl"
WINDOW_CYCLES = 40  # the view: 20 clock periods either side of the moment
VIEW_PIXELS = 1000  # the width of GTKWave's wave pane that its zoom is computed for
ZOOM_RANGE = (-62, 0)  # GTKWave's zoom limits
MARKER_NAME = "failure"  # GTKWave's named marker A and Surfer's marker, at the moment
NAMED_MARKER_A = "A"
# lines of a save file that this module writes itself: comments, the dump and save files, the
# view's start, the zoom and marker line, the markers' names
OWN_LINES = ("[*]", "[dumpfile", "[savefile]", "[timestart]", "*", "[markername")
FILTER_LINE = re.compile(r"^(\^[<>]?\d+) (.+)$")  # a translate filter: ^N file, ^>N process
VECTOR_RANGE = re.compile(r"\[[^\]]*\]$")


@dataclass(frozen=True)
class Layout:
    """What the viewers show: GTKWave's save-file lines after its header (traces, panes), and
    the Surfer commands that add the same signals."""

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
    """A save file's signals and panes (hw/gtkwave/chip.gtkw), its filters' files made
    absolute (they are named from the repository root), for a viewer started anywhere."""
    lines = [_absolute_filter(line) for line in Path(template).read_text().splitlines()
             if not line.startswith(OWN_LINES)]
    signals = [VECTOR_RANGE.sub("", line) for line in lines if _is_signal(line)]
    return Layout(lines, [f"variable_add {name}" for name in signals])


def scope_layout(waves: Path, scope: str) -> Layout:
    """The variables of the dump's top-level scope ``scope`` (a block's harness), its tree
    opened in GTKWave."""
    names = scope_variables(waves, scope)
    return Layout(["[sst_expanded] 1", f"[treeopen] {scope}.", "@22", *names],
                  [f"scope_add {scope}"])


def _is_signal(line: str) -> bool:
    return bool(line) and (line[0].isalnum() or line[0] in "_\\")


def _absolute_filter(line: str) -> str:
    found = FILTER_LINE.match(line)
    if not found or Path(found[2]).is_absolute() or found[2] == "disabled":
        return line
    return f"{found[1]} {REPO_ROOT / found[2]}"


def write_viewers(folder: Path, waves: Path, time_ns: float | None, layout: Layout,
                  note: str = "") -> Viewers:
    """Write the save file and the command file into ``folder``: ``waves`` shown with
    ``layout``, at ``time_ns`` (None: the whole run, no marker); ``note`` heads both."""
    waves, folder = Path(waves).resolve(), Path(folder).resolve()
    header = read_header(waves)
    save, commands = folder / SAVE_FILE, folder / COMMAND_FILE
    save.write_text(save_file_text(waves, save, header, time_ns, layout, note))
    commands.write_text(command_file_text(waves, header, time_ns, layout, note))
    return Viewers(save, commands, f"gtkwave {shlex.quote(str(waves))} {shlex.quote(str(save))}",
                   f"surfer --command-file {shlex.quote(str(commands))}")


def save_file_text(waves: Path, save: Path, header: FstHeader, time_ns: float | None,
                   layout: Layout, note: str = "") -> str:
    """A GTKWave save file: the marker and named marker A at ``time_ns``, the view around it
    (no time: the whole run, no marker)."""
    if time_ns is None:
        marker, start = -1, 0
        zoom = gtkwave_zoom(gtkwave_time(run_ns(header), header.exponent))
    else:
        marker = gtkwave_time(time_ns, header.exponent)
        zoom = gtkwave_zoom(gtkwave_time(WINDOW_CYCLES * CLOCK_NS, header.exponent))
        start = max(0, marker - VIEW_PIXELS * 2 ** -zoom // 2)
    lines = [f"[*] {note}" if note else "[*]",
             f'[dumpfile] "{waves}"', f'[savefile] "{save}"', f"[timestart] {start}",
             f"*{zoom:f} {marker} {marker}",
             *([f"[markername] {NAMED_MARKER_A}{MARKER_NAME}"] if time_ns is not None else []),
             *layout.gtkwave]
    return "\n".join(lines) + "\n"


def command_file_text(waves: Path, header: FstHeader, time_ns: float | None, layout: Layout,
                      note: str = "") -> str:
    """A Surfer command file: the cursor and a marker at ``time_ns``, zoomed in around it."""
    lines = [f"# {note}" if note else "# Surfer command file",
             f"load_file {waves}", *layout.surfer, "zoom_fit"]
    if time_ns is not None:
        at = surfer_time(time_ns, header.exponent)
        lines += ["zoom_in"] * surfer_zoom_ins(header) + [
            f"cursor_set {at}", f"marker_set {MARKER_NAME} {at}", "goto_cursor"]
    return "\n".join(lines) + "\n"


def gtkwave_time(time_ns: float, exponent: int) -> int:
    """A time in GTKWave's unit for a dump ticking in 10**exponent s."""
    return round(time_ns * 10 ** (-9 - 3 * (exponent // 3)))


def surfer_time(time_ns: float, exponent: int) -> int:
    """A time in the dump's ticks (10**exponent s), as Surfer's commands take it."""
    return round(time_ns * 10 ** (-9 - exponent))


def gtkwave_zoom(window: int) -> int:
    """GTKWave's zoom that shows ``window`` units across VIEW_PIXELS (a power of two per
    pixel, rounded up so that the whole window shows)."""
    zoom = -math.ceil(math.log2(max(window, 1) / VIEW_PIXELS))
    return min(max(zoom, ZOOM_RANGE[0]), ZOOM_RANGE[1])


def run_ns(header: FstHeader) -> float:
    """How long the dump runs, in ns."""
    return (header.end - header.start) * 10.0 ** (header.exponent + 9)


def surfer_zoom_ins(header: FstHeader) -> int:
    """How many of Surfer's halvings take the whole run down to about WINDOW_CYCLES."""
    return max(0, round(math.log2(max(run_ns(header), 1) / (WINDOW_CYCLES * CLOCK_NS))))
