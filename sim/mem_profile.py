"""The external memory's profiles: how hw/tb/axi_ram.v stalls, per run, from plusargs.

One build serves every profile: the RAM reads them from plusargs at time 0. `ideal_view` and
`check_wait` keep every comparison with the reference machine exact under any profile (README,
"Memory profiles")."""

from __future__ import annotations

from dataclasses import dataclass, replace

from model.chip.machine import Counters


@dataclass(frozen=True)
class MemProfile:
    """A memory's behaviour; the ideal memory of hw/ISA.md is latency None and nothing low."""

    name: str
    latency: tuple[int, int] | None = None  # a read burst's latency range; None: EXT_LAT
    low: int = 0  # per channel, cycles held low per 1024 (axi_ram.v draws 10 bits)
    stall_prob: int = 0  # a long stall starts in a cycle with this chance per 16384 (14 bits)
    stall_len: int = 0  # .. and lasts this many cycles

    @property
    def ideal(self) -> bool:
        return self.latency is None and self.low == 0 and self.stall_prob == 0

    @property
    def slowdown(self) -> int:
        """How many times the ideal memory's cycles a run may take before it is called hung."""
        if self.ideal:
            return 1
        longest = self.latency[1] if self.latency else 1
        return 4 * longest + 16 + 4 * self.stall_len

    def plusargs(self, seed: int) -> list[str]:
        """axi_ram.v's plusargs for this profile, its generators seeded from `seed`."""
        args = [f"+axi_seed={seed & 0x7FFFFFFF}"]
        if self.latency is not None:
            args += [f"+axi_lat_min={self.latency[0]}", f"+axi_lat_max={self.latency[1]}"]
        args += [f"+axi_{channel}_low={self.low}" for channel in ("ar", "r", "aw", "w", "b")]
        return [*args, f"+axi_stall_prob={self.stall_prob}", f"+axi_stall_len={self.stall_len}"]


IDEAL = "ideal"  # hw/ISA.md's memory: fixed latency EXT_LAT, never a stall
PROFILES = {
    IDEAL: MemProfile(IDEAL),
    "light": MemProfile("light", latency=(4, 16), low=102),  # about 10% of cycles
    "heavy": MemProfile("heavy", latency=(20, 200), low=614, stall_prob=2, stall_len=300),
}


def profile_of(plusargs: dict[str, str]) -> MemProfile:
    """The profile a run was given (cocotb.plusargs): a named one, else an unnamed one."""
    low = int(plusargs.get("axi_ar_low", 0))
    lat = ((int(plusargs["axi_lat_min"]), int(plusargs["axi_lat_max"]))
           if "axi_lat_min" in plusargs else None)
    given = MemProfile("custom", lat, low, int(plusargs.get("axi_stall_prob", 0)),
                       int(plusargs.get("axi_stall_len", 0)))
    return next((p for p in PROFILES.values() if replace(p, name="custom") == given), given)


STALL_FIELDS = ("ar", "r", "aw", "w", "b", "lat")  # axi_ram.v's stall_counts, from bit 0


@dataclass(frozen=True)
class MemStalls:
    """The delays the RAM inserted (axi_ram.v's stall_counts), per channel and latency."""

    ar: int = 0
    r: int = 0
    aw: int = 0
    w: int = 0
    b: int = 0
    lat: int = 0

    @classmethod
    def from_packed(cls, bus: int) -> MemStalls:
        return cls(*((bus >> (32 * i)) & 0xFFFFFFFF for i in range(len(STALL_FIELDS))))

    def __sub__(self, earlier: MemStalls) -> MemStalls:
        return MemStalls(*(getattr(self, f) - getattr(earlier, f) for f in STALL_FIELDS))

    @property
    def total(self) -> int:
        return sum(getattr(self, f) for f in STALL_FIELDS)


def ideal_view(counters: Counters) -> Counters:
    """The counters the run would have had on the ideal memory: the frozen cycles taken out."""
    return replace(counters, total=counters.total - counters.wait, wait=0)


class WaitOutOfBounds(AssertionError):
    """The chip waited more cycles than the memory delayed transfers (hw/ISA.md, "Bounds")."""


def check_wait(wait: int, stalls: MemStalls) -> None:
    """0 <= cnt_wait <= the delays the RAM inserted during the run."""
    if not 0 <= wait <= stalls.total:
        raise WaitOutOfBounds(f"cnt_wait {wait} is outside 0 .. {stalls.total}, the delays the "
                              f"memory inserted ({stalls})")
