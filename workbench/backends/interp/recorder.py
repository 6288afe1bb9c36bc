"""An opt-in log of a launch's global-memory accesses, program by program.

Pass an :class:`AccessRecorder` to :class:`~workbench.backends.interp.launch.Launcher`; each
``tt.load`` and ``tt.store`` then appends one :class:`AccessEvent` per program: the byte
address of every lane and the mask. Ordinary launches carry no recorder and pay one attribute
test per memory op. Programs run one at a time while recording (no batching), so every event
belongs to one program id.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class AccessEvent:
    """One load or store of one program.

    ``pid``: the program id (x, y, z); ``kind``: "load" or "store"; ``file``, ``line``,
    ``col``: the source location (the kernel's own line for code inlined from a helper);
    ``array``: the parameter name of the array the active lanes address (None when no lane
    is active or the address is in no argument); ``base``: that array's element-0 byte
    address; ``addresses``: int64 [lanes] byte address of every lane (the tile flattened
    row-major); ``mask``: bool [lanes] (True: the lane accesses memory); ``itemsize``: bytes
    per lane; ``shape``: the tile's shape.
    """

    pid: tuple
    kind: str
    file: str
    line: int
    col: int
    array: str | None
    base: int
    addresses: np.ndarray
    mask: np.ndarray
    itemsize: int
    shape: tuple


@dataclass
class AccessRecorder:
    """Collects :class:`AccessEvent` objects in ``events`` (in execution order); ``grid`` is
    the (x, y, z) grid of the launch (set by the launcher). Atomics and asynchronous copies are
    not recorded."""

    events: list = field(default_factory=list)
    grid: tuple = (0, 0, 0)

    def record(self, kind: str, loc, ptr: np.ndarray, mask, itemsize: int, memory, arg,
               pids) -> None:
        """Append the event of one access (called by the load/store closures).

        ``ptr``: int64 byte addresses (any shape); ``mask``: bool array of the same shape or
        None (all lanes); ``memory``: the launch's :class:`~.memory.Memory`; ``arg``: the
        parameter index the pointer is known to come from, or None; ``pids``: the programs
        running (one while recording)."""
        addr = np.ascontiguousarray(ptr, dtype=np.int64).reshape(-1).copy()
        m = np.ones(addr.shape, bool) if mask is None else \
            np.broadcast_to(mask, ptr.shape).reshape(-1).copy()
        region = memory.args.get(arg) if arg is not None else None
        if region is None and m.any():
            a = int(addr[int(np.argmax(m))])
            region = next((r for r in memory.args.values() if r.lo <= a < r.hi), None)
        root = loc.root() if loc is not None else None
        self.events.append(AccessEvent(
            pid=tuple(int(p) for p in pids[0]), kind=kind,
            file=root.file if root else "", line=root.line if root else 0,
            col=root.col if root else 0, array=region.name if region else None,
            base=region.base if region else 0, addresses=addr, mask=m, itemsize=int(itemsize),
            shape=tuple(ptr.shape)))
