"""A random kernel's description: its inputs, its statements and its store, with the Python
source of the ``@jit`` kernel each statement emits and the numpy evaluation of each statement
(independent of the workbench's interpreter).

Every value of a program is a full tile (``(BM,)`` for 1-D programs, ``(BM, BN)`` for 2-D
ones). The numpy evaluation runs program by program on whole tiles, masked-off lanes holding
the load's ``other``, exactly as the kernel sees them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import types as ft


@dataclass
class Info:
    """What the generator knows of a value: dtype; bounds ``lo``..``hi`` of every lane; for
    floats, whether every lane is exact (a multiple of ``2**-q`` that the dtype holds, so any
    backend gets the same bits) and the relative error ``eps`` an inexact one may carry."""
    dtype: str
    lo: float
    hi: float
    exact: bool = True
    q: int = 0
    eps: float = 0.0

    @property
    def bound(self) -> float:
        """The largest magnitude of any lane."""
        return max(abs(self.lo), abs(self.hi))


@dataclass
class Input:
    """One input array: dtype, the ``other`` of its masked load, values drawn in lo..hi
    (floats as multiples of ``2**-q``)."""
    dtype: str
    other: float
    lo: int
    hi: int
    q: int = 0


@dataclass
class Stmt:
    """``out = <kind>(args, **p)``; ``args`` name earlier values, ``p`` holds literals."""
    kind: str
    out: str
    args: tuple
    p: dict = field(default_factory=dict)
    info: Info | None = None


@dataclass
class Program:
    """A kernel description. ``two_d``: tiles (BM, BN) over an M x N grid of programs, else
    (BM,) over M; ``stmts`` run in order; ``result`` is stored (cast to ``out_dtype``);
    ``dot``: (dtype, BK) when a dot statement loads its operands; ``atomic``: a statement adds
    a value into an 8-slot int32 buffer. ``version`` 1: the generator before 8-bit float
    casts, the bf16/tf32/ieee dots with accumulators and atomics other than add (see
    :func:`~workbench.testing.fuzz.build.generate`)."""
    seed: int
    two_d: bool
    BM: int
    BN: int
    M: int
    N: int
    inputs: list
    stmts: list
    result: str
    out_dtype: str
    it: int = 2
    flag: int = 1
    BK: int = 16
    stride_extra: int = 3
    version: int = 2

    def uses(self, kind: str) -> bool:
        """True when a statement of ``kind`` is in the program."""
        return any(s.kind == kind for s in self.stmts)

    def info(self, name: str) -> Info:
        """The Info of value ``name``; KeyError when there is none."""
        for s in self.stmts:
            if s.out == name:
                assert s.info is not None
                return s.info
        raise KeyError(name)


def lit(v) -> str:
    """A Python literal as source text."""
    return repr(float(v)) if isinstance(v, float) else str(int(v))


# numpy evaluation of one statement -----------------------------------------------------------
def _binop(op, a, b, d):
    with np.errstate(all="ignore"):
        r = {"+": np.add, "-": np.subtract, "*": np.multiply}[op](a, b)
    return ft.store(r, d)


def trunc_divmod(a, b, d):
    """C division and remainder (truncate toward zero) for ``b > 0``."""
    q = a // b
    fix = (a % b != 0) & (a < 0)
    q = np.where(fix, q + np.asarray(1, a.dtype), q).astype(a.dtype)
    with np.errstate(all="ignore"):
        return q, (a - q * b).astype(a.dtype)


def operand(env, s: Stmt, i: int, d: str):
    """Argument ``i`` of ``s`` cast to ``d``: a value's array, or a literal given as ``("lit",
    v)``, or a minimum/maximum literal (typed by to_tensor first)."""
    a = s.args[i]
    if isinstance(a, tuple):
        v = a[1]
        return ft.store(np.asarray(v), d) if ft.is_float(d) else np.asarray(v).astype(
            ft.NP[ft.literal_dtype(v)]).astype(ft.NP[d])
    arr, src = env[a]
    return ft.cast(arr, src, d)
