"""``tt.elementwise_inline_asm`` (``tl.inline_asm_elementwise``) on the CUDA backend.

As Triton 3.6's ``ElementwiseInlineAsmOpConversion`` (``ElementwiseOpToLLVM.cpp``): each thread
walks its registers in groups of ``packed_element`` and issues the user's PTX once per group,
with the op's constraints. With ``pack > 1`` the ``pack`` elements of one operand (or result)
travel in one register of ``pack * bits`` bits, element ``j`` in bits ``j * bits ..`` (four
int8 in one ``.b32``: a vector bitcast); a thread whose register count is not a multiple of
``pack`` pads its last group with zeros and drops the padded results. Several outputs come
back as the fields of one struct. An impure statement (``is_pure=False``) is emitted with side
effects, so LLVM keeps it even when nothing reads its results.
"""
from __future__ import annotations

from llvmlite import ir

from .elementwise import broadcast_operands
from .types import I32, llvm_type


def _pack(b, elems):
    """One register for ``elems`` (a vector of them bitcast to an integer when several)."""
    if len(elems) == 1:
        return elems[0]
    et = elems[0].type
    v = ir.Constant(ir.VectorType(et, len(elems)), None)
    for j, e in enumerate(elems):
        v = b.insert_element(v, e, I32(j))
    width = len(elems) * _bits(et)
    return b.bitcast(v, ir.IntType(width))


def _bits(t) -> int:
    if isinstance(t, ir.IntType):
        return t.width
    return {"half": 16, "bfloat": 16, "float": 32, "double": 64}[str(t)]


def _unpack(b, reg, et, pack):
    if pack == 1:
        return [reg]
    v = b.bitcast(reg, ir.VectorType(et, pack))
    return [b.extract_element(v, I32(j)) for j in range(pack)]


def lower(kl, op) -> None:
    """Lower ``tt.elementwise_inline_asm`` register group by register group."""
    pack = int(op.attributes.get("packed_element", 1) or 1)
    text = op.attributes["asm_string"]
    cons = op.attributes["constraints"]
    pure = op.attributes.get("pure", True) is not False
    regs, n = broadcast_operands(kl, op) if op.operands else ([], 1)
    res_ts = [llvm_type(r.type.scalar) for r in op.results]
    reg_ts = [t if pack == 1 else ir.IntType(pack * _bits(t)) for t in res_ts]
    ret = reg_ts[0] if len(reg_ts) == 1 else ir.LiteralStructType(reg_ts)
    b = kl.b
    outs: list[list] = [[] for _ in op.results]
    for g in range(0, n, pack):
        count = min(pack, n - g)
        args = []
        for r in regs:
            elems = list(r[g:g + count])
            elems += [ir.Constant(elems[0].type, None)] * (pack - count)
            args.append(_pack(b, elems))
        asm = ir.InlineAsm(ir.FunctionType(ret, [a.type for a in args]), text, cons,
                           side_effect=not pure)
        res = b.call(asm, args)
        for i, (et, out) in enumerate(zip(res_ts, outs, strict=True)):
            reg = res if len(reg_ts) == 1 else b.extract_value(res, i)
            out.extend(_unpack(b, reg, et, pack)[:count])
    for r, out in zip(op.results, outs, strict=True):
        kl.set(r, out)


__all__ = ["lower"]
