"""libdevice symbols beyond the C library's names, in LLVM IR, by their full spelling.

The same semantics as the interpreter's :mod:`workbench.backends.interp.extern_more` (which
lists them, with the CUDA Math API as the source): the error-function family through
:mod:`.extern_special` in double, ``nextafter``/``ilogb``/``logb`` on the bits,
``llrint``/``llround`` saturating (``llvm.fptosi.sat``), ``jn``/``yn`` from the C library,
``powi`` as ``pow``, ``norm*``/``rhypot`` scaled by a power of two (``llvm.frexp`` /
``llvm.ldexp``), ``fast_*`` as the accurate functions, and the integer intrinsics and bit
reinterpretations on the bits. Float results of double computations are rounded once to the
operand type.
"""
from __future__ import annotations

import math

from llvmlite import ir

from . import extern_special as special
from .llvmtypes import DOUBLE, FLOAT, I32, I64


def _fn(module, name, ret, args):
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn


def _sfx(ty) -> str:
    return "f64" if ty == DOUBLE else "f32"


def _intr(b, module, name, *xs):
    ty = xs[0].type
    return b.call(_fn(module, f"llvm.{name}.{_sfx(ty)}", ty, [ty] * len(xs)), list(xs))


class IrOps:
    """The :mod:`.extern_special` ops interface on one double element (llvmlite values)."""

    def __init__(self, b, module):
        self.b, self.module = b, module

    def c(self, v):
        return ir.Constant(DOUBLE, float(v))

    def add(self, x, y):
        return self.b.fadd(x, y)

    def sub(self, x, y):
        return self.b.fsub(x, y)

    def mul(self, x, y):
        return self.b.fmul(x, y)

    def div(self, x, y):
        return self.b.fdiv(x, y)

    def call(self, name, x):
        if name in ("exp", "log", "sqrt", "fabs"):
            return _intr(self.b, self.module, name, x)
        return self.b.call(_fn(self.module, name, DOUBLE, [DOUBLE]), [x])

    def lt(self, x, y):
        return self.b.fcmp_ordered("<", x, y)

    def eq(self, x, y):
        return self.b.fcmp_ordered("==", x, y)

    def or_(self, x, y):
        return self.b.or_(x, y)

    def where(self, cond, x, y):
        return self.b.select(cond, x, y)


def _to_d(b, x):
    return x if x.type == DOUBLE else b.fpext(x, DOUBLE)


def _from_d(b, x, ty):
    return x if ty == DOUBLE else b.fptrunc(x, ty)


def _ilogb(b, module, x):
    st = ir.LiteralStructType([DOUBLE, I32])
    e = b.extract_value(b.call(_fn(module, "llvm.frexp.f64.i32", st, [DOUBLE]),
                               [_to_d(b, x)]), 1)
    r = b.sub(e, ir.Constant(I32, 1))
    ax = _intr(b, module, "fabs", x)
    r = b.select(b.fcmp_ordered("==", ax, ir.Constant(x.type, math.inf)),
                 ir.Constant(I32, 2 ** 31 - 1), r)
    bad = b.fcmp_unordered("==", x, ir.Constant(x.type, 0.0))  # zero or NaN
    return b.select(bad, ir.Constant(I32, -(2 ** 31)), r)


def _logb(b, module, x):
    r = b.sitofp(_ilogb(b, module, x), x.type)
    r = b.select(b.fcmp_ordered("==", x, ir.Constant(x.type, 0.0)),
                 ir.Constant(x.type, -math.inf), r)
    ax = _intr(b, module, "fabs", x)
    r = b.select(b.fcmp_ordered("==", ax, ir.Constant(x.type, math.inf)), ax, r)
    return b.select(b.fcmp_unordered("uno", x, x), x, r)


def _nextafter(b, x, y):
    ity = I64 if x.type == DOUBLE else I32
    bits = b.bitcast(x, ity)
    one = ir.Constant(ity, 1)
    away = b.icmp_signed("==", b.fcmp_ordered(">", x, ir.Constant(x.type, 0.0)),
                         b.fcmp_ordered("<", x, y))
    moved = b.bitcast(b.select(away, b.add(bits, one), b.sub(bits, one)), x.type)
    tiny = b.bitcast(one, x.type)
    from_zero = b.select(b.fcmp_ordered("<", x, y), tiny, b.fneg(tiny))
    r = b.select(b.fcmp_ordered("==", x, ir.Constant(x.type, 0.0)), from_zero, moved)
    r = b.select(b.fcmp_ordered("==", x, y), y, r)
    return b.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), r)


def _norm(b, module, xs, reciprocal):
    ds = [_intr(b, module, "fabs", _to_d(b, x)) for x in xs]
    m = ds[0]
    for d in ds[1:]:
        m = _intr(b, module, "maxnum", m, d)
    st = ir.LiteralStructType([DOUBLE, I32])
    e = b.extract_value(b.call(_fn(module, "llvm.frexp.f64.i32", st, [DOUBLE]), [m]), 1)
    ldexp = _fn(module, "llvm.ldexp.f64.i32", DOUBLE, [DOUBLE, I32])
    s = ir.Constant(DOUBLE, 0.0)
    for d in ds:
        v = b.call(ldexp, [d, b.neg(e)])
        s = b.fadd(s, b.fmul(v, v))
    r = b.call(ldexp, [_intr(b, module, "sqrt", s), e])
    r = b.select(b.fcmp_ordered("==", m, ir.Constant(DOUBLE, 0.0)), m, r)
    inf = ir.Constant(DOUBLE, math.inf)
    for d in ds:
        r = b.select(b.fcmp_ordered("==", d, inf), inf, r)
    if reciprocal:
        r = b.fdiv(ir.Constant(DOUBLE, 1.0), r)
    return _from_d(b, r, xs[0].type)


def _to_ll(b, module, r):
    return b.call(_fn(module, f"llvm.fptosi.sat.i64.{_sfx(r.type)}", I64, [r.type]), [r])


def _float_fn(b, module, name, xs):
    """Float-operand symbols; None when ``name`` is not one of them."""
    x = xs[0]
    base = name[:-1] if name.endswith("f") and name[:-1] in special.FUNCS else name
    if base in special.FUNCS:
        return _from_d(b, special.FUNCS[base](IrOps(b, module), _to_d(b, x)), x.type)
    if name in ("nextafter", "nextafterf"):
        return _nextafter(b, x, xs[1])
    if name in ("ilogb", "ilogbf"):
        return _ilogb(b, module, x)
    if name in ("logb", "logbf"):
        return _logb(b, module, x)
    if name in ("llrint", "llrintf"):
        return _to_ll(b, module, _intr(b, module, "rint", x))
    if name in ("llround", "llroundf"):
        return _to_ll(b, module, _intr(b, module, "round", x))
    if name in ("norm3d", "norm3df", "norm4d", "norm4df", "rnorm3d", "rnorm3df", "rnorm4d",
                "rnorm4df", "rhypot", "rhypotf"):
        return _norm(b, module, xs, name.startswith("r"))
    if name == "saturatef":
        r = _intr(b, module, "minnum", x, ir.Constant(FLOAT, 1.0))
        return b.select(b.fcmp_ordered(">", x, ir.Constant(FLOAT, 0.0)), r,
                        ir.Constant(FLOAT, 0.0))  # NaN and -0 give +0
    if name == "rcp64h":
        mask = ir.Constant(I64, 0xFFFFFFFF00000000)
        hi = b.bitcast(b.and_(b.bitcast(x, I64), mask), DOUBLE)
        r = b.fdiv(ir.Constant(DOUBLE, 1.0), hi)
        return b.bitcast(b.and_(b.bitcast(r, I64), mask), DOUBLE)
    fast = {"fast_sinf": "sin", "fast_cosf": "cos", "fast_tanf": "tan", "fast_log2f": "log2",
            "fast_log10f": "log10", "fast_exp10f": "exp10", "fast_powf": "pow",
            "fast_fdividef": "div"}
    if name in fast:
        ds = [_to_d(b, v) for v in xs]
        f = fast[name]
        if f == "div":
            return b.fptrunc(b.fdiv(*ds), FLOAT)
        fn = _fn(module, f, DOUBLE, [DOUBLE] * len(ds))
        return b.fptrunc(b.call(fn, ds), FLOAT)
    return None


def _mixed_fn(b, module, name, xs):
    """Symbols whose first operand is an integer and second a float (jn, yn) or the reverse
    (powi, powif)."""
    if name in ("jn", "jnf", "yn", "ynf"):
        fn = _fn(module, name.rstrip("f"), DOUBLE, [I32, DOUBLE])
        return _from_d(b, b.call(fn, [xs[0], _to_d(b, xs[1])]), xs[1].type)
    if name in ("powi", "powif"):
        fn = _fn(module, "pow", DOUBLE, [DOUBLE, DOUBLE])
        r = b.call(fn, [_to_d(b, xs[0]), b.sitofp(xs[1], DOUBLE)])
        return _from_d(b, r, xs[0].type)
    return None


def emit(b: ir.IRBuilder, module: ir.Module, name: str, xs: list):
    """Emit libdevice symbol ``name`` (``__nv_`` dropped) on LLVM values ``xs``; returns the
    result value (its LLVM type as libdevice's), or None when ``name`` is not one of this
    module's symbols."""
    from .extern_int import emit_int
    r = _mixed_fn(b, module, name, xs)
    if r is None:
        r = emit_int(b, module, name, xs)
    if r is None and isinstance(xs[0].type, (ir.FloatType, ir.DoubleType)):
        r = _float_fn(b, module, name, xs)
    return r
