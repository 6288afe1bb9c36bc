"""``tt.extern_elementwise`` on the CUDA backend: libdevice (``__nv_*``) functions.

Where NVIDIA's ``libdevice.10.bc`` is installed (the ``sass`` extra, Triton's wheel or a CUDA
toolkit), every symbol it defines is called as NVIDIA's own function and linked from the
bitcode (:mod:`.libdevice_link`), as Triton does, so results are bit for bit Triton's. Without
it, the symbols below are computed by our own code, and the rest raise UnsupportedError.

Symbols are matched as the interpreter and the CPU backend match them: drop ``__nv_``, then a
trailing ``f`` (single precision spelling) or, for the predicates, ``d`` when the rest is known
(``__nv_expf`` -> ``exp``, ``__nv_isnand`` -> ``isnan``). f16/bf16 arguments are computed in
f32 and rounded once. Supported:

* f32 and f64: ``sqrt``/``sqrt_rn`` (``sqrt.rn``), ``rcp``, ``div_rn``/``fdiv_rn``
  (``div.rn``), ``rsqrt`` (f32 ``rsqrt.approx``, f64 ``1/sqrt.rn``), ``floor``, ``ceil``,
  ``trunc``, ``round`` (half away from zero), ``rint``/``nearbyint`` (half to even),
  ``fabs``, ``fmax``, ``fmin``, ``copysign``, ``fma``, ``fdim``, ``saturate``, predicates
  ``isnan``, ``isinf``, ``isfinite``/``finite``, ``signbit`` (1/0 in the result type);
* f32 and f64, computed in float64 from :mod:`.mathlib`'s ``exp``/``log`` (float32 results
  rounded once, so nearly always correctly rounded; float64 within a few ulp, ``exp2``/``exp10``
  within ``|x| 2^-53`` relative): ``exp``, ``exp2``, ``exp10``, ``log``, ``log2``, ``log10``
  and :data:`.libdevice_more.F64_NAMES` (``expm1``, ``log1p``, ``sinh``, ``cosh``, ``tanh``,
  ``asinh``, ``acosh``, ``atanh``, ``cbrt``, ``rcbrt``, ``ldexp``, ``scalbn``, and
  :mod:`.inverse_trig`'s ``atan``, ``atan2``, ``asin``, ``acos``);
* f64: ``sin``, ``cos``, ``tan`` (:mod:`.trig_f64`: full-range reduction, 1 ulp for sin/cos,
  2 ulp for tan);
* f32 only, in float64: ``pow``, ``hypot``; f32, approximate PTX instructions (PTX ISA
  9.7.3.22-26 ``ex2``, ``lg2``, ``sin``, ``cos`` ``.approx``; absolute error about 2^-21):
  ``fast_exp``, ``fast_log``, ``sin``, ``cos``, ``tan`` (sin/cos), ``sinpi``, ``cospi``;
  ``erf`` (:func:`.mathlib.erf_f32`, 2e-7);
* integers (i32/i64): ``abs``/``llabs``, ``min``/``max``/``llmin``/``llmax`` (signed),
  ``umin``/``umax``/``ullmin``/``ullmax``, ``popc``/``popcll`` (``popc``), ``clz``/``clzll``
  (``clz``), ``brev``/``brevll`` (``brev``), PTX ISA 9.7.1.

Any other symbol (``erfc``, ``fmod``, ``remainder``,
``lgamma``, ``tgamma``...) raises UnsupportedError naming the
function and the kernel line.
"""
from __future__ import annotations

import math

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import FloatType, IntType
from . import elementwise, libdevice_link, libdevice_more, mathlib
from .types import F32, F64

_INTR1 = {"sqrt": "llvm.sqrt", "sqrt_rn": "llvm.sqrt", "floor": "llvm.floor",
          "ceil": "llvm.ceil", "trunc": "llvm.trunc", "round": "llvm.round",
          "rint": "llvm.rint", "nearbyint": "llvm.nearbyint", "fabs": "llvm.fabs"}
_INTR2 = {"fmax": "llvm.maxnum", "fmin": "llvm.minnum", "copysign": "llvm.copysign"}
_F32_ONLY = {"fast_exp": "exp", "fast_log": "log", "sin": "sin", "cos": "cos", "tan": None,
             "sinpi": None, "cospi": None, "erf": None} | \
    {n: None for n in libdevice_more.F32_ONLY_NAMES}
_BOTH = {"rcp", "div_rn", "fdiv_rn", "rsqrt", "fma", "fdim", "saturate", "exp", "exp2", "log",
         "log2", "log10", "exp10"} | set(_INTR1) | set(_INTR2) | set(libdevice_more.F64_NAMES)
#: float32 functions computed in float64 (mathlib's exp/log) and rounded once: accurate
_VIA_F64 = {"exp", "exp2", "exp10", "log", "log2", "log10"} | set(libdevice_more.F64_NAMES) | \
    set(libdevice_more.F32_ONLY_NAMES)
_PRED = {"isnan", "isinf", "isfinite", "finite", "signbit"}
_INT = {"abs", "llabs", "min", "max", "llmin", "llmax", "umin", "umax", "ullmin", "ullmax",
        "popc", "popcll", "clz", "clzll", "brev", "brevll"}
_INT_BASE = {"abs": ("abs", True), "llabs": ("abs", True), "min": ("min", True),
             "max": ("max", True), "llmin": ("min", True), "llmax": ("max", True),
             "umin": ("min", False), "umax": ("max", False), "ullmin": ("min", False),
             "ullmax": ("max", False), "popc": ("popc", False), "popcll": ("popc", False),
             "clz": ("clz", False), "clzll": ("clz", False), "brev": ("brev", False),
             "brevll": ("brev", False)}
FLOAT_NAMES = frozenset(_BOTH | set(_F32_ONLY))
PRED_NAMES = frozenset(_PRED)
INT_NAMES = frozenset(_INT)


def resolve(symbol: str, is_float: bool) -> str | None:
    """The canonical name of libdevice ``symbol`` for float or integer arguments, or None."""
    name = symbol[5:] if symbol.startswith("__nv_") else symbol
    known = (FLOAT_NAMES | PRED_NAMES) if is_float else INT_NAMES
    if name in known:
        return name
    for suffix in ("f", "d"):
        if name.endswith(suffix) and name[:-1] in known:
            return name[:-1]
    return None


def _call(kl, name, ty, args):
    return kl.b.call(kl.intrinsic(f"{name}.{'f32' if ty == F32 else 'f64'}", ty,
                                  [ty] * len(args)), args)


def _float(kl, name, xs, ty, loc):
    """``name`` on f32 or f64 LLVM values ``xs`` (all of type ``ty``)."""
    b = kl.b
    generic = _float_any(kl, name, xs, ty)
    if generic is not None:
        return generic
    if ty == F32 and name in _VIA_F64:
        wide = [b.fpext(v, F64) if v.type == F32 else v for v in xs]
        if name in libdevice_more.F32_ONLY_NAMES:
            return b.fptrunc(libdevice_more.special(kl, name, wide), F32)
        return b.fptrunc(_float(kl, name, wide, F64, loc), F32)
    if ty == F64:
        return _float_f64(kl, name, xs, loc)
    return _float_f32(kl, name, xs[0], loc)


def _float_any(kl, name, xs, ty):
    """The functions with one form for f32 and f64 (LLVM intrinsics, fma, rcp, fdim...);
    None for the others."""
    b = kl.b
    x = xs[0]
    one = ir.Constant(ty, 1.0)
    if name in _INTR1:
        return _call(kl, _INTR1[name], ty, [x])
    if name in _INTR2:
        return _call(kl, _INTR2[name], ty, xs[:2])
    if name == "fma":
        return _call(kl, "llvm.fma", ty, xs[:3])
    if name == "rcp":
        return b.fdiv(one, x)
    if name in ("div_rn", "fdiv_rn"):
        return b.fdiv(x, xs[1])
    if name == "fdim":
        return b.select(b.fcmp_ordered(">", x, xs[1]), b.fsub(x, xs[1]), ir.Constant(ty, 0.0))
    if name == "saturate":  # NaN propagates, as the interpreter's np.clip
        lo = _call(kl, "llvm.maximum", ty, [x, ir.Constant(ty, 0.0)])
        return _call(kl, "llvm.minimum", ty, [lo, one])
    return None


def _float_f64(kl, name, xs, loc):
    b = kl.b
    x = xs[0]
    if name in libdevice_more.F64_NAMES:
        return libdevice_more.special(kl, name, xs)
    if name == "log10":
        return b.fmul(mathlib.log_f64(kl, x), ir.Constant(F64, 1.0 / math.log(10.0)))
    if name == "exp10":
        return mathlib.exp_f64(kl, b.fmul(x, ir.Constant(F64, math.log(10.0))))
    if name == "rsqrt":
        return b.fdiv(ir.Constant(F64, 1.0), _call(kl, "llvm.sqrt", F64, [x]))
    y = mathlib.f64_math(kl, name, x)
    if y is None:
        raise UnsupportedError(
            f"extern function {name} in float64 is not implemented by the CUDA backend "
            f"(float32 only); compute in float32 (x.to(tl.float32))", loc)
    return y


def _float_f32(kl, name, x, loc):
    b = kl.b
    if name in ("exp", "exp2", "log", "log2", "rsqrt"):
        return elementwise.math_f32(kl, name, x)
    if name in ("fast_exp", "fast_log", "sin", "cos"):
        return elementwise.math_f32(kl, _F32_ONLY[name], x)
    if name == "tan":
        return b.fdiv(elementwise.math_f32(kl, "sin", x), elementwise.math_f32(kl, "cos", x))
    if name in ("sinpi", "cospi"):
        return elementwise.math_f32(kl, name[:3], b.fmul(x, ir.Constant(F32, math.pi)))
    if name == "erf":
        return mathlib.erf_f32(kl, x)
    raise UnsupportedError(f"extern function {name} is not supported by the CUDA backend", loc)


def _predicate(kl, name, x, ty):
    b = kl.b
    if name == "isnan":
        return b.fcmp_unordered("uno", x, x)
    ax = _call(kl, "llvm.fabs", ty, [x])
    inf = ir.Constant(ty, math.inf)
    if name == "isinf":
        return b.fcmp_ordered("==", ax, inf)
    if name in ("isfinite", "finite"):
        return b.fcmp_ordered("<", ax, inf)
    bits = ir.IntType(64 if ty == F64 else 32)
    return b.icmp_signed("<", b.bitcast(x, bits), ir.Constant(bits, 0))  # signbit


def _integer(kl, name, xs):
    b = kl.b
    x = xs[0]
    t = x.type
    zero = ir.Constant(t, 0)
    base, signed = _INT_BASE[name]
    if base == "abs":
        return b.select(b.icmp_signed("<", x, zero), b.sub(zero, x), x)
    if base in ("min", "max"):
        cmp = b.icmp_signed if signed else b.icmp_unsigned
        c = cmp("<" if base == "min" else ">", x, xs[1])
        return b.select(c, x, xs[1])
    w = t.width
    if base == "popc":
        return b.call(kl.intrinsic(f"llvm.ctpop.i{w}", t, [t]), [x])
    if base == "clz":
        fn = kl.intrinsic(f"llvm.ctlz.i{w}", t, [t, ir.IntType(1)])
        return b.call(fn, [x, ir.Constant(ir.IntType(1), 0)])
    return b.call(kl.intrinsic(f"llvm.bitreverse.i{w}", t, [t]), [x])  # brev


def _fit_int(b, v, lt):
    """An integer LLVM value resized (zero-extended or truncated) to integer type ``lt``."""
    if v.type == lt:
        return v
    if v.type.width < lt.width:
        return b.zext(v, lt)
    return b.trunc(v, lt)


def _signature(op) -> tuple:
    """``(result LLVM type, [operand LLVM types], their function type text)`` of ``op``."""
    from .types import llvm_type
    in_ts = [llvm_type(v.type.scalar) for v in op.operands]
    out_t = llvm_type(op.result.type.scalar)
    return out_t, in_ts, f"{out_t} ({', '.join(str(t) for t in in_ts)})"


def _call_libdevice(kl, op, symbol: str) -> None:
    """Call NVIDIA's own ``symbol`` (linked from libdevice's bitcode when the module is
    compiled, :mod:`.libdevice_link`) register by register, with the operands' LLVM types."""
    out_t, in_ts, _ = _signature(op)
    fn = kl.intrinsic(symbol, out_t, in_ts)
    regs, n = elementwise.broadcast_operands(kl, op)
    kl.set(op.result, [kl.b.call(fn, [r[i] for r in regs]) for i in range(n)])


def lower(kl, op) -> None:
    """Lower ``tt.extern_elementwise {symbol}`` register by register (module docstring)."""
    symbol = str(op.attributes.get("symbol", ""))
    in_ts = [v.type.scalar for v in op.operands]
    out_t = op.result.type.scalar
    is_float = bool(in_ts) and isinstance(in_ts[0], FloatType)
    if libdevice_link.defines(symbol, _signature(op)[2]):  # NVIDIA's own, as Triton calls it
        return _call_libdevice(kl, op, symbol)
    name = resolve(symbol, is_float)
    if name is None:
        kinds = "float" if is_float else "integer"
        raise UnsupportedError(
            f"extern function {symbol!r} ({kinds} arguments) is not supported by the CUDA "
            f"backend; supported: {', '.join(sorted(FLOAT_NAMES | PRED_NAMES | INT_NAMES))}",
            op.loc)
    regs, n = elementwise.broadcast_operands(kl, op)
    b = kl.b
    from .types import llvm_type
    lt = llvm_type(out_t)
    out = []
    for i in range(n):
        xs = [r[i] for r in regs]
        if not is_float:
            out.append(_fit_int(b, _integer(kl, name, xs), lt))
            continue
        wide = F64 if in_ts[0].name == "f64" else F32
        ws = [elementwise.to_f32(b, x, t) if isinstance(t, FloatType) and wide == F32 else x
              for x, t in zip(xs, in_ts, strict=False)]
        if name in _PRED:
            out.append(_fit_int(b, _predicate(kl, name, ws[0], wide), lt))
            continue
        y = _float(kl, name, ws, wide, op.loc)
        if isinstance(out_t, IntType):
            out.append(b.fptosi(y, lt))
        elif out_t.name == "f64" and wide == F32:
            out.append(b.fpext(y, F64))
        else:
            out.append(elementwise.from_f32(b, y, out_t) if wide == F32 else y)
    kl.set(op.result, out)


__all__ = ["lower", "resolve", "FLOAT_NAMES", "PRED_NAMES", "INT_NAMES"]
