"""The TMA-store step of ``tritongpu-pipeline``: a tensor-descriptor store in a loop writes a
shared-memory buffer allocated once, before the loop, and does not wait for its own copy.

Without it (:mod:`.tma_lowering`) every ``tt.descriptor_store`` allocates a staging buffer,
starts the TMA copy to global memory and waits for the copy to have read the buffer
(``ttng.async_tma_store_wait {pendings = 0}``) before the program goes on. In a loop (a
persistent kernel's loop over output tiles) that wait is exposed once per iteration. Triton
3.6 (``pipelineTMAStores``, ``lib/Dialect/TritonGPU/Transforms/Pipeliner/
TMAStoresPipeline.cpp``, run at the end of the pipeliner on every ``scf.for`` whose stage
count is above 1) moves the wait in front of the next write of the buffer instead::

    %buf = ttg.local_alloc : () -> !ttg.memdesc<128x256xf16, #shared, #smem, mutable>
    scf.for ... {
      ...                                   // the next tile's K loop runs while the copy reads
      ttng.async_tma_store_wait {pendings = 0}   // the previous copy has read %buf
      ttg.local_store %c, %buf
      ttng.fence_async_shared {bCluster = false}
      ttng.async_tma_copy_local_to_global %c_desc[%m, %n] %buf
    }
    ttng.async_tma_store_wait {pendings = 0}
    ttg.local_dealloc %buf

Stores of the same tile shape, element type and shared encoding share one buffer (the wait
before each write keeps that safe). A store is taken when it sits in the loop's body (inside
``scf.if`` too, not in a nested loop) and its descriptor comes from outside the loop; a
descriptor made in the loop (``tl.make_tensor_descriptor`` per iteration) is left to
:mod:`.tma_lowering`: Triton multi-buffers such descriptors instead (the copy in flight still
reads the tensor map), which this pass does not do. ``tt.descriptor_reduce`` becomes
``ttng.async_tma_reduce`` the same way.

The buffer's encoding is the one :mod:`.tma_lowering` gives the descriptor
(:func:`.tma_lowering.wanted_encoding`). Run on ttgir of ``cuda:90`` whose descriptors go
through TMA (on ``cuda:80`` they became pointers before the ttgir passes).
"""
from __future__ import annotations

from ..ir.core import Operation, Value
from ..ir.types import MemDescType, TensorDescType, TensorType
from .tma_lowering import wanted_encoding
from .values import block_of, defined_outside

#: the descriptor ops this step takes, and the TMA op each becomes
_STORES = {"tt.descriptor_store": "ttng.async_tma_copy_local_to_global",
           "tt.descriptor_reduce": "ttng.async_tma_reduce"}


def _stores_in(block) -> list:
    """The descriptor stores of ``block`` in program order, looking into ``scf.if`` (and any
    other region) but not into nested ``scf.for``/``scf.while`` loops."""
    out = []
    for op in block.ops:
        if op.name in _STORES:
            out.append(op)
        elif op.name not in ("scf.for", "scf.while"):
            for region in op.regions:
                for b in region.blocks:
                    out.extend(_stores_in(b))
    return out


def _source(op: Operation) -> Value:
    """The stored tile, looking through a ``ttg.convert_layout`` used only here (as the
    lowering of a store that is not pipelined does)."""
    src = op.operands[-1]
    cvt = src.defining_op
    if cvt is not None and cvt.name == "ttg.convert_layout" and len(src.uses) == 1:
        return cvt.operands[0]
    return src


def pipeline_tma_stores(loop: Operation) -> bool:
    """Rewrite the descriptor stores of ``loop`` (an ``scf.for``) as the module docstring
    shows; returns whether there was any."""
    stores = [op for op in _stores_in(loop.regions[0].block)
              if defined_outside(op.operands[0], loop)]
    if not stores:
        return False
    loop_block = block_of(loop)
    bufs: dict = {}
    for op in stores:
        desc = op.operands[0]
        dt = desc.type
        assert isinstance(dt, TensorDescType)
        src = _source(op)
        st = src.type
        assert isinstance(st, TensorType)
        enc = wanted_encoding(desc, dt.block)
        key = (tuple(st.shape), str(st.element), enc)
        buf = bufs.get(key)
        if buf is None:
            alloc = Operation("ttg.local_alloc", [], [MemDescType(tuple(st.shape), st.element,
                                                                  enc, True)], loc=op.loc)
            loop_block.insert_before(loop, alloc)
            buf = bufs[key] = alloc.result
        here = block_of(op)
        old = op.operands[-1]
        for new in (Operation("ttng.async_tma_store_wait", [], [], {"pendings": 0}, loc=op.loc),
                    Operation("ttg.local_store", [src, buf], [], loc=op.loc),
                    Operation("ttng.fence_async_shared", [], [], {"bCluster": False},
                              loc=op.loc)):
            here.insert_before(op, new)
        attrs = {"kind": op.attributes["kind"]} if op.name == "tt.descriptor_reduce" else {}
        here.insert_before(op, Operation(_STORES[op.name], [desc, *op.operands[1:-1], buf], [],
                                         attrs, loc=op.loc))
        op.erase()
        cvt = old.defining_op
        if old is not src and cvt is not None and not old.uses:
            cvt.erase()
    after = loop_block.ops.index(loop) + 1
    tail = [Operation("ttng.async_tma_store_wait", [], [], {"pendings": 0}, loc=loop.loc)]
    tail += [Operation("ttg.local_dealloc", [buf], [], loc=loop.loc) for buf in bufs.values()]
    for i, new in enumerate(tail):
        loop_block.insert(after + i, new)
    return True


__all__ = ["pipeline_tma_stores"]
