"""Elementwise ops (``arith.*``, ``math.*`` and elementwise ``tt.*``) as numpy functions.

:func:`elementwise_fn` turns one op into a function of its operand arrays, chosen once at
compile time. Semantics (MLIR arith / LLVM, as Triton 3.6 lowers them):

- integers are signless and wrap at their width; ``divsi``/``remsi`` truncate toward zero
  (C), ``divui``/``remui``/``shrui``/``cmpi u*``/``maxui`` read the bits as unsigned; shifts by
  at least the width give 0 (``shli``, ``shrui``) or the sign fill (``shrsi``), as PTX does;
  division by zero is undefined (gives 0 here).
- ``maxnumf``/``minnumf`` ignore NaN (``tl.maximum`` default); ``maximumf``/``minimumf``
  propagate it.
- f16 math is done in f16 (each op correctly rounded); bf16 widens to f32 and rounds back to
  nearest even after every op; ``math.*`` on f16/bf16 compute in f32.
- ``math.fma`` on f16/bf16/f32 is exact-product-then-one-rounding via f64 (a double rounding
  in f64 is possible but vanishingly rare); on f64 it is ``a*b+c`` with two roundings.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...ir.types import FloatType, IntType, Type
from . import fp8
from .dtypes import (
    float_value,
    from_float,
    is_bf16,
    np_dtype,
    round_toward_zero,
    signed_i1,
    unsigned,
)
from .extern import extern_fn


def _signed(x: np.ndarray) -> np.ndarray:
    return signed_i1(x) if x.dtype == np.bool_ else x


def _divsi(a, b):
    r = np.fmod(a, b)
    return (a - r) // b


def _remsi(a, b):
    return np.fmod(a, b)


def _shift_amount(a, b):
    width = a.dtype.itemsize * 8
    return np.minimum(unsigned(b), width).astype(a.dtype)


def _int_binary(name: str):
    if name in ("addi", "subi", "muli", "andi", "ori", "xori", "maxsi", "minsi"):
        f = {"addi": np.add, "subi": np.subtract, "muli": np.multiply, "andi": np.bitwise_and,
             "ori": np.bitwise_or, "xori": np.bitwise_xor, "maxsi": np.maximum,
             "minsi": np.minimum}[name]
        return f
    if name == "divsi":
        return _divsi
    if name == "remsi":
        return _remsi
    if name == "divui":
        return lambda a, b: (unsigned(a) // unsigned(b)).view(a.dtype)
    if name == "remui":
        return lambda a, b: (unsigned(a) % unsigned(b)).view(a.dtype)
    if name == "maxui":
        return lambda a, b: np.maximum(unsigned(a), unsigned(b)).view(a.dtype)
    if name == "minui":
        return lambda a, b: np.minimum(unsigned(a), unsigned(b)).view(a.dtype)
    if name == "shli":
        return lambda a, b: np.left_shift(a, _shift_amount(a, b))
    if name == "shrsi":
        return lambda a, b: np.right_shift(a, _shift_amount(a, b))
    if name == "shrui":
        return lambda a, b: np.right_shift(unsigned(a), unsigned(_shift_amount(a, b))).view(a.dtype)
    raise KeyError(name)


def _i1_binary(name: str):
    """i1 arithmetic: compute in int8 (signed ops see true as -1) and keep bit 0."""
    if name in ("addi", "subi", "xori"):
        return np.logical_xor
    if name in ("muli", "andi"):
        return np.logical_and
    if name == "ori":
        return np.logical_or
    f = _int_binary(name)
    signed = name.endswith("si") or name == "shrsi"

    def run(a, b):
        a8 = signed_i1(a) if signed else a.astype(np.int8)
        b8 = signed_i1(b) if signed else b.astype(np.int8)
        return (f(a8, b8) & 1).astype(np.bool_)
    return run


_FLOAT_BINARY = {"addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
                 "remf": np.fmod, "maxnumf": np.fmax, "minnumf": np.fmin,
                 "maximumf": np.maximum, "minimumf": np.minimum}


def _float_op(f, t: Type):
    """Wrap numpy function ``f`` of float arrays for values of float type ``t``."""
    if is_bf16(t):
        return lambda *xs: from_float(f(*[float_value(x, t) for x in xs]), t)
    return f


def _erf(x):
    return np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)).astype(np.float64)


_UNARY: dict[str, Callable] = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "absf": np.abs, "floor": np.floor, "ceil": np.ceil,
    "sin": np.sin, "cos": np.cos, "erf": _erf, "tanh": np.tanh}


def _unary_math(name: str, t: Type):
    f = _UNARY[name]
    if name == "absi":
        return np.abs
    dt = np_dtype(t)
    if is_bf16(t) or dt == np.float16:
        return lambda x: from_float(f(float_value(x, t).astype(np.float32)), t)
    return lambda x: f(x).astype(dt, copy=False)


_CMPI = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
         "sgt": np.greater, "sge": np.greater_equal, "ult": np.less, "ule": np.less_equal,
         "ugt": np.greater, "uge": np.greater_equal}


def _cmpi(pred: str):
    f = _CMPI[pred]
    if pred[0] == "s":
        return lambda a, b: f(_signed(a), _signed(b))
    if pred[0] == "u":
        return lambda a, b: f(unsigned(a), unsigned(b))
    return f


def _cmpf(pred: str, t: Type):
    def uno(a, b):
        return np.isnan(a) | np.isnan(b)
    table: dict[str, Callable] = {
        "false": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
        "true": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
        "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal, "olt": np.less,
        "ole": np.less_equal, "one": lambda a, b: np.not_equal(a, b) & ~uno(a, b),
        "ord": lambda a, b: ~uno(a, b), "ueq": lambda a, b: np.equal(a, b) | uno(a, b),
        "ugt": lambda a, b: ~np.less_equal(a, b), "uge": lambda a, b: ~np.less(a, b),
        "ult": lambda a, b: ~np.greater_equal(a, b), "ule": lambda a, b: ~np.greater(a, b),
        "une": np.not_equal, "uno": uno}
    f = table[pred]
    if is_bf16(t):
        return lambda a, b: f(float_value(a, t), float_value(b, t))
    return f


def _int_to_float(name: str, dst: Type):
    """``arith.sitofp`` / ``arith.uitofp`` to ``dst`` with one rounding, as C converts."""
    ddt = np_dtype(dst)
    pre = _signed if name == "sitofp" else unsigned

    def itof(x):
        x = pre(x)
        if ddt == np.float64 or ddt == np.float32 and x.dtype.itemsize <= 2:
            return x.astype(ddt)
        if x.dtype.itemsize == 8 and ddt == np.float32:
            return x.astype(np.float32)  # int64 -> f32 in one rounding (C conversion)
        return from_float(x.astype(np.float64), dst)
    return itof


def _float_to_int(name: str, src: Type, dst: Type):
    """``arith.fptosi`` / ``arith.fptoui`` from ``src`` to ``dst`` (truncating toward zero)."""
    ddt = np_dtype(dst)

    def ftoi(x):
        v = float_value(x, src)
        if ddt == np.bool_:
            return (v.astype(np.int64) & 1).astype(np.bool_)
        if name == "fptoui":
            return v.astype(unsigned(np.zeros(0, ddt)).dtype).view(ddt)
        return v.astype(ddt)
    return ftoi


def _cast(name: str, src: Type, dst: Type):
    sdt, ddt = np_dtype(src), np_dtype(dst)
    if name == "extsi":
        return lambda x: _signed(x).astype(ddt)
    if name == "extui":
        return lambda x: unsigned(x).astype(ddt)
    if name == "trunci":
        if ddt == np.bool_:
            return lambda x: (x & 1).astype(np.bool_)
        return lambda x: x.astype(ddt)
    if name in ("sitofp", "uitofp"):
        return _int_to_float(name, dst)
    if name in ("fptosi", "fptoui"):
        return _float_to_int(name, src, dst)
    if name == "extf":
        return lambda x: float_value(x, src).astype(ddt)
    if name == "truncf":
        return lambda x: from_float(float_value(x, src), dst)
    if name == "bitcast":
        if sdt == ddt:
            return lambda x: x
        return lambda x: x.view(ddt)
    raise KeyError(name)


def _fp_to_fp(src: Type, dst: Type, rounding: str | None):
    narrowing = np_dtype(dst).itemsize < np_dtype(src).itemsize or (
        is_bf16(dst) and not is_bf16(src))
    if not narrowing or rounding in (None, "rtne"):
        return lambda x: from_float(float_value(x, src), dst)
    if rounding != "rtz":
        raise NotImplementedError(f"fp_to_fp rounding {rounding!r}")

    def rtz(x):
        v = float_value(x, src)
        if isinstance(dst.scalar, FloatType) and dst.scalar.is_fp8:
            if v.dtype == np.float64:
                v = round_toward_zero(v, np.dtype(np.float32))
            return fp8.from_f32(v, fp8.fmt_of(dst.scalar.name), rtz=True)
        if is_bf16(dst):
            f = round_toward_zero(v, np.dtype(np.float32)) if v.dtype == np.float64 else v
            bits = f.astype(np.float32).view(np.uint32)
            return np.where(np.isnan(f), (bits >> 16) | 0x40, bits >> 16).astype(np.uint16)
        return round_toward_zero(v, np_dtype(dst))
    return rtz


def _fma(t: Type):
    dt = np_dtype(t)
    if dt == np.float64:
        return lambda a, b, c: a * b + c
    return lambda a, b, c: from_float(
        float_value(a, t).astype(np.float64) * float_value(b, t) + float_value(c, t), t)


def _clampf(t: Type, propagate):
    nan = propagate not in (None, False, 0, "none", "NONE")
    lo_f, hi_f = (np.maximum, np.minimum) if nan else (np.fmax, np.fmin)
    return _float_op(lambda x, lo, hi: hi_f(lo_f(x, lo), hi), t)


def _mulhiui(t: Type):
    if isinstance(t.scalar, IntType) and t.scalar.width == 32:
        return lambda a, b: ((unsigned(a).astype(np.uint64) * unsigned(b).astype(np.uint64))
                             >> np.uint64(32)).astype(np.uint32).view(np.int32)

    def hi64(a, b):
        a, b = unsigned(a), unsigned(b)
        m, s = np.uint64(0xFFFFFFFF), np.uint64(32)
        al, ah, bl, bh = a & m, a >> s, b & m, b >> s
        ll, hl, lh, hh = al * bl, ah * bl, al * bh, ah * bh
        cross = (ll >> s) + (hl & m) + lh
        return (hh + (hl >> s) + (cross >> s)).view(np.int64)
    return hi64


_CASTS = ("extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf", "truncf",
          "bitcast")


def _arith_fn(op, short: str, ins: list[Type], out):
    """The numpy function of ``arith.<short>``, or None (``arith.select`` and non-integer
    results of ops with no float meaning are the compiler's business)."""
    if short == "cmpi":
        return _cmpi(op.attributes["predicate"])
    if short == "cmpf":
        return _cmpf(op.attributes["predicate"], ins[0])
    if short == "select":
        return None  # handled by the compiler (scalar condition on tiles)
    if short in _FLOAT_BINARY:
        return _float_op(_FLOAT_BINARY[short], out)
    if short == "negf":  # flip the sign bit (exact for every format, NaN included)
        return (lambda x: x ^ np.uint16(0x8000)) if is_bf16(out) else np.negative
    if short in _CASTS:
        return _cast(short, ins[0], out)
    if isinstance(out.scalar, IntType):
        return _i1_binary(short) if out.scalar.width == 1 else _int_binary(short)
    return None


def _math_fn(short: str, out):
    """The numpy function of ``math.<short>`` on values of type ``out``."""
    if short == "fma":
        return _fma(out)
    if short == "absi":
        return np.abs
    return _unary_math(short, out)


def elementwise_fn(op):
    """The numpy function computing elementwise ``op`` from its operand arrays, or None when
    ``op`` is not elementwise. Raises NotImplementedError for unknown extern symbols."""
    name = op.name
    ins = [v.type for v in op.operands]
    out = op.results[0].type if op.results else None
    dialect, _, short = name.partition(".")
    if dialect == "arith":
        return _arith_fn(op, short, ins, out)
    if dialect == "math":
        return _math_fn(short, out)
    if name in ("tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int"):
        sdt, ddt = np_dtype(ins[0]), np_dtype(out)
        return (lambda x: x) if sdt == ddt else (lambda x: x.view(ddt))
    if name == "tt.fp_to_fp":
        return _fp_to_fp(ins[0], out, op.attributes.get("rounding"))
    if name == "tt.clampf":
        return _clampf(out, op.attributes.get("propagateNan"))
    if name == "tt.precise_sqrt":
        return _float_op(np.sqrt, out)
    if name == "tt.precise_divf":
        return _float_op(np.divide, out)
    if name == "tt.mulhiui":
        return _mulhiui(out)
    if name == "tt.extern_elementwise":
        return extern_fn(op.attributes["symbol"], ins, out)
    return None


def is_float_type(t: Type) -> bool:
    return isinstance(t.scalar, FloatType)
