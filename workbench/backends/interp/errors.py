"""Errors raised while interpreting a kernel, and turning memory faults into user errors."""
from __future__ import annotations

import numpy as np

from ...errors import OutOfBoundsError, WorkbenchError, format_at


class InterpreterError(WorkbenchError):
    """An op failed while the interpreter ran it (unsupported case, bad value). Attributes:
    ``program_id`` (x, y, z), ``loc`` (the op's source Location), ``reason``."""

    def __init__(self, reason: str, program_id=None, loc=None):
        self.reason, self.program_id, self.loc = reason, program_id, loc
        where = f" in program {tuple(program_id)}" if program_id is not None else ""
        super().__init__(format_at(loc, reason + where))


class DeviceAssertionError(InterpreterError, AssertionError):
    """A ``tl.device_assert`` (``tt.assert``) failed; ``program_id`` is the first failing
    program, ``loc`` its source line, ``message`` the user's message."""

    def __init__(self, message: str, program_id=None, loc=None):
        self.message = message
        super().__init__(f"device assertion failed: {message}", program_id, loc)


def first_program(bad: np.ndarray, pids: list) -> tuple[int, tuple]:
    """The batch index and program id of the first program with a True lane in ``bad``
    (leading axis = programs of the batch, or 1 when the value is the same for all)."""
    if bad.ndim == 0 or bad.shape[0] == 1:
        return 0, pids[0]
    per = bad.reshape(bad.shape[0], -1).any(axis=1)
    b = int(np.argmax(per))
    return b, pids[b]


def out_of_bounds(kind: str, bad: np.ndarray, addr: np.ndarray, memory, arg, itemsize: int,
                  pids: list, loc) -> OutOfBoundsError:
    """Build the user's :class:`OutOfBoundsError` for a ``kind`` ("load", "store", "atomic")
    whose lanes ``bad`` (addresses ``addr``) fell outside every array of the launch.

    ``offset`` is the first offending *byte* offset relative to the pointer argument's base
    (the contract of :class:`OutOfBoundsError`); ``element_offset`` the same in elements
    (``(address - base) // itemsize``) and ``offsets`` all offending lanes' element offsets in
    that program. The message shows the element offsets and the first byte offset."""
    b, pid = first_program(bad, pids)
    bad_b = bad[b] if bad.ndim and bad.shape[0] > 1 else bad[0] if bad.ndim else bad
    addr_b = np.broadcast_to(addr, bad.shape)
    addr_b = addr_b[b] if bad.ndim and bad.shape[0] > 1 else addr_b[0] if bad.ndim else addr_b
    bad_addrs = np.atleast_1d(addr_b[bad_b]).astype(np.int64)
    region = memory.args.get(arg) if arg is not None else None
    if region is None and memory.args:  # unknown origin: name the nearest argument
        first = int(bad_addrs[0])
        region = min(memory.args.values(),
                     key=lambda r: 0 if r.lo <= first < r.hi else min(abs(first - r.lo),
                                                                        abs(first - r.hi)))
    pid = tuple(int(x) for x in pid)
    if region is None:
        msg = (f"out-of-bounds {kind} in program {pid}: address {int(bad_addrs[0]):#x} is not "
               f"in any array passed to the launch")
        err = OutOfBoundsError(msg, program_id=pid, loc=loc, offset=None, arg=None)
        err.offsets, err.element_offset = [], None
        return err
    offs = ((bad_addrs - region.base) // itemsize).tolist()
    lo = (region.lo - region.base) // itemsize
    hi = (region.hi - region.base) // itemsize
    byte_off = int(bad_addrs[0]) - region.base
    shown = ", ".join(str(o) for o in offs[:8]) + (", ..." if len(offs) > 8 else "")
    msg = (f"out-of-bounds {kind} through pointer argument '{region.name}' in program {pid}: "
           f"element offsets [{shown}] ({len(offs)} lane{'s' if len(offs) != 1 else ''}) are "
           f"outside the array's elements [{lo}, {hi}) (first byte offset {byte_off})")
    err = OutOfBoundsError(msg, program_id=pid, loc=loc, offset=byte_off, arg=region.name)
    err.offsets, err.element_offset = offs, offs[0]
    return err
