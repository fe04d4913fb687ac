"""What an FST waveform file says about itself: its tick, its time span and the variables of a
top-level scope, read from its header and hierarchy blocks (no FST library on the machine).

The viewers' files of a failure (sim/wave_views.py) are written in the dump's own time units,
and a block's save file lists its top-level signals by the names the dump gives them
(``x [31:0]`` in the file, ``x[31:0]`` in GTKWave). The layout is fstapi's: a file is blocks
of (type byte, big-endian 64-bit length counting itself, body); the header block comes first.
Icarus compresses the hierarchy with gzip, Verilator with LZ4 (both decoded here).
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HEADER_BLOCK = 0
HIER_GZIP, HIER_LZ4, HIER_LZ4_TWICE = 4, 6, 7  # hierarchy blocks
# hierarchy records: a scope, its end, an attribute and its end; any other tag is a variable
SCOPE, UPSCOPE, ATTRIBUTE, ATTRIBUTE_END = 254, 255, 252, 253
PARAMETERS = (2, 4)  # variable types of (real) parameters: constants, not signals


class FstError(ValueError):
    """The file is not an FST file this module reads."""


@dataclass(frozen=True)
class FstHeader:
    """The header block: the time span in ticks, and the tick as a power of ten seconds."""

    start: int
    end: int
    exponent: int  # a tick is 10**exponent s: -12 for 1 ps


def read_header(path: Path) -> FstHeader:
    """The header block of an FST file."""
    with open(path, "rb") as handle:
        head = handle.read(74)
    if len(head) < 74 or head[0] != HEADER_BLOCK:
        raise FstError(f"{path}: no FST header block")
    start, end = struct.unpack(">QQ", head[9:25])
    return FstHeader(start, end, struct.unpack(">b", head[73:74])[0])


def scope_variables(path: Path, scope: str) -> list[str]:
    """The variables declared directly in the top-level scope ``scope``, parameters left out,
    as GTKWave names them (``scope.x[31:0]``), in the file's order."""
    names: list[str] = []
    depth, top = 0, ""
    for tag, fields in _records(_hierarchy(Path(path).read_bytes())):
        if tag == SCOPE:
            depth += 1
            top = fields[0] if depth == 1 else top
        elif tag == UPSCOPE:
            depth -= 1
        elif depth == 1 and top == scope and tag not in (ATTRIBUTE, ATTRIBUTE_END, *PARAMETERS):
            names.append(f"{scope}.{fields[0].replace(' ', '')}")
    return names


def _hierarchy(data: bytes) -> bytes:
    """The uncompressed hierarchy block of a whole file."""
    at = 0
    while at + 9 <= len(data):
        kind, length = data[at], struct.unpack(">Q", data[at + 1:at + 9])[0]
        body = data[at + 9:at + 1 + length]
        if kind == HIER_GZIP:
            return gzip.decompress(body[8:])
        if kind == HIER_LZ4:
            return lz4_block(body[8:])
        if kind == HIER_LZ4_TWICE:
            _, skip = _varint(body, 8)
            return lz4_block(lz4_block(body[skip:]))
        at += 1 + length
    raise FstError("no hierarchy block")


def _records(hier: bytes) -> Iterator[tuple[int, tuple[str, ...]]]:
    """(tag, names) for every record of a hierarchy: a scope's name, a variable's name."""
    at = 0
    while at < len(hier):
        tag = hier[at]
        if tag == SCOPE:  # scope type, name, component
            name, at = _string(hier, at + 2)
            _, at = _string(hier, at)
            yield tag, (name,)
        elif tag in (UPSCOPE, ATTRIBUTE_END):
            at += 1
            yield tag, ()
        elif tag == ATTRIBUTE:  # attribute type, subtype, name, argument
            _, at = _string(hier, at + 3)
            _, at = _varint(hier, at)
            yield tag, ()
        else:  # variable type, direction, name, length, alias
            name, at = _string(hier, at + 2)
            _, at = _varint(hier, at)
            _, at = _varint(hier, at)
            yield tag, (name,)


def _string(data: bytes, at: int) -> tuple[str, int]:
    end = data.index(0, at)
    return data[at:end].decode(errors="replace"), end + 1


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """A LEB128 unsigned integer and the position after it."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def lz4_block(source: bytes) -> bytes:
    """Decode one LZ4 block (the format's sequences of literals, then a match to copy)."""
    out = bytearray()
    at = 0
    while at < len(source):
        token = source[at]
        literals, at = _lz4_length(source, at + 1, token >> 4)
        out += source[at:at + literals]
        at += literals
        if at >= len(source):  # the last sequence has literals only
            break
        offset = source[at] | source[at + 1] << 8
        matched, at = _lz4_length(source, at + 2, token & 0x0F)
        for _ in range(matched + 4):  # byte by byte: a match may overlap its own output
            out.append(out[-offset])
    return bytes(out)


def _lz4_length(source: bytes, at: int, length: int) -> tuple[int, int]:
    """A length whose 4-bit field reads 15 goes on in the following bytes (255: more)."""
    if length == 15:
        while True:
            byte = source[at]
            at += 1
            length += byte
            if byte != 255:
                break
    return length, at
