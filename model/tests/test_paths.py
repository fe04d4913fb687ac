"""Where run folders go: out/runs, or the RUNS_ROOT the environment names (model/paths.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from model.paths import OUT, REPO_ROOT, RUNS_ROOT_ENV


def runs_root_in_a_process(value: str | None, cwd) -> str:
    """RUNS_ROOT as a fresh process started in ``cwd`` sees it, with the variable set to
    ``value`` (or unset)."""
    env = {k: v for k, v in os.environ.items() if k != RUNS_ROOT_ENV}
    env["PYTHONPATH"] = str(REPO_ROOT)
    if value is not None:
        env[RUNS_ROOT_ENV] = value
    done = subprocess.run([sys.executable, "-c", "from model.paths import RUNS_ROOT; "
                           "print(RUNS_ROOT)"], cwd=cwd, env=env, capture_output=True,
                          text=True, check=True)
    return done.stdout.strip()


def test_run_folders_go_under_out_runs_or_the_root_the_environment_names(tmp_path):
    assert runs_root_in_a_process(None, tmp_path) == str(OUT / "runs")
    assert runs_root_in_a_process(str(tmp_path / "runs"), REPO_ROOT) == str(tmp_path / "runs")
    # a relative root is the repository's, whatever folder a process starts in (a simulator
    # starts in its run folder)
    assert runs_root_in_a_process("out/nested/runs", tmp_path) == str(OUT / "nested" / "runs")
