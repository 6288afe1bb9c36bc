"""libdevice arithmetic in a fixed rounding mode and the rounding conversions, exactly.

``__nv_{f,d}{add,sub,mul,div,rcp,sqrt}_{rn,rz,rd,ru}``, ``__nv_fma{f,}_<r>``, ``__nv_frsqrt_rn``
and ``__nv_<src>2<dst>_<r>`` (CUDA Math API, "Single/Double Precision Intrinsics" and "Type
Casting Intrinsics"; IEEE 754-2008 section 4.3 for the rounding directions). The result
is exact: each element's real result is a ``fractions.Fraction`` (or, for ``sqrt`` and
``rsqrt``, an exact comparison against rational candidates) rounded once to fp32 or fp64 in
the requested direction. Special values follow IEEE 754: NaN and infinite results pass
through; an exact zero sum is -0 in round-down (section 6.3). Float-to-integer conversions
round in the mode, then saturate to the destination range; NaN converts to 0 (PTX ISA,
``cvt``: "saturation for float-to-integer conversions is the default").

fp32 arithmetic and fp64 add/sub are vectorised with the CPU backend's error-free
transformations (TwoSum, Dekker's product; fma rounds the exact double-double sum to odd
before the single rounding to fp32), and so are the conversions; fp64 mul/div/sqrt/fma and
``frsqrt_rn`` loop over elements in Python with exact rationals.
"""
from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np

MODES = ("rn", "rz", "rd", "ru")
_ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "rcp": 1, "sqrt": 1, "fma": 3}


def _step(r, up: bool):
    fmt = type(r)
    return np.nextafter(r, fmt(np.inf) if up else fmt(-np.inf))


def _pick(lo, hi, above_mid: int, mode: str, positive: bool):
    """The neighbour ``lo`` < real < ``hi`` that ``mode`` selects; ``above_mid`` is the sign
    of (real - midpoint) for round-to-nearest (ties to the even significand)."""
    if mode == "rd" or (mode == "rz" and positive):
        return lo
    if mode == "ru" or mode == "rz":
        return hi
    if above_mid != 0:
        return hi if above_mid > 0 else lo
    bits = np.array(lo).view(np.uint32 if type(lo) is np.float32 else np.uint64)
    return lo if int(bits) % 2 == 0 else hi


def round_fraction(q: Fraction, fmt, mode: str):
    """``q`` (a nonzero finite rational) rounded to ``fmt`` (np.float32 or np.float64) in
    ``mode``; overflow gives the largest finite value or infinity as IEEE 754 section 7.4
    says for that direction."""
    info = np.finfo(fmt)
    big = Fraction(float(info.max))
    positive = q > 0
    if abs(q) > big:
        ulp = Fraction(2) ** (int(info.maxexp) - int(info.nmant) - 1)
        to_inf = {"rn": abs(q) >= big + ulp / 2, "rz": False, "rd": not positive,
                  "ru": positive}[mode]
        return fmt(np.inf if positive else -np.inf) if to_inf else fmt(big if positive
                                                                       else -big)
    r = fmt(float(q))
    fr = Fraction(float(r))
    if fr == q:
        return r
    lo, hi = (r, _step(r, True)) if fr < q else (_step(r, False), r)
    if mode == "rn":
        mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
        return _pick(lo, hi, (q > mid) - (q < mid), mode, positive)
    return _pick(lo, hi, 0, mode, positive)


def round_monotone(approx: float, cmp: Callable[[Fraction], int], fmt, mode: str):
    """The real ``y`` described by ``cmp(c) = sign(y - c)`` (exact, for rationals ``c``)
    rounded to ``fmt`` in ``mode``, starting from ``approx`` (within a few ulps of ``y``);
    ``y`` is positive, finite and not representable at the midpoints' precision."""
    r = fmt(approx)
    while cmp(Fraction(float(r))) < 0:
        r = _step(r, False)
    while cmp(Fraction(float(_step(r, True)))) >= 0:
        r = _step(r, True)
    if cmp(Fraction(float(r))) == 0:
        return r
    lo, hi = r, _step(r, True)
    mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
    return _pick(lo, hi, cmp(mid), mode, True)


def _zero_sum_sign(terms, mode: str) -> float:
    """The signed zero an exact-zero sum of ``terms`` gives (IEEE 754 section 6.3)."""
    if all(t == 0 for t in terms) and len({bool(np.signbit(t)) for t in terms}) == 1:
        return -0.0 if np.signbit(terms[0]) else 0.0
    return -0.0 if mode == "rd" else 0.0


def _arith(op: str, xs: list, fmt, mode: str):
    """One element of ``op`` (add sub mul div rcp sqrt fma rsqrt) on floats ``xs``."""
    f = [float(x) for x in xs]
    if op == "sub":
        op, f = "add", [f[0], -f[1]]
    if op == "rcp":
        op, f = "div", [1.0, f[0]]
    with np.errstate(all="ignore"):
        if op in ("sqrt", "rsqrt"):
            x = f[0]
            if not np.isfinite(x) or x <= 0:
                return fmt(np.sqrt(x) if op == "sqrt" else 1.0 / np.sqrt(x))
            fx = Fraction(x)
            if op == "sqrt":
                return round_monotone(np.sqrt(x), lambda c: (fx > c * c) - (fx < c * c),
                                      fmt, mode)
            return round_monotone(1.0 / np.sqrt(x),
                                  lambda c: (1 > c * c * fx) - (1 < c * c * fx), fmt, mode)
        rn = {"add": lambda: f[0] + f[1], "mul": lambda: f[0] * f[1],
              "div": lambda: np.float64(f[0]) / np.float64(f[1]),
              "fma": lambda: f[0] * f[1] + f[2]}[op]()
        if op == "fma" and np.isfinite(f[0]) and np.isfinite(f[1]) and np.isinf(f[2]):
            return fmt(f[2])  # the exact product is finite, even where a*b overflows
        if not all(np.isfinite(f)) or (op == "div" and f[1] == 0):
            return fmt(rn)
    q = [Fraction(v) for v in f]
    exact = {"add": lambda: q[0] + q[1], "mul": lambda: q[0] * q[1],
             "div": lambda: q[0] / q[1], "fma": lambda: q[0] * q[1] + q[2]}[op]()
    if exact == 0:
        if op == "add":
            return fmt(_zero_sum_sign(f, mode))
        if op == "fma":
            return fmt(_zero_sum_sign([f[0] * f[1], f[2]], mode))
        return fmt(rn)  # a zero product or quotient: its sign is exact
    return round_fraction(exact, fmt, mode)


# ---- vectorised fp32 (and fp64 add): the CPU backend's error-free transformations -------------
def _two_sum(x, y):
    s = x + y
    bb = s - x
    return s, (x - (s - bb)) + (y - bb)


def _two_prod(x, y):
    """Dekker's exact product (Veltkamp's split); operands well inside the double range."""
    def split(v):
        t = 134217729.0 * v
        hi = t - (t - v)
        return hi, v - hi
    (xh, xl), (yh, yl) = split(x), split(y)
    p = x * y
    return p, ((xh * yh - p) + xh * yl + xl * yh) + xl * yl


def _directed(c, d, mode: str):
    """``c`` (nearest) moved one ulp as ``mode`` says; ``d`` has the sign of exact - c."""
    if mode == "rn":
        return c
    inf = c.dtype.type(np.inf)
    if mode == "rd":
        return np.where(d < 0, np.nextafter(c, -inf), c)
    if mode == "ru":
        return np.where(d > 0, np.nextafter(c, inf), c)
    return np.where((c > 0) & (d < 0), np.nextafter(c, -inf),
                    np.where((c < 0) & (d > 0), np.nextafter(c, inf), c))


def _rd_zero(r, c, d, x, y, mode):
    """Round-down's -0 for an exact zero sum of ``x + y`` unless both are +0."""
    if mode != "rd":
        return r
    plus = (x == 0) & ~np.signbit(x) & (y == 0) & ~np.signbit(y)
    return np.where((c == 0) & (d == 0) & ~plus, -0.0, r).astype(r.dtype)


def _fast(op: str, xs: list, fmt, mode: str):
    """The vectorised result, or None where only the exact per-element path applies."""
    f = [np.asarray(x, fmt) for x in xs]
    if fmt is np.float64 and mode == "rn" and op != "fma":  # the host's IEEE operation
        return {"add": np.add, "mul": np.multiply, "div": np.divide,
                "sqrt": np.sqrt}[op](*f)
    if fmt is np.float64 and op != "add":
        return None
    d64 = [x.astype(np.float64) for x in f]
    if op == "add":
        c = f[0] + f[1]
        s, e = _two_sum(d64[0], d64[1])
        if fmt is np.float64:
            d = np.where(np.isinf(c) & np.isfinite(d64[0]) & np.isfinite(d64[1]), -c, e)
        else:
            d = (s - c.astype(np.float64)) + e
        return _rd_zero(_directed(c, d, mode), c, d, d64[0], d64[1], mode)
    if op == "mul":
        c = f[0] * f[1]
        return _directed(c, d64[0] * d64[1] - c.astype(np.float64), mode)
    if op == "fma":
        p = d64[0] * d64[1]
        s, e = _two_sum(p, d64[2])
        odd = (s.view(np.uint64) & np.uint64(1)) == 1
        towards = np.where(e > 0, np.inf, -np.inf)
        to_odd = np.where((e != 0) & ~odd & np.isfinite(e), np.nextafter(s, towards), s)
        c = to_odd.astype(np.float32)  # round-to-odd then nearest: correct (53 >= 24 + 2)
        d = (s - c.astype(np.float64)) + e
        return _rd_zero(_directed(c, d, mode), c, d, p, d64[2], mode)
    if op == "div":
        c = f[0] / f[1]
        q = d64[0] / d64[1]
        p, pe = _two_prod(q, d64[1])
        res = ((d64[0] - p) - pe) * np.sign(d64[1])
    else:  # sqrt
        c = np.sqrt(f[0])
        q = np.sqrt(d64[0])
        p, pe = _two_prod(q, q)
        res = (d64[0] - p) - pe
    t = q - c.astype(np.float64)
    return _directed(c, np.where(t == 0, res, t), mode)


def arith_fn(op: str, fmt, mode: str):
    """numpy function of the libdevice arithmetic ``op`` in ``mode`` on ``fmt`` arrays
    (vectorised for fp32 and fp64 add/sub, element by element with exact rationals for the
    rest)."""
    def run(*xs):
        xs = np.broadcast_arrays(*[np.asarray(x) for x in xs])
        if op in ("add", "sub", "mul", "div", "rcp", "sqrt", "fma"):
            ys = list(xs)
            if op == "sub":
                ys[1] = -np.asarray(ys[1])
            if op == "rcp":
                ys = [np.ones_like(ys[0]), ys[0]]
            kind = {"sub": "add", "rcp": "div"}.get(op, op)
            with np.errstate(all="ignore"):
                fast = _fast(kind, ys, fmt, mode)
            if fast is not None:
                return fast.astype(fmt)
        out = np.empty(xs[0].shape, fmt)
        for i in np.ndindex(out.shape):
            out[i] = _arith(op, [x[i] for x in xs], fmt, mode)
        return out
    return run


# ---- conversions ------------------------------------------------------------------------------
_INTS = {"int": (np.int32, np.int32), "uint": (np.uint32, np.int32), "ll": (np.int64, np.int64),
         "ull": (np.uint64, np.int64)}
_FLOATS = {"float": np.float32, "double": np.float64}


def _float_to_int(x: np.ndarray, dst, mode: str) -> np.ndarray:
    r = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode](
        np.asarray(x, np.float64))
    info = np.iinfo(dst)
    top = 2.0 ** (info.bits - (1 if info.min < 0 else 0))  # first value beyond the range
    with np.errstate(invalid="ignore"):
        big, small = r >= top, r <= float(info.min)
        mid = np.where(big | small | np.isnan(r), 0.0, r).astype(dst)
    return np.where(big, info.max, np.where(small, info.min, mid)).astype(dst)


def _int_to_float(x: np.ndarray, usrc, fmt, mode: str) -> np.ndarray:
    v = np.asarray(x).view(usrc)
    c = v.astype(fmt)  # the host's conversion: round to nearest
    if v.dtype.itemsize == 4:
        d = v.astype(np.float64) - c.astype(np.float64)
    else:  # the exact value as the TwoSum of its high and low 32-bit halves
        shift = v.dtype.type(32)
        hi = (v >> shift).astype(np.float64) * 2.0 ** 32
        lo = (v & v.dtype.type(0xFFFFFFFF)).astype(np.float64)
        s, e = _two_sum(hi, lo)
        d = (s - c.astype(np.float64)) + e
    return _directed(c, d, mode)


def convert_fn(src: str, dst: str, mode: str):
    """numpy function of ``__nv_<src>2<dst>_<mode>`` (src/dst: float double int uint ll ull;
    unsigned results come back in the signed dtype of the same width, as Triton types them)."""
    if src in _FLOATS and dst in _INTS:
        udst, sdst = _INTS[dst]
        return lambda x: _float_to_int(x, udst, mode).view(sdst)
    fmt = _FLOATS[dst]
    if src in _INTS:
        return lambda x: _int_to_float(x, _INTS[src][0], fmt, mode)

    def narrow(x):
        x = np.asarray(x, np.float64)
        with np.errstate(all="ignore"):
            c = x.astype(fmt)
            return _directed(c, x - c.astype(np.float64), mode)
    return narrow


def lookup(name: str):
    """The numpy function of libdevice symbol ``name`` (``__nv_`` dropped) when it is a
    rounding-mode arithmetic or conversion symbol, else None."""
    base, _, mode = name.rpartition("_")
    if mode not in MODES:
        return None
    if "2" in base:
        src, _, dst = base.partition("2")
        if (src in _INTS or src in _FLOATS) and (dst in _INTS or dst in _FLOATS):
            return convert_fn(src, dst, mode)
        return None
    if base == "frsqrt" and mode == "rn":
        return arith_fn("rsqrt", np.float32, mode)
    if base in ("fmaf", "fma"):
        return arith_fn("fma", np.float32 if base == "fmaf" else np.float64, mode)
    if base[:1] in ("f", "d") and base[1:] in _ARITY:
        return arith_fn(base[1:], np.float32 if base[0] == "f" else np.float64, mode)
    return None
