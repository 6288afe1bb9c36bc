"""Lowering of one element of an elementwise op to LLVM instructions.

:func:`emit_elementwise` is used for scalar ops, for each element of a tile op inside a loop
nest and for the ops of ``tt.reduce`` combine regions. Semantics follow the op catalogue
(:mod:`workbench.ir.dialects`) and MLIR's arith/math dialects:

- integers are signless; the op picks signedness (``divsi`` vs ``divui``...);
- integer division and remainder truncate toward zero (C, LLVM ``sdiv``/``srem``). Division by
  zero gives 0 and ``INT_MIN / -1`` wraps, instead of trapping the process (LLVM leaves both
  undefined; x86 ``idiv`` raises SIGFPE);
- shifts by at least the bit width give 0 (``shrsi``: the sign fill), as PTX ``shl``/``shr``
  clamp the shift amount (PTX ISA 8.x, section 9.7.8.7);
- ``maxnumf``/``minnumf`` ignore NaN (``llvm.maxnum``), ``maximumf``/``minimumf`` propagate it;
- ``math.exp``/``exp2``/``log``/``log2`` in fp32 (and fp16/bf16) are inline, vectorisable
  code (:mod:`.vmath`); other ``math.*`` and fp64 map to LLVM intrinsics (``llvm.sqrt``...),
  ``erf``/``tanh`` to the C library.
- results of type bf16 are re-rounded to bf16 (see :mod:`.llvmtypes`).
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.dialects import OPS
from ...ir.types import FloatType, IntType, PointerType, Type
from .. import fp8
from .extern import emit_extern
from .llvmtypes import (
    FLOAT,
    HALF,
    I64,
    f64_to_f32_odd,
    fptrunc,
    is_bf16,
    round_bf16,
    storage_size,
    value_type,
)
from .vmath import FUNCTIONS as VMATH
from .vmath import emit_math

_CMPI = {"eq": ("==", None), "ne": ("!=", None), "slt": ("<", True), "sle": ("<=", True),
         "sgt": (">", True), "sge": (">=", True), "ult": ("<", False), "ule": ("<=", False),
         "ugt": (">", False), "uge": (">=", False)}
_CMPF = {"oeq": ("==", True), "one": ("!=", True), "olt": ("<", True), "ole": ("<=", True),
         "ogt": (">", True), "oge": (">=", True), "ord": ("ord", True), "ueq": ("==", False),
         "une": ("!=", False), "ult": ("<", False), "ule": ("<=", False), "ugt": (">", False),
         "uge": (">=", False), "uno": ("uno", False)}
_INTRINSIC_UNARY = {"exp": "llvm.exp", "exp2": "llvm.exp2", "log": "llvm.log",
                    "log2": "llvm.log2", "sqrt": "llvm.sqrt", "absf": "llvm.fabs",
                    "floor": "llvm.floor", "ceil": "llvm.ceil", "sin": "llvm.sin",
                    "cos": "llvm.cos", "tanh": "llvm.tanh"}
_BINARY_INTRINSIC = {"maxnumf": "llvm.maxnum", "minnumf": "llvm.minnum",
                     "maximumf": "llvm.maximum", "minimumf": "llvm.minimum",
                     "maxsi": "llvm.smax", "minsi": "llvm.smin", "maxui": "llvm.umax",
                     "minui": "llvm.umin"}

#: every op name emit_elementwise handles: the ops whose spec has the ``elementwise`` trait
ELEMENTWISE = frozenset(n for n, s in OPS.items() if "elementwise" in s.traits)


def _intrinsic(module: ir.Module, name: str, ty: ir.Type, nargs: int = 1):
    """Declare the overloaded intrinsic ``name.<ty>`` taking ``nargs`` operands of ``ty``."""
    return module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * nargs))


def _libm(module: ir.Module, base: str, ty: ir.Type):
    name = base + ("f" if ty == FLOAT else "")
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ty, [ty]), name)
    return fn


def _safe_int_div(b: ir.IRBuilder, kind: str, x, y):
    """C division/remainder that never traps: x/0 -> 0, x%0 -> 0, INT_MIN/-1 wraps."""
    ty = x.type
    zero, one = ir.Constant(ty, 0), ir.Constant(ty, 1)
    is_zero = b.icmp_unsigned("==", y, zero)
    if kind in ("divsi", "remsi"):
        is_m1 = b.icmp_signed("==", y, ir.Constant(ty, -1))
        bad = b.or_(is_zero, is_m1)
        d = b.select(bad, one, y)
        if kind == "divsi":
            q = b.sdiv(x, d)
            q = b.select(is_m1, b.sub(zero, x), q)
            return b.select(is_zero, zero, q)
        r = b.srem(x, d)
        return b.select(bad, zero, r)
    d = b.select(is_zero, one, y)
    r = b.udiv(x, d) if kind == "divui" else b.urem(x, d)
    return b.select(is_zero, zero, r)


def _shift(b: ir.IRBuilder, kind: str, x, y):
    ty = x.type
    width = ir.Constant(ty, ty.width)
    big = b.icmp_unsigned(">=", y, width)
    safe = b.select(big, ir.Constant(ty, 0), y)
    if kind == "shli":
        return b.select(big, ir.Constant(ty, 0), b.shl(x, safe))
    if kind == "shrui":
        return b.select(big, ir.Constant(ty, 0), b.lshr(x, safe))
    safe = b.select(big, ir.Constant(ty, ty.width - 1), y)
    return b.ashr(x, safe)


def _float_cast(b, v, src: FloatType, dst: FloatType):
    """extf / truncf between f16, bf16 (held as f32), f32, f64."""
    sv, dv = value_type(src), value_type(dst)
    if sv == dv:
        out = v
    elif _fwidth(sv) < _fwidth(dv):
        out = b.fpext(v, dv)
    else:
        out = fptrunc(b, v, dv)
    return round_bf16(b, out) if dst.name == "bf16" else out


def _float_cast_rtz(b, v, src: FloatType, dst: FloatType):
    """Narrowing float conversion rounding toward zero (``tt.fp_to_fp {rounding = rtz}``):
    round to nearest, then step one ulp toward zero where that moved away from zero (finite
    inputs only; an overflow to infinity becomes the largest finite value). bf16 results
    truncate the f32 bits (NaN stays quiet)."""
    sv, dv = value_type(src), value_type(dst)
    if _fwidth(sv) <= _fwidth(dv) and not (is_bf16(dst) and not is_bf16(src)):
        return _float_cast(b, v, src, dst)
    if is_bf16(dst):
        f = v if sv == FLOAT else _float_cast_rtz(b, v, src, FloatType("f32"))
        bits = b.bitcast(f, ir.IntType(32))
        isnan = b.fcmp_unordered("uno", f, f)
        quiet = b.or_(bits, ir.Constant(ir.IntType(32), 0x00400000))
        keep = ir.Constant(ir.IntType(32), 0xFFFF0000 - (1 << 32))
        return b.bitcast(b.and_(b.select(isnan, quiet, bits), keep), FLOAT)
    r = fptrunc(b, v, dv)
    wide = b.fpext(r, sv)
    absf = _intrinsic(b.module, "llvm.fabs", sv)
    ax = b.call(absf, [v])
    over = b.and_(b.fcmp_ordered(">", b.call(absf, [wide]), ax),
                  b.fcmp_ordered("<", ax, ir.Constant(sv, float("inf"))))
    it = ir.IntType(_fwidth(dv))
    down = b.bitcast(b.sub(b.bitcast(r, it), ir.Constant(it, 1)), dv)
    return b.select(over, down, r)


def _is_fp8(t: Type) -> bool:
    return isinstance(t, FloatType) and t.is_fp8


def _fp8_cast(b, v, src: FloatType, dst: FloatType, rtz: bool):
    """``tt.fp_to_fp`` with an 8-bit float side (:mod:`workbench.codegen.fp8`): through f32,
    which holds every fp8 value exactly; an f64 source narrows to f32 rounding to odd (or
    toward zero), so the second rounding is the correct single one."""
    f32 = FloatType("f32")
    if _is_fp8(src):
        x = fp8.to_f32(b, v, fp8.fmt_of(src.name))
        return _float_cast(b, x, f32, dst) if not _is_fp8(dst) else \
            fp8.from_f32(b, x, fp8.fmt_of(dst.name))
    if src.name == "f64":
        x = _float_cast_rtz(b, v, src, f32) if rtz else f64_to_f32_odd(b, v)
    else:
        x = _float_cast(b, v, src, f32)
    return fp8.from_f32(b, x, fp8.fmt_of(dst.name), rtz)


def _fwidth(t: ir.Type) -> int:
    return {HALF: 16, FLOAT: 32}.get(t, 64)


def _cast(b, name: str, v, src: Type, dst: Type):
    src, dst = src.scalar, dst.scalar
    dv = value_type(dst)
    if name in ("extsi", "extui", "trunci"):
        assert isinstance(src, IntType) and isinstance(dst, IntType), (src, dst)
        if src.width == dst.width:
            return v
        if name == "trunci":
            return b.trunc(v, dv)
        return b.sext(v, dv) if name == "extsi" else b.zext(v, dv)
    if name in ("sitofp", "uitofp"):
        if is_bf16(dst):
            f = b.sitofp(v, FLOAT) if name == "sitofp" else b.uitofp(v, FLOAT)
            return round_bf16(b, f)
        return b.sitofp(v, dv) if name == "sitofp" else b.uitofp(v, dv)
    if name in ("fptosi", "fptoui"):
        return b.fptosi(v, dv) if name == "fptosi" else b.fptoui(v, dv)
    if name in ("extf", "truncf"):
        assert isinstance(src, FloatType) and isinstance(dst, FloatType), (src, dst)
        return _float_cast(b, v, src, dst)
    if name == "bitcast":
        return _bitcast(b, v, src, dst)
    raise UnsupportedError(f"cast arith.{name}")


def _bitcast(b, v, src: Type, dst: Type):
    if is_bf16(src):
        v = b.trunc(b.lshr(b.bitcast(v, ir.IntType(32)), ir.Constant(ir.IntType(32), 16)),
                    ir.IntType(16))
        src = IntType(16)
    if is_bf16(dst):
        bits = b.shl(b.zext(_bitcast(b, v, src, IntType(16)), ir.IntType(32)),
                     ir.Constant(ir.IntType(32), 16))
        return b.bitcast(bits, FLOAT)
    sv, dv = value_type(src), value_type(dst)
    return v if sv == dv else b.bitcast(v, dv)


def emit_elementwise(b: ir.IRBuilder, module: ir.Module, name: str, attrs: dict, args: list,
                     arg_types: list, result_type: Type):
    """Emit one element of op ``name`` (``"arith.addf"``...) on LLVM scalar ``args`` whose IR
    scalar types are ``arg_types``; returns the LLVM value of IR scalar type ``result_type``.
    Raises UnsupportedError for ops this backend does not lower."""
    res = result_type.scalar
    out = _emit(b, module, name, attrs, args, [t.scalar for t in arg_types], res)
    if is_bf16(res) and name not in ("arith.select", "arith.constant", "arith.extf",
                                     "arith.truncf", "arith.sitofp", "arith.uitofp",
                                     "arith.bitcast", "tt.bitcast", "tt.fp_to_fp",
                                     "math.absf", "arith.maxnumf", "arith.minnumf",
                                     "arith.maximumf", "arith.minimumf"):
        out = round_bf16(b, out)
    return out


def _emit(b, module, name, attrs, args, ts, res):
    dialect, short = name.split(".", 1)
    if dialect == "arith":
        out = _emit_arith(b, module, short, attrs, args, ts, res)
    elif dialect == "math":
        out = _emit_math(b, module, short, args)
    else:
        out = _emit_tt(b, module, name, attrs, args, ts, res)
    if out is None:
        raise UnsupportedError(f"the CPU backend does not lower {name}")
    return out


def _emit_arith(b, module, short, attrs, args, ts, res):
    """An ``arith`` op, or None when it is not one this backend lowers."""
    if short in ("addi", "subi", "muli", "andi", "ori", "xori"):
        fn = {"addi": b.add, "subi": b.sub, "muli": b.mul, "andi": b.and_, "ori": b.or_,
              "xori": b.xor}[short]
        return fn(*args)
    if short in ("addf", "subf", "mulf", "divf", "remf"):
        fn = {"addf": b.fadd, "subf": b.fsub, "mulf": b.fmul, "divf": b.fdiv,
              "remf": b.frem}[short]
        return fn(*args)
    if short in ("divsi", "divui", "remsi", "remui"):
        return _safe_int_div(b, short, *args)
    if short in ("shli", "shrsi", "shrui"):
        return _shift(b, short, *args)
    if short in _BINARY_INTRINSIC:
        return b.call(_intrinsic(module, _BINARY_INTRINSIC[short], args[0].type, 2), args)
    if short in ("cmpi", "cmpf"):
        return _compare(b, short, attrs["predicate"], args)
    if short == "select":
        return b.select(*args)
    if short in ("extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui",
                 "extf", "truncf", "bitcast"):
        return _cast(b, short, args[0], ts[0], res)
    return None


def _compare(b, short, pred, args):
    if short == "cmpi":
        op, signed = _CMPI[pred]
        if signed is False:
            return b.icmp_unsigned(op, *args)
        return b.icmp_signed(op, *args)
    if pred in ("false", "true"):
        return ir.Constant(ir.IntType(1), int(pred == "true"))
    op, ordered = _CMPF[pred]
    return (b.fcmp_ordered if ordered else b.fcmp_unordered)(op, *args)


def _emit_math(b, module, short, args):
    """A ``math`` op, or None when it is not one this backend lowers."""
    if short in VMATH:
        v = emit_math(b, short, args[0])
        if v is not None:
            return v
    if short in _INTRINSIC_UNARY and not (short == "tanh"):
        return b.call(_intrinsic(module, _INTRINSIC_UNARY[short], args[0].type), args)
    if short == "rsqrt":
        s = b.call(_intrinsic(module, "llvm.sqrt", args[0].type), args)
        return b.fdiv(ir.Constant(args[0].type, 1.0), s)
    if short == "absi":
        ty = args[0].type
        fnty = ir.FunctionType(ty, [ty, ir.IntType(1)])
        return b.call(module.declare_intrinsic("llvm.abs", [ty], fnty),
                      [args[0], ir.Constant(ir.IntType(1), 0)])
    if short == "fma":
        return b.call(_intrinsic(module, "llvm.fma", args[0].type, 3), args)
    if short in ("erf", "tanh"):
        x = args[0]
        ty = FLOAT if x.type == HALF else x.type
        xe = b.fpext(x, ty) if x.type == HALF else x
        r = b.call(_libm(module, short, ty), [xe])
        return b.fptrunc(r, HALF) if x.type == HALF else r
    return None


def _emit_tt(b, module, name, attrs, args, ts, res):
    """A ``tt`` elementwise op, or None when it is not one this backend lowers."""
    if name == "tt.addptr":
        size = storage_size(ts[0].pointee)
        off = args[1]
        if off.type.width < 64:
            off = b.sext(off, I64)
        elif off.type.width > 64:  # pragma: no cover - no wider ints exist
            off = b.trunc(off, I64)
        return b.add(args[0], b.mul(off, ir.Constant(I64, size)))
    if name in ("tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int"):
        if isinstance(ts[0], PointerType) or isinstance(res, PointerType):
            return args[0]
        return _bitcast(b, args[0], ts[0], res)
    if name == "tt.fp_to_fp":
        if _is_fp8(ts[0]) or _is_fp8(res):
            return _fp8_cast(b, args[0], ts[0], res, attrs.get("rounding") == "rtz")
        if attrs.get("rounding") == "rtz":
            return _float_cast_rtz(b, args[0], ts[0], res)
        return _float_cast(b, args[0], ts[0], res)
    if name == "tt.precise_sqrt":
        return b.call(_intrinsic(module, "llvm.sqrt", args[0].type), args)
    if name == "tt.precise_divf":
        return b.fdiv(*args)
    if name == "tt.clampf":
        prop = attrs.get("propagateNan") not in (None, False, 0, "none", "NONE")
        mx, mn = ("llvm.maximum", "llvm.minimum") if prop else ("llvm.maxnum", "llvm.minnum")
        lo = b.call(_intrinsic(module, mx, args[0].type, 2), [args[0], args[1]])
        return b.call(_intrinsic(module, mn, args[0].type, 2), [lo, args[2]])
    if name == "tt.extern_elementwise":
        return emit_extern(b, module, attrs, args, ts, res)
    if name == "tt.mulhiui":
        w = args[0].type.width
        wide = ir.IntType(2 * w)
        p = b.mul(b.zext(args[0], wide), b.zext(args[1], wide))
        return b.trunc(b.lshr(p, ir.Constant(wide, w)), args[0].type)
    return None
