"""``tritongpu-coalesce``: blocked layouts that make global loads and stores wide and coalesced.

For every ``tt.load``, ``tt.store``, ``tt.atomic_rmw`` and ``tt.atomic_cas`` whose pointer is a
tensor, the pass builds a blocked layout from the pointer's :mod:`AxisInfo <.axis_info>`
(``buildCoalescedEncoding``):

1. ``order``: dims sorted by contiguity, largest first, ties in increasing dim order (so a
   pointer with no contiguity information, all strides at run time, gets ``[0, 1, ...]``, as
   Triton 3.6.0's compiled pass does; see :func:`order_from_contiguity`);
2. ``perThread = min(divisibility[order[0]] / elemBytes, min(contiguity[order[0]],
   shape[order[0]]), 128 / elemBits)`` for this op and for every other memory op in its slice
   (the ops connected to it through def-use chains) with the same shape and order; the largest
   wins (``getNumElementsPerThread``); pointer divisibility is in bytes;
3. capped by ``max(numElems / (numWarps * 32), 1)``; for ops that write memory (stores,
   atomics) also by the op's own width, so a warp writes without gaps;
4. ``sizePerThread[order[0]] = perThread``, 1 elsewhere, built by the shape builder
   (:func:`workbench.layouts.blocked_for_shape`).

All layouts are chosen first, then each op is rewritten: its tensor operands get a
``ttg.convert_layout`` to the new layout and its tensor results come back to their old layout
through another one, exactly as Triton's pass leaves it for ``tritongpu-remove-layout-
conversions`` (a conversion to the layout a value already has is not created).

``tt.descriptor_load`` results and ``tt.descriptor_store``/``tt.descriptor_reduce`` sources
(they reach global memory through the TMA unit, not through the threads) get Triton's
``pickDescriptorLoadStoreLayout``: row-major, ``sizePerThread`` 1 but the last dim, which
holds ``min(numElems / (numWarps * 32), 128 / elemBits)`` (at least 1), so the shared-memory
side of the copy is vectorised.

Source: Triton 3.6 ``lib/Dialect/TritonGPU/Transforms/Coalesce.cpp`` and ``CoalesceUtils.cpp``
(``buildCoalescedEncoding``), ``Utility.cpp`` (``getNumElementsPerThread``,
``getOrderFromContiguity``).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..ir.core import Operation, Value, functions
from ..ir.types import PointerType, TensorType
from ..layouts import BlockedLayout, blocked_for_shape
from .axis_info import AxisInfoAnalysis, pointee_bytes
from .manager import Pass
from .values import block_of, shaped_type, tensor_type

#: Memory ops whose pointer (operand 0) decides the layout.
MEMORY_OPS = ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas")
#: Widest global access in bits (``ld.global.v4.b32``; PTX ISA 9.7.9.8).
MAX_VEC_BITS = 128


def mem_ptr(op: Operation) -> Value | None:
    """The tensor-of-pointers operand of a memory op, or None (scalar or block pointer)."""
    if op.name not in MEMORY_OPS or not op.operands:
        return None
    p = op.operands[0]
    t = p.type
    if isinstance(t, TensorType) and t.shape and isinstance(t.element, PointerType) \
            and not isinstance(t.element.pointee, TensorType):
        return p
    return None


def order_from_contiguity(contiguity) -> tuple[int, ...]:
    """Dims by decreasing contiguity, ties in increasing dim order: ``(1, 1) -> (0, 1)``,
    ``(64, 1) -> (0, 1)``, ``(1, 64) -> (1, 0)``, ``(1, 4, 1) -> (1, 0, 2)``.

    The tie rule is what Triton 3.6.0's compiled ``tritongpu-coalesce`` does (measured with the
    wheel: a tile whose strides are all run-time values, or all equal constants, gets
    ``order = [0, 1]``, threads along dim 0; ``[0, 1, 2]`` in 3-D), although
    ``getOrderFromContiguity`` in ``Utility.cpp`` reads as reversed dims for ties."""
    return tuple(sorted(range(len(contiguity)), key=lambda d: -contiguity[d]))


def _tensor_ptr(op: Operation) -> Value:
    """:func:`mem_ptr` of an op known to have one. Raises ValueError otherwise."""
    ptr = mem_ptr(op)
    if ptr is None:
        raise ValueError(f"{op.name} has no tensor-of-pointers operand")
    return ptr


def elems_per_thread(analysis: AxisInfoAnalysis, op: Operation, order) -> int:
    """``getNumElementsPerThread``: the widest aligned, contiguous access of ``op`` along
    ``order[0]`` in elements, at most ``128 / elemBits``."""
    ptr = _tensor_ptr(op)
    info = analysis.get(ptr)
    ebytes = pointee_bytes(ptr.type)
    t = tensor_type(ptr)
    pointee = t.element.pointee if isinstance(t.element, PointerType) else None
    ebits = max(getattr(pointee, "width", 8), 1)
    d = order[0]
    max_multiple = max(info.divisibility[d] // ebytes, 1)
    max_contig = min(info.contiguity[d], t.shape[d])
    return max(min(max_multiple, max_contig, MAX_VEC_BITS // ebits), 1)


def _slice(op: Operation) -> list[Operation]:
    """Every op connected to ``op`` through def-use chains, both ways (``mlir::getSlice``)."""
    seen, todo, out = {id(op)}, [op], []
    while todo:
        cur = todo.pop()
        out.append(cur)
        nxt = [v.defining_op for v in cur.operands if v.defining_op is not None]
        nxt += [u for r in cur.results for u, _ in r.uses]
        for o in nxt:
            if id(o) not in seen:
                seen.add(id(o))
                todo.append(o)
    return out


def coalesced_encoding(analysis: AxisInfoAnalysis, op: Operation, num_warps: int,
                       threads_per_warp: int = 32) -> BlockedLayout:
    """The blocked layout ``buildCoalescedEncoding`` gives memory op ``op`` (see the module
    docstring). Raises LayoutError for a bad ``num_warps``."""
    ptr = _tensor_ptr(op)
    shape = tuple(shaped_type(ptr).shape)
    order = order_from_contiguity(analysis.get(ptr).contiguity)
    per_thread = elems_per_thread(analysis, op, order)
    if ptr.defining_op is not None:
        for other in _slice(op):
            q = mem_ptr(other) if other is not op else None
            if q is None or tuple(shaped_type(q).shape) != shape:
                continue
            if order_from_contiguity(analysis.get(q).contiguity) == order:
                per_thread = max(per_thread, elems_per_thread(analysis, other, order))
    per_thread = min(per_thread, max(prod(shape) // (num_warps * threads_per_warp), 1))
    if op.name != "tt.load":
        per_thread = min(per_thread, elems_per_thread(analysis, op, order))
    spt = [1] * len(shape)
    spt[order[0]] = per_thread
    return blocked_for_shape(shape, spt, order, num_warps, threads_per_warp)


def _convert(v: Value, enc, loc) -> Operation:
    return Operation("ttg.convert_layout", [v], [tensor_type(v).with_encoding(enc)], loc=loc)


def _rewrite(op: Operation, enc) -> None:
    """Operands to ``enc`` before ``op``, results back to their old layouts after it."""
    block = block_of(op)
    for i, v in enumerate(op.operands):
        t = v.type
        if isinstance(t, TensorType) and t.shape and t.encoding is not None \
                and getattr(t.encoding, "distributed", True) and t.encoding != enc:
            cvt = _convert(v, enc, op.loc)
            block.insert_before(op, cvt)
            op.set_operand(i, cvt.result)
    at = block.ops.index(op) + 1
    for r in op.results:
        t = r.type
        if not (isinstance(t, TensorType) and t.shape) or t.encoding == enc:
            continue
        uses = list(r.uses)
        r.type = t.with_encoding(enc)
        back = Operation("ttg.convert_layout", [r], [t], loc=op.loc)
        block.insert(at, back)
        at += 1
        back.result.name = r.name
        for user, i in uses:
            user.set_operand(i, back.result)


def descriptor_encoding(t: TensorType, num_warps: int, threads_per_warp: int = 32) \
        -> BlockedLayout:
    """The blocked layout of a descriptor load's result or a descriptor store's value of type
    ``t`` (the module docstring)."""
    shape = tuple(t.shape)
    per_thread = max(prod(shape) // (num_warps * threads_per_warp), 1)
    bits = max(int(getattr(t.element, "width", 8)), 1)
    spt = [1] * len(shape)
    spt[-1] = min(per_thread, max(MAX_VEC_BITS // bits, 1))
    order = tuple(range(len(shape) - 1, -1, -1))
    return blocked_for_shape(shape, spt, order, num_warps, threads_per_warp)


def _descriptor_ops(func: Operation, num_warps: int, tpw: int) -> list:
    out = []
    for op in func.walk():
        if op.name == "tt.descriptor_load":
            out.append((op, descriptor_encoding(tensor_type(op.result), num_warps, tpw)))
        elif op.name in ("tt.descriptor_store", "tt.descriptor_reduce"):
            out.append((op, descriptor_encoding(tensor_type(op.operands[-1]), num_warps, tpw)))
    return out


def coalesce(module: Operation) -> Operation:
    """Run the coalescing pass on a ttgir ``module`` in place and return it.
    ``"ttg.num-warps"`` / ``"ttg.threads-per-warp"`` come from the module attributes."""
    num_warps = int(module.attributes.get("ttg.num-warps", 4))
    tpw = int(module.attributes.get("ttg.threads-per-warp", 32))
    for func in functions(module):
        analysis = AxisInfoAnalysis(func)
        chosen = [(op, coalesced_encoding(analysis, op, num_warps, tpw))
                  for op in func.walk() if mem_ptr(op) is not None]
        chosen += _descriptor_ops(func, num_warps, tpw)
        for op, enc in chosen:
            _rewrite(op, enc)
    return module


@dataclass
class Coalesce(Pass):
    """The ``tritongpu-coalesce`` pass (no options; num_warps from the module)."""

    name = "tritongpu-coalesce"

    def run(self, module: Operation, ctx=None) -> None:
        coalesce(module)
