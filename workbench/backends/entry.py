"""Bytes of a cache entry: a JSON header and named binary parts, and source locations as a
table (what :meth:`workbench.backends.base.Backend.pack` and the runtime's kernel entries
are made of).

Layout of :func:`pack_parts`: an 8-byte little-endian length ``n``, ``n`` bytes of UTF-8 JSON
``{"meta": ..., "parts": [[name, length], ...]}``, then each part's bytes in order.
:func:`unpack_parts` checks every length and raises ValueError on anything malformed, so a
damaged entry is a miss that gets rebuilt.
"""
from __future__ import annotations

import json

from ..ir.core import Location

_LEN = 8


def pack_parts(meta, parts: dict | None = None) -> bytes:
    """``meta`` (JSON-able) and ``parts`` (name -> bytes) as one bytes object."""
    parts = parts or {}
    head = json.dumps({"meta": meta, "parts": [[k, len(v)] for k, v in parts.items()]},
                      separators=(",", ":")).encode()
    return len(head).to_bytes(_LEN, "little") + head + b"".join(parts.values())


def unpack_parts(data: bytes) -> tuple:
    """``(meta, parts)`` of :func:`pack_parts`'s bytes. Raises ValueError when malformed."""
    n = int.from_bytes(data[:_LEN], "little")
    if len(data) < _LEN + n:
        raise ValueError("entry shorter than its header")
    head = json.loads(data[_LEN:_LEN + n])
    if not isinstance(head, dict) or not isinstance(head.get("parts"), list):
        raise ValueError("entry header is not an object with a part list")
    pos, parts = _LEN + n, {}
    for name, size in head["parts"]:
        parts[name] = data[pos:pos + size]
        pos += size
    if pos != len(data):
        raise ValueError("entry parts do not add up to its length")
    return head["meta"], parts


class LocationTable:
    """Source locations as JSON rows ``[file, line, col, name, caller row or None]`` (callers
    first), each distinct location once: :meth:`index` gives a location's row number."""

    def __init__(self) -> None:
        self.rows: list = []
        self._index: dict = {}

    def index(self, loc: Location | None) -> int | None:
        """The row of ``loc`` (added with its callers if new); None for None."""
        if loc is None:
            return None
        idx = self._index.get(loc)
        if idx is None:
            caller = self.index(loc.caller)
            idx = self._index[loc] = len(self.rows)
            self.rows.append([loc.file, loc.line, loc.col, loc.name, caller])
        return idx


def locations_from_rows(rows: list) -> list:
    """The :class:`Location` of each row of a :class:`LocationTable`."""
    out: list = []
    for file, line, col, name, caller in rows:  # callers always come first
        out.append(Location(file, line, col, name, out[caller] if caller is not None else None))
    return out
