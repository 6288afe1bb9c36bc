"""libdevice arithmetic in a fixed rounding mode and the rounding conversions, in LLVM IR.

``__nv_{f,d}{add,sub,mul,div,rcp,sqrt}_<r>``, ``__nv_fma{f,}_<r>``, ``__nv_frsqrt_rn`` and
``__nv_<src>2<dst>_<r>`` (CUDA Math API, "Single/Double Precision Intrinsics", "Type Casting
Intrinsics"). The host computes in round-to-nearest only, so a directed result is the
correctly rounded nearest value ``c`` (the host's own IEEE operation) moved by at most one
ulp: the sign of ``exact - c`` decides, and it is computed exactly with error-free
transformations (Knuth's TwoSum; the residual ``fma(-q, b, a)`` of a quotient and
``fma(-q, q, x)`` of a square root, which are exact; Muller et al., *Handbook of
Floating-Point Arithmetic*, 2nd ed., sections 4.3 and 5.3):

* fp32 operands: the operation in double is exact (add through TwoSum, mul exactly) or has
  an exact residual (div, sqrt), and ``exact - c`` follows from ``(s - c) + e``, whose first
  difference is exact (Sterbenz);
* fp64 add: TwoSum; fp64 mul, div, sqrt: the operands are first split as ``m * 2**e``
  (``llvm.frexp``) so the residual of ``m_a * m_b`` (``m_a / m_b``, ``sqrt m``) never
  underflows, and ``c`` is scaled by ``2**-e`` (exact) for the comparison; fp64 fma:
  ``a*b = (P + Pe) * 2**E`` exactly from the frexp mantissas, ``z - c`` as a TwoSum scaled by
  ``2**-E``, and the sign of the four-term sum from Shewchuk's Grow-Expansion (a scaled term
  that over- or underflows is one that dominates or cannot matter);
* round-down of an exact zero sum gives -0 (IEEE 754 section 6.3);
* float to integer: ``llvm.rint``/``trunc``/``floor``/``ceil``, then ``llvm.fpto[su]i.sat``
  (saturating, NaN -> 0, as PTX ``cvt``); int64 to float: the operand is the exact sum of its
  high and low 32-bit halves in double, through TwoSum.

Everything is straight-line IR with selects (vectorisable; ``frexp``/``ldexp`` may become
library calls).
"""
from __future__ import annotations

from llvmlite import ir

from .llvmtypes import DOUBLE, FLOAT, I1, I32, I64

MODES = ("rn", "rz", "rd", "ru")
_INTS = {"int": (I32, True), "uint": (I32, False), "ll": (I64, True), "ull": (I64, False)}
_FLOATS = {"float": FLOAT, "double": DOUBLE}
_FLOAT_OPS = {"add": 2, "sub": 2, "mul": 2, "div": 2, "rcp": 1, "sqrt": 1}


def _fn(module, name, ret, args):
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn


def _sfx(ty) -> str:
    return "f64" if ty == DOUBLE else "f32"


def _call(b, module, name, ty, *xs):
    return b.call(_fn(module, f"llvm.{name}.{_sfx(ty)}", ty, [ty] * len(xs)), list(xs))


def _fma(b, module, x, y, z):
    return _call(b, module, "fma", x.type, x, y, z)


def two_sum(b, x, y):
    """(s, e): s = fl(x + y), e = x + y - s exactly (Knuth)."""
    s = b.fadd(x, y)
    bb = b.fsub(s, x)
    e = b.fadd(b.fsub(x, b.fsub(s, bb)), b.fsub(y, bb))
    return s, e


def _sign(b, v):
    z = ir.Constant(v.type, 0.0)
    return b.fcmp_ordered(">", v, z), b.fcmp_ordered("<", v, z)


def _sign_or(b, t, r):
    """Sign flags of ``t``, or of ``r`` where ``t`` is zero."""
    tz = b.fcmp_ordered("==", t, ir.Constant(t.type, 0.0))
    tg, tl = _sign(b, t)
    rg, rl = _sign(b, r)
    return b.select(tz, rg, tg), b.select(tz, rl, tl)


def _step(b, c, up):
    """The float next to ``c`` (not NaN) upwards when ``up`` (i1) else downwards."""
    ity = I64 if c.type == DOUBLE else I32
    bits = b.bitcast(c, ity)
    one = ir.Constant(ity, 1)
    away = b.icmp_signed("==", b.fcmp_ordered(">", c, ir.Constant(c.type, 0.0)), up)
    moved = b.bitcast(b.select(away, b.add(bits, one), b.sub(bits, one)), c.type)
    tiny = b.bitcast(one, c.type)
    zero_step = b.select(up, tiny, b.fneg(tiny))
    return b.select(b.fcmp_ordered("==", c, ir.Constant(c.type, 0.0)), zero_step, moved)


def directed(b, c, gt, lt, mode: str):
    """``c`` (the nearest value) moved to the neighbour ``mode`` picks, given ``gt``/``lt``:
    the exact result is above/below ``c``."""
    if mode == "rn":
        return c
    if mode == "rd":
        return b.select(lt, _step(b, c, ir.Constant(I1, 0)), c)
    if mode == "ru":
        return b.select(gt, _step(b, c, ir.Constant(I1, 1)), c)
    pos = b.fcmp_ordered(">", c, ir.Constant(c.type, 0.0))
    neg = b.fcmp_ordered("<", c, ir.Constant(c.type, 0.0))
    down = b.and_(pos, lt)
    need = b.or_(down, b.and_(neg, gt))
    return b.select(need, _step(b, c, b.not_(down)), c)


def _plus_zero(b, v):
    ity = I64 if v.type == DOUBLE else I32
    return b.icmp_unsigned("==", b.bitcast(v, ity), ir.Constant(ity, 0))


def _zero_sum(b, c, gt, lt, x, y, mode: str):
    """``c`` (the nearest sum ``x + y``) moved as ``mode`` says, and round-down's -0 when the
    exact sum is zero (``c`` zero, neither flag) unless both operands are +0."""
    r = directed(b, c, gt, lt, mode)
    if mode != "rd":
        return r
    z = ir.Constant(r.type, 0.0)
    both_plus = b.and_(_plus_zero(b, x), _plus_zero(b, y))
    exact_zero = b.and_(b.fcmp_ordered("==", c, z), b.not_(b.or_(gt, lt)))
    return b.select(b.and_(exact_zero, b.not_(both_plus)), b.fneg(z), r)


def _expansion_sign(b, terms):
    """(gt, lt) sign flags of the exact sum of ``terms`` (finite doubles, no overflow):
    Shewchuk's Grow-Expansion makes a nonoverlapping expansion, whose sign is that of its
    largest nonzero component."""
    e = [terms[0]]
    for t in terms[1:]:
        q, grown = t, []
        for comp in e:
            q, h = two_sum(b, q, comp)
            grown.append(h)
        e = grown + [q]
    top = ir.Constant(DOUBLE, 0.0)
    for comp in e:
        top = b.select(b.fcmp_ordered("!=", comp, ir.Constant(DOUBLE, 0.0)), comp, top)
    return _sign(b, top)


def _frexp(b, module, x):
    st = ir.LiteralStructType([DOUBLE, I32])
    r = b.call(_fn(module, "llvm.frexp.f64.i32", st, [DOUBLE]), [x])
    return b.extract_value(r, 0), b.extract_value(r, 1)


def _ldexp(b, module, x, e):
    return b.call(_fn(module, "llvm.ldexp.f64.i32", DOUBLE, [DOUBLE, I32]), [x, e])


def _f32_op(b, module, op, xs, mode):
    d = [b.fpext(x, DOUBLE) for x in xs]
    if op == "add":
        c = b.fadd(xs[0], xs[1])
        s, e = two_sum(b, d[0], d[1])
        gt, lt = _sign(b, b.fadd(b.fsub(s, b.fpext(c, DOUBLE)), e))
        return _zero_sum(b, c, gt, lt, xs[0], xs[1], mode)
    if op == "mul":
        c = b.fmul(xs[0], xs[1])
        gt, lt = _sign(b, b.fsub(b.fmul(d[0], d[1]), b.fpext(c, DOUBLE)))
        return directed(b, c, gt, lt, mode)
    if op == "fma":
        c = _fma(b, module, *xs)
        p = b.fmul(d[0], d[1])
        s, e = two_sum(b, p, d[2])
        gt, lt = _sign(b, b.fadd(b.fsub(s, b.fpext(c, DOUBLE)), e))
        return _zero_sum(b, c, gt, lt, p, d[2], mode)
    if op == "div":
        c = b.fdiv(xs[0], xs[1])
        q = b.fdiv(d[0], d[1])
        r = b.fmul(_fma(b, module, b.fneg(q), d[1], d[0]), d[1])
    else:  # sqrt
        c = _call(b, module, "sqrt", FLOAT, xs[0])
        q = _call(b, module, "sqrt", DOUBLE, d[0])
        r = _fma(b, module, b.fneg(q), q, d[0])
    gt, lt = _sign_or(b, b.fsub(q, b.fpext(c, DOUBLE)), r)
    return directed(b, c, gt, lt, mode)


def _f64_scaled(b, module, op, xs):
    """(c, gt, lt) for fp64 mul/div/sqrt through the frexp-scaled residual."""
    if op == "sqrt":
        m, e = _frexp(b, module, xs[0])
        odd = b.trunc(e, I1)
        m = b.select(odd, b.fmul(m, ir.Constant(DOUBLE, 2.0)), m)
        half = b.ashr(b.select(odd, b.sub(e, ir.Constant(I32, 1)), e), ir.Constant(I32, 1))
        c = _call(b, module, "sqrt", DOUBLE, xs[0])
        q = _call(b, module, "sqrt", DOUBLE, m)
        return (c, *_sign_or(b, b.fsub(q, _ldexp(b, module, c, b.neg(half))),
                             _fma(b, module, b.fneg(q), q, m)))
    (ma, ea), (mb, eb) = _frexp(b, module, xs[0]), _frexp(b, module, xs[1])
    if op == "mul":
        c = b.fmul(xs[0], xs[1])
        q = b.fmul(ma, mb)
        r = _fma(b, module, ma, mb, b.fneg(q))
        scale = b.neg(b.add(ea, eb))
    else:
        c = b.fdiv(xs[0], xs[1])
        q = b.fdiv(ma, mb)
        r = b.fmul(_fma(b, module, b.fneg(q), mb, ma), mb)
        scale = b.sub(eb, ea)
    return (c, *_sign_or(b, b.fsub(q, _ldexp(b, module, c, scale)), r))


def _f64_op(b, module, op, xs, mode):
    if op == "add":
        c = b.fadd(xs[0], xs[1])
        _, e = two_sum(b, xs[0], xs[1])
        gt, lt = _sign(b, e)
        inf = ir.Constant(DOUBLE, float("inf"))
        finite = b.and_(*[b.fcmp_ordered("<", _call(b, module, "fabs", DOUBLE, x), inf)
                          for x in xs])
        over = b.and_(finite, b.fcmp_ordered("==", _call(b, module, "fabs", DOUBLE, c), inf))
        cg, cl = _sign(b, c)
        gt, lt = b.select(over, cl, gt), b.select(over, cg, lt)
        return _zero_sum(b, c, gt, lt, xs[0], xs[1], mode)
    if op == "fma":
        c = _fma(b, module, *xs)
        gt, lt = _fma64_sign(b, module, xs, c)
        return _zero_sum(b, c, gt, lt, b.fmul(xs[0], xs[1]), xs[2], mode)
    c, gt, lt = _f64_scaled(b, module, op, xs)
    return directed(b, c, gt, lt, mode)


def _fma64_sign(b, module, xs, c):
    """Sign flags of ``a*b + z - c`` for doubles: ``a*b = (P + Pe) * 2**E`` exactly from the
    frexp mantissas, ``z - c = u + ue`` (TwoSum) scaled by ``2**-E``; an overflow of the
    scaled ``u`` means ``u`` dominates. A non-finite ``c`` is exact unless it overflowed from
    finite operands (then the exact value lies towards zero)."""
    (ma, ea), (mb, eb) = _frexp(b, module, xs[0]), _frexp(b, module, xs[1])
    e = b.add(ea, eb)
    big_p = b.fmul(ma, mb)
    pe = _fma(b, module, ma, mb, b.fneg(big_p))
    u, ue = two_sum(b, xs[2], b.fneg(c))
    su, sue = (_ldexp(b, module, v, b.neg(e)) for v in (u, ue))
    gt, lt = _expansion_sign(b, [sue, pe, su, big_p])
    fabs = lambda v: _call(b, module, "fabs", DOUBLE, v)  # noqa: E731
    huge = b.fcmp_unordered(">", fabs(su), ir.Constant(DOUBLE, 2.0 ** 900))
    ug, ul = _sign(b, u)
    gt, lt = b.select(huge, ug, gt), b.select(huge, ul, lt)
    inf = ir.Constant(DOUBLE, float("inf"))
    finite_in = b.and_(b.and_(*[b.fcmp_ordered("<", fabs(x), inf) for x in xs[:2]]),
                       b.fcmp_ordered("<", fabs(xs[2]), inf))
    c_fin = b.fcmp_ordered("<", fabs(c), inf)
    cg, cl = _sign(b, c)
    over = b.and_(finite_in, b.not_(c_fin))
    exact = b.and_(b.not_(finite_in), ir.Constant(I1, 1))
    gt = b.select(over, cl, b.select(b.or_(exact, b.not_(c_fin)), ir.Constant(I1, 0), gt))
    lt = b.select(over, cg, b.select(b.or_(exact, b.not_(c_fin)), ir.Constant(I1, 0), lt))
    return gt, lt


def _rsqrt_rn(b, module, x):
    """Correctly rounded fp32 1/sqrt(x): the double estimate, then the two midpoints around it
    checked exactly (``1 - m*m*x`` by fma, ``m*m`` exact for 25-bit ``m``)."""
    d = b.fpext(x, DOUBLE)
    one = ir.Constant(DOUBLE, 1.0)
    c = b.fptrunc(b.fdiv(one, _call(b, module, "sqrt", DOUBLE, d)), FLOAT)
    fin = b.fcmp_ordered("<", c, ir.Constant(FLOAT, float("inf")))
    ok = b.and_(fin, b.fcmp_ordered(">", c, ir.Constant(FLOAT, 0.0)))
    for up in (1, 0):
        n = _step(b, c, ir.Constant(I1, up))
        m = b.fmul(b.fadd(b.fpext(c, DOUBLE), b.fpext(n, DOUBLE)), ir.Constant(DOUBLE, 0.5))
        r = _fma(b, module, b.fneg(b.fmul(m, m)), d, one)  # sign(1/sqrt(x) - m)
        beyond = b.fcmp_ordered(">" if up else "<", r, ir.Constant(DOUBLE, 0.0))
        c = b.select(b.and_(ok, beyond), n, c)
    return c


def _int_to_float(b, x, signed, dst, mode):
    conv = b.sitofp if signed else b.uitofp
    c = conv(x, dst)
    if x.type == I32:
        gt, lt = _sign(b, b.fsub(conv(x, DOUBLE), b.fpext(c, DOUBLE) if dst == FLOAT else c))
        return directed(b, c, gt, lt, mode)
    shift = ir.Constant(I64, 32)
    hi = conv(b.ashr(x, shift) if signed else b.lshr(x, shift), DOUBLE)
    hi = b.fmul(hi, ir.Constant(DOUBLE, 2.0 ** 32))
    lo = b.uitofp(b.and_(x, ir.Constant(I64, 0xFFFFFFFF)), DOUBLE)
    s, e = two_sum(b, hi, lo)
    ce = b.fpext(c, DOUBLE) if dst == FLOAT else c
    gt, lt = _sign(b, b.fadd(b.fsub(s, ce), e))
    return directed(b, c, gt, lt, mode)


def _float_to_int(b, module, x, ity, signed, mode):
    rnd = {"rn": "rint", "rz": "trunc", "rd": "floor", "ru": "ceil"}[mode]
    r = _call(b, module, rnd, x.type, x)
    name = f"llvm.fpto{'s' if signed else 'u'}i.sat.i{ity.width}.{_sfx(x.type)}"
    return b.call(_fn(module, name, ity, [x.type]), [r])


def _convert(b, module, src, dst, mode, x):
    if src in _FLOATS and dst in _INTS:
        return _float_to_int(b, module, x, *_INTS[dst], mode)
    if src in _INTS:
        return _int_to_float(b, x, _INTS[src][1], _FLOATS[dst], mode)
    if src == "double" and dst == "float":
        c = b.fptrunc(x, FLOAT)
        gt, lt = _sign(b, b.fsub(x, b.fpext(c, DOUBLE)))
        return directed(b, c, gt, lt, mode)
    return None


def emit(b: ir.IRBuilder, module: ir.Module, name: str, xs: list):
    """Emit libdevice symbol ``name`` (``__nv_`` dropped) on LLVM values ``xs`` when it is a
    rounding-mode arithmetic or conversion symbol; returns the value (fp32/fp64, or the
    integer of the destination width), or None for other names."""
    if name == "fmaf":  # fused in single precision (fma in double, then rounding, is not)
        return _fma(b, module, *xs)
    base, _, mode = name.rpartition("_")
    if mode not in MODES:
        return None
    if "2" in base:
        src, _, dst = base.partition("2")
        if (src in _INTS or src in _FLOATS) and (dst in _INTS or dst in _FLOATS):
            return _convert(b, module, src, dst, mode, xs[0])
        return None
    if base == "frsqrt" and mode == "rn":
        return _rsqrt_rn(b, module, xs[0])
    op, f64 = None, False
    if base in ("fmaf", "fma"):
        op, f64 = "fma", base == "fma"
    elif base[:1] in ("f", "d") and base[1:] in _FLOAT_OPS:
        op, f64 = base[1:], base[0] == "d"
    if op is None:
        return None
    if op == "sub":
        op, xs = "add", [xs[0], b.fneg(xs[1])]
    if op == "rcp":
        op, xs = "div", [ir.Constant(xs[0].type, 1.0), xs[0]]
    return (_f64_op if f64 else _f32_op)(b, module, op, xs, mode)
