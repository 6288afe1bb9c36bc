"""``tt.atomic_rmw`` and ``tt.atomic_cas`` as predicated ``atom.global`` instructions.

Each element is one ``atom`` (PTX ISA 9.7.13.5 "atom") with the semantics ``relaxed | acquire |
release | acq_rel`` and the scope ``cta | gpu | sys`` of the op's attributes (Triton's defaults
``acq_rel``/``gpu``). The qualifiers are spelled in the order Triton's inline PTX uses
(``LoadStoreOpToLLVM.cpp``; ptxas takes them in any order): ``@p atom.global.gpu.acq_rel.op.type
d, [a], b;`` for ``tt.atomic_rmw`` (scope, then semantics), ``@p atom.global.acq_rel.gpu.cas.bN``
for ``tt.atomic_cas`` (semantics, then scope), and ``atom.acq_rel.gpu.global.cas.b16`` in the
sm_80 bf16 add loop (the order LLVM's NVPTX printer uses for the loop Triton gets there).

The predicate is the element's mask AND "this thread owns the element": in broadcast layouts
(and for scalar pointers, thread 0) a replicated element is updated once, never once per copy;
duplicate registers within a thread are issued once too.

Op -> PTX (PTX ISA 9.7.13.5): ``add`` -> ``.add.u32/.u64``; ``fadd`` -> ``.add.f32``/``.f64``,
``.add.noftz.f16`` (sm_70+), ``.add.noftz.bf16`` (sm_90+; on sm_80 a ``atom.cas.b16`` loop);
``and/or/xor/exch`` -> ``.b32/.b64``; ``max/min`` -> ``.s32/.s64``; ``umax/umin`` ->
``.u32/.u64``. Float max/min arrive already split into signed/unsigned integer atomics by the
language (as Triton's ``tl.atomic_max``/``atomic_min`` on floats). ``atom.cas.b16/.b32/.b64``
for ``tt.atomic_cas``.

The old values are returned in the result's layout. When threads hold copies of an element,
the owning thread's old value reaches the copies through shared memory (as Triton does for
scalar atomics).
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import FloatType, IntType, PointerType, TensorType
from . import smem_access
from .memory import and_optional, owner_predicate
from .threads import thread_layout
from .types import I1, I32, llvm_type

_SEM = {"relaxed": ".relaxed", "acquire": ".acquire", "release": ".release",
        "acq_rel": ".acq_rel"}
_SCOPE = {"cta": ".cta", "gpu": ".gpu", "sys": ".sys"}
_CONS = {16: "h", 32: "r", 64: "l"}


def ptx_op(rmw: str, elem_t, arch: int) -> str:
    """The ``.op.type`` suffix of ``atom`` for a ``tt.atomic_rmw`` op name and element type.

    Raises UnsupportedError for combinations PTX lacks (e.g. integer ops on floats)."""
    bits = elem_t.width if isinstance(elem_t, IntType) else {"f16": 16, "bf16": 16, "f32": 32,
                                                             "f64": 64}[elem_t.name]
    if rmw == "fadd":
        if not isinstance(elem_t, FloatType):
            raise UnsupportedError("atomic fadd needs a float element")
        if elem_t.name == "f16":
            return ".add.noftz.f16"
        if elem_t.name == "bf16":
            if arch < 90:
                return "cas-loop"
            return ".add.noftz.bf16"
        return f".add.{elem_t.name}"
    if bits < 32:
        raise UnsupportedError(f"atomic {rmw} on {bits}-bit elements is not supported")
    table = {"add": f".add.u{bits}", "and": f".and.b{bits}", "or": f".or.b{bits}",
             "xor": f".xor.b{bits}", "exch": f".exch.b{bits}", "xchg": f".exch.b{bits}",
             "max": f".max.s{bits}", "min": f".min.s{bits}", "umax": f".max.u{bits}",
             "umin": f".min.u{bits}"}
    if rmw not in table:
        raise UnsupportedError(f"atomic_rmw op {rmw!r} is not supported by the CUDA backend")
    return table[rmw]


def _bits(t) -> int:
    if isinstance(t, IntType):
        return max(t.width, 16) if t.width < 16 else t.width
    return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[t.name]


def _as_int(b, v, bits):
    it = ir.IntType(bits)
    if v.type == it:
        return v
    if isinstance(v.type, ir.IntType):
        return b.zext(v, it) if v.type.width < bits else v
    return b.bitcast(v, it)


def _from_int(b, v, lt):
    if v.type == lt:
        return v
    if isinstance(lt, ir.IntType):
        return b.trunc(v, lt)
    return b.bitcast(v, lt)


def _atom(kl, text_op, ptr, pred, vals, bits, qual):
    """One predicated ``atom``; ``vals`` are iN operands (1 for rmw, 2 for cas)."""
    c = _CONS[bits]
    n = len(vals)
    args = [ptr] + list(vals) + [pred]
    ops = ", ".join(f"${i + 2}" for i in range(n))
    text = (f"mov.b{bits} $0, 0;\n\t@${n + 2} atom.global{qual}{text_op} $0, [ $1 + 0 ], {ops};")
    cons = ",".join([f"={c}", "l"] + [c] * n + ["b"])
    asm = ir.InlineAsm(ir.FunctionType(ir.IntType(bits), [a.type for a in args]), text, cons,
                       side_effect=True)
    return kl.b.call(asm, args)


def _cas_loop_bf16_add(kl, ptr, pred, val, qual):
    """bf16 atomic add on sm_80: ``ld`` + ``atom.cas.b16`` retry loop (PTX ISA 9.7.13.5) in
    inline PTX; the sum is computed in f32 and rounded with ``cvt.rn.bf16.f32``."""
    text = ("{\n\t.reg .pred %p<2>;\n\t.reg .b16 %h<3>;\n\t.reg .b32 %f<4>;\n\t"
            "mov.b16 $0, 0;\n\t"
            "@!$3 bra DONE${:uid};\n\t"
            "ld.global.b16 %h0, [ $1 + 0 ];\n"
            "RETRY${:uid}:\n\t"
            "mov.b32 %f0, {0, %h0};\n\t"
            "mov.b32 %f1, {0, $2};\n\t"
            "add.f32 %f2, %f0, %f1;\n\t"
            "cvt.rn.bf16.f32 %h1, %f2;\n\t"
            f"atom{qual}.global.cas.b16 %h2, [ $1 + 0 ], %h0, %h1;\n\t"
            "setp.ne.b16 %p0, %h2, %h0;\n\t"
            "mov.b16 %h0, %h2;\n\t"
            "@%p0 bra RETRY${:uid};\n\t"
            "mov.b16 $0, %h2;\n"
            "DONE${:uid}:\n\t}")
    args = [ptr, val, pred]
    asm = ir.InlineAsm(ir.FunctionType(ir.IntType(16), [a.type for a in args]), text,
                       "=h,l,h,b", side_effect=True)
    return kl.b.call(asm, args)


def _shares(t) -> bool:
    """Whether some threads of a result of type ``t`` hold copies of elements they do not
    own (a scalar, or a layout with lanes or warps that do not move along any dim)."""
    if not isinstance(t, TensorType):
        return True
    tl = thread_layout(t)
    return any(not any(v) for v in tl.lane) or any(not any(v) for v in tl.warp)


def scratch_bytes(op) -> int:
    """Bytes of shared scratch atomic ``op`` needs: the result tile (one element for a
    scalar) when its value is used and copies of an element must get the owner's value."""
    t = op.result.type
    if not op.result.uses or not _shares(op.operands[0].type):
        return 0
    elem_t = t.scalar if isinstance(t, TensorType) else t
    n = 1
    for s in (t.shape if isinstance(t, TensorType) else ()):
        n *= s
    return n * max(_bits(elem_t) // 8, 1)


def _broadcast_copies(kl, op, out, owner):
    """Give threads holding copies of an element the owner's old value (shared memory)."""
    t = op.result.type
    elem_t = t.scalar if isinstance(t, TensorType) else t
    if isinstance(t, TensorType):
        tl = kl.layout(t)
        coords = kl.coords(t)
        shape = t.shape
    else:
        tl, coords, shape = None, [[]], ()
    kl.need_shared(scratch_bytes(op))
    b = kl.b
    seen = set()
    for r, c in enumerate(coords):
        key = tl.regs[r] if tl else ()
        if key in seen:
            continue
        seen.add(key)
        idx = smem_access.linear_index(kl, c, shape) if shape else I32(0)
        slot = smem_access.slot(kl, 0, idx, elem_t)
        then = b.append_basic_block("atomic.share")
        cont = b.append_basic_block("atomic.shared")
        b.cbranch(owner, then, cont)
        b.position_at_end(then)
        smem_access.store_value(kl, slot, out[r], elem_t)
        b.branch(cont)
        b.position_at_end(cont)
    smem_access.barrier(kl)
    loaded = {}
    res = []
    for r, c in enumerate(coords):
        key = tl.regs[r] if tl else ()
        if key not in loaded:
            idx = smem_access.linear_index(kl, c, shape) if shape else I32(0)
            loaded[key] = smem_access.load_value(kl, smem_access.slot(kl, 0, idx, elem_t), elem_t)
        res.append(loaded[key])
    return res


def lower(kl, op) -> None:
    """Lower ``tt.atomic_rmw`` (ptr, val, mask?) or ``tt.atomic_cas`` (ptr, cmp, val)."""
    is_cas = op.name == "tt.atomic_cas"
    ptr_v = op.operands[0]
    elem_t = ptr_v.type.scalar.pointee
    if isinstance(elem_t, PointerType):
        raise UnsupportedError("atomics on pointers are not supported", op.loc)
    sem = _SEM.get(op.attributes.get("sem", "acq_rel") or "acq_rel", ".acq_rel")
    scope = _SCOPE.get(op.attributes.get("scope", "gpu") or "gpu", ".gpu")
    bits = _bits(elem_t)
    qual = sem + scope if is_cas else scope + sem
    if is_cas:
        if bits not in (16, 32, 64):
            raise UnsupportedError("atomic_cas needs 16, 32 or 64-bit elements", op.loc)
        text_op = f".cas.b{bits}"
    else:
        text_op = ptx_op(op.attributes["atomic_rmw_op"], elem_t, kl.arch)
    ptrs = kl.get(ptr_v)
    n = len(ptrs)

    def regs_of(v):
        r = kl.get(v)
        return r * n if len(r) == 1 and n > 1 else r

    operands = [regs_of(v) for v in op.operands[1:3]] if is_cas else [regs_of(op.operands[1])]
    masks = regs_of(op.operands[2]) if (not is_cas and len(op.operands) > 2) else None
    owner = owner_predicate(kl, ptr_v.type)
    regs = kl.layout(ptr_v.type).regs if isinstance(ptr_v.type, TensorType) else ((0,),)
    b = kl.b
    lt = llvm_type(elem_t)
    out: list = []
    first: dict = {}
    for r in range(n):
        if regs[r] in first:
            out.append(out[first[regs[r]]])
            continue
        first[regs[r]] = r
        pred = and_optional(b, owner, masks[r] if masks is not None else None)
        if pred is None:
            pred = ir.Constant(I1, 1)
        vals = [_as_int(b, o[r], bits) for o in operands]
        if text_op == "cas-loop":
            old = _cas_loop_bf16_add(kl, ptrs[r], pred, vals[0], sem + scope)
        else:
            old = _atom(kl, text_op, ptrs[r], pred, vals, bits, qual)
        out.append(_from_int(b, old, lt))
    if owner is not None and op.result.uses:
        out = _broadcast_copies(kl, op, out, owner)
    kl.set(op.result, out)


__all__ = ["lower", "ptx_op"]
