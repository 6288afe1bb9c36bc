"""Elementwise ops beyond arith/math, and ``scf.while``, on the CUDA backend.

* ``tt.mulhiui``: the high half of the unsigned product, ``zext``/``mul``/``lshr`` in LLVM IR,
  which the NVPTX back end selects as ``mul.hi.u32`` / ``mul.hi.u64`` (PTX ISA 9.7.1.5 mul).
  Philox (``tl.rand``, ``tl.randint``, ``tl.randn``) is built from it.
* ``tt.clampf {propagateNan}``: ``min(max(x, lo), hi)``; ``"none"``: ``max.f32``/``min.f32``
  (IEEE maxNum: a NaN ``x`` gives ``lo``), ``"all"``: ``max.NaN.f32``/``min.NaN.f32``
  (``llvm.maximum``/``llvm.minimum``, PTX ISA 9.7.3.11, sm_80+), so a NaN propagates.
  f16/bf16 are clamped in f32 (exact: the result is one of the inputs).
* ``tt.fp_to_fp {rounding = "rtz"}`` when it narrows: ``cvt.rz.f32.f64`` and
  ``cvt.rz.f16.f32`` (PTX ISA 9.7.9.21 cvt); to bf16 the f32 bits are truncated (round toward
  zero by definition; NaN keeps a quiet NaN: ``bits >> 16 | 0x40``, as the interpreter). From
  f64 to 16-bit floats it goes through f32 with ``rz`` twice, which equals one ``rz`` (the f32
  values include every 16-bit float). Otherwise ``rtne``, as :mod:`.elementwise`.
* ``tt.extern_elementwise``: :mod:`.libdevice`.
* ``scf.while``: a header block (phis of the carried registers) running the ``before`` region
  and branching on ``scf.condition``; the ``after`` region, whose ``scf.yield`` feeds the phis;
  the results are the registers forwarded by ``scf.condition`` (defined in the header, which
  dominates the exit).
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.types import FloatType
from . import elementwise, libdevice
from .loop_ids import rolled_loop
from .types import F16, F32, I16, I32, is_bf16

_NARROW_BITS = {"f64": 64, "f32": 32, "f16": 16, "bf16": 16}


def _is_rtz_narrowing(op) -> bool:
    if op.name != "tt.fp_to_fp" or op.attributes.get("rounding") != "rtz":
        return False
    src, dst = op.operands[0].type.scalar, op.result.type.scalar
    if not (isinstance(src, FloatType) and isinstance(dst, FloatType)) or src.is_fp8 or \
            dst.is_fp8:  # fp8 conversions: elementwise (fp8cvt)
        return False
    return _NARROW_BITS[dst.name] < _NARROW_BITS[src.name] or (is_bf16(dst) and not is_bf16(src))


def handles(op) -> bool:
    """True when :func:`lower` lowers ``op`` (checked before :mod:`.elementwise`)."""
    return op.name in ("tt.mulhiui", "tt.clampf", "tt.extern_elementwise") or \
        _is_rtz_narrowing(op)


def _asm(b, text, cons, rty, v):
    return b.call(ir.InlineAsm(ir.FunctionType(rty, [v.type]), text, cons), [v])


def mulhi(b, x, y):
    """High half of the unsigned product of two iN LLVM values."""
    w = x.type.width
    wide = ir.IntType(2 * w)
    p = b.mul(b.zext(x, wide), b.zext(y, wide))
    return b.trunc(b.lshr(p, ir.Constant(wide, w)), x.type)


def rtz(kl, x, src, dst):
    """Round-toward-zero conversion of one register from float type ``src`` to ``dst``."""
    b = kl.b
    if src.name == "f64":
        x = _asm(b, "cvt.rz.f32.f64 $0, $1;", "=f,d", F32, x)
    else:
        x = elementwise.to_f32(b, x, src)   # exact for 16-bit sources
    if dst.name == "f32":
        return x
    if dst.name == "f16":
        return _asm(b, "cvt.rz.f16.f32 $0, $1;", "=h,f", F16, x)
    bits = b.bitcast(x, I32)
    hi = b.lshr(bits, I32(16))
    nan = b.fcmp_unordered("uno", x, x)
    hi = b.select(nan, b.or_(hi, I32(0x40)), hi)
    return b.trunc(hi, I16)


def clamp(kl, x, lo, hi, t, propagate: bool):
    """``min(max(x, lo), hi)`` on registers of IR float type ``t``."""
    mx, mn = ("maximumf", "minimumf") if propagate else ("maxnumf", "minnumf")
    return elementwise.float_binary(kl, mn, elementwise.float_binary(kl, mx, x, lo, t), hi, t)


def lower(kl, op) -> None:
    """Lower one op accepted by :func:`handles`, register by register."""
    if op.name == "tt.extern_elementwise":
        return libdevice.lower(kl, op)
    regs, n = elementwise.broadcast_operands(kl, op)
    src_t = op.operands[0].type.scalar
    dst_t = op.result.type.scalar
    b = kl.b
    out = []
    prop = str(op.attributes.get("propagateNan", "none")).lower() not in (
        "none", "0", "false")
    for i in range(n):
        xs = [r[i] for r in regs]
        if op.name == "tt.mulhiui":
            out.append(mulhi(b, *xs))
        elif op.name == "tt.clampf":
            out.append(clamp(kl, xs[0], xs[1], xs[2], dst_t, prop))
        else:
            out.append(rtz(kl, xs[0], src_t, dst_t))
    kl.set(op.result, out)


def lower_while(kl, op) -> None:
    """``scf.while`` (see the module docstring)."""
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    inits = [kl.get(v) for v in op.operands]
    b = kl.b
    pre = b.block
    header = kl.fn.append_basic_block("while.before")
    body_bb = kl.fn.append_basic_block("while.after")
    exit_bb = kl.fn.append_basic_block("while.exit")
    b.branch(header)
    b.position_at_end(header)
    phis = []
    for regs in inits:
        ps = []
        for r in regs:
            p = b.phi(r.type)
            p.add_incoming(r, pre)
            ps.append(p)
        phis.append(ps)
    for a, ps in zip(before.args, phis, strict=True):
        kl.set(a, ps)
    _lower_ops(kl, before.ops[:-1])
    cond_op = before.ops[-1]
    (cond,) = kl.get(cond_op.operands[0])[:1]
    fwd = [kl.get(v) for v in cond_op.operands[1:]]
    b.cbranch(cond, body_bb, exit_bb)
    b.position_at_end(body_bb)
    for a, regs in zip(after.args, fwd, strict=True):
        kl.set(a, regs)
    _lower_ops(kl, after.ops[:-1])
    yielded = [kl.get(v) for v in after.ops[-1].operands]
    latch = b.block
    for ps, regs in zip(phis, yielded, strict=True):
        if len(regs) == 1 and len(ps) > 1:
            regs = regs * len(ps)
        for p, r in zip(ps, regs, strict=True):
            p.add_incoming(r, latch)
    rolled_loop(kl.module, b.branch(header))
    b.position_at_end(exit_bb)
    for res, regs in zip(op.results, fwd, strict=True):
        kl.set(res, regs)


def _lower_ops(kl, ops) -> None:
    for inner in ops:
        kl.b.debug_metadata = kl.dbg.location(inner.loc)
        kl.lower_op(inner)


__all__ = ["handles", "lower", "lower_while", "mulhi", "rtz", "clamp"]
