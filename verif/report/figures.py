"""Matplotlib for the reports: the Agg backend (no display needed) and one way to save a figure.

Import pyplot from here, never directly, so the backend is chosen before pyplot loads.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported: no display
import matplotlib.pyplot as plt

__all__ = ["plt", "save_figure"]

DPI = 110


def save_figure(figure, path: Path) -> Path:
    """Lay the figure out, write it as ``path`` (making its folder) and free it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    plt.close(figure)
    return path
