"""Vectorisable ``exp``, ``exp2``, ``log`` and ``log2`` for fp32 (and fp16/bf16 through fp32),
emitted inline as LLVM instructions.

``llvm.exp.f32`` and friends become calls into the C math library, which LLVM's loop
vectoriser cannot widen (there is no vector libm to map them to in this process), so a loop
containing one stays scalar. These implementations use only arithmetic, ``llvm.fma``,
``llvm.rint`` and integer bit operations, all of which vectorise (AVX2/AVX-512).

Algorithms (published, standard):

- ``exp(x)``: Cody and Waite's argument reduction (W. J. Cody, W. Waite, *Software Manual
  for the Elementary Functions*, 1980): ``k = rint(x / ln 2)``, ``r = x - k ln2_hi - k ln2_lo``
  (two fused multiply-adds; ``ln2_hi = fl32(ln 2)``), ``|r| <= ln(2)/2``; then
  ``exp(r)`` by its Taylor polynomial of degree 7 in Horner form (truncation error
  ``(ln2/2)^8 / 8! < 5.5e-9``, below 0.1 ulp), and ``2^k`` applied as two exponent-field
  scalings ``2^(k//2) * 2^(k - k//2)`` so that results in the subnormal range are rounded
  once and ``k = 128`` still overflows to infinity.
- ``exp2(x)``: ``k = rint(x)``, ``f = x - k`` (exact), ``2^f = exp(f ln 2)`` by the same
  degree-7 polynomial with coefficients ``(ln 2)^i / i!``, then the same scaling.
- ``log(x)``: the reduction of musl's ``logf`` (``x = 2^e m`` with ``m`` in
  ``[sqrt(1/2), sqrt(2))`` from the bits, ``ix - 0x3f3504f3``), subnormal inputs scaled by
  ``2^23`` first; then fdlibm's ``e_logf.c`` evaluation (Sun Microsystems, 1993):
  ``f = m - 1``, ``s = f / (2 + f)``, ``log(1 + f) = f - (h - s (h + R(s^2)))`` with
  ``h = f^2 / 2`` and ``R`` the series of ``2 atanh(s) / s - 2`` truncated after the ``z^4``
  term (coefficients ``2/3, 2/5, 2/7, 2/9``; truncation below ``3e-9`` relative), and
  ``e ln 2`` added as ``e ln2_hi + e ln2_lo`` with fdlibm's split (``0x3f317180``,
  ``0x3717f7d1``).
- ``log2(x)``: ``e + log(m) * log2(e)`` (one fused multiply-add).

Special values follow C99 Annex F: ``exp(+inf) = +inf``, ``exp(-inf) = 0``, overflow to
``+inf``, underflow through subnormals to 0; ``log(0) = -inf``, ``log(x < 0) = NaN``,
``log(+inf) = +inf``; NaN in, NaN out.

Accuracy (measured by ``tests/codegen/test_cpu_vmath.py`` against float64 numpy over
2^22 + samples spanning every binade, subnormals included): at most 2 ulp for ``exp``,
``exp2`` and ``log`` and at most 3 ulp for ``log2`` (the test asserts those bounds).
"""
from __future__ import annotations

import math

from llvmlite import ir

from .llvmtypes import FLOAT, HALF, I32

_LN2 = math.log(2.0)
_LOG2E = 1.0 / _LN2


def _bits_to_float(bits: int) -> float:
    import struct
    return struct.unpack("<f", struct.pack("<I", bits))[0]


_LN2_HI_CW = float.fromhex("0x1.62e430p-1")      # fl32(ln 2) (for fma-based Cody-Waite)
_LN2_LO_CW = _LN2 - _LN2_HI_CW                     # rest of ln 2
_LN2_HI_LOG = _bits_to_float(0x3F317180)           # fdlibm e_logf.c ln2_hi
_LN2_LO_LOG = _bits_to_float(0x3717F7D1)           # fdlibm e_logf.c ln2_lo
# 1/i! for exp(r) and (ln 2)^i / i! for 2^f, i = 0..7
_EXP_COEFFS = [1.0 / math.factorial(i) for i in range(8)]
_EXP2_COEFFS = [_LN2 ** i / math.factorial(i) for i in range(8)]
_LOG_COEFFS = [2.0 / 3.0, 2.0 / 5.0, 2.0 / 7.0, 2.0 / 9.0]

FUNCTIONS = ("exp", "exp2", "log", "log2")


def _c(v: float) -> ir.Constant:
    return ir.Constant(FLOAT, float(v))


def _i(v: int) -> ir.Constant:
    v &= 0xFFFFFFFF
    return ir.Constant(I32, v - (1 << 32) if v >= 1 << 31 else v)


class _Emit:
    """Small helpers over one builder (intrinsics declared once per module)."""

    def __init__(self, b: ir.IRBuilder):
        self.b = b
        self.m = b.module

    def intr(self, name: str, *args, label: str = ""):
        ty = args[0].type
        fn = self.m.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * len(args)))
        return self.b.call(fn, list(args), name=label)

    def fma(self, a, x, c):
        return self.intr("llvm.fma", a, x, c)

    def horner(self, coeffs, x):
        """sum(coeffs[i] * x^i) by Horner's rule with fused multiply-adds."""
        p = _c(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            p = self.fma(p, x, _c(c))
        return p

    def clamp(self, x, lo: float, hi: float):
        b = self.b
        x = b.select(b.fcmp_ordered("<", x, _c(lo)), _c(lo), x)
        return b.select(b.fcmp_ordered(">", x, _c(hi)), _c(hi), x)

    def scale(self, p, k, label: str):
        """``p * 2^k`` for an i32 ``k`` in [-151, 129], rounded once (two normal factors)."""
        b = self.b
        k1 = b.ashr(k, _i(1))
        k2 = b.sub(k, k1)
        f1 = b.bitcast(b.shl(b.add(k1, _i(127)), _i(23)), FLOAT)
        f2 = b.bitcast(b.shl(b.add(k2, _i(127)), _i(23)), FLOAT)
        return b.fmul(b.fmul(p, f1), f2, name=label)

    def keep_nan(self, x, result):
        b = self.b
        return b.select(b.fcmp_unordered("uno", x, x), x, result)


def _exp(em: _Emit, x):
    b = em.b
    xc = em.clamp(x, -104.0, 89.0)
    kf = em.intr("llvm.rint", b.fmul(xc, _c(_LOG2E)), label="exp.k")
    r = em.fma(kf, _c(-_LN2_HI_CW), xc)
    r = em.fma(kf, _c(-_LN2_LO_CW), r)
    p = em.horner(_EXP_COEFFS, r)
    return em.keep_nan(x, em.scale(p, b.fptosi(kf, I32), "exp"))


def _exp2(em: _Emit, x):
    b = em.b
    xc = em.clamp(x, -151.0, 129.0)
    kf = em.intr("llvm.rint", xc, label="exp2.k")
    f = b.fsub(xc, kf)
    p = em.horner(_EXP2_COEFFS, f)
    return em.keep_nan(x, em.scale(p, b.fptosi(kf, I32), "exp2"))


def _log_parts(em: _Emit, x):
    """(e as f32, f, log(1 + f)) with x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2))."""
    b = em.b
    tiny = b.fcmp_ordered("<", x, _c(float.fromhex("0x1p-126")))
    xs = b.select(tiny, b.fmul(x, _c(float.fromhex("0x1p23"))), x)
    adj = b.select(tiny, _i(-23), _i(0))
    ix = b.sub(b.bitcast(xs, I32), _i(0x3F3504F3))
    e = b.add(b.ashr(ix, _i(23)), adj)
    m = b.bitcast(b.add(b.and_(ix, _i(0x007FFFFF)), _i(0x3F3504F3)), FLOAT)
    f = b.fsub(m, _c(1.0))
    s = b.fdiv(f, b.fadd(f, _c(2.0)), name="log.s")
    z = b.fmul(s, s)
    R = b.fmul(z, em.horner(_LOG_COEFFS, z))
    h = b.fmul(b.fmul(f, f), _c(0.5))
    log1p = b.fsub(f, b.fsub(h, b.fmul(s, b.fadd(h, R))))
    return b.sitofp(e, FLOAT), f, log1p


def _log_special(em: _Emit, x, result):
    """C99 Annex F: log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN -> NaN."""
    b = em.b
    out = b.select(b.fcmp_ordered("==", x, _c(0.0)), _c(float("-inf")), result)
    out = b.select(b.fcmp_ordered("<", x, _c(0.0)), _c(float("nan")), out)
    out = b.select(b.fcmp_ordered("==", x, _c(float("inf"))), x, out)
    return em.keep_nan(x, out)


def _log(em: _Emit, x):
    b = em.b
    e, _, log1p = _log_parts(em, x)
    r = b.fadd(b.fmul(e, _c(_LN2_HI_LOG)), b.fadd(log1p, b.fmul(e, _c(_LN2_LO_LOG))),
               name="log")
    return _log_special(em, x, r)


def _log2(em: _Emit, x):
    e, _, log1p = _log_parts(em, x)
    return _log_special(em, x, em.intr("llvm.fma", log1p, _c(_LOG2E), e, label="log2"))


_IMPL = {"exp": _exp, "exp2": _exp2, "log": _log, "log2": _log2}


def emit_math(b: ir.IRBuilder, name: str, x):
    """``name`` (one of :data:`FUNCTIONS`) of the LLVM value ``x`` inline, or None when ``x``
    is not a float/half scalar (the caller then uses the LLVM intrinsic). Half values are
    computed in fp32 and rounded once to half."""
    impl = _IMPL.get(name)
    if impl is None:
        return None
    if x.type == FLOAT:
        return impl(_Emit(b), x)
    if x.type == HALF:
        return b.fptrunc(impl(_Emit(b), b.fpext(x, FLOAT)), HALF)
    return None
