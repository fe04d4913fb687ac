"""The fault sites of the chip, read from its own RTL: every flip-flop and every writable array.

Yosys elaborates hw/rtl with the chip's parameters (`proc`, no optimisation); each flip-flop
cell's output bits name the register they hold, each write port its array. The instance tree
turns them into paths under chip_top; each top-level instance is a unit.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from functools import cache

from model.chip.isa import ChipConfig
from model.chip.rtl_defs import DETECTION_OFF
from model.paths import BUILD_ROOT, REPO_ROOT, RTL_DIR
from sim.runner import rtl_sources
from verif.formal.sby import TOOLS, tool_environment

TOP = "chip_top"
CACHE = BUILD_ROOT / "faults"
SCRATCHPAD = "u_sram.mem"  # the scratchpad is a fault model of its own (a word of it) ..
SCRATCHPAD_PARITY = "u_sram.g_parity.par"  # .. its words' parity bits too (the same memory)
# cleared by the harness (sram_clear) and compared word by word only where a fault flipped one
SCRATCHPAD_SITES = (SCRATCHPAD, SCRATCHPAD_PARITY)
# the chip before its parity checks (hw/ISA.md, "CORRUPTION"): the `before` campaign's design
WITHOUT_DETECTION = {DETECTION_OFF: 1}
UNIT_OF_INSTANCE = {"u_controller": "controller", "u_dma": "dma", "u_pdma": "pdma",
                    "u_matrix_unit": "mat", "u_vector_unit": "vec", "u_softmax_unit": "sm",
                    "u_mem_if": "mem_if", "u_sram": "sram"}


@dataclass(frozen=True)
class Register:
    """A flip-flop register (``depth`` 0) or a writable array of ``depth`` words, at ``path``
    below chip_top (dots between instances, ``name[i]`` for a register Yosys split)."""

    path: str
    module: str  # the RTL module that declares it
    width: int
    depth: int = 0

    @property
    def unit(self) -> str:
        """The top-level instance it lies in, by unit name (chip_top's own: "top")."""
        head = self.path.split(".")[0]
        return UNIT_OF_INSTANCE.get(head, "top") if "." in self.path else "top"

    @property
    def bits(self) -> int:
        return self.width * max(self.depth, 1)

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]


def design_defines(detection: bool) -> dict[str, int]:
    """The Verilog defines of the chip with (the default) or without its parity checks."""
    return {} if detection else WITHOUT_DETECTION


def design_json(cfg: ChipConfig | None = None, detection: bool = True) -> dict:
    """Yosys's netlist of chip_top after `proc` (cached under build/faults by the RTL's hash)."""
    cfg = cfg or ChipConfig()
    sources = rtl_sources()
    params = sorted(cfg.verilog_parameters().items())
    defines = "".join(f" -D{name}={value}" for name, value in design_defines(detection).items())
    digest = hashlib.sha1(json.dumps([params, defines, *(s.read_bytes().hex() for s in sources)])
                          .encode()).hexdigest()[:12]
    path = CACHE / f"chip-{digest}.json"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        chparams = " ".join(f"-chparam {name} {value}" for name, value in params)
        # paths relative to the repository, Yosys started there: YoWASP's WebAssembly sees the
        # working folder, not every absolute path; a temporary name per process (xdist)
        written = path.with_suffix(f".{os.getpid()}.tmp")
        names = " ".join(os.path.relpath(p, REPO_ROOT) for p in [*sources, written])
        *read, out = names.split(" ")
        script = (f"read_verilog{defines} -I{os.path.relpath(RTL_DIR, REPO_ROOT)} "
                  f"{' '.join(read)}; "
                  f"hierarchy -top {TOP} {chparams}; proc; write_json {out}")
        subprocess.run([TOOLS["YOSYS"], "-q", "-p", script], check=True, capture_output=True,
                       cwd=REPO_ROOT, env=tool_environment())  # the running venv's Yosys
        written.rename(path)
    return json.loads(path.read_text())


def module_name(key: str, module: dict) -> str:
    """The RTL name of a (possibly parameterised) Yosys module."""
    return module.get("attributes", {}).get("hdlname") or key.rsplit("\\", 1)[-1]


def _declared(net: dict) -> str:
    """The source text before a net's name where it is declared (`reg [3:0]`, `output wire`)."""
    match = re.match(r"(.*):(\d+)\.(\d+)-", net.get("attributes", {}).get("src", ""))
    if not match:
        return ""
    return _source_lines(match.group(1))[int(match.group(2)) - 1][: int(match.group(3))]


def _declared_reg(net: dict) -> bool:
    """Whether a net is declared `reg` (Yosys gives the wires assigned from it the same bits)."""
    return bool(re.search(r"\breg\b", _declared(net)))


@cache
def _source_lines(path: str) -> list[str]:
    return (REPO_ROOT / path).read_text().splitlines()  # Yosys names it from the repository


def module_registers(module: dict, name: str) -> list[Register]:
    """The registers of one module: the named nets its flip-flops drive, and its written arrays."""
    owner: dict[int, tuple[str, int]] = {}
    for net_name, net in module["netnames"].items():
        # a loop's `integer` is no state: synthesis keeps no flip-flop of it
        if net.get("hide_name") or "$" in net_name or re.search(r"\binteger\b", _declared(net)):
            continue
        for index, bit in enumerate(net["bits"]):
            if isinstance(bit, int) and (bit not in owner or _declared_reg(net)):
                owner[bit] = (net_name, index)
    held: dict[str, set[int]] = defaultdict(set)
    arrays: set[str] = set()
    for cell in module["cells"].values():
        if "dff" in cell["type"]:
            for bit in cell["connections"]["Q"]:
                if bit in owner:
                    net_name, index = owner[bit]
                    held[net_name].add(index)
        elif cell["type"].startswith("$memwr"):
            arrays.add(cell["parameters"]["MEMID"].lstrip("\\"))
    registers = [Register(_path(net_name), name, len(module["netnames"][net_name]["bits"]))
                 for net_name in held]
    memories = module.get("memories", {})
    registers += [Register(array, name, int(memories[array]["width"]),
                           int(memories[array]["size"])) for array in arrays]
    return registers


def _path(net_name: str) -> str:
    """A Yosys net name as a simulator path: `gen.name` generate scopes kept, `\\` dropped."""
    return net_name.lstrip("\\")


@cache
def chip_registers(cfg: ChipConfig | None = None, detection: bool = True
                   ) -> tuple[Register, ...]:
    """Every register and writable array of the chip, by path below chip_top."""
    design = design_json(cfg, detection)["modules"]
    by_key = {key: module_registers(module, module_name(key, module))
              for key, module in design.items()}
    found: list[Register] = []

    def walk(key: str, prefix: str) -> None:
        found.extend(Register(prefix + r.path, r.module, r.width, r.depth) for r in by_key[key])
        for cell_name, cell in design[key]["cells"].items():
            if cell["type"] in design:
                walk(cell["type"], f"{prefix}{_path(cell_name)}.")

    walk(TOP, "")
    return tuple(sorted(found, key=lambda r: r.path))


def flip_flops(cfg: ChipConfig | None = None, detection: bool = True) -> tuple[Register, ...]:
    """The chip's flip-flop registers (the arrays are memory sites)."""
    return tuple(r for r in chip_registers(cfg, detection) if not r.depth)


def arrays(cfg: ChipConfig | None = None, detection: bool = True) -> tuple[Register, ...]:
    """The units' writable arrays other than the scratchpad (buffers, row memories, parity)."""
    return tuple(r for r in chip_registers(cfg, detection)
                 if r.depth and r.path not in SCRATCHPAD_SITES)


def bits_per_unit(registers: tuple[Register, ...]) -> dict[str, int]:
    totals: dict[str, int] = defaultdict(int)
    for register in registers:
        totals[register.unit] += register.bits
    return dict(sorted(totals.items()))


def verilator_config(registers: tuple[Register, ...]) -> str:
    """A Verilator configuration making exactly these registers readable and writable."""
    pairs = sorted({(r.module, re.sub(r"\[\d+\]$", "", r.name)) for r in registers})
    return "`verilator_config\n" + "".join(
        f'public_flat_rw -module "{module}" -var "{var}"\n' for module, var in pairs)
