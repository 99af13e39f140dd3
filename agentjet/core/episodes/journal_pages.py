"""Read rows straight off an SQLite file's b-tree leaf pages: the journal's salvage when SQLite itself cannot.

A damaged file (bytes overwritten, truncated) can make every query fail even though most pages
are intact: SQLite walks the b-tree from its root, and one bad page on the way, or the schema's,
stops it. This reader ignores the tree: it visits every page (and every frame of a `-wal` file),
parses each table-leaf page's cells by the documented file format (sqlite.org/fileformat2.html:
cell pointer array, varints, record header and serial types, overflow chains) and yields what
decodes. It never raises on damage: a page or cell that does not parse is skipped. Read-only; pure
apart from reading the files.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LeafRow", "leaf_rows"]

_HEADER = b"SQLite format 3\x00"
_TABLE_LEAF = 0x0D
_WAL_HEADER, _FRAME_HEADER = 32, 24


@dataclass(frozen=True)
class LeafRow:
    rowid: int
    values: tuple[Any, ...]  # None, int, float, str or bytes per column, as stored


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """(value, next offset) of the SQLite varint at `at` (1-9 bytes, big-endian, 7 bits each but the 9th)."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _column(serial: int, data: bytes, at: int) -> tuple[Any, int]:
    sizes = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8, 7: 8, 8: 0, 9: 0}
    if serial in sizes:
        size = sizes[serial]
        raw = data[at : at + size]
        if len(raw) != size:
            raise ValueError("column runs past the payload")
        if serial == 7:
            return struct.unpack(">d", raw)[0], at + size
        if serial in (8, 9):
            return serial - 8, at
        return (int.from_bytes(raw, "big", signed=True) if size else None), at + size
    if serial < 12:
        raise ValueError(f"reserved serial type {serial}")
    size = (serial - 12) // 2 if serial % 2 == 0 else (serial - 13) // 2
    raw = data[at : at + size]
    if len(raw) != size:
        raise ValueError("column runs past the payload")
    return (raw if serial % 2 == 0 else raw.decode("utf-8")), at + size


def _record(payload: bytes) -> tuple[Any, ...]:
    header_size, at = _varint(payload, 0)
    serials = []
    while at < header_size:
        serial, at = _varint(payload, at)
        serials.append(serial)
    values, at = [], header_size
    for serial in serials:
        value, at = _column(serial, payload, at)
        values.append(value)
    return tuple(values)


class _Pages:
    """The main file's pages by number (1-based), with the newest `-wal` frame of a page winning."""

    def __init__(self, path: Path) -> None:
        data = path.read_bytes()
        size = struct.unpack(">H", data[16:18])[0] if data.startswith(_HEADER) else 4096
        self.size = 65536 if size == 1 else (size or 4096)
        self.usable = self.size - (data[20] if len(data) > 20 and data.startswith(_HEADER) else 0)
        self.pages = {n + 1: data[n * self.size : (n + 1) * self.size] for n in range(len(data) // self.size)}
        wal = path.with_name(path.name + "-wal")
        if wal.is_file():
            self._read_wal(wal.read_bytes())

    def _read_wal(self, wal: bytes) -> None:
        step = _FRAME_HEADER + self.size
        for at in range(_WAL_HEADER, len(wal) - step + 1, step):
            number = struct.unpack(">I", wal[at : at + 4])[0]
            if number:
                self.pages[number] = wal[at + _FRAME_HEADER : at + step]

    def payload(self, page: bytes, at: int, total: int) -> bytes:
        """A cell's payload starting at `at`: the local part, then its overflow chain."""
        usable = self.usable
        most = usable - 35
        if total <= most:
            return page[at : at + total]
        least = (usable - 12) * 32 // 255 - 23
        local = least + (total - least) % (usable - 4)
        local = local if local <= most else least
        out = bytearray(page[at : at + local])
        next_page = struct.unpack(">I", page[at + local : at + local + 4])[0]
        seen: set[int] = set()
        while len(out) < total and next_page and next_page not in seen and next_page in self.pages:
            seen.add(next_page)
            overflow = self.pages[next_page]
            out += overflow[4 : 4 + min(usable - 4, total - len(out))]
            next_page = struct.unpack(">I", overflow[:4])[0]
        if len(out) != total:
            raise ValueError("overflow chain broken")
        return bytes(out)


def leaf_rows(path: Path) -> Iterator[LeafRow]:
    """Every row that decodes from a table-leaf page of `path` (and its `-wal`), in page order."""
    pages = _Pages(path)
    for number, page in sorted(pages.pages.items()):
        start = 100 if number == 1 else 0  # page 1 begins with the file header
        if len(page) < start + 8 or page[start] != _TABLE_LEAF:
            continue
        cells = struct.unpack(">H", page[start + 3 : start + 5])[0]
        for index in range(cells):
            try:
                pointer = struct.unpack(">H", page[start + 8 + 2 * index : start + 10 + 2 * index])[0]
                total, at = _varint(page, pointer)
                rowid, at = _varint(page, at)
                yield LeafRow(_signed(rowid), _record(pages.payload(page, at, total)))
            except (ValueError, IndexError, UnicodeDecodeError, struct.error):
                continue
