"""``tt.elementwise_inline_asm`` (``tl.inline_asm_elementwise``) on the CUDA backend.

As Triton 3.6's ``ElementwiseInlineAsmOpConversion`` (``ElementwiseOpToLLVM.cpp``): each thread
walks its registers in groups of ``packed_element`` and issues the user's PTX once per group,
with the op's constraints. With ``pack > 1`` the ``pack`` elements of one operand (or result)
of fewer than 32 bits travel packed in 32-bit words, element ``j`` of a word in bits
``j * bits ..`` (four int8 in one ``.b32``: a vector bitcast), so an operand takes
``pack * bits / 32`` registers; elements of 32 bits or more take one register each (``pack``
of them). The registers are numbered output by output, then input by input, as in the
constraints. A thread whose register count is not a multiple of ``pack`` pads its last group
with zeros and drops the padded results. Several output registers come back as the fields of
one struct. An impure statement (``is_pure=False``) is emitted with side
effects, so LLVM keeps it even when nothing reads its results.
"""
from __future__ import annotations

from llvmlite import ir

from .elementwise import broadcast_operands
from .types import I32, llvm_type


def _bits(t) -> int:
    if isinstance(t, ir.IntType):
        return t.width
    if isinstance(t, ir.PointerType):
        return 64
    return {"half": 16, "bfloat": 16, "float": 32, "double": 64}[str(t)]


def _per_word(t, pack: int) -> int:
    """Elements of LLVM type ``t`` in one asm register when ``pack`` go together."""
    bits = _bits(t)
    return max(1, min(pack, 32 // bits)) if bits < 32 else 1


def _pack(b, elems, per_word: int) -> list:
    """The asm registers for one group of ``elems`` (``per_word`` elements in each)."""
    if per_word == 1:
        return list(elems)
    et = elems[0].type
    words = []
    for w in range(0, len(elems), per_word):
        v = ir.Constant(ir.VectorType(et, per_word), None)
        for j, e in enumerate(elems[w:w + per_word]):
            v = b.insert_element(v, e, I32(j))
        words.append(b.bitcast(v, ir.IntType(per_word * _bits(et))))
    return words


def _unpack(b, regs, et, per_word: int) -> list:
    if per_word == 1:
        return list(regs)
    out = []
    for reg in regs:
        v = b.bitcast(reg, ir.VectorType(et, per_word))
        out += [b.extract_element(v, I32(j)) for j in range(per_word)]
    return out


def lower(kl, op) -> None:
    """Lower ``tt.elementwise_inline_asm`` register group by register group."""
    pack = int(op.attributes.get("packed_element", 1) or 1)
    text = op.attributes["asm_string"]
    cons = op.attributes["constraints"]
    pure = op.attributes.get("pure", True) is not False
    regs, n = broadcast_operands(kl, op) if op.operands else ([], 1)
    res_ts = [llvm_type(r.type.scalar) for r in op.results]
    per = [_per_word(t, pack) for t in res_ts]
    reg_ts: list = []
    for t, k in zip(res_ts, per, strict=True):
        word = t if k == 1 else ir.IntType(k * _bits(t))
        reg_ts += [word] * (pack // k)
    ret = reg_ts[0] if len(reg_ts) == 1 else ir.LiteralStructType(reg_ts)
    b = kl.b
    outs: list[list] = [[] for _ in op.results]
    for g in range(0, n, pack):
        count = min(pack, n - g)
        args = []
        for r in regs:
            elems = list(r[g:g + count])
            elems += [ir.Constant(elems[0].type, None)] * (pack - count)
            args += _pack(b, elems, _per_word(elems[0].type, pack))
        asm = ir.InlineAsm(ir.FunctionType(ret, [a.type for a in args]), text, cons,
                           side_effect=not pure)
        res = b.call(asm, args)
        fields = [res] if len(reg_ts) == 1 else [b.extract_value(res, i)
                                                 for i in range(len(reg_ts))]
        pos = 0
        for et, k, out in zip(res_ts, per, outs, strict=True):
            words = fields[pos:pos + pack // k]
            pos += pack // k
            out.extend(_unpack(b, words, et, k)[:count])
    for r, out in zip(op.results, outs, strict=True):
        kl.set(r, out)


__all__ = ["lower"]
