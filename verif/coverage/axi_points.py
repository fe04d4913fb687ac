"""Functional coverage of the AXI4 port's traffic: the covergroup ``axi.burst_cg``.

The memory interface's block test samples every burst and asserts every bin hit (`holes`), so
its stimulus cannot quietly stop covering one; its coverage.yml joins the merged report."""

from __future__ import annotations

from cocotb_coverage.coverage import CoverPoint, coverage_db

BURST_CG = "axi.burst_cg"
PAGE_WORDS = 1024  # 4 KB of 32-bit words
BEAT_BINS = ("1", "2 .. 15", "16 .. 255", "256")
RESPONSE_BINS = ("read", "write")


def beats_bin(beats: int) -> str:
    if beats == 1:
        return "1"
    if beats < 16:
        return "2 .. 15"
    return "16 .. 255" if beats < 256 else "256"


def cut_at_4k(address: int, beats: int) -> bool:
    """A burst that ends on a 4 KB boundary without being a whole 256-beat burst from one."""
    return (address + beats) % PAGE_WORDS == 0 and beats < 256 and address % 256 != 0


@CoverPoint(f"{BURST_CG}.beats", xf=lambda address, beats: beats_bin(beats), bins=list(BEAT_BINS))
@CoverPoint(f"{BURST_CG}.split_at_4k", xf=cut_at_4k, bins=[True],
            bins_labels=["a stream cut at a 4 KB boundary"])
def cover_burst(address: int, beats: int) -> None:
    """One burst on the port (AR or AW): its word address and beats."""


@CoverPoint(f"{BURST_CG}.back_to_back", xf=lambda gap: gap == 1, bins=[True],
            bins_labels=["two ARs in consecutive cycles"])
def cover_read_gap(gap: int) -> None:
    """The cycles between two read bursts' handshakes."""


@CoverPoint(f"{BURST_CG}.reads_outstanding", xf=lambda most, limit: most == limit, bins=[True],
            bins_labels=["READS_MAX reads outstanding"])
def cover_outstanding(most: int, limit: int) -> None:
    """The most reads the unit had outstanding, against its declared limit."""


@CoverPoint(f"{BURST_CG}.error_response", xf=lambda kind: kind, bins=list(RESPONSE_BINS))
def cover_error_response(kind: str) -> None:
    """An error response (SLVERR or DECERR) to a read or a write."""


def holes() -> list[str]:
    """Every bin of axi.burst_cg not hit yet, as 'point: bin'."""
    missing = []
    for name, item in coverage_db.items():
        if name.startswith(f"{BURST_CG}.") and hasattr(item, "detailed_coverage"):
            missing += [f"{name}: {label}" for label, hits in item.detailed_coverage.items()
                        if not hits]
    return missing
