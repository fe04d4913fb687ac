"""A seeded campaign plan: the workloads, and faults drawn uniformly over the bits of each stratum.

The chip stratum is the chip's state: a site (flip-flop register, unit array or the scratchpad)
drawn with a chance proportional to its bits, then a bit, a word and a cycle uniformly, so each
unit's share of the injections is its share of the chip's bits. External-memory words (uniform
over the workload's regions) and AXI read beats lie outside the chip: strata of their own counts.
A fault's run is a decode step with chance DECODE_SHARE, else a random program. A plan travels to
a simulator process as a JSON chunk file (FAULT_PLAN).
"""

from __future__ import annotations

import itertools
import json
import random
from functools import cache
from pathlib import Path

from model.chip import machine
from model.chip.isa import ChipConfig
from verif.agents.chip.items import ProgramItem
from verif.faults.items import Fault
from verif.faults.sites import SCRATCHPAD_SITES, Register, chip_registers
from verif.faults.workloads import Workload

FAULT_PLAN_ENV = "FAULT_PLAN"
DECODE_SHARE = 0.5  # of each stratum's faults, injected into a chapter decode step
DECODE_STEPS = ((8, 12), (0, 12))  # (window, 0 for full attention; step): past W = 8's window
PROGRAMS = 4  # random programs per campaign
WORD_BITS = 32  # an external word, an AXI beat


def workloads(seed: int, programs: int = PROGRAMS,
              decodes: tuple[tuple[int, int], ...] = DECODE_STEPS) -> list[Workload]:
    return [*(Workload("program", seed, index) for index in range(programs)),
            *(Workload("decode", window, step) for window, step in decodes)]


def model_of(site_path: str, depth: int) -> str:
    if site_path in SCRATCHPAD_SITES:
        return "scratchpad"
    return "array" if depth else "flip-flop"


@cache
def _bits_so_far(cfg: ChipConfig, detection: bool
                 ) -> tuple[tuple[Register, ...], tuple[int, ...]]:
    """The chip's sites and their cumulative bits (rng.choices' cum_weights)."""
    registers = chip_registers(cfg, detection)
    return registers, tuple(itertools.accumulate(r.bits for r in registers))


def chip_fault(rng: random.Random, workload: int, cycles: int, cfg: ChipConfig,
               detection: bool = True) -> Fault:
    """A bit of the chip's state, uniformly over all of them, in a uniform cycle."""
    registers, cumulative = _bits_so_far(cfg, detection)
    register = rng.choices(registers, cum_weights=cumulative)[0]
    index = rng.randrange(register.depth) if register.depth else 0
    return Fault(model_of(register.path, register.depth), register.path, register.unit, index,
                 rng.randrange(register.width), rng.randrange(cycles), workload)


def external_fault(rng: random.Random, workload: int, cycles: int, run: Workload,
                   cfg: ChipConfig) -> Fault:
    """A bit of an external word the run starts from, uniformly over its regions' words."""
    regions = [r for r in run.regions(cfg) if r.words]
    region = rng.choices(regions, weights=[r.words for r in regions])[0]
    return Fault("external", region.name, "memory", rng.randrange(region.start, region.end),
                 rng.randrange(WORD_BITS), rng.randrange(cycles), workload)


def axi_fault(rng: random.Random, workload: int, cycles: int) -> Fault:
    return Fault("axi-read", "read data", "axi", 0, rng.randrange(WORD_BITS),
                 rng.randrange(cycles), workload)


def plan(seed: int, count: int, outside: int, runs: list[Workload] | None = None,
         cfg: ChipConfig | None = None, detection: bool = True
         ) -> tuple[list[Workload], list[Fault]]:
    """``count`` chip faults, then ``outside`` external-memory and ``outside`` AXI read faults,
    over ``runs`` (default: workloads(seed)), all drawn from ``seed``, on the chip with its
    parity checks (``detection``) or without."""
    cfg = cfg or ChipConfig()
    runs = runs or workloads(seed)
    cycles = [machine.run(run.item(cfg).image(), cfg).counters.total for run in runs]
    kinds = {kind: [i for i, run in enumerate(runs) if run.kind == kind]
             for kind in ("program", "decode")}
    rng = random.Random(seed)

    def pick() -> int:
        decode = kinds["decode"] and (not kinds["program"] or rng.random() < DECODE_SHARE)
        return rng.choice(kinds["decode" if decode else "program"])

    faults = []
    for number in range(count + 2 * outside):
        w = pick()
        if number < count:
            faults.append(chip_fault(rng, w, cycles[w], cfg, detection))
        elif number < count + outside:
            faults.append(external_fault(rng, w, cycles[w], runs[w], cfg))
        else:
            faults.append(axi_fault(rng, w, cycles[w]))
    return runs, faults


def write_chunk(path: Path, runs: list[Workload], faults: list[Fault], detection: bool) -> None:
    path.write_text(json.dumps({"workloads": [vars(r) for r in runs], "detection": detection,
                                "faults": [f.as_dict() for f in faults]}))


def read_chunk(path: str, cfg: ChipConfig) -> tuple[list[ProgramItem], list[Fault], bool]:
    """The chunk's workloads, faults, and whether its chip has its parity checks."""
    data = json.loads(Path(path).read_text())
    return ([Workload(**w).item(cfg) for w in data["workloads"]],
            [Fault(**f) for f in data["faults"]], data["detection"])
