"""Inputs of a program and their expected outputs, by numpy alone."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import build, ops
from . import types as ft
from .program import Program

POISON = {"f": 7777.0, "i": 77, "u": 77, "b": 1}


def make_args(prog: Program, rng) -> dict:
    """Fresh random arrays: ``inputs`` (flat, strided), ``out`` (poisoned), ``da``/``db`` (dot
    operands), ``atom`` (8 int32 zeros; all ones when the only atomic op is ``and``)."""
    s = build.stride(prog)
    size = max(prog.M * s, 1) if not prog.two_d else prog.M * s
    ins = []
    for inp in prog.inputs:
        if ft.is_float(inp.dtype):
            a = (rng.integers(inp.lo, inp.hi + 1, size) / 2**inp.q).astype(ft.NP[inp.dtype])
        else:
            a = rng.integers(inp.lo, inp.hi, size, dtype=np.int64 if ft.signed(inp.dtype) or
                             inp.dtype != "u64" else np.uint64, endpoint=True)
            a = a.astype(ft.NP[inp.dtype])
        ins.append(a)
    out: Any = np.full(size, POISON[np.dtype(ft.NP[prog.out_dtype]).kind], ft.NP[prog.out_dtype])
    ops = {s.p.get("op", "add") for s in prog.stmts if s.kind == "atomic"}
    args = {"inputs": ins, "out": out,  # all ones for and (a zero start would stay zero)
            "atom": np.full(8, -1 if ops == {"and"} else 0, np.int32)}
    dot = [s for s in prog.stmts if s.kind == "dot"]
    if dot:
        src = dot[0].p["src"]
        if src in ("i8", "fp16"):  # small integers
            args["da"] = rng.integers(-4, 5, (prog.M, prog.BK)).astype(ft.NP[src])
            args["db"] = rng.integers(-4, 5, (prog.BK, prog.N)).astype(ft.NP[src])
        else:  # float32 of 12 fractional bits in -4..4 (more than bf16 or tf32 holds)
            args["da"] = (rng.integers(-4096, 4097, (prog.M, prog.BK)) / 1024).astype(np.float32)
            args["db"] = (rng.integers(-4096, 4097, (prog.BK, prog.N)) / 1024).astype(np.float32)
    return args


def _tile_index(prog: Program, pid: tuple):
    if prog.two_d:
        rm = pid[0] * prog.BM + np.arange(prog.BM)
        rn = pid[1] * prog.BN + np.arange(prog.BN)
        mask = (rm[:, None] < prog.M) & (rn[None, :] < prog.N)
        return rm, rn, mask, rm[:, None] * build.stride(prog) + rn[None, :]
    offs = pid[0] * prog.BM + np.arange(prog.BM)
    return offs, None, offs < prog.M, offs * build.stride(prog)


def expected(prog: Program, args: dict) -> dict:
    """``{"out": array, "atom": array}`` the kernel must leave behind."""
    out = args["out"].copy()
    atom = args["atom"].copy()
    for pid in np.ndindex(*build.grid(prog)):
        rm, rn, mask, flat = _tile_index(prog, pid)
        ctx = _context(prog, args, rm, rn, mask, flat, atom)
        env: dict = {}
        for s in prog.stmts:
            v = ops.evaluate(s, env, ctx)
            if v is not None:
                assert s.info is not None
                env[s.out] = (ft.store(v, s.info.dtype), s.info.dtype)
        arr, d = env[prog.result]
        res = ft.cast(arr, d, prog.out_dtype)
        out[flat[mask]] = res[mask]
    return {"out": out, "atom": atom}


def _context(prog, args, rm, rn, mask, flat, atom) -> dict:
    safe = np.where(mask, flat, 0)

    def load(i, other):
        """The masked load of input ``i`` (``other`` in masked lanes)."""
        a = args["inputs"][i]
        d = prog.inputs[i].dtype
        return np.where(mask, a[safe], ft.store(np.asarray(other), d)).astype(ft.NP[d])

    def dot():
        """This program's dot operands, zero outside the logical sizes."""
        rows = np.clip(rm, 0, prog.M - 1)
        cols = np.clip(rn, 0, prog.N - 1)
        a = np.where((rm < prog.M)[:, None], args["da"][rows], 0)
        b = np.where((rn < prog.N)[None, :], args["db"][:, cols], 0)
        return a, b

    def atomic(vals, op):
        """Combine the masked lanes of ``vals`` into the atomic buffer with ``op``."""
        idx = (rm[:, None] * prog.N + rn[None, :]) if prog.two_d else rm
        ufunc = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
                 "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        ufunc.at(atom, (idx % 8)[mask], vals[mask].astype(np.int32))

    return {"load": load, "dot": dot, "atomic": atomic, "it": prog.it, "flag": prog.flag}
