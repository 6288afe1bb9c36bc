"""libdevice integer intrinsics and bit reinterpretations in LLVM IR (CUDA Math API,
"Integer Intrinsics" and "Type Casting Intrinsics"; the interpreter's
:mod:`workbench.backends.interp.extern_more` states each one's semantics).

``ffs``/``ffsll`` (``cttz + 1``, 0 for 0), ``byte_perm`` (bytes of the 64-bit ``{y, x}``
picked by the selector's low three bits of each nibble), ``[u]mulhi``/``[u]mul64hi`` (the high
half of the double-width product), ``[u]mul24``, ``[u][r]hadd`` (in 33 bits, then halved),
``[u]sad``, and the ``*_as_*``/``double2{lo,hi}int``/``hiloint2double`` bit casts.
"""
from __future__ import annotations

from llvmlite import ir

from .llvmtypes import DOUBLE, FLOAT, I32, I64

_CASTS = {"int_as_float": FLOAT, "uint_as_float": FLOAT, "float_as_int": I32,
          "float_as_uint": I32, "longlong_as_double": DOUBLE, "double_as_longlong": I64}


def _ext(b, x, ty, signed):
    return b.sext(x, ty) if signed else b.zext(x, ty)


def _mulhi(b, xs, signed):
    ty = xs[0].type
    wide = ir.IntType(2 * ty.width)
    p = b.mul(_ext(b, xs[0], wide, signed), _ext(b, xs[1], wide, signed))
    return b.trunc(b.lshr(p, ir.Constant(wide, ty.width)), ty)


def _mul24(b, xs, signed):
    sh = ir.Constant(I32, 8)
    if signed:
        a, c = (b.ashr(b.shl(x, sh), sh) for x in xs)
    else:
        a, c = (b.and_(x, ir.Constant(I32, 0xFFFFFF)) for x in xs)
    return b.mul(a, c)


def _hadd(b, xs, signed, rnd):
    w = ir.IntType(33)
    s = b.add(_ext(b, xs[0], w, signed), _ext(b, xs[1], w, signed))
    if rnd:
        s = b.add(s, ir.Constant(w, 1))
    s = b.ashr(s, ir.Constant(w, 1)) if signed else b.lshr(s, ir.Constant(w, 1))
    return b.trunc(s, I32)


def _sad(b, xs, signed):
    cmp = b.icmp_signed if signed else b.icmp_unsigned
    d = b.select(cmp(">", xs[0], xs[1]), b.sub(xs[0], xs[1]), b.sub(xs[1], xs[0]))
    return b.add(d, xs[2])


def _ffs(b, module, x):
    ty = x.type
    fnty = ir.FunctionType(ty, [ty, ir.IntType(1)])
    tz = b.call(module.declare_intrinsic("llvm.cttz", [ty], fnty),
                [x, ir.Constant(ir.IntType(1), 0)])
    r = b.select(b.icmp_unsigned("==", x, ir.Constant(ty, 0)), ir.Constant(ty, 0),
                 b.add(tz, ir.Constant(ty, 1)))
    return r if ty == I32 else b.trunc(r, I32)


def _byte_perm(b, xs):
    both = b.or_(b.zext(xs[0], I64), b.shl(b.zext(xs[1], I64), ir.Constant(I64, 32)))
    sel = b.zext(xs[2], I64)
    out = ir.Constant(I64, 0)
    for i in range(4):
        k = b.and_(b.lshr(sel, ir.Constant(I64, 4 * i)), ir.Constant(I64, 7))
        byte = b.and_(b.lshr(both, b.mul(k, ir.Constant(I64, 8))), ir.Constant(I64, 0xFF))
        out = b.or_(out, b.shl(byte, ir.Constant(I64, 8 * i)))
    return b.trunc(out, I32)


def _bits(b, name, x):
    if name in _CASTS:
        return b.bitcast(x, _CASTS[name])
    if name == "double2loint":
        return b.trunc(b.bitcast(x, I64), I32)
    if name == "double2hiint":
        return b.trunc(b.lshr(b.bitcast(x, I64), ir.Constant(I64, 32)), I32)
    return None


def emit_int(b: ir.IRBuilder, module: ir.Module, name: str, xs: list):
    """Emit integer intrinsic or bit cast ``name`` (``__nv_`` dropped) on LLVM values ``xs``;
    None when ``name`` is not one."""
    r = _bits(b, name, xs[0])
    if r is not None:
        return r
    if name == "hiloint2double":
        bits = b.or_(b.shl(b.zext(xs[0], I64), ir.Constant(I64, 32)), b.zext(xs[1], I64))
        return b.bitcast(bits, DOUBLE)
    if name in ("ffs", "ffsll"):
        return _ffs(b, module, xs[0])
    if name == "byte_perm":
        return _byte_perm(b, xs)
    if name in ("mulhi", "umulhi", "mul64hi", "umul64hi"):
        return _mulhi(b, xs, not name.startswith("u"))
    if name in ("mul24", "umul24"):
        return _mul24(b, xs, name == "mul24")
    if name in ("hadd", "uhadd", "rhadd", "urhadd"):
        return _hadd(b, xs, not name.startswith("u"), "rhadd" in name)
    if name in ("sad", "usad"):
        return _sad(b, xs, name == "sad")
    return None
