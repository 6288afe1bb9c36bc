"""Helpers of ``tritongpu-accelerate-matmul``: keep values in ``#mma`` registers.

:func:`propagate_mma` is Triton's second ``tritongpu-remove-layout-conversions`` run
(in ``make_ttgir`` of ``third_party/nvidia/backend/compiler.py``) with the dot results as
layout anchors (``LayoutPropagation::initAnchorLayout`` treats ``tt.dot`` as an anchor): the
``#ttg.nvidia_mma`` layout flows forward through elementwise ops, ``tt.reduce`` (result
``#ttg.slice<{dim, parent = #mma}>``), ``tt.expand_dims``/``tt.broadcast`` and ``scf.for``
iter args; conversions are inserted only where an op keeps its layout (loads, stores,
``ttg.local_alloc``), then folded and cheap producers rematerialised, with the machinery of
:mod:`workbench.passes.remove_layout_conversions`.

:func:`operands_in_registers` replaces ``ttg.local_alloc x -> ttg.local_load -> #dot_op`` by
one ``ttg.convert_layout x -> #dot_op`` when ``x`` is (after a conversion from) an ``#mma``
value whose thread ownership equals the operand's (same lane and warp bases, same set of
register coordinates): the conversion is then a register permutation (PTX ISA 9.7.14.5.8: the
m16n8 accumulator fragment of two adjacent N tiles is the m16n8k16 A fragment when kWidth =
32 / bitwidth), so attention's ``P @ V`` reads ``P`` without shared memory.
"""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.types import TensorType
from ..layouts import DotOperandLayout, MmaLayout, register_offsets, thread_bases
from .hoist_convert import hoist_converts
from .remove_layout_conversions import _Rewriter
from .values import block_of, defined_outside, shaped_type

_DOTS = ("tt.dot", "ttng.warp_group_dot")


class _MmaRewriter(_Rewriter):
    """The layout rewriter with ``tt.dot`` results (``#mma``) as fixed anchors."""
    pin_anchors = True

    def anchors(self) -> list:
        return [(op.result, shaped_type(op.result).encoding) for op in self.func.walk()
                if op.name in _DOTS and isinstance(shaped_type(op.result).encoding, MmaLayout)]

    def stops_at(self, user: Operation) -> bool:
        return user.name in _DOTS


def propagate_mma(func: Operation, num_warps: int, threads_per_warp: int = 32) -> None:
    """Forward-propagate the ``#mma`` layouts of ``func``'s dot results (module docstring)."""
    rw = _MmaRewriter(func, num_warps, threads_per_warp)
    rw.propagate()
    rw.fold()
    rw.dce()
    rw.rematerialise()
    if hoist_converts(func, num_warps, threads_per_warp):
        rw.fold()
        rw.dce()


def same_ownership(a, b, shape) -> bool:
    """True when layouts ``a`` and ``b`` give every thread the same elements of ``shape``
    (equal lane and warp bases, equal sets of register coordinates)."""
    try:
        ta, tb = thread_bases(a, shape), thread_bases(b, shape)
        if ta != tb:
            return False
        return set(register_offsets(a, shape)) == set(register_offsets(b, shape))
    except (ValueError, TypeError):
        return False


def _mma_source(v):
    """``v`` itself when in an ``#mma`` layout, or the ``#mma`` source of a conversion."""
    if isinstance(shaped_type(v).encoding, MmaLayout):
        return v
    d = v.defining_op
    if d is not None and d.name == "ttg.convert_layout" and \
            isinstance(shaped_type(d.operands[0]).encoding, MmaLayout):
        return d.operands[0]
    return None


def _v3_fp8_operand(src, enc) -> bool:
    """An 8-bit A of a wgmma computed in the v3 accumulator layout (fp8 attention's ``P``):
    one ``ttg.convert_layout`` #mma -> #dot_op (kWidth 4: the threads own other elements than
    in #mma) as in Triton 3.6's ttgir, not a local_alloc/local_load pair. Triton lowers it
    with warp shuffles; ours goes through the conversion's shared scratch (one more barrier
    and ``BM * BN`` bytes of scratch than Triton)."""
    parent = enc.parent
    src_enc = shaped_type(src).encoding
    return isinstance(parent, MmaLayout) and parent.version_major == 3 and \
        isinstance(src_enc, MmaLayout) and src_enc.version_major == 3 and \
        getattr(shaped_type(src).element, "width", 0) == 8


def operands_in_registers(func: Operation) -> int:
    """Rewrite register-permutable shared-memory staging of dot operands (module docstring).
    Returns the number of operands rewritten."""
    count = 0
    for op in list(func.walk()):
        if op.name != "ttg.local_load" or op.parent is None:
            continue
        enc = shaped_type(op.result).encoding
        alloc = op.operands[0].defining_op
        if not isinstance(enc, DotOperandLayout) or alloc is None or \
                alloc.name != "ttg.local_alloc" or not alloc.operands:
            continue
        src = _mma_source(alloc.operands[0])
        if src is None or not isinstance(src.type, TensorType):
            continue
        shape = tuple(shaped_type(src).shape)
        if not same_ownership(shaped_type(src).encoding, enc, shape) and \
                not _v3_fp8_operand(src, enc):
            continue
        cvt = Operation("ttg.convert_layout", [src], [op.result.type], loc=op.loc)
        block_of(op).insert_before(op, cvt)
        op.result.replace_all_uses_with(cvt.result)
        op.erase()
        if not alloc.result.uses:
            alloc.erase()
        count += 1
    return count


def hoist_invariant_operands(func: Operation) -> int:
    """Move ``ttg.local_alloc x`` out of an ``scf.for`` when ``x`` is defined outside the loop
    (attention's ``Q``: staged in shared memory once). Its readers (``ttg.local_load`` into
    ``#dot_op`` registers, ``ttng.warp_group_dot``) stay in the loop and read the buffer in
    every iteration, as in Triton 3.6's ttgir (so the buffer is live through the loop, and
    registers are not held across iterations). Returns the number of allocations hoisted."""
    n = 0
    for op in list(func.walk()):
        if op.name != "ttg.local_alloc" or not op.operands or op.parent is None:
            continue
        loop = op.parent_op()
        if loop is None or loop.name != "scf.for" or not defined_outside(op.operands[0], loop):
            continue
        users = [u for u, _ in op.result.uses]
        if not all(u.name in ("ttg.local_load", "ttng.warp_group_dot") and
                   u.parent is op.parent for u in users):
            continue
        block_of(op).ops.remove(op)
        op.parent = None
        block_of(loop).insert_before(loop, op)
        n += 1
    return n


def cleanup(func: Operation, num_warps: int) -> None:
    """Erase conversions and pure ops left without users."""
    _Rewriter(func, num_warps, 32).dce()


__all__ = ["propagate_mma", "operands_in_registers", "same_ownership", "hoist_invariant_operands",
           "cleanup"]
