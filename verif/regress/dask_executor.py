"""`make regress EXECUTOR=dask`: a suite's node ids as tasks on a dask.distributed cluster.

Each task runs one node id's pytest in the worker's checkout and sends back its JUnit text and
report files, so JUnit and coverage come out as on the xdist path (README, "Dask")."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from distributed import Client, LocalCluster, as_completed

from model.paths import REPO_ROOT, RUNS_ROOT, RUNS_ROOT_ENV, runs_root
from sim.lengths import FULL_LENGTH_ENV
from verif.regress.run_folders import REPORT_FILES, node_runs
from verif.regress.shards import Node
from verif.runs.failure_waves import WAVES_ON_FAILURE

# the controller's, given to every task
ENV_PASSED = ("RANDOM_SEED", "CODE_COVERAGE", "WAVES", WAVES_ON_FAILURE, FULL_LENGTH_ENV,
              RUNS_ROOT_ENV)
CONNECT_TIMEOUT_S = 10
WORKERS_TIMEOUT_S = 60
OUTPUT_TAIL = 4000  # characters of a task's pytest output kept for a failure without JUnit


class SchedulerUnreachable(RuntimeError):
    """DASK_SCHEDULER names no scheduler that answers, or one without workers."""


@dataclass
class TaskResult:
    """What one task (one node id on one worker) sends back to the controller."""

    nodeid: str
    returncode: int
    junit: str | None  # the JUnit file pytest wrote, as text; None if it wrote none
    output: str  # the tail of pytest's output
    seconds: float
    worker: str  # host name of the worker
    files: dict[str, bytes] = field(default_factory=dict)  # relative to the run folders' root


@contextmanager
def cluster_client(scheduler: str | None, workers: int) -> Iterator[Client]:
    """A client of the named scheduler, or of a local cluster of `workers` processes."""
    if scheduler:
        with connect(scheduler) as client:
            yield client
        return
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      host="127.0.0.1", dashboard_address=None, memory_limit=0,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client


def connect(scheduler: str) -> Client:
    """A client of a running scheduler with at least one worker, or SchedulerUnreachable."""
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as err:
        raise SchedulerUnreachable(f"cannot reach the Dask scheduler {scheduler} "
                                   f"({err})") from err
    try:
        client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
    except (OSError, TimeoutError) as err:
        client.close()
        raise SchedulerUnreachable(f"the Dask scheduler {scheduler} has no worker after "
                                   f"{WORKERS_TIMEOUT_S} s") from err
    return client


def run_node(nodeid: str, seeds: int, env: dict[str, str]) -> TaskResult:
    """One node id in a pytest of its own, on a worker; returns its JUnit and report files."""
    started = time.time()
    task_env = os.environ | env
    with tempfile.TemporaryDirectory(prefix="regress-task-") as tmp:
        junit = Path(tmp) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p",
                   "no:cacheprovider", "--seeds", str(seeds), f"--junitxml={junit}", nodeid]
        done = subprocess.run(command, cwd=REPO_ROOT, env=task_env, capture_output=True,
                              text=True)
        text = junit.read_text() if junit.exists() else None
    root = runs_root(task_env)  # the controller's, if it named one
    files = {str(path.relative_to(root)): path.read_bytes()
             for run_dir in node_runs([nodeid], started, root)
             for path in (run_dir / name for name in REPORT_FILES) if path.exists()}
    return TaskResult(nodeid, done.returncode, text, (done.stdout + done.stderr)[-OUTPUT_TAIL:],
                      time.time() - started, socket.gethostname(), files)


def run_nodes(client: Client, nodes: list[Node], seeds: int,
              on_result: Callable[[TaskResult], None]) -> list[TaskResult]:
    """Every node as a task, most expensive first; results in the nodes' order."""
    env = {name: os.environ[name] for name in ENV_PASSED if name in os.environ}
    by_cost = sorted(nodes, key=lambda node: -node.cost)  # submitted in this order, too
    futures = {client.submit(run_node, node.nodeid, seeds, env, pure=False,
                             priority=node.cost): node.nodeid for node in by_cost}
    results: dict[str, TaskResult] = {}
    for future in as_completed(futures):
        nodeid = futures[future]
        try:
            result = future.result()
        except Exception as err:  # the worker died, or the task could not run at all
            result = TaskResult(nodeid, -1, None, f"the Dask task failed: {err!r}", 0.0, "?")
        results[nodeid] = result
        on_result(result)
    return [results[node.nodeid] for node in nodes]


def store_files(result: TaskResult, runs_root: Path = RUNS_ROOT) -> set[Path]:
    """Write a task's report files where this machine's differ; returns their run folders."""
    run_dirs = set()
    for relative, data in result.files.items():
        path = runs_root / relative
        if not path.exists() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        run_dirs.add(path.parent)
    return run_dirs
