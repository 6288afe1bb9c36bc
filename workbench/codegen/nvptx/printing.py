"""``tt.print`` through CUDA's ``vprintf`` and ``tt.assert`` through ``__assertfail``.

``vprintf(const char *format, void *args)`` is the device-side printf of the CUDA runtime
(declared by the PTX the compiler emits; the arguments are packed into a local buffer, each
aligned to its size, C varargs promotions applied: floats to double, sub-32-bit integers to
32 bits). As Triton's PrintOpToLLVM, every thread prints each element it holds, one line per
element::

    pid (<x>, <y>, <z>) idx (<i>, <j>) <prefix><value>

with ``(operand <n>)`` before the value when several tensors are printed. Unlike Triton, a
thread skips duplicate registers and threads holding broadcast copies of another thread's
element stay silent, so each element is printed once per program. Scalars are printed once, by
thread 0.

``tt.assert``: when a thread's condition is false for any of its elements it calls
``__assertfail(message, file, line, function, 1)`` (CUDA runtime), which prints the message,
the block and thread, and traps; the context is unusable afterwards (cudaErrorAssert).
"""
from __future__ import annotations

import zlib

from llvmlite import ir

from ...ir.types import FloatType, IntType, PointerType, TensorType
from .elementwise import to_f32
from .memory import and_optional, owner_predicate
from .types import F64, I8, I32, I64, is_bf16

GENERIC_PTR = ir.PointerType()


def _cstring(kl, text: str, name_hint: str):
    """A private constant NUL-terminated string (addrspace 1), as a generic pointer."""
    data = bytearray(text.encode("utf-8")) + b"\0"
    key = f".str.{name_hint}.{zlib.crc32(text.encode()):08x}"
    g = kl.module.globals.get(key)
    if g is None:
        ty = ir.ArrayType(I8, len(data))
        g = ir.GlobalVariable(kl.module, ty, key, addrspace=1)
        g.global_constant = True
        g.linkage = "private"
        g.initializer = ir.Constant(ty, data)
    return kl.b.addrspacecast(g, GENERIC_PTR)


def _format_of(t, hex_: bool, signed: bool) -> str:
    if isinstance(t, FloatType):
        return "%f"
    if isinstance(t, PointerType):
        return "%p"
    wide = t.width > 32
    if hex_:
        return "0x%llx" if wide else "0x%x"
    if t.width == 1:
        return "%d"
    return ("%lld" if wide else "%d") if signed else ("%llu" if wide else "%u")


def _promote(kl, v, t):
    """C varargs promotion: float types -> double, small ints -> i32, pointers -> i64."""
    b = kl.b
    if isinstance(t, FloatType):
        if t.name == "f64":
            return v
        return b.fpext(to_f32(b, v, t) if (is_bf16(t) or t.name != "f32") else v, F64)
    if isinstance(t, PointerType):
        return b.ptrtoint(v, I64)
    if t.width < 32:
        return b.zext(v, I32) if t.width == 1 else b.sext(v, I32)
    return v


def _vprintf(kl, fmt: str, values) -> None:
    b = kl.b
    fn = kl.intrinsic("vprintf", I32, [GENERIC_PTR, GENERIC_PTR])
    fmt_ptr = _cstring(kl, fmt, "fmt")
    if values:
        st = ir.LiteralStructType([v.type for v in values])
        here = b.block
        b.position_at_start(kl.fn.entry_basic_block)
        buf = b.alloca(st, name="printf_args")
        b.position_at_end(here)
        for i, v in enumerate(values):
            b.store(v, b.gep(buf, [I32(0), I32(i)], inbounds=True))
        args = buf
    else:
        args = ir.Constant(GENERIC_PTR, None)
    b.call(fn, [fmt_ptr, args])


def lower_print(kl, op) -> None:
    """Lower ``tt.print {prefix, hex, isSigned}`` (operands: tensors or scalars)."""
    b = kl.b
    prefix = op.attributes.get("prefix", "") or ""
    hex_ = bool(op.attributes.get("hex", False))
    signed = list(op.attributes.get("isSigned", [])) or [1] * len(op.operands)
    pids = [kl.b.call(kl.intrinsic(f"llvm.nvvm.read.ptx.sreg.ctaid.{a}", I32, []), [])
            for a in "xyz"]
    if not op.operands:
        _guarded(kl, b.icmp_unsigned("==", kl.tid, I32(0)),
                 lambda: _vprintf(kl, "pid (%u, %u, %u) " + _esc(prefix) + "\n", pids))
        return
    many = len(op.operands) > 1
    for n, v in enumerate(op.operands):
        t = v.type
        elem = t.scalar if isinstance(t, TensorType) else t
        fmt_v = _format_of(elem, hex_, bool(signed[n] if n < len(signed) else 1))
        operand = f"(operand {n}) " if many else ""
        regs = kl.get(v)
        if not isinstance(t, TensorType):
            fmt = f"pid (%u, %u, %u) {_esc(prefix)}{operand}{fmt_v}\n"
            _guarded(kl, b.icmp_unsigned("==", kl.tid, I32(0)),
                     lambda r=regs[0], fmt=fmt, elem=elem:
                     _vprintf(kl, fmt, pids + [_promote(kl, r, elem)]))
            continue
        rank = len(t.shape)
        idx_fmt = ", ".join(["%u"] * rank)
        fmt = f"pid (%u, %u, %u) idx ({idx_fmt}) {_esc(prefix)}{operand}{fmt_v}\n"
        tl = kl.layout(t)
        owner = owner_predicate(kl, t)
        coords = kl.coords(t)
        seen = set()
        for r, c in enumerate(coords):
            if tl.regs[r] in seen:
                continue
            seen.add(tl.regs[r])

            def emit(r=r, c=c, fmt=fmt, regs=regs, elem=elem):
                _vprintf(kl, fmt, pids + list(c) + [_promote(kl, regs[r], elem)])
            _guarded(kl, owner, emit)


def _esc(text: str) -> str:
    return text.replace("%", "%%")


def _guarded(kl, pred, body) -> None:
    """Run ``body`` (emits IR) only where ``pred`` (i1 or None = always) holds."""
    b = kl.b
    if pred is None:
        body()
        return
    then = b.append_basic_block("print.then")
    cont = b.append_basic_block("print.cont")
    b.cbranch(pred, then, cont)
    b.position_at_end(then)
    body()
    b.branch(cont)
    b.position_at_end(cont)


def lower_assert(kl, op) -> None:
    """Lower ``tt.assert {message}``: ``__assertfail`` when any held condition is false."""
    b = kl.b
    cond_v = op.operands[0]
    conds = kl.get(cond_v)
    bad = None
    for c in conds:
        if isinstance(c.type, ir.IntType) and c.type.width != 1:
            c = b.icmp_unsigned("!=", c, ir.Constant(c.type, 0))
        bad = and_optional(b, None, b.not_(c)) if bad is None else b.or_(bad, b.not_(c))
    if bad is None:
        return
    loc = op.loc
    fn = kl.intrinsic("__assertfail", ir.VoidType(),
                      [GENERIC_PTR, GENERIC_PTR, I32, GENERIC_PTR, I64])
    msg = op.attributes.get("message", "") or "assertion failed"

    def fail():
        b.call(fn, [_cstring(kl, msg, "msg"), _cstring(kl, str(getattr(loc, "file", "?")), "file"),
                    I32(int(getattr(loc, "line", 0) or 0)), _cstring(kl, kl.name, "func"),
                    I64(1)])
    _guarded(kl, bad, fail)


__all__ = ["lower_print", "lower_assert", "_format_of", "IntType"]
