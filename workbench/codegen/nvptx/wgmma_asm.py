"""Inline PTX pieces of the wgmma lowering (:mod:`.wgmma`): the instruction itself with or
without reading its accumulator, the waits, and the fp16 accumulator's packing (PTX ISA
9.7.15.5.2 ``wgmma.mma_async``, 9.7.15.7 ``wgmma.wait_group``)."""
from __future__ import annotations

from llvmlite import ir

from .types import F16, F32, I16, I32, I64


def asm(kl, text, cons, args, ret=None, side_effect=True):
    """Call inline PTX ``text`` with constraints ``cons`` on ``args``; returns ``ret``."""
    fty = ir.FunctionType(ret or ir.VoidType(), [a.type for a in args])
    return kl.b.call(ir.InlineAsm(fty, text, cons, side_effect=side_effect), args)


def pass_through(kl, regs: list, chunk: int = 64) -> list:
    """The registers, redefined by empty inline asm after the preceding side-effecting asm
    (so no read of them moves above a wgmma wait); chunks of one register type."""
    out = []
    i = 0
    while i < len(regs):
        j = i + 1
        while j < len(regs) and j - i < chunk and regs[j].type == regs[i].type:
            j += 1
        part = regs[i:j]
        i = j
        n = len(part)
        half = part[0].type == F16  # through the 16-bit registers as i16 bits
        if half:
            part = [kl.b.bitcast(x, I16) for x in part]
        ty = part[0].type
        code = {F32: "f", I16: "h", I64: "l"}.get(ty, "r")
        cons = ",".join([f"={code}"] * n + [str(j) for j in range(n)])
        ret = ir.LiteralStructType([ty] * n) if n > 1 else ty
        res = asm(kl, "", cons, part, ret)
        got = [kl.b.extract_value(res, j) for j in range(n)] if n > 1 else [res]
        out.extend([kl.b.bitcast(x, F16) for x in got] if half else got)
    return out


def wait(kl, pendings: int, regs: list) -> list:
    """``wgmma.wait_group.sync.aligned pendings``, then ``regs`` read only after it."""
    asm(kl, f"wgmma.wait_group.sync.aligned {int(pendings)};", "~{memory}", [])
    return pass_through(kl, regs)


def wgmma_asm(n: int, n_a: int, a_tys: list, a_cons: list, head: str, tail: str,
               with_c: bool, acc_t=F32):
    """The inline asm of one wgmma: ``n`` accumulator registers (f32, or i32 holding two f16
    for ``acc_t = I32``), ``n_a`` operands for A, then B's descriptor. ``with_c``: the
    accumulator is read (tied inputs, scale-d the immediate 1, where Triton passes a
    predicate register set to true: no ``setp`` per instruction); otherwise scale-d is 0 and
    the registers are outputs only (a fresh partial sum, as Triton's lowering issues it)."""
    code = "=f" if acc_t == F32 else "=r"
    outs = ",".join(f"${i}" for i in range(n))
    base = 2 * n if with_c else n
    a_text = "{" + ",".join(f"${base + i}" for i in range(n_a)) + "}" if n_a > 1 else \
        f"${base}"
    if with_c:
        text = f"{head} {{{outs}}}, {a_text}, ${base + n_a}, 1, 1, 1{tail};"
        cons = ",".join([code] * n + [str(i) for i in range(n)] + a_cons + ["l"])
        args = [acc_t] * n + a_tys + [I64]
    else:
        text = f"{head} {{{outs}}}, {a_text}, ${base + n_a}, 0, 1, 1{tail};"
        cons = ",".join([code] * n + a_cons + ["l"])
        args = a_tys + [I64]
    fty = ir.FunctionType(ir.LiteralStructType([acc_t] * n), args)
    return ir.InlineAsm(fty, text, cons, side_effect=True)


def pack_f16(b, lo, hi):
    """One i32 of two f16 (``lo`` in bits 0-15): a wgmma .f16 accumulator register."""
    v = ir.Constant(ir.VectorType(F16, 2), None)
    v = b.insert_element(b.insert_element(v, lo, I32(0)), hi, I32(1))
    return b.bitcast(v, I32)


def unpack_f16(b, w) -> list:
    """The two f16 of a wgmma .f16 accumulator register ``w`` (i32), low half first."""
    v = b.bitcast(w, ir.VectorType(F16, 2))
    return [b.extract_element(v, I32(0)), b.extract_element(v, I32(1))]


__all__ = ["asm", "pack_f16", "pass_through", "unpack_f16", "wait", "wgmma_asm"]
