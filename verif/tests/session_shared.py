"""What the tests of one pytest session make once and share, under pytest-xdist too.

A module- or session-scoped fixture runs once per xdist worker, so a costly product (the whole
tree's collection, a nested regression) would be made once per worker. These helpers make it
once per session instead: in the temporary folder every worker of the session shares, by
whichever worker asks first, under a lock while the others wait.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from model.paths import REPO_ROOT
from sim.runner import locked


def session_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A path named `name` that every pytest worker of this session sees: under xdist, in the
    parent of a worker's temporary folder; without it, in the session's own (its parent is
    shared by every session, so something kept there would outlive its session)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name


def collected_node_ids(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Every node id `make test` runs (pytest.ini's testpaths), from one `--collect-only`
    subprocess per session."""
    listing = session_folder(tmp_path_factory, "collected.txt")
    with locked(listing.with_suffix(".lock")):
        if not listing.exists():
            done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                                   "no:xdist", "-p", "no:cacheprovider"], cwd=REPO_ROOT,
                                  capture_output=True, text=True, check=True)
            listing.write_text("".join(f"{line}\n" for line in done.stdout.splitlines()
                                       if "::" in line))
    return listing.read_text().splitlines()
