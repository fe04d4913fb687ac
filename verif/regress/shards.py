"""A suite's node ids, collected once, and their deterministic, balanced shards.

    python -m scripts.shards --suite full --seeds 20 --shards 8   # print the plan, run nothing

`collect` lists a suite's node ids with each one's simulator and timeout; `split` deals them by a
cost class from the markers, not a measurement, so every job of an array gets the same shards."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

from model.paths import REPO_ROOT
from verif.regress.suites import suite_paths

MANIFEST = "shard.json"
LONG_TIMEOUT_S = 900  # a simulation whose timeout marker allows this much is a long one
SHARD_FORMAT = re.compile(r"(\d+)/(\d+)")


class CollectionFailed(RuntimeError):
    """pytest could not collect the suite; the message holds its output."""


@dataclass(frozen=True)
class Node:
    """One test of a suite, as collected: what its cost estimate reads."""

    nodeid: str
    sim: str | None = None  # the simulator parameter, if the test has one
    simulation: bool = False  # marked `sim`
    timeout: float | None = None  # its pytest-timeout marker, seconds

    @property
    def cost(self) -> int:
        """The test's duration class (README, "Shards for job arrays"): 1, 3, 6 or 18."""
        if not self.simulation:
            return 1
        if (self.timeout or 0) < LONG_TIMEOUT_S:
            return 3
        return 18 if self.sim == "icarus" else 6


@dataclass(frozen=True)
class Shard:
    """The index-th (from 1) of `count` shards."""

    index: int
    count: int

    @property
    def name(self) -> str:
        return f"{self.index}of{self.count}"

    def folder(self, out: Path, suite: str) -> Path:
        return out / "shards" / suite / self.name


def parse_shard(text: str) -> Shard | None:
    """`i/N` with 1 <= i <= N, else None."""
    match = SHARD_FORMAT.fullmatch(text.strip())
    if not match:
        return None
    index, count = int(match[1]), int(match[2])
    return Shard(index, count) if 1 <= index <= count else None


def collect(suite: str, seeds: int) -> list[Node]:
    """The suite's tests in collection order, from a `pytest --collect-only` in this process
    (0.3 s against a subprocess's 1.1 s: the regression has imported most of what it needs)."""
    with tempfile.TemporaryDirectory(prefix="regress-collect-") as tmp:
        info = Path(tmp) / "nodes.json"
        args = ["--collect-only", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                "-p", "verif.regress.plugin", "--suite", suite, "--seeds", str(seeds),
                f"--node-info={info}", *(str(REPO_ROOT / path) for path in suite_paths(suite))]
        output = io.StringIO()
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            status = pytest.main(list(args))  # pytest prepends its addopts to the list it gets
        if status != 0 or not info.exists():
            raise CollectionFailed(f"$ pytest {' '.join(args)}\n{output.getvalue()}")
        return read_node_info(info)


def read_node_info(path: Path) -> list[Node]:
    """The tests a `--node-info` file lists (verif/regress/plugin.py wrote it)."""
    return [Node(**entry) for entry in json.loads(path.read_text())]


def split(nodes: list[Node], count: int) -> list[list[Node]]:
    """`count` shards of about equal total cost; each keeps the collection order inside."""
    order = {node.nodeid: i for i, node in enumerate(nodes)}
    shards: list[list[Node]] = [[] for _ in range(count)]
    totals = [0] * count
    for node in sorted(nodes, key=lambda n: (-n.cost, n.nodeid)):
        lightest = totals.index(min(totals))
        shards[lightest].append(node)
        totals[lightest] += node.cost
    return [sorted(shard, key=lambda n: order[n.nodeid]) for shard in shards]


def digest(nodes: list[Node]) -> str:
    """Names the whole node list: the shards of one regression all carry the same one."""
    return hashlib.sha1("\n".join(n.nodeid for n in nodes).encode()).hexdigest()[:12]


@dataclass
class Manifest:
    """shard.json: one shard's run, enough for the merge to check and combine it."""

    suite: str
    seeds: int
    random_seed: str | None
    shard: int
    shards: int
    suite_digest: str  # `digest` of the whole suite's node list
    suite_nodes: int
    nodes: list[str]  # this shard's node ids, in collection order
    positions: list[int]  # where each of them comes in the whole suite's collection order
    simulations: list[str]  # those of them that simulate (their re-run command turns waves on)
    executor: str
    started: float  # time.time() when the shard began (code coverage newer than this counts)
    seconds: float = 0.0
    status: int = 0
    runs: list[str] = field(default_factory=list)  # run folders, relative to the repository

    def write(self, folder: Path) -> Path:
        path = folder / MANIFEST
        path.write_text(json.dumps(asdict(self), indent=1) + "\n")
        return path

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        return cls(**json.loads((folder / MANIFEST).read_text()))


def balance_lines(shards: list[list[Node]]) -> list[str]:
    """One line per shard: its tests, simulations and estimated cost (share of the total)."""
    total = sum(node.cost for shard in shards for node in shard) or 1
    lines = []
    for i, shard in enumerate(shards, start=1):
        cost = sum(node.cost for node in shard)
        sims = sum(node.simulation for node in shard)
        lines.append(f"shard {i}/{len(shards)}: {len(shard)} tests ({sims} simulations), "
                     f"cost {cost} ({100 * cost / total:.1f}%)")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print a suite's shards (runs nothing).")
    parser.add_argument("--suite", default="smoke")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--list", action="store_true", help="also list each shard's node ids")
    args = parser.parse_args(argv)
    if args.shards < 1:
        parser.error("--shards must be at least 1")
    shards = split(collect(args.suite, args.seeds), args.shards)
    for line, shard in zip(balance_lines(shards), shards, strict=True):
        print(line)
        for node in shard if args.list else []:
            print(f"    {node.nodeid}  (cost {node.cost})")
    return 0
