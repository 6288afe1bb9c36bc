"""The data of a program-level access map: which elements each program loads and stores, which
lanes its masks switch off, and how many bytes of each 32-byte sector and 128-byte line a
warp's access uses.

Coalescing model: a warp's request is 32 consecutive lanes of the tile flattened row-major
(the lanes of Triton's default blocked layout, ``sizePerThread = 1``; wider vectors after the
coalescing pass touch the same sectors in fewer instructions). Global memory is served in
32-byte sectors; an L1/L2 cache line is 128 bytes (CUDA C++ Best Practices Guide, "Coalesced
Access to Global Memory"). Bytes used count distinct bytes the active lanes move (lanes
reading the same element count it once).
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass

import numpy as np

SECTOR = 32
LINE = 128
WARP = 32


@dataclass
class Access:
    """One ``tl.load`` / ``tl.store`` of one program.

    ``pid``: (x, y, z); ``program``: the linear program id (x fastest); ``kind``: "load" or
    "store"; ``line``: source line; ``source``: its text; ``array``: the argument's name (None
    when every lane is masked off); ``indices``: int64 [lanes] flat element index of every lane
    in the array (``(address - base) // itemsize``; masked-off lanes too, they may lie outside
    the array); ``mask``: bool [lanes] (True: the lane moves data); ``itemsize``: bytes per
    lane; ``shape``: the tile shape; ``addresses``: int64 [lanes] byte addresses.
    """

    pid: tuple
    program: int
    kind: str
    line: int
    source: str
    array: str | None
    indices: np.ndarray
    mask: np.ndarray
    itemsize: int
    shape: tuple
    addresses: np.ndarray

    @property
    def keep_fraction(self) -> float:
        """Fraction of lanes the mask keeps (1.0 without a mask)."""
        return float(self.mask.mean()) if self.mask.size else 1.0

    def coalescing(self) -> dict:
        """Per-warp traffic of this access, summed over its warps: ``requests`` (warps with an
        active lane), ``sectors`` (32-byte sectors touched), ``lines`` (128-byte lines
        touched), ``bytes`` (distinct bytes the active lanes move)."""
        out = {"requests": 0, "sectors": 0, "lines": 0, "bytes": 0}
        for s in range(0, self.addresses.size, WARP):
            a = self.addresses[s:s + WARP][self.mask[s:s + WARP]]
            if a.size == 0:
                continue
            first, last = a, a + self.itemsize - 1
            out["requests"] += 1
            out["sectors"] += np.unique(np.concatenate([first // SECTOR, last // SECTOR])).size
            out["lines"] += np.unique(np.concatenate([first // LINE, last // LINE])).size
            out["bytes"] += np.unique(a).size * self.itemsize
        return out


@dataclass
class SiteStats:
    """One access site (a load or store source line on one array) over all programs:
    ``lanes`` and ``active`` lane counts, and the summed :meth:`Access.coalescing` counts."""

    kind: str
    line: int
    source: str
    array: str | None
    lanes: int = 0
    active: int = 0
    requests: int = 0
    sectors: int = 0
    lines: int = 0
    bytes: int = 0

    @property
    def keep_fraction(self) -> float:
        """Fraction of lanes the mask keeps."""
        return self.active / self.lanes if self.lanes else 1.0

    @property
    def bytes_per_sector(self) -> float:
        """Bytes used per 32-byte sector moved (32 is perfect)."""
        return self.bytes / self.sectors if self.sectors else 0.0

    @property
    def bytes_per_line(self) -> float:
        """Bytes used per 128-byte line touched (128 is perfect)."""
        return self.bytes / self.lines if self.lines else 0.0


def build_accesses(events, grid3) -> list[Access]:
    """:class:`Access` objects of recorded :class:`~workbench.backends.interp.recorder.
    AccessEvent` objects (``grid3``: the launch grid, for the linear program id)."""
    gx, gy = grid3[0], grid3[1]
    out = []
    for e in events:
        src = linecache.getline(e.file, e.line).strip() if e.file else ""
        idx = (e.addresses - e.base) // e.itemsize
        out.append(Access(pid=e.pid, program=e.pid[0] + gx * (e.pid[1] + gy * e.pid[2]),
                          kind=e.kind, line=e.line, source=src, array=e.array, indices=idx,
                          mask=e.mask, itemsize=e.itemsize, shape=e.shape,
                          addresses=e.addresses))
    return out


def site_stats(accesses: list[Access]) -> list[SiteStats]:
    """:class:`SiteStats` per (kind, line, array), in order of first execution."""
    sites: dict = {}
    for a in accesses:
        key = (a.kind, a.line, a.array)
        st = sites.get(key)
        if st is None:
            st = sites[key] = SiteStats(a.kind, a.line, a.source, a.array)
        st.lanes += a.mask.size
        st.active += int(a.mask.sum())
        for k, v in a.coalescing().items():
            setattr(st, k, getattr(st, k) + v)
    # a fully masked access has no array: fold it into the site of the same line
    named = {(k, ln): s for (k, ln, arr), s in sites.items() if arr is not None}
    for (k, ln, arr), s in list(sites.items()):
        if arr is None and (k, ln) in named:
            tgt = named[(k, ln)]
            tgt.lanes += s.lanes
            del sites[(k, ln, arr)]
    return list(sites.values())


def cell_states(accesses: list[Access], array: str, numel: int) -> np.ndarray:
    """What one program's accesses did to each element of ``array``: int8 [numel], 0
    untouched, 1 loaded, 2 stored, 3 loaded and stored, 4 only masked-off lanes point at it.
    Pass the accesses of one program."""
    st = np.zeros(numel, np.int8)
    masked = np.zeros(numel, bool)
    for a in accesses:
        if a.array != array:
            continue
        ok = (a.indices >= 0) & (a.indices < numel)
        on = a.indices[ok & a.mask]
        st[on] |= 1 if a.kind == "load" else 2
        masked[a.indices[ok & ~a.mask]] = True
    st[(st == 0) & masked] = 4
    return st
