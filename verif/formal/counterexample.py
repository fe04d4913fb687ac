"""A formal counterexample of the AXI4 rules (hw/formal/axi4_rules.vh) as a user reads it: the
cycle (0 the first after reset, as hw/tb/axi_checker.v counts), the channel and the rule of the
failing label, the VCD sby wrote, and a GTKWave save file beside it showing that channel's
signals with the marker on the failing cycle."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from model.chip.rtl_defs import AxiChannel, AxiRule
from sim.wave_views import DumpTime, Layout, save_file_text, tick_exponent
from verif.formal.sby import CheckResult

RULES_INSTANCE = "u_rules"  # the axi4_rules instance of every wrapper
CYCLE = "cycle"  # its count of cycles since reset
STEP = "smt_step"  # the solver's step, in every sby VCD
SAVE_SUFFIX = ".gtkw"
# the axi4_rules ports that show each channel, valid and ready first
CHANNEL_SIGNALS = {
    AxiChannel.AR: ("arvalid", "arready", "araddr", "arlen", "arsize", "arburst", "reads_out"),
    AxiChannel.R: ("rvalid", "rready", "rlast", "rresp", "rdata", "reads_out"),
    AxiChannel.AW: ("awvalid", "awready", "awaddr", "awlen", "awsize", "awburst", "writes_open"),
    AxiChannel.W: ("wvalid", "wready", "wlast", "wdata", "awvalid", "awready", "awlen"),
    AxiChannel.B: ("bvalid", "bready", "bresp", "writes_open", "wlast", "wvalid"),
}
VAR_LINE = re.compile(r"\$var\s+\S+\s+(\d+)\s+(\S+)\s+(\S+)")


@dataclass(frozen=True)
class Counterexample:
    """Where a check failed: the label of each failing assertion, the cycle and the first
    label's channel and rule (None where the label is not <CHANNEL>_<RULE>)."""

    labels: tuple[str, ...]
    cycle: int
    channel: AxiChannel | None
    rule: AxiRule | None
    trace: Path
    save_file: Path

    def describe(self) -> str:
        where = f"{self.channel.name}, {self.rule.name}" if self.channel and self.rule else \
            ", ".join(self.labels)
        return f"cycle {self.cycle}: {where} ({', '.join(self.labels)}); waves {self.trace}, " \
               f"gtkwave {self.trace} {self.save_file}"


def channel_rule(label: str) -> tuple[AxiChannel | None, AxiRule | None]:
    """AR_READS_OUTSTANDING -> (AR, READS_OUTSTANDING); (None, None) for any other label."""
    channel, _, rule = label.partition("_")
    if channel in AxiChannel.__members__ and rule in AxiRule.__members__:
        return AxiChannel[channel], AxiRule[rule]
    return None, None


@dataclass
class Vcd:
    """The few facts of an sby trace this module needs: each variable's width and changes."""

    exponent: int  # a tick is 10**exponent s
    widths: dict[str, int]  # dotted path -> bits
    changes: dict[str, list[tuple[int, int]]]  # dotted path -> (time, value), in time order

    def value_at(self, path: str, time: int) -> int:
        value = 0
        for at, changed in self.changes[path]:
            if at > time:
                break
            value = changed
        return value

    def find(self, suffix: str) -> str:
        return next(path for path in self.widths if path.endswith(suffix))

    def rules_cycle_time(self, cycle: int) -> int:
        """The first time the AXI4 rules' own cycle count shows ``cycle`` (where a save file's
        marker on that cycle belongs)."""
        count = self.find(f"{RULES_INSTANCE}.{CYCLE}")
        return next(time for time, value in self.changes[count] if value == cycle)


def read_vcd(path: Path) -> Vcd:
    """Parse an sby VCD (integer values only: sby writes no reals or strings)."""
    scopes: list[str] = []
    ids: dict[str, list[str]] = {}
    widths: dict[str, int] = {}
    exponent, time = -9, 0
    changes: dict[str, list[tuple[int, int]]] = {}
    for line in path.read_text().splitlines():
        word = line.split()
        if not word:
            continue
        if word[0] == "$timescale":
            exponent = tick_exponent(" ".join(word[1:-1]))
        elif word[0] == "$scope":
            scopes.append(word[2])
        elif word[0] == "$upscope":
            scopes.pop()
        elif found := VAR_LINE.match(line):
            name = ".".join([*scopes, found[3]])
            ids.setdefault(found[2], []).append(name)
            widths[name], changes[name] = int(found[1]), []
        elif line.startswith("#"):
            time = int(line[1:])
        elif line[0] in "01xz" and line[1:] in ids:
            _record(changes, ids[line[1:]], time, line[0])
        elif line[0] == "b" and len(word) == 2 and word[1] in ids:
            _record(changes, ids[word[1]], time, word[0][1:])
    return Vcd(exponent, widths, changes)


def _record(changes: dict[str, list[tuple[int, int]]], names: list[str], time: int,
            bits: str) -> None:
    value = int(bits.replace("x", "0").replace("z", "0"), 2)
    for name in names:
        changes[name].append((time, value))


def counterexample(result: CheckResult) -> Counterexample | None:
    """The counterexample of a failed check: its failing labels, and the cycle read from the trace
    at the step before the one sby reports (a clocked assertion is reported a step after the
    values that broke it)."""
    failed = [p for p in result.properties if p.kind == "assert" and p.status == "fail"]
    if not failed or not failed[0].trace or result.step is None:
        return None
    trace = Path(failed[0].trace)
    vcd = read_vcd(trace)
    steps = [time for time, _ in vcd.changes[vcd.find(STEP)]]
    period = steps[1] - steps[0]
    broke_at = steps[result.step - 1]  # the values that broke the rule
    cycle = vcd.value_at(vcd.find(f"{RULES_INSTANCE}.{CYCLE}"), broke_at)
    labels = tuple(p.name for p in failed)
    channel, rule = channel_rule(labels[0])
    save = trace.with_suffix(SAVE_SUFFIX)
    layout = channel_layout(vcd, channel)
    dump = DumpTime(run_ns=_ns(steps[-1] + period, vcd.exponent), exponent=vcd.exponent)
    note = f"{result.job}: {', '.join(labels)} at cycle {cycle}"
    save.write_text(save_file_text(trace, save, dump, _ns(broke_at, vcd.exponent), layout, note))
    return Counterexample(labels, cycle, channel, rule, trace, save)


def _ns(ticks: int, exponent: int) -> float:
    return ticks * 10.0 ** (exponent + 9)


def channel_layout(vcd: Vcd, channel: AxiChannel | None) -> Layout:
    """The rules instance's cycle count and the failing channel's signals (every channel's when
    the label names none), as GTKWave names them (a vector with its range)."""
    names = [CYCLE, *(CHANNEL_SIGNALS[channel] if channel else
                      dict.fromkeys(s for signals in CHANNEL_SIGNALS.values() for s in signals))]
    paths = [vcd.find(f"{RULES_INSTANCE}.{name}") for name in names]
    shown = [f"{p}[{vcd.widths[p] - 1}:0]" if vcd.widths[p] > 1 else p for p in paths]
    scope = paths[0].rsplit(".", 1)[0]
    return Layout(["[sst_expanded] 1", f"[treeopen] {scope}.", "@22", *shown],
                  [f"variable_add {p}" for p in paths])
