"""float64 ``sin``, ``cos`` and ``tan`` for the CUDA backend, written once against a small
set of elementwise operations (``ops``) so the same algorithm runs as LLVM IR
(:class:`workbench.codegen.nvptx.trig_llvm.LlvmOps`) and in numpy (:class:`NumpyOps`, which
the tests compare with ``np.sin``/``np.cos`` without a GPU).

1. **Argument reduction** ``|x| = q pi/2 + r``, ``|r| <= pi/4`` (about), ``r`` as a
   double-double ``hi + lo``:

   * ``|x| < 2^20``: Cody-Waite with ``pi/2 = P1 + P2 + P3`` (three 53-bit parts, about 159
     bits): ``k = rint(x 2/pi)``; ``x - k P1`` is exact with one ``fma`` (its result needs at
     most 53 bits); ``k P2`` is split exactly with ``fma`` (two-product) and added with
     two-sum; ``k P3`` goes into the low part. Absolute error below 2^-130.
   * ``|x| >= 2^20`` (to the largest double): Payne-Hanek in floating point. ``|x| = M 2^s``
     (``M`` the 53-bit significand) is split into three 24-bit pieces, ``2/pi`` into 24-bit
     digits ``c_j`` (weight ``2^-24j``, computed here from pi to 1400 bits). Only the digits
     that matter modulo 4 are used: eight partial sums ``P_d = sum_i a_i c_(J0+d+i)`` (each
     below 2^50, exact), carried into base-2^24 digits (exact), give the quadrant and the
     fraction exactly as non-overlapping pieces; they are summed high to low with two-sum so
     the fraction keeps full relative accuracy even when ``|x|`` is within 2^-60 of a multiple
     of pi/2. Truncation error below 2^-130 (relative to 1). Then ``r = fraction * pi/2`` in
     double-double.

2. **Kernels** on ``[-pi/4, pi/4]``: the minimax polynomials and the evaluation scheme of
   fdlibm's ``k_sin.c`` and ``k_cos.c`` (Sun Microsystems, 1993; coefficients S1..S6 and
   C1..C6 are the published figures; error bounds 2^-58.7 and 2^-58), with the low part ``lo``
   of the reduced argument as the correction term.

3. **Quadrant**: ``sin = (s, c, -s, -c)[q]``, ``cos = (c, -s, -c, s)[q]``, ``tan = s/c`` or
   ``-c/s``. ``x < 0`` reduces ``|x|`` and negates ``r`` and ``q``. ``inf`` and NaN give NaN.

Measured with the numpy evaluation against 3000-bit references (mpmath), 3000 random inputs
per range of |x| (2^-30..1, 1..2^20, 2^20..2^60, 2^60..2^1023): sin and cos at most 1 ulp from
the correctly rounded result, tan at most 2 ulp; the double nearest a multiple of pi/2
(6381956970095103 2^797) is reduced exactly (tests/codegen/nvptx/test_trig_f64.py).
"""
from __future__ import annotations

import numpy as np

# fdlibm k_sin.c / k_cos.c (public figures)
S1, S2, S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
S4, S5, S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
C1, C2, C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
C4, C5, C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11

CW_LIMIT = 2.0 ** 20       #: Cody-Waite below, Payne-Hanek from here
N_DIGITS = 8               #: 24-bit partial sums used by the Payne-Hanek reduction
PAD = 2                    #: table index of digit j is j + PAD (digits j <= 0 are zero)


def _pi_bits(nbits: int) -> int:
    """floor(pi * 2^nbits), by Machin's formula pi = 16 atan(1/5) - 4 atan(1/239) in integers
    (32 guard bits)."""
    one = 1 << (nbits + 32)

    def atan_inv(n: int) -> int:
        total, term, k, sign = 0, one // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total
    return (16 * atan_inv(5) - 4 * atan_inv(239)) >> 32


_PREC = 1400
_PI = _pi_bits(_PREC)                                   # pi * 2^_PREC
_TWO_OVER_PI = (1 << (2 * _PREC + 1)) // _PI            # (2/pi) * 2^_PREC


# pi/2 = P1 + P2 + P3 (53 bits each); computed exactly with Python integers
def _pio2_parts() -> list:
    rest = _PI  # (pi/2) * 2^(_PREC + 1)
    out = []
    for _ in range(3):
        e = rest.bit_length() - 53                       # keep the top 53 bits
        top = (rest >> e) + ((rest >> (e - 1)) & 1)     # round to nearest
        out.append(float(top) * 2.0 ** (e - _PREC - 1) if e >= 0 else 0.0)
        rest -= top << e
    return out


P1, P2, P3 = _pio2_parts()
PIO2_HI, PIO2_LO = P1, P2
TWO_OVER_PI = float(_TWO_OVER_PI >> (_PREC - 60)) / 2.0 ** 60
#: 24-bit digits of 2/pi: TABLE[j + PAD] = c_j, 2/pi = sum_j c_j 2^(-24 j)
TABLE = [0.0] * (PAD + 1) + [float((_TWO_OVER_PI >> (_PREC - 24 * j)) & 0xFFFFFF)
                             for j in range(1, 56)]


def _two_sum(o, a, b):
    s = o.add(a, b)
    bb = o.sub(s, a)
    return s, o.add(o.sub(a, o.sub(s, bb)), o.sub(b, bb))


def _fast_two_sum(o, a, b):
    s = o.add(a, b)
    return s, o.sub(b, o.sub(s, a))


def _mod4(o, v):
    return o.sub(v, o.mul(o.const(4.0), o.floor(o.mul(v, o.const(0.25)))))


def reduce_cody_waite(o, ax):
    """(q, hi, lo) with ``ax = q pi/2 + hi + lo`` for ``0 <= ax < 2^20``; q in {0,1,2,3}."""
    k = o.rint(o.mul(ax, o.const(TWO_OVER_PI)))
    r1 = o.fma(o.neg(k), o.const(P1), ax)
    t_hi = o.mul(k, o.const(P2))
    t_lo = o.fma(k, o.const(P2), o.neg(t_hi))
    hi, e = _two_sum(o, r1, o.neg(t_hi))
    lo = o.sub(o.sub(e, t_lo), o.mul(k, o.const(P3)))
    hi, lo = _fast_two_sum(o, hi, lo)
    return _mod4(o, k), hi, lo


def reduce_payne_hanek(o, ax):
    """(q, hi, lo) with ``ax = q pi/2 + (hi + lo)`` (mod 2 pi) for ``2^20 <= ax < inf``."""
    bits = o.to_bits(ax)
    s = o.isub(o.iand(o.ishr(bits, 52), 0x7FF), 1075)          # ax = M 2^s
    m = o.ior(o.iand(bits, (1 << 52) - 1), 1 << 52)
    a = [o.itof(o.iand(m, 0xFFFFFF)), o.itof(o.iand(o.ishr(m, 24), 0xFFFFFF)),
         o.itof(o.ishr(m, 48))]
    j0 = o.isub(o.idiv(o.iadd(s, 46), 24), 1)                 # floor((s - 2)/24) + 1
    base = o.isub(s, o.imul(j0, 24))                           # in [-22, 1]
    idx = o.iadd(j0, PAD)
    digits = []
    for d in range(N_DIGITS):
        p = o.mul(a[0], o.table(o.iadd(idx, d)))
        p = o.fma(a[1], o.table(o.iadd(idx, d + 1)), p)
        digits.append(o.fma(a[2], o.table(o.iadd(idx, d + 2)), p))
    two24, inv24 = o.const(2.0 ** 24), o.const(2.0 ** -24)
    for d in range(N_DIGITS - 1, 0, -1):                       # carries: digits in [0, 2^24)
        carry = o.floor(o.mul(digits[d], inv24))
        digits[d] = o.fma(o.neg(carry), two24, digits[d])
        digits[d - 1] = o.add(digits[d - 1], carry)
    t = [o.mul(dg, o.pow2(o.isub(base, 24 * d))) for d, dg in enumerate(digits)]
    ip = o.floor(t[0])
    head = o.add(o.sub(t[0], ip), t[1])                        # exact (47 bits at most)
    n2 = o.floor(o.add(head, o.const(0.5)))                    # the nearest quadrant
    head = o.sub(head, n2)
    q = _mod4(o, o.add(_mod4(o, ip), n2))
    tail = o.add(t[2], t[3])                                   # exact (48 bits)
    hi, lo = _two_sum(o, head, tail)
    small = t[4]
    for d in range(5, N_DIGITS):
        small = o.add(small, t[d])
    hi, lo = _fast_two_sum(o, hi, o.add(lo, small))
    r_hi = o.mul(hi, o.const(PIO2_HI))
    r_lo = o.fma(hi, o.const(PIO2_HI), o.neg(r_hi))
    r_lo = o.add(r_lo, o.fma(hi, o.const(PIO2_LO), o.mul(lo, o.const(PIO2_HI))))
    return q, r_hi, r_lo


def sin_kernel(o, x, y):
    """sin(x + y) for |x| <= pi/4, |y| tiny (fdlibm k_sin.c's scheme)."""
    z = o.mul(x, x)
    v = o.mul(z, x)
    r = o.fma(z, o.fma(z, o.fma(z, o.fma(z, o.const(S6), o.const(S5)), o.const(S4)),
                       o.const(S3)), o.const(S2))
    inner = o.sub(o.mul(z, o.sub(o.mul(o.const(0.5), y), o.mul(v, r))), y)
    return o.sub(x, o.sub(inner, o.mul(v, o.const(S1))))


def cos_kernel(o, x, y):
    """cos(x + y) for |x| <= pi/4, |y| tiny (fdlibm k_cos.c's scheme, FreeBSD form)."""
    z = o.mul(x, x)
    w = o.mul(z, z)
    r1 = o.mul(z, o.fma(z, o.fma(z, o.const(C3), o.const(C2)), o.const(C1)))
    r2 = o.mul(o.mul(w, w), o.fma(z, o.fma(z, o.const(C6), o.const(C5)), o.const(C4)))
    r = o.add(r1, r2)
    hz = o.mul(o.const(0.5), z)
    w = o.sub(o.const(1.0), hz)
    corr = o.add(o.sub(o.sub(o.const(1.0), w), hz), o.sub(o.mul(z, r), o.mul(x, y)))
    return o.add(w, corr)


def reduce(o, x):
    """(q, hi, lo, finite) for any f64 ``x``: ``x = q pi/2 + hi + lo`` (mod 2 pi)."""
    ax = o.fabs(x)
    finite = o.lt(ax, o.const(np.inf))
    small = o.lt(ax, o.const(CW_LIMIT))
    big = o.both(finite, o.ge(ax, o.const(CW_LIMIT)))
    q1, h1, l1 = reduce_cody_waite(o, o.select(small, ax, o.const(0.0)))
    q2, h2, l2 = reduce_payne_hanek(o, o.select(big, ax, o.const(CW_LIMIT)))
    q, hi, lo = (o.select(small, q1, q2), o.select(small, h1, h2), o.select(small, l1, l2))
    neg = o.lt(x, o.const(0.0))
    hi, lo = o.select(neg, o.neg(hi), hi), o.select(neg, o.neg(lo), lo)
    q = o.select(neg, _mod4(o, o.sub(o.const(4.0), q)), q)
    return q, hi, lo, finite


def trig(o, name: str, x):
    """``name`` in (sin, cos, tan) of the f64 values ``x`` with the operations ``o``."""
    q, hi, lo, finite = reduce(o, x)
    s, c = sin_kernel(o, hi, lo), cos_kernel(o, hi, lo)
    odd = o.ge(o.sub(q, o.mul(o.const(2.0), o.floor(o.mul(q, o.const(0.5))))), o.const(0.5))
    if name == "tan":
        y = o.select(odd, o.neg(o.div(c, s)), o.div(s, c))
    elif name == "sin":
        b = o.select(odd, c, s)
        y = o.select(o.ge(q, o.const(2.0)), o.neg(b), b)
    else:
        b = o.select(odd, s, c)
        flip = o.both(o.ge(q, o.const(0.5)), o.lt(q, o.const(2.5)))
        y = o.select(flip, o.neg(b), b)
    if name != "cos":  # sin(+-0) and tan(+-0) keep the sign of zero
        y = o.select(o.eq(x, o.const(0.0)), x, y)
    return o.select(finite, y, o.sub(x, x))


class NumpyOps:
    """The operations of :func:`trig` on numpy float64/int64 arrays (the reference run)."""

    const = staticmethod(np.float64)
    add, sub, mul, div = staticmethod(np.add), staticmethod(np.subtract), \
        staticmethod(np.multiply), staticmethod(np.divide)
    neg, floor, rint, fabs = staticmethod(np.negative), staticmethod(np.floor), \
        staticmethod(np.rint), staticmethod(np.abs)
    lt, ge, eq = staticmethod(np.less), staticmethod(np.greater_equal), staticmethod(np.equal)
    both = staticmethod(np.logical_and)

    @staticmethod
    def fma(a, b, c):
        """a * b + c with one rounding (exact product by Dekker splitting, then two-sum)."""
        a, b, c = np.broadcast_arrays(np.float64(a), np.float64(b), np.float64(c))
        p = a * b
        split = 134217729.0  # 2^27 + 1
        def halves(v):
            t = split * v
            h = t - (t - v)
            return h, v - h
        ah, al = halves(a)
        bh, bl = halves(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl   # a*b = p + e exactly
        s = p + c
        bb = s - p
        err = (p - (s - bb)) + (c - bb)                     # p + c = s + err exactly
        return s + (err + e)

    @staticmethod
    def select(c, a, b):
        return np.where(c, a, b)

    to_bits = staticmethod(lambda v: np.asarray(v, np.float64).view(np.int64))
    ishr = staticmethod(lambda v, n: v >> n)
    iand = staticmethod(lambda v, m: v & m)
    ior = staticmethod(lambda v, m: v | m)
    iadd = staticmethod(lambda v, n: v + n)
    isub = staticmethod(lambda v, n: v - n)
    imul = staticmethod(lambda v, n: v * n)
    idiv = staticmethod(lambda v, n: v // n)               # operands are >= 0
    itof = staticmethod(lambda v: v.astype(np.float64))
    pow2 = staticmethod(lambda n: np.ldexp(1.0, n.astype(np.int32)))
    table = staticmethod(lambda i: np.asarray(TABLE)[i])


def numpy_trig(name: str, x) -> np.ndarray:
    """:func:`trig` evaluated with numpy on float64 array ``x`` (what the PTX computes)."""
    with np.errstate(all="ignore"):
        return trig(NumpyOps, name, np.asarray(x, np.float64))


__all__ = ["trig", "reduce", "sin_kernel", "cos_kernel", "NumpyOps", "numpy_trig", "TABLE"]
