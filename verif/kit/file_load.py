"""axi_ram's bulk backdoor: many memory words written in one load, through a file.

The testbench writes "@address word" lines to a file that hw/tb/axi_ram.v reads with $readmemh at
the next rising clock edge: one file written, one signal set (README, "Memory written in bulk").
"""

from __future__ import annotations

import os
from pathlib import Path

import cocotb
import numpy as np

from verif.kit.memory import known

BACKDOOR_FILE = "axi_backdoor.hex"  # axi_ram.v's default, in the simulator's working folder


def backdoor_path() -> Path:
    """The file the memory reads: +axi_backdoor's, else axi_ram.v's default."""
    return Path(cocotb.plusargs.get("axi_backdoor", BACKDOOR_FILE))


class FileLoad:
    """Writes words into one axi_ram instance (e.g. ``dut.u_mem``) in bulk, through ``path``."""

    def __init__(self, ram, path: Path):
        self.ram, self.path = ram, path
        # loads asked for, counted here (a value set lands only at the next write phase) from
        # the memory's count at the first load (before its initial block Icarus reads X)
        self.asked: int | None = None
        self.pending = 0  # bytes of the file the memory has not read yet

    def acknowledged(self) -> int:
        return known(self.ram.backdoor_ack.value, "axi_ram backdoor_ack")

    def __call__(self, addresses: np.ndarray, values: np.ndarray) -> None:
        """Memory word ``addresses[i]`` becomes ``values[i]`` at the next rising clock edge; lines
        not read yet stay in the file, so every load of one time step lands."""
        lines = "".join(f"@{address:x} {value:x}\n"
                        for address, value in zip(addresses.tolist(), values.tolist(),
                                                  strict=True)).encode()
        done = self.acknowledged()
        if self.asked is None:
            self.asked = done
        if done == self.asked:
            self.pending = 0  # the memory has read every earlier line
        # Written in place and cut to length, never emptied: on ext4 a file truncated to
        # zero and written again is flushed to disk when closed (about 0.25 ms a load).
        file = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.pwrite(file, lines, self.pending)
            self.pending += len(lines)
            os.ftruncate(file, self.pending)
        finally:
            os.close(file)
        self.asked = (self.asked + 1) & 0xFFFFFFFF
        self.ram.backdoor_req.value = self.asked
