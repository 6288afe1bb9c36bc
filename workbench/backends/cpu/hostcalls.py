"""Calls from JIT-compiled kernels back into Python: ``tt.print`` output.

Compiled code calls one external symbol,
:data:`workbench.codegen.cpu.debug_ops.HOST_SYMBOL`,

    void workbench_cpu_host_call(i64 op_index, i32 pid_x, i32 pid_y, i32 pid_z,
                                 ptr err, ptr values)

resolved by MCJIT to a ctypes callback registered once per process (``llvm.add_symbol``).
``values`` points to one pointer per printed operand (a contiguous tile buffer or a scalar
slot, in storage types). The callback finds the launch that is running from the worker's
error record (``err[TOKEN]`` = launch token, ``err[WORKER]`` = worker index), formats the
values with numpy exactly as the interpreter does (``pid (x, y, z) <prefix><v0> <v1> ...``),
and appends the line to that worker's list. The launcher writes the lists to ``sys.stdout``
in worker order once the grid is done, so lines come in program-id order (each worker runs a
contiguous range of program ids), as on the interpreter, and reach Jupyter through Python's
``sys.stdout``.
"""
from __future__ import annotations

import ctypes
import itertools
import threading

import llvmlite.binding as llvm
import numpy as np

from ...codegen.cpu.debug_ops import HOST_SYMBOL
from ...codegen.cpu.memory import TOKEN, WORKER

_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int32, ctypes.c_int32,
                            ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
_LIVE: dict = {}
_TOKENS = itertools.count(1)
_LOCK = threading.Lock()


class PrintSession:
    """Output of one launch: ``lines[worker]`` (strings without newline) and the first
    exception raised while formatting (``failure``), re-raised by the launcher."""

    def __init__(self, mem_ops, workers: int):
        self.mem_ops = mem_ops
        self.lines: list[list[str]] = [[] for _ in range(workers)]
        self.failure = None
        with _LOCK:
            self.token = next(_TOKENS)
            _LIVE[self.token] = self

    def close(self) -> None:
        with _LOCK:
            _LIVE.pop(self.token, None)

    def text(self) -> str:
        return "".join(line + "\n" for lines in self.lines for line in lines)


def _np_dtype(tname: str) -> np.dtype:
    """numpy storage dtype of an element type string ("i1", "i32", "f16", "bf16", "ptr")."""
    if tname == "i1":
        return np.dtype(np.bool_)
    if tname == "bf16":
        return np.dtype(np.uint16)
    if tname.startswith("i"):
        return np.dtype(f"i{int(tname[1:]) // 8}")
    if tname.startswith("f"):
        return np.dtype(f"f{int(tname[1:]) // 8}")
    return np.dtype(np.int64)  # pointers: addresses


def format_value(x: np.ndarray, tname: str, signed: bool, hexa: bool) -> str:
    """One printed operand, as the interpreter's ``tt.print`` formats it."""
    is_int = tname.startswith("i") or tname == "ptr"
    if tname == "bf16":
        x = (x.astype(np.uint32) << 16).view(np.float32)
    elif is_int and (not signed or hexa) and x.dtype != np.bool_:
        x = x.view(f"u{x.dtype.itemsize}")
    if hexa and is_int:
        return np.array2string(np.asarray(x), formatter={"int": hex})
    if hexa:
        return np.array2string(np.asarray(x).view(f"u{x.dtype.itemsize}"),
                               formatter={"int": hex})
    return np.array2string(x) if x.ndim else str(x[()])


def format_print(spec: dict, pid: tuple, values: int) -> str:
    """The line one ``tt.print`` writes for program ``pid``; ``spec`` is its mem_ops payload
    ``{"prefix", "hex", "args": [[shape, type name, signed], ...]}``."""
    parts = []
    ptrs = (ctypes.c_uint64 * max(1, len(spec["args"]))).from_address(values)
    for k, (shape, tname, signed) in enumerate(spec["args"]):
        dt = _np_dtype(tname)
        n = int(np.prod(shape)) if shape else 1
        raw = ctypes.string_at(ptrs[k], n * dt.itemsize)
        x = np.frombuffer(raw, dtype=dt).reshape(tuple(shape)).copy()
        parts.append(format_value(x, tname, bool(signed), bool(spec["hex"])))
    return f"pid ({pid[0]}, {pid[1]}, {pid[2]}) {spec['prefix']}{' '.join(parts)}"


def _host_call(index, x, y, z, err, values):
    session = None
    try:
        rec = (ctypes.c_int64 * (WORKER + 1)).from_address(err)
        session = _LIVE.get(int(rec[TOKEN]))
        if session is None:
            return
        _, _, spec = session.mem_ops[index]
        session.lines[int(rec[WORKER])].append(format_print(spec, (x, y, z), values))
    except BaseException as exc:  # never unwind through native frames
        if session is not None and session.failure is None:
            session.failure = exc


_CALLBACK = _HOST_FN(_host_call)
llvm.add_symbol(HOST_SYMBOL, ctypes.cast(_CALLBACK, ctypes.c_void_p).value)
