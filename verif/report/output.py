"""How the reports, benchmarks and tools write what they found: JSON in ``out/``, tables, figures.

Tables are tabulate's (terminal and Markdown), figures matplotlib's on the Agg backend: pyplot
is imported on the first figure, not with the reports (it cost 0.5 to 1 s of every process that
imports a report only to test its tables).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from tabulate import tabulate

from model.paths import OUT

DPI = 110


def write_json(name: str, data: Any) -> Path:
    """Write ``data`` as ``out/<name>`` (creating ``out/``) and return the path."""
    OUT.mkdir(exist_ok=True)
    path = OUT / name
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def text_table(header: Sequence[str], rows: Sequence[Sequence[Any]], left: Sequence[int] = (),
               fmt: str = "simple") -> str:
    """Columns as wide as their widest cell, right-aligned but the ``left`` ones; every cell
    printed as ``str`` gives it (the caller formats its numbers)."""
    align = ["left" if i in left else "right" for i in range(len(header))]
    return tabulate([[str(cell) for cell in row] for row in rows], list(header), tablefmt=fmt,
                    colalign=align, disable_numparse=True)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]],
                   left: Sequence[int] = ()) -> str:
    """The same table in Markdown (a pipe table, aligned as ``text_table``)."""
    return text_table(header, rows, left, fmt="pipe")


@cache
def _pyplot():
    import matplotlib  # on the first figure (see above)

    matplotlib.use("Agg")  # before pyplot is imported: no display
    import matplotlib.pyplot as plt

    return plt


def subplots(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``matplotlib.pyplot.subplots``: a figure and its axes."""
    return _pyplot().subplots(*args, **kwargs)


def save_figure(figure, path: Path) -> Path:
    """Lay the figure out, write it as ``path`` (making its folder) and free it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    _pyplot().close(figure)
    return path
