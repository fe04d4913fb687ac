"""The DMA's bandwidth on the AXI4 port: a long LOAD against the memory's latency and stalls.

One cocotb test, `dma_bandwidth`, for verif/bench/axi.py: the chip (its default EXT_LAT) on
hw/tb/axi_ram.v, whose profile the test sets through the memory's backdoor before each point
(the variables its plusargs set at time 0, which chip_harness.v's Verilator configuration
makes reachable in the decodes' build). Per point (the memory's read latency, and the
probability that each channel is held low), it runs [LOAD LEN words, HALT] and [HALT] and takes
the difference of their cnt_total as the LOAD's cycles, fetch and check included once: exact
with ready always high, within a few fetch waits otherwise. Writes bandwidth.json (one row per
point) into the run folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge

from model.chip import isa
from model.chip.isa import ChipConfig
from verif.kit.bfm import ChipBfm

LOAD_WORDS = 4000  # from external word 64 into the scratchpad
WATCHDOG = 10_000_000


def set_profile(dut, latency: int, low: int, seed: int) -> None:
    """The memory's profile: every read burst `latency` cycles, each channel low `low`/1024."""
    ram = dut.u_mem
    ram.lat_min.value = latency
    ram.lat_max.value = latency
    for channel in ("ar", "r", "aw", "w", "b"):
        getattr(ram, f"low_{channel}").value = low
    ram.seed.value = seed


async def cycles_of(bfm: ChipBfm, program: list[isa.Instr]) -> int:
    bfm.memory.write(0, isa.assemble(program))
    await bfm.run(WATCHDOG)
    await bfm.settle()
    status = bfm.read_status()
    await RisingEdge(bfm.dut.clk)  # out of the read-only phase, for the next program's writes
    return status.counters.total  # every cycle: the run has no profile plusargs (the ideal's)


@cocotb.test()
async def dma_bandwidth(dut):
    """Words per cycle of a long LOAD at each (latency, low) point of BENCH_POINTS."""
    points = json.loads(os.environ["BENCH_POINTS"])
    bfm = ChipBfm(dut, ChipConfig())
    bfm.memory.write(64, np.arange(LOAD_WORDS))
    rows = []
    for latency, low in points:
        set_profile(dut, latency, low, seed=latency * 1031 + low)
        await bfm.reset()  # the memory draws from its seed again
        halt = await cycles_of(bfm, [isa.halt()])
        load = await cycles_of(bfm, [isa.load(64, 0, LOAD_WORDS), isa.halt()])
        rows.append({"latency": latency, "low": low, "words": LOAD_WORDS,
                     "cycles": load - halt, "words_per_cycle": LOAD_WORDS / (load - halt)})
    Path(os.getcwd(), "bandwidth.json").write_text(json.dumps(rows))
