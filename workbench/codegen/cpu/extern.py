"""``tt.extern_elementwise``: libdevice (``__nv_*``) math functions on the host CPU.

Symbols are matched as the interpreter matches them (:mod:`workbench.backends.interp.extern`):
drop the ``__nv_`` prefix, then a trailing ``f`` of the single-precision spelling when the
name without it is known (``__nv_powf`` -> ``pow``, ``__nv_erff`` -> ``erf``); the
predicates also accept libdevice's ``d`` spellings (``__nv_isnand``, ``__nv_isfinited``).

Float functions compute in double precision (LLVM intrinsics, or the C library's ``libm``
double functions, resolved in the process by MCJIT) and round once to the result type, as
the interpreter computes in float64 and rounds once. ``cyl_bessel_i0``/``i1`` are our own
(:mod:`.bessel`); ``j0``/``j1``/``y0``/``y1`` are libm's. Predicates (``isnan``...) give 1/0 in
the result type; integer functions (``abs``, ``min``/``max``, ``umin``/``umax``, ``popc``,
``clz``, ``brev`` and their ``ll`` forms) work on the bits. libdevice's own spellings beyond
these (rounding-mode arithmetic and conversions, the inverse error functions, the integer
intrinsics...) are emitted by :mod:`.extern_round`, :mod:`.extern_more` and
:mod:`.extern_int`, matched by full name first. Unknown symbols raise UnsupportedError at
compile time.
"""
from __future__ import annotations

import math

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import FloatType
from .bessel import ORDERS as BESSEL_I
from .bessel import emit_bessel_i
from .extern_more import emit as emit_more
from .extern_round import emit as emit_round
from .llvmtypes import DOUBLE, I32, fptrunc, value_type

# name -> ("intr", llvm intrinsic) | ("libm", C function, nargs) | ("fn", python emitter)
_INTR = {"exp": "llvm.exp", "exp2": "llvm.exp2", "log": "llvm.log", "log2": "llvm.log2",
         "log10": "llvm.log10", "sin": "llvm.sin", "cos": "llvm.cos", "sqrt": "llvm.sqrt",
         "sqrt_rn": "llvm.sqrt", "floor": "llvm.floor", "ceil": "llvm.ceil",
         "trunc": "llvm.trunc", "round": "llvm.round", "rint": "llvm.rint",
         "nearbyint": "llvm.nearbyint", "fabs": "llvm.fabs", "pow": "llvm.pow",
         "fmax": "llvm.maxnum", "fmin": "llvm.minnum", "copysign": "llvm.copysign",
         "fma": "llvm.fma", "fast_exp": "llvm.exp", "fast_log": "llvm.log"}
_LIBM = {"tan": 1, "asin": 1, "acos": 1, "atan": 1, "sinh": 1, "cosh": 1, "tanh": 1,
         "asinh": 1, "acosh": 1, "atanh": 1, "expm1": 1, "log1p": 1, "cbrt": 1, "erf": 1,
         "erfc": 1, "lgamma": 1, "tgamma": 1, "exp10": 1, "atan2": 2, "hypot": 2, "fmod": 2,
         "remainder": 2, "j0": 1, "j1": 1, "y0": 1, "y1": 1}
_CUSTOM = {"rsqrt", "rcbrt", "rcp", "saturate", "div_rn", "fdiv_rn", "sinpi", "cospi",
           "fdim", "ldexp", "scalbn"} | set(BESSEL_I)
_PRED = {"isnan", "isinf", "isfinite", "finite", "signbit"}
_INT = {"abs", "llabs", "min", "max", "llmin", "llmax", "umin", "umax", "ullmin", "ullmax",
        "popc", "popcll", "clz", "clzll", "brev", "brevll"}
_FLOAT_NAMES = set(_INTR) | set(_LIBM) | _CUSTOM | _PRED


def _lookup(symbol: str, table) -> str | None:
    name = symbol[5:] if symbol.startswith("__nv_") else symbol
    if name in table:
        return name
    if name.endswith("f") and name[:-1] in table:
        return name[:-1]
    if name.endswith("d") and name[:-1] in _PRED and name[:-1] in table:
        return name[:-1]  # libdevice's double predicates: __nv_isnand, __nv_isfinited
    return None


def _intr(module, name, ty, nargs=1):
    return module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * nargs))


def _libm(module, name, nargs):
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(DOUBLE, [DOUBLE] * nargs), name)
    return fn


def _to_double(b, v):
    return v if v.type == DOUBLE else b.fpext(v, DOUBLE)


def _from_double(b, v, ty):
    return v if ty == DOUBLE else fptrunc(b, v, ty)


def _sin_cos_pi(b, module, name: str, x):
    """sin(pi x) / cos(pi x) in double with x first reduced exactly to r = x - rint(x)
    (cos from sin(pi (1/2 - |r|)) when |r| >= 1/4, an exact argument), so values near the
    zeros keep their relative accuracy, as libdevice's sinpi/cospi."""
    d = DOUBLE
    n = b.call(_intr(module, "llvm.rint", d), [x])
    r = b.fsub(x, n)
    pi = ir.Constant(d, math.pi)
    if name == "sinpi":
        v = b.call(_intr(module, "llvm.sin", d), [b.fmul(r, pi)])
    else:
        ar = b.call(_intr(module, "llvm.fabs", d), [r])
        near = b.call(_intr(module, "llvm.cos", d), [b.fmul(ar, pi)])
        far = b.call(_intr(module, "llvm.sin", d),
                     [b.fmul(b.fsub(ir.Constant(d, 0.5), ar), pi)])
        v = b.select(b.fcmp_ordered("<", ar, ir.Constant(d, 0.25)), near, far)
    zero = ir.Constant(d, 0.0)
    odd = b.fcmp_unordered("!=", b.frem(n, ir.Constant(d, 2.0)), zero)
    v = b.select(odd, b.fneg(v), v)
    # IEEE 754-2019: sinPi(+-n) = +-0, cosPi(n + 1/2) = +0
    signed = b.call(_intr(module, "llvm.copysign", d, 2), [zero, x]) if name == "sinpi" \
        else zero
    return b.select(b.fcmp_ordered("==", v, zero), signed, v)


def _float_fn(b, module, name, xs):
    """``name`` on double values ``xs`` (ints pass through for ldexp/scalbn)."""
    d = lambda c: ir.Constant(DOUBLE, c)  # noqa: E731
    if name in _INTR:
        return b.call(_intr(module, _INTR[name], DOUBLE, len(xs)), xs)
    if name in _LIBM:
        return b.call(_libm(module, name, _LIBM[name]), xs)
    x = xs[0]
    if name in BESSEL_I:
        return emit_bessel_i(b, module, BESSEL_I[name], x)
    if name == "rsqrt":
        return b.fdiv(d(1.0), b.call(_intr(module, "llvm.sqrt", DOUBLE), [x]))
    if name == "rcbrt":
        return b.fdiv(d(1.0), b.call(_libm(module, "cbrt", 1), [x]))
    if name == "rcp":
        return b.fdiv(d(1.0), x)
    if name in ("div_rn", "fdiv_rn"):
        return b.fdiv(x, xs[1])
    if name == "saturate":
        lo = b.call(_intr(module, "llvm.maxnum", DOUBLE, 2), [x, d(0.0)])
        return b.call(_intr(module, "llvm.minnum", DOUBLE, 2), [lo, d(1.0)])
    if name in ("sinpi", "cospi"):
        return _sin_cos_pi(b, module, name, x)
    if name == "fdim":  # x <= y: +0; x > y or a NaN: x - y (NaN in, NaN out, as C's fdim)
        return b.select(b.fcmp_ordered("<=", x, xs[1]), d(0.0), b.fsub(x, xs[1]))
    if name in ("ldexp", "scalbn"):
        e = xs[1]
        e = e if e.type.width == 32 else (b.trunc(e, I32) if e.type.width > 32
                                          else b.sext(e, I32))
        fn = module.declare_intrinsic("llvm.ldexp", [DOUBLE, I32],
                                      ir.FunctionType(DOUBLE, [DOUBLE, I32]))
        return b.call(fn, [x, e])
    raise AssertionError(name)


def _pred(b, module, name, x):
    if name == "isnan":
        return b.fcmp_unordered("uno", x, x)
    ax = b.call(_intr(module, "llvm.fabs", x.type), [x])
    inf = ir.Constant(x.type, float("inf"))
    if name == "isinf":
        return b.fcmp_ordered("==", ax, inf)
    if name in ("isfinite", "finite"):
        return b.fcmp_ordered("<", ax, inf)
    bits = b.bitcast(x, ir.IntType(64)) if x.type == DOUBLE else b.bitcast(
        b.fpext(x, DOUBLE), ir.IntType(64))
    return b.icmp_signed("<", bits, ir.Constant(ir.IntType(64), 0))


def _int_fn(b, module, name, xs):
    x = xs[0]
    ty = x.type
    base = name[2:] if name.startswith("ll") and name not in ("llabs",) else name
    base = "u" + base[3:] if base.startswith("ull") else base
    if name == "llabs" or base == "abs":
        fnty = ir.FunctionType(ty, [ty, ir.IntType(1)])
        return b.call(module.declare_intrinsic("llvm.abs", [ty], fnty),
                      [x, ir.Constant(ir.IntType(1), 0)])
    two = {"min": "llvm.smin", "max": "llvm.smax", "umin": "llvm.umin", "umax": "llvm.umax"}
    if base in two:
        return b.call(_intr(module, two[base], ty, 2), xs[:2])
    if base.startswith("popc"):
        return b.call(_intr(module, "llvm.ctpop", ty), [x])
    if base.startswith("clz"):
        fnty = ir.FunctionType(ty, [ty, ir.IntType(1)])
        return b.call(module.declare_intrinsic("llvm.ctlz", [ty], fnty),
                      [x, ir.Constant(ir.IntType(1), 0)])
    if base.startswith("brev"):
        return b.call(_intr(module, "llvm.bitreverse", ty), [x])
    raise AssertionError(name)


def _fit_int(b, v, ty):
    if v.type == ty:
        return v
    if v.type.width == 1:
        return b.zext(v, ty)
    return b.trunc(v, ty) if v.type.width > ty.width else b.zext(v, ty)


def emit_extern(b: ir.IRBuilder, module: ir.Module, attrs: dict, args: list, ts: list, res):
    """One element of ``tt.extern_elementwise {symbol}`` on LLVM ``args`` of IR scalar types
    ``ts``; returns a value of IR scalar type ``res``."""
    symbol = str(attrs.get("symbol", ""))
    rt = value_type(res)
    full = symbol[5:] if symbol.startswith("__nv_") else symbol
    if args:
        r = emit_round(b, module, full, list(args))
        r = emit_more(b, module, full, list(args)) if r is None else r
        if r is not None:
            return _fit_int(b, r, rt) if isinstance(rt, ir.IntType) else r
    if ts and isinstance(ts[0], FloatType):
        name = _lookup(symbol, _FLOAT_NAMES)
        if name in _PRED:
            return _fit_int(b, _pred(b, module, name, args[0]), rt)
        if name is not None:
            xs = [_to_double(b, a) if isinstance(t, FloatType) else a
                  for a, t in zip(args, ts, strict=True)]
            r = _float_fn(b, module, name, xs)
            if isinstance(res, FloatType):
                return _from_double(b, r, rt)
            return b.fptosi(r, rt)
    elif ts:
        name = _lookup(symbol, _INT)
        if name is not None:
            return _fit_int(b, _int_fn(b, module, name, args), rt)
    raise UnsupportedError(f"the CPU backend does not know the extern function {symbol!r}")


KNOWN = sorted(_FLOAT_NAMES | _INT)  # the base names emit_extern accepts
