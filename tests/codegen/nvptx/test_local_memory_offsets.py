"""The shared-memory offsets ``ttg.local_alloc`` / ``ttg.local_load`` emit per register group
(:func:`workbench.codegen.nvptx.local_memory._offset`: a swizzled offset for the anchors of
:func:`~workbench.codegen.nvptx.async_copy.swizzle_strides`, the anchor's plus a constant for
the others), compiled for the host with MCJIT and run for every (warp, lane): each group's
offset is the swizzle formula's for that thread's coordinates. Pure CPU, no GPU."""
from __future__ import annotations

import ctypes
import os
import sys

import llvmlite.binding as llvm
import pytest
from llvmlite import ir

import workbench as wb
from workbench.codegen.nvptx import local_memory
from workbench.codegen.nvptx.async_copy import swizzle_strides
from workbench.codegen.nvptx.smem_access import swizzle_offset_py
from workbench.codegen.nvptx.threads import thread_layout
from workbench.ir.types import TensorType, f16
from workbench.layouts.encodings import BlockedLayout, NVMMASharedLayout, SwizzledSharedLayout

I32 = ir.IntType(32)

CASES = [
    (BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0)), NVMMASharedLayout(128, False, 16),
     (128, 64), 8),
    (BlockedLayout((1, 8), (1, 32), (4, 1), (1, 0)), NVMMASharedLayout(128, False, 16),
     (64, 256), 8),
    (BlockedLayout((2, 8), (8, 4), (4, 1), (1, 0)), SwizzledSharedLayout(8, 1, 8, (1, 0)),
     (64, 32), 8),
    (BlockedLayout((4, 1), (8, 4), (1, 4), (0, 1)), NVMMASharedLayout(64, True, 16),
     (64, 32), 4),
    (BlockedLayout((1, 4), (2, 16), (4, 1), (1, 0)), SwizzledSharedLayout(4, 2, 4, (1, 0)),
     (32, 128), 2),
]


class _Lowering:
    """What :func:`local_memory._offset` uses of a kernel lowering: an IR builder."""

    def __init__(self, builder):
        self.b = builder


def _host_group_offsets(tl, groups, enc, shape):
    """``void f(i32 part0, i32 part1, i32* out)``: ``out[i]`` = the emitted offset of group
    ``groups[i]`` for a thread whose coordinate part is (part0, part1); MCJIT for the host."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = ir.Module(name="groups")
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [I32, I32, I32.as_pointer()]), "f")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    p0, p1, out = fn.args
    coords = {g: [b.xor(p0, I32(tl.regs[g][0])), b.xor(p1, I32(tl.regs[g][1]))]
              for g in groups}
    plan = swizzle_strides(tl, tuple(groups), enc, shape)
    offs: dict = {}
    for i, g in enumerate(groups):
        off = local_memory._offset(_Lowering(b), enc, shape, coords, plan, offs, g)
        b.store(off, b.gep(out, [I32(i)]))
    b.ret_void()
    tm = llvm.Target.from_default_triple().create_target_machine(jit=True)
    parsed = llvm.parse_assembly(str(mod))
    parsed.triple = tm.triple
    engine = llvm.create_mcjit_compiler(parsed, tm)
    engine.finalize_object()
    cfn = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32,
                           ctypes.POINTER(ctypes.c_int32))(engine.get_function_address("f"))
    return engine, cfn, plan


@pytest.mark.parametrize("layout,enc,shape,v", CASES,
                         ids=[f"{s[0]}x{s[1]}-{type(e).__name__}-v{v}" for _, e, s, v in CASES])
def test_emitted_group_offsets_in_every_thread(layout, enc, shape, v):
    tl = thread_layout(TensorType(shape, f16, layout))
    groups = list(dict.fromkeys(range(0, tl.num_regs, v)))
    engine, emitted, plan = _host_group_offsets(tl, groups, enc, shape)
    out = (ctypes.c_int32 * len(groups))()
    for w in range(1 << len(tl.warp)):
        for lane in range(1 << len(tl.lane)):
            part = tl.thread_part(w, lane)
            emitted(part[0], part[1], out)
            coords = tl.coords(w, lane)
            want = [swizzle_offset_py(enc, shape, coords[g]) for g in groups]
            assert list(out) == want, (w, lane)
    # fewer swizzle computations than groups, except where every group has its own phase
    # (two rows per thread 1 apart in a swizzle whose phase changes every row)
    anchors = sum(1 for g in groups if plan[g][0] == g)
    assert anchors < len(groups) or isinstance(enc, SwizzledSharedLayout) and enc.per_phase == 1
    del engine


def test_attention_stores_compute_one_swizzled_offset(monkeypatch):
    """The fidelity attention kernel's ``local_alloc`` (st.shared, 4 register groups per
    thread) computes one swizzled offset and adds constants for the other three."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "fidelity"))
    import fidelity_kernels as fk
    case = {c.name: c for c in fk.CASES}["attention"]
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")
    calls = {"offset": 0, "store": 0}
    real_off, real_store = local_memory.swizzle_offset, local_memory.vector_store

    def offset(*a, **k):
        calls["offset"] += 1
        return real_off(*a, **k)

    def store(*a, **k):
        calls["store"] += 1
        return real_store(*a, **k)
    monkeypatch.setattr(local_memory, "swizzle_offset", offset)
    monkeypatch.setattr(local_memory, "vector_store", store)
    k = wb.compile(wb.jit(case.kernel.fn), *case.signature, target="cuda:90", num_warps=4,
                   **case.constexprs)
    assert calls["store"] == 4 and calls["offset"] == 1
    assert "st.shared" in str(k.asm["ptx"])
