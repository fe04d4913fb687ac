"""Matplotlib for the reports: the Agg backend (no display needed), one way to make a figure and
one way to save it.

Make figures here, never with pyplot directly, so the backend is chosen before pyplot loads.
pyplot is imported on the first figure, not with the reports: it took 0.5 to 1 s of every
process that imports a report module only to test its tables (each nested pytest of the
regression tests among them).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

DPI = 110


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
