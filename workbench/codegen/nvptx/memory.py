"""``tt.load`` / ``tt.store`` as predicated, vectorised global memory instructions.

Like Triton's LoadStoreOpToLLVM each thread handles its registers in groups of ``vec`` contiguous
elements; a group becomes one inline-PTX ``@p ld.global.v4.b32`` (or ``.v2``, ``.b32``, ``.b16``,
``.b64``...) whose destination registers are first set to ``other`` (or 0), and one
``@p st.global...`` for stores. ``vec`` is the largest power of two such that

* the layout gives the thread ``vec`` consecutive elements along one dim (register bases
  ``1, 2, 4..`` along it, every other basis a multiple of ``vec`` there);
* the axis analysis (:mod:`.axisinfo`) proves the pointers contiguous over ``vec`` elements and
  the first aligned to ``vec * bytes``; the mask constant over the group;
* ``vec * bytes <= 16`` (128-bit accesses; PTX ISA 9.7.9.8 ld, vector forms).

Cache modifiers and eviction policies are spelled as Triton's ``LoadStoreOpToLLVM.cpp`` does
(PTX ISA 9.7.9.8 ld, 9.7.9.10 st, 9.7.9.17 createpolicy): ``ld.global.ca``/``.cg`` (``.cv``
and ``.cs`` loads are plain loads there too), ``st.global.wb``/``.cg``/``.cs``/``.wt``;
``evict_first``/``evict_last`` add ``.L1::evict_<p>.L2::cache_hint`` with a 64-bit policy made
by ``createpolicy.fractional.L2::evict_<p>.b64 pol, 1.0``. PTX has no form with both a cache
operator and an L1 eviction priority (ptxas refuses it, and Triton's text with it), so with a
cache modifier only the L2 hint is kept (``ld.global.cg.L2::cache_hint``).

Stores skip duplicate registers and threads holding copies of another thread's elements
(broadcast layouts), so each element is written once.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import IntType, PointerType, TensorType
from .types import I1, I8, I16, I32, I64, byte_size, llvm_type

_CONS = {16: "h", 32: "r", 64: "l"}


def vector_width(kl, ptr_value, mask_value=None) -> tuple[int, int]:
    """``(vec, dim)``: elements per access and the dim they run along (1, 0 for scalars)."""
    t = ptr_value.type
    if not isinstance(t, TensorType):
        return 1, 0
    tl = kl.layout(t)
    if tl.num_regs < 2:
        return 1, 0
    first = tl.regs[1]
    nz = [d for d, x in enumerate(first) if x]
    if len(nz) != 1 or first[nz[0]] != 1:
        return 1, 0
    dim = nz[0]
    ptr_t = t.scalar
    assert isinstance(ptr_t, PointerType)
    ebytes = byte_size(ptr_t.pointee)
    vec = 1
    while vec * 2 <= tl.num_regs and vec * 2 * ebytes <= 16:
        nxt = vec * 2
        reg_basis = tl.regs[vec]  # the register basis of bit log2(vec)
        if reg_basis != tuple(vec if d == dim else 0 for d in range(tl.rank)):
            break
        vec = nxt
    # every other basis must keep groups aligned
    others = list(tl.lane) + list(tl.warp) + [tl.regs[1 << i] for i in range(
        (tl.num_regs).bit_length() - 1) if (1 << i) >= vec]
    while vec > 1 and any(v[dim] % vec for v in others):
        vec //= 2
    ai = kl.axis.get(id(ptr_value))
    if ai is not None:
        vec = min(vec, ai.contiguity[dim], max(ai.divisibility[dim] // ebytes, 1))
    else:
        vec = 1
    if mask_value is not None:
        mi = kl.axis.get(id(mask_value))
        vec = min(vec, mi.constancy[dim] if mi is not None else 1)
    p = 1
    while p * 2 <= vec:
        p *= 2
    return p, dim


def _word_bits(elem_bits: int, vec: int) -> int:
    total = elem_bits * vec
    if elem_bits == 64:
        return 64
    if total >= 32:
        return 32
    return 16


def pack_words(b, elems, elem_t, word_bits: int) -> list:
    """Pack the LLVM values ``elems`` of IR scalar type ``elem_t`` into a list of
    ``i<word_bits>`` words, first element in the low bits (i1 as a byte; elements at least a
    word wide are returned as their bits; one 8-bit element alone is zero-extended)."""
    mem_bits = max(byte_size(elem_t) * 8, 8)
    et = ir.IntType(mem_bits)
    vals = []
    for e in elems:
        if isinstance(elem_t, IntType) and elem_t.width == 1:
            e = b.zext(e, I8)
        elif e.type != et:
            e = b.bitcast(e, et)
        vals.append(e)
    wt = ir.IntType(word_bits)
    if mem_bits >= word_bits:
        return vals
    if mem_bits * len(vals) < word_bits:  # a single 8-bit element in a 16-bit register
        return [b.zext(vals[0], wt)]
    k = word_bits // mem_bits
    words = []
    for i in range(0, len(vals), k):
        vec = ir.Constant(ir.VectorType(et, k), None)
        for j in range(k):
            vec = b.insert_element(vec, vals[i + j], I32(j))
        words.append(b.bitcast(vec, wt))
    return words


def unpack_words(b, words, elem_t, count: int) -> list:
    """The first ``count`` elements of IR scalar type ``elem_t`` held in the integer ``words``
    (the inverse of :func:`pack_words`; i1 is a byte compared with 0)."""
    mem_bits = max(byte_size(elem_t) * 8, 8)
    et = ir.IntType(mem_bits)
    vals = []
    for w in words:
        wb = w.type.width
        if mem_bits >= wb:
            vals.append(w)
        elif count * mem_bits < wb:
            vals.append(b.trunc(w, et))
        else:
            k = wb // mem_bits
            v = b.bitcast(w, ir.VectorType(et, k))
            vals.extend(b.extract_element(v, I32(j)) for j in range(k))
    out = []
    lt = llvm_type(elem_t)
    for v in vals[:count]:
        if isinstance(elem_t, IntType) and elem_t.width == 1:
            out.append(b.icmp_unsigned("!=", v, ir.Constant(I8, 0)))
        elif v.type != lt:
            out.append(b.bitcast(v, lt))
        else:
            out.append(v)
    return out


def _ptx_type(word_bits, nwords, total_bits):
    if total_bits == 8:
        return "b8"
    base = f"b{word_bits}"
    return base if nwords == 1 else f"v{nwords}.{base}"


_LD_COP = {"ca": ".ca", "cg": ".cg"}
_ST_COP = {"wb": ".wb", "cg": ".cg", "cs": ".cs", "wt": ".wt"}


def cache_hints(kl, op, is_load: bool) -> tuple[str, object]:
    """``(qualifiers, policy)`` for a ``tt.load``/``tt.store``'s ``cache`` and ``evict``
    attributes: the text after ``ld.global``/``st.global`` (``".cg"``,
    ``".L1::evict_first.L2::cache_hint"``) and the i64 L2 policy operand (None without one)."""
    cop = (_LD_COP if is_load else _ST_COP).get(op.attributes.get("cache") or "", "")
    evict = op.attributes.get("evict") or ""
    if evict not in ("evict_first", "evict_last"):
        return cop, None
    asm = ir.InlineAsm(ir.FunctionType(I64, []),
                       f"createpolicy.fractional.L2::{evict}.b64 $0, 1.0;", "=l")
    policy = kl.b.call(asm, [])
    l1 = "" if cop else f".L1::{evict}"
    return f"{cop}{l1}.L2::cache_hint", policy


def _load_group(kl, ptr, pred, other_elems, elem_t, vec, hints=("", None)):
    b = kl.b
    wbits = _word_bits(max(byte_size(elem_t) * 8, 8), vec)
    total = max(byte_size(elem_t) * 8, 8) * vec
    nwords = max(total // wbits, 1)
    c = _CONS[wbits]
    lines, cons, args = [], [f"={c}"] * nwords, []
    nargs = nwords
    if pred is not None:
        if other_elems is not None:
            owords = pack_words(b, other_elems, elem_t, wbits)
            for i, w in enumerate(owords):
                lines.append(f"mov.b{wbits} ${i}, ${nargs};")
                cons.append(c)
                args.append(w)
                nargs += 1
        else:
            lines.extend(f"mov.b{wbits} ${i}, 0;" for i in range(nwords))
    regs = ", ".join(f"${i}" for i in range(nwords))
    addr = nargs
    cons.append("l")
    args.append(ptr)
    prefix = ""
    if pred is not None:
        prefix = f"@${addr + 1} "
        cons.append("b")
        args.append(pred)
    qual, policy = hints
    pol = _policy_operand(cons, args, policy, nwords)
    lines.append(f"{prefix}ld.global{qual}.{_ptx_type(wbits, nwords, total)} {{ {regs} }}, "
                 f"[ ${addr} + 0 ]{pol};")
    wt = ir.IntType(wbits)
    rty = wt if nwords == 1 else ir.LiteralStructType([wt] * nwords)
    asm = ir.InlineAsm(ir.FunctionType(rty, [a.type for a in args]), "\n\t".join(lines),
                       ",".join(cons), side_effect=True)
    res = b.call(asm, args)
    words = [res] if nwords == 1 else [b.extract_value(res, i) for i in range(nwords)]
    return unpack_words(b, words, elem_t, vec)


def _policy_operand(cons: list, args: list, policy, outputs: int) -> str:
    """Append the L2 cache-policy operand (``createpolicy``'s 64-bit value, constraint ``l``)
    when there is one; returns its text for the instruction (``", $n"``, numbered after the
    ``outputs`` result registers), or ``""``."""
    if policy is None:
        return ""
    cons.append("l")
    args.append(policy)
    return f", ${len(args) - 1 + outputs}"


def _store_group(kl, ptr, pred, elems, elem_t, vec, hints=("", None)):
    b = kl.b
    wbits = _word_bits(max(byte_size(elem_t) * 8, 8), vec)
    total = max(byte_size(elem_t) * 8, 8) * vec
    words = pack_words(b, elems, elem_t, wbits)
    nwords = len(words)
    c = _CONS[wbits]
    cons = [c] * nwords + ["l"]
    args = list(words) + [ptr]
    prefix = ""
    if pred is not None:
        prefix = f"@${nwords + 1} "
        cons.append("b")
        args.append(pred)
    qual, policy = hints
    pol = _policy_operand(cons, args, policy, 0)
    regs = ", ".join(f"${i}" for i in range(nwords))
    text = (f"{prefix}st.global{qual}.{_ptx_type(wbits, nwords, total)} [ ${nwords} + 0 ], "
            f"{{ {regs} }}{pol};")
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [a.type for a in args]), text,
                       ",".join(cons), side_effect=True)
    b.call(asm, args)


def and_optional(b, x, y):
    """``x & y`` of two i1 values where either may be None (absent: true); None when both
    are."""
    if x is None:
        return y
    if y is None:
        return x
    return b.and_(x, y)


def owner_predicate(kl, t):
    """i1 that is true in the one thread owning each element (None when every thread is an
    owner): threads whose lane/warp bits with zero bases are all 0. Scalars: thread 0."""
    b = kl.b
    if not isinstance(t, TensorType):
        return b.icmp_unsigned("==", kl.tid, I32(0))
    tl = kl.layout(t)
    lane_mask = sum(1 << i for i, v in enumerate(tl.lane) if not any(v))
    warp_mask = sum(1 << i for i, v in enumerate(tl.warp) if not any(v))
    pred = None
    for ident, m in ((kl.lane, lane_mask), (kl.warp, warp_mask)):
        if m:
            pred = and_optional(b, pred, b.icmp_unsigned("==", b.and_(ident, I32(m)), I32(0)))
    return pred


def lower(kl, op) -> None:
    """Lower ``tt.load`` (operands ptr, mask?, other?) or ``tt.store`` (ptr, value, mask?)."""
    is_load = op.name == "tt.load"
    ptr_v = op.operands[0]
    if not isinstance(ptr_v.type.scalar, PointerType):
        raise UnsupportedError(f"{op.name} of a block pointer is not supported by the CUDA "
                               f"backend yet", op.loc)
    elem_t = ptr_v.type.scalar.pointee
    if isinstance(elem_t, PointerType):
        raise UnsupportedError("loads and stores of pointers are not supported yet", op.loc)
    mask_v = op.operands[1] if is_load and len(op.operands) > 1 else (
        op.operands[2] if not is_load and len(op.operands) > 2 else None)
    other_v = op.operands[2] if is_load and len(op.operands) > 2 else None
    ptrs = kl.get(ptr_v)
    masks = kl.get(mask_v) if mask_v is not None else None
    if masks is not None and len(masks) == 1 and len(ptrs) > 1:
        masks = masks * len(ptrs)
    vec, _dim = vector_width(kl, ptr_v, mask_v)
    regs = kl.layout(ptr_v.type).regs if isinstance(ptr_v.type, TensorType) else ((0,),)
    b = kl.b
    hints = cache_hints(kl, op, is_load)
    if is_load:
        others = kl.get(other_v) if other_v is not None else None
        if others is not None and len(others) == 1 and len(ptrs) > 1:
            others = others * len(ptrs)
        out = [None] * len(ptrs)
        seen: dict = {}
        for g in range(0, len(ptrs), vec):
            if regs[g] in seen:  # duplicate registers (broadcast): reuse
                src = seen[regs[g]]
                for j in range(vec):
                    out[g + j] = out[src + j]
                continue
            seen[regs[g]] = g
            pred = masks[g] if masks is not None else None
            oth = others[g:g + vec] if (others is not None and pred is not None) else None
            out[g:g + vec] = _load_group(kl, ptrs[g], pred, oth, elem_t, vec, hints)
        kl.set(op.result, out)
        return
    vals = kl.get(op.operands[1])
    if len(vals) == 1 and len(ptrs) > 1:
        vals = vals * len(ptrs)
    owner = owner_predicate(kl, ptr_v.type)
    stored = set()
    for g in range(0, len(ptrs), vec):
        if regs[g] in stored:
            continue
        stored.add(regs[g])
        pred = and_optional(b, owner, masks[g] if masks is not None else None)
        _store_group(kl, ptrs[g], pred, vals[g:g + vec], elem_t, vec, hints)


__all__ = ["lower", "vector_width", "I1", "I16", "I64"]
