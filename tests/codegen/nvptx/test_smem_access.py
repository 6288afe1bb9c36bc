"""Shared-memory addressing (:mod:`workbench.codegen.nvptx.smem_access`) against the layout
algebra: the element offsets the code generator emits (as LLVM IR, run on the host by MCJIT,
and as Python ints) are the offsets :func:`workbench.layouts.banks.shared_offsets` gives, and
vectorised runs are what the thread layout allows. Pure CPU, no GPU."""
from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvmlite import ir

from workbench.codegen.nvptx.smem_access import (
    contiguous_run,
    shared_order,
    swizzle_offset,
    swizzle_offset_py,
)
from workbench.codegen.nvptx.threads import thread_layout
from workbench.ir.types import TensorType, f32
from workbench.layouts import NVMMASharedLayout, SwizzledSharedLayout
from workbench.layouts.banks import shared_offsets
from workbench.layouts.blocked import blocked_for_shape

I32 = ir.IntType(32)

ENCODINGS = [
    (SwizzledSharedLayout(1, 1, 1, (1, 0)), (16, 32)),
    (SwizzledSharedLayout(8, 2, 4, (1, 0)), (128, 32)),
    (SwizzledSharedLayout(8, 1, 8, (1, 0)), (32, 128)),
    (SwizzledSharedLayout(4, 1, 8, (0, 1)), (64, 16)),
    (SwizzledSharedLayout(2, 4, 2, (0, 1)), (32, 32)),
    (NVMMASharedLayout(128, False, 16), (64, 128)),
    (NVMMASharedLayout(64, True, 16), (64, 32)),
    (NVMMASharedLayout(32, False, 16), (16, 16)),
    (NVMMASharedLayout(0, False, 16), (8, 8)),
]


class _Lowering:
    """The one attribute :func:`swizzle_offset` uses: an IR builder."""

    def __init__(self, builder):
        self.b = builder


def _host_offset_function(enc, shape):
    """``i32 f(i32 coord0, i32 coord1, ...)`` (one argument per dim) from
    :func:`swizzle_offset`, compiled for the host."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = ir.Module(name="offsets")
    fn = ir.Function(mod, ir.FunctionType(I32, [I32] * len(shape)), "offset")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(swizzle_offset(_Lowering(b), enc, shape, list(fn.args)))
    tm = llvm.Target.from_default_triple().create_target_machine(jit=True)
    parsed = llvm.parse_assembly(str(mod))
    parsed.triple = tm.triple
    engine = llvm.create_mcjit_compiler(parsed, tm)
    engine.finalize_object()
    cfn = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.c_int32] * len(shape))(
        engine.get_function_address("offset"))
    return engine, cfn


@pytest.mark.parametrize("enc,shape", ENCODINGS)
def test_offsets_are_the_layout_algebras(enc, shape):
    want = shared_offsets(enc, shape)
    engine, emitted = _host_offset_function(enc, shape)
    for r in range(shape[0]):
        for c in range(shape[1]):
            assert swizzle_offset_py(enc, shape, (r, c)) == want[r, c], (r, c)
            assert emitted(r, c) == want[r, c], (r, c)
    del engine


def test_shared_order():
    assert shared_order(SwizzledSharedLayout(8, 1, 8, (0, 1))) == (0, 1)
    assert shared_order(NVMMASharedLayout(128, False, 16)) == (1, 0)
    assert shared_order(NVMMASharedLayout(128, True, 16)) == (0, 1)


@pytest.mark.parametrize("spt,order,limit,dim,want", [
    ((1, 8), (1, 0), 8, 1, 8),    # 8 contiguous registers along dim 1
    ((1, 8), (1, 0), 4, 1, 4),    # capped by the limit (16 bytes / element bytes)
    ((1, 8), (1, 0), 8, 0, 1),    # nothing contiguous along dim 0
    ((4, 1), (0, 1), 8, 0, 4),
    ((1, 1), (1, 0), 8, 1, 1),
])
def test_contiguous_run(spt, order, limit, dim, want):
    shape = (64, 64)
    t = TensorType(shape, f32, blocked_for_shape(shape, spt, order, 4))
    tl = thread_layout(t)
    v = contiguous_run(tl, dim, limit)
    assert v == want
    # every thread's aligned groups of v registers hold v consecutive elements along dim,
    # starting at a multiple of v
    step = np.zeros(len(shape), int)
    step[dim] = 1
    for warp, lane in ((0, 0), (1, 5), (3, 31)):
        coords = np.array(tl.coords(warp, lane))
        for g in range(0, tl.num_regs, v):
            assert coords[g][dim] % v == 0
            for i in range(v):
                assert tuple(coords[g + i]) == tuple(coords[g] + i * step)


def test_unsupported_buffers_raise():
    from workbench.errors import UnsupportedError
    b = ir.IRBuilder(ir.Function(ir.Module(), ir.FunctionType(I32, []), "f")
                     .append_basic_block("e"))
    enc = NVMMASharedLayout(128, False, 16)
    with pytest.raises(UnsupportedError):
        swizzle_offset(_Lowering(b), enc, (2, 64, 64), [I32(0)] * 3)


def test_rank1_buffer_offset_is_the_element_index():
    """A pipelined 1-D load's buffer (``#ttg.swizzled_shared<{vec = 1, ..., order = [0]}>``):
    one row, nothing to swizzle; the offset is the coordinate itself."""
    b = ir.IRBuilder(ir.Function(ir.Module(), ir.FunctionType(I32, [I32]), "f")
                     .append_basic_block("e"))
    x = b.function.args[0]
    enc = SwizzledSharedLayout(1, 1, 1, (0,))
    assert swizzle_offset(_Lowering(b), enc, (int(np.random.default_rng().integers(16, 4096)),),
                          [x]) is x


@pytest.mark.parametrize("enc,shape", [
    (SwizzledSharedLayout(8, 8, 1, (0, 1, 2)), (8, 32, 64)),   # a batched dot's operand
    (SwizzledSharedLayout(8, 2, 4, (2, 1, 0)), (2, 32, 64)),
    (SwizzledSharedLayout(4, 1, 8, (1, 2, 0)), (4, 64, 32)),
])
def test_rank3_offsets_are_the_layout_algebras(enc, shape):
    """Rank-3 swizzled buffers: whole swizzled matrices stacked along order[2]."""
    want = shared_offsets(enc, shape)
    engine, emitted = _host_offset_function(enc, shape)
    for idx in np.ndindex(*shape):
        assert swizzle_offset_py(enc, shape, idx) == want[idx], idx
        assert emitted(*idx) == want[idx], idx
    del engine
