"""Where things live in the repository: the one place that computes a path from it.

The lowest module, pure Python: every layer imports its paths from here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
HW_DIR = REPO_ROOT / "hw"
RTL_DIR = HW_DIR / "rtl"
TB_DIR = HW_DIR / "tb"
GTKWAVE_SAVE_FILE = HW_DIR / "gtkwave" / "chip.gtkw"
MODEL_DIR = REPO_ROOT / "model"

BUILD_ROOT = REPO_ROOT / "build"
OUT = REPO_ROOT / "out"
# out/runs, unless the environment names another (relative to the repository root), as a
# regression nested in another must, or the two would clear each other's run folders
RUNS_ROOT_ENV = "RUNS_ROOT"


def runs_root(environment: Mapping[str, str]) -> Path:
    """The run folders' root an environment names."""
    return REPO_ROOT / (environment.get(RUNS_ROOT_ENV) or OUT / "runs")


RUNS_ROOT = runs_root(os.environ)
PLOTS = OUT / "plots"


def relative(path: Path) -> Path:
    """``path`` as a reader finds it from the repository root (unchanged when outside it)."""
    path = Path(path)
    return path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
