"""Where things live in the repository: the one place that computes a path from it.

Every layer imports these names (this module is the lowest, pure Python, no simulator): the
RTL and its generated files, the build folder (simulator builds, made once, shared), and the
output folder (run folders, reports, plots, JSON), which git ignores.
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
# Each test's run folder is under RUNS_ROOT: out/runs, unless the environment names another, as a
# regression run inside another one must (two regressions of one test and seed would otherwise
# share, and clear, each other's run folders). Every process it starts inherits it; a relative
# one is taken from the repository root, the same in every process whatever its folder.
RUNS_ROOT_ENV = "RUNS_ROOT"


def runs_root(environment: Mapping[str, str]) -> Path:
    """The run folders' root an environment names (see above)."""
    return REPO_ROOT / (environment.get(RUNS_ROOT_ENV) or OUT / "runs")


RUNS_ROOT = runs_root(os.environ)
PLOTS = OUT / "plots"
JUNIT_DIR = OUT / "junit"


def relative(path: Path) -> Path:
    """``path`` as a reader finds it from the repository root (unchanged when outside it)."""
    path = Path(path)
    return path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
