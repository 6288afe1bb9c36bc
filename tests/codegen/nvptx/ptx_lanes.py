"""A tiny evaluator of PTX integer arithmetic, for tests: the address every thread gives to
each ``ldmatrix``/``stmatrix`` of a kernel without loops before them, computed from the PTX
text alone (``%tid.x`` per thread, ``global_smem`` at 0, anything loaded or unknown left
unknown). Independent of the code generator's own bookkeeping."""
from __future__ import annotations

import re

import numpy as np

_M32 = (1 << 32) - 1
_M64 = -1  # int64: every bit


def _split(ops: str) -> list:
    out, depth, cur = [], 0, ""
    for ch in ops:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _mask(op: str) -> int:
    return _M64 if re.search(r"\.[bsu]64\b", op) and "wide" not in op else _M32


def matrix_addresses(ptx: str, threads: int) -> list:
    """``[(instruction, int64 array [threads] of shared addresses)]`` in program order for
    every ``ldmatrix``/``stmatrix``. Raises AssertionError when an address is not known."""
    tid = np.arange(threads, dtype=np.int64)
    regs: dict = {}

    def val(x: str):
        x = x.strip()
        if x == "%tid.x":
            return tid
        if x.startswith("%"):
            return regs.get(x)
        if x == "global_smem":
            return np.zeros(threads, np.int64)
        try:
            return np.full(threads, int(x, 0), np.int64)
        except ValueError:
            return None

    out = []
    for line in ptx.splitlines():
        s = line.strip()
        if not s or s[0] in ".{}/$@" or ";" not in s:
            continue
        s = s.rstrip(";")
        op, _, rest = s.partition(" ")
        if not rest.strip():
            parts = re.split(r"\s+", s, maxsplit=1)
            op, rest = parts[0], parts[1] if len(parts) > 1 else ""
        args = _split(rest)
        if op.startswith(("ldmatrix", "stmatrix")):
            addr = next(a for a in args if a.startswith("["))
            base, _, imm = addr.strip("[]").partition("+")
            v = val(base)
            assert v is not None, f"unknown address in {s}"
            out.append((op, (v + (int(imm) if imm else 0)) & _M32))
            continue
        if not args or not args[0].startswith("%"):
            continue
        d, srcs = args[0], [val(a) for a in args[1:]]
        regs[d] = _apply(op, srcs, args[1:], threads)
    return out


def _apply(op: str, s: list, raw: list, threads: int):
    m = _mask(op)
    if any(v is None for v in s) and not op.startswith("shfl"):
        return None
    base = op.split(".")[0]
    if base in ("mov", "cvt", "cvta"):
        r = s[0]
    elif base == "add":
        r = s[0] + s[1]
    elif base == "sub":
        r = s[0] - s[1]
    elif base == "mul":
        r = s[0] * s[1]
    elif base == "mad":
        r = s[0] * s[1] + s[2]
    elif base == "and":
        r = s[0] & s[1]
    elif base == "or":
        r = s[0] | s[1]
    elif base == "xor":
        r = s[0] ^ s[1]
    elif base == "shl":
        r = s[0] << s[1]
    elif base == "shr":
        r = (s[0] & m) >> s[1]
    elif base == "bfe":  # PTX ISA 9.7.1.14: .s types sign-extend the field's top bit
        r = ((s[0] & m) >> s[1]) & ((1 << s[2]) - 1)
        if ".s" in op:
            r = np.where(r >> (s[2] - 1) & 1, r - (1 << s[2]), r)
    elif base == "shfl" and ".idx" in op and s[0] is not None and raw[1].strip() == "0":
        r = np.repeat(s[0].reshape(-1, 32)[:, :1], 32, axis=1).reshape(-1)
    else:
        return None
    return r & m
