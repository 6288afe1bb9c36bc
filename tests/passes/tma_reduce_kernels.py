"""The descriptor-atomic kernel the TMA-reduction tests share (compile-only tests in
``test_tma_reduce.py``, the H200 runs in ``tests/kernels/test_tma_reduce_gpu.py``): program
(i, j, ...) loads tile (i, j) of ``a`` and reduces it with ``KIND`` into tile (i, j) of
``out`` through ``out_desc``, or, when that is None, through a descriptor made in the
kernel."""
from __future__ import annotations

import workbench as wb
import workbench.language as tl


@wb.jit
def reduce_k(out_desc, out_ptr, a_ptr, M, N, A_N, MB: tl.constexpr, NB: tl.constexpr,
             KIND: tl.constexpr):
    moff = tl.program_id(0) * MB
    noff = tl.program_id(1) * NB
    rows = moff + tl.arange(0, MB)[:, None]
    cols = noff + tl.arange(0, NB)[None, :]
    val = tl.load(a_ptr + rows * A_N + cols)
    if out_desc is None:
        desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1],
                                         block_shape=[MB, NB])
    else:
        desc = out_desc
    if KIND == "add":
        desc.atomic_add([moff, noff], val)
    elif KIND == "min":
        desc.atomic_min([moff, noff], val)
    elif KIND == "max":
        desc.atomic_max([moff, noff], val)
    elif KIND == "and":
        desc.atomic_and([moff, noff], val)
    elif KIND == "or":
        desc.atomic_or([moff, noff], val)
    else:
        desc.atomic_xor([moff, noff], val)

