"""``tritongpu-optimize-dot-operands``, the part for Hopper's wgmma: a transposed operand is
stored untransposed and read through a transposed view (Triton 3.6
``lib/Dialect/TritonGPU/Transforms/OptimizeDotOperands.cpp``, pattern ``FuseTransMMAV3Plus``).

After ``tritongpu-accelerate-matmul`` the operand ``b.T`` of ``tl.dot(a, b.T)`` reaches the
``ttng.warp_group_dot`` as::

    %c = ttg.convert_layout %b : tensor<NxK, #blocked> -> tensor<NxK, #blocked1>
    %t = tt.trans %c {order = array<i32: 1, 0>} : tensor<NxK, ...> -> tensor<KxN, #blocked2>
    %m = ttg.local_alloc %t : (tensor<KxN, ...>) -> !ttg.memdesc<KxN, #shared_T, #smem>

(a shuffle of the whole tile through registers and shared memory). The rewrite stores ``%b``
as it is and transposes the shared-memory view instead, which moves no data::

    %s = ttg.local_alloc %b : (tensor<NxK, #blocked>) -> !ttg.memdesc<NxK, #shared, #smem>
    %m = ttg.memdesc_trans %s {order = array<i32: 1, 0>} : ... -> !ttg.memdesc<KxN, #shared_T>

``#shared`` is ``#shared_T`` with ``transposed`` flipped: an ``#ttg.nvmma_shared`` buffer of
``NxK`` and its transposed ``KxN`` view put every element at the same byte. A layout
conversion in front of the ``tt.trans`` is looked through (``ttg.local_alloc`` takes any
register layout; Triton's ``remove-layout-conversions`` drops it). When ``%b`` is a tensor
descriptor load, ``triton-nvidia-tma-lowering`` then lets wgmma read the TMA buffer itself.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, functions
from ..ir.types import MemDescType
from ..layouts.encodings import NVMMASharedLayout
from .manager import Pass
from .values import block_of


def _match(alloc: Operation):
    """``(trans, source value)`` when ``alloc`` is a ``local_alloc`` of a rank-2 ``tt.trans``
    in an ``nvmma_shared`` encoding read only by ``ttng.warp_group_dot``, else None."""
    if alloc.name != "ttg.local_alloc" or len(alloc.operands) != 1:
        return None
    t = alloc.result.type
    if not isinstance(t, MemDescType) or not isinstance(t.encoding, NVMMASharedLayout) or \
            len(t.shape) != 2 or t.encoding.fp4_padded:
        return None
    users = [u for u, _ in alloc.result.uses]
    if not users or any(u.name != "ttng.warp_group_dot" for u in users):
        return None
    trans = alloc.operands[0].defining_op
    if trans is None or trans.name != "tt.trans" or \
            list(trans.attributes.get("order", ())) != [1, 0] or len(trans.result.uses) != 1:
        return None
    src = trans.operands[0]
    cvt = src.defining_op
    if cvt is not None and cvt.name == "ttg.convert_layout" and len(src.uses) == 1:
        src = cvt.operands[0]
    return trans, src


def fuse_trans(alloc: Operation) -> bool:
    """Rewrite ``local_alloc(trans(x))`` feeding wgmma into ``memdesc_trans(local_alloc(x))``
    (module docstring). Returns whether ``alloc`` was rewritten."""
    m = _match(alloc)
    if m is None:
        return False
    trans, src = m
    t = alloc.result.type
    assert isinstance(t, MemDescType) and isinstance(t.encoding, NVMMASharedLayout)
    enc = t.encoding
    flipped = NVMMASharedLayout(enc.swizzling_byte_width, not enc.transposed,
                                enc.element_bit_width, enc.fp4_padded)
    shape = (t.shape[1], t.shape[0])
    blk = block_of(alloc)
    new = Operation("ttg.local_alloc", [src], [MemDescType(shape, t.element, flipped,
                                                           t.mutable)], loc=alloc.loc)
    new.result.name = src.name or alloc.result.name
    blk.insert_before(alloc, new)
    view = Operation("ttg.memdesc_trans", [new.result], [t], {"order": [1, 0]},
                     loc=trans.loc)
    view.result.name = trans.result.name
    blk.insert_before(alloc, view)
    alloc.result.replace_all_uses_with(view.result)
    cvt = trans.operands[0].defining_op
    alloc.erase()
    trans.erase()
    if cvt is not None and cvt.name == "ttg.convert_layout" and not cvt.result.uses:
        cvt.erase()
    return True


@dataclass
class OptimizeDotOperands(Pass):
    """The ``tritongpu-optimize-dot-operands`` pass (the wgmma transposed-operand rewrite of
    the module docstring; no options)."""

    name = "tritongpu-optimize-dot-operands"

    def run(self, module: Operation, ctx=None) -> None:
        for func in functions(module):
            for op in list(func.walk()):
                if op.name == "ttg.local_alloc" and op.parent is not None:
                    fuse_trans(op)


__all__ = ["OptimizeDotOperands", "fuse_trans"]
