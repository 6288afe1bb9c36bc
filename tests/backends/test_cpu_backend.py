"""CpuBackend through the language front end: interface (stages, metadata, timings), loops and
branches (scf.for / scf.if), and compile time."""
from __future__ import annotations

import time

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.cpu import CpuBackend
from workbench.config import CompileContext, Options, Target

rng = np.random.default_rng()


@wb.jit
def row_sums(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@wb.jit
def scale_or_negate(x_ptr, out_ptr, n, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if flag > 0:
        y = x * 3.0
    else:
        y = -x
    tl.store(out_ptr + offs, y, mask=mask)


@wb.jit
def softmax(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@wb.jit
def int_loop(out_ptr, n):
    total = 0
    for i in range(n):
        total += i * i - 3
    tl.store(out_ptr, total)


@pytest.mark.parametrize("N", [1, 100, 257])
def test_scf_for_with_tile_accumulator(N):
    R = 6
    x = rng.standard_normal((R, N)).astype(np.float32)
    out = np.full(R, np.nan, np.float32)
    row_sums[(R,)](x, out, N, N, BLOCK=64)
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_scf_for_scalar_carried_value():
    for n in (0, 1, 37):
        out = np.full(1, -12345, np.int32)
        int_loop[(1,)](out, n)
        assert out[0] == sum(i * i - 3 for i in range(n))


@pytest.mark.parametrize("flag", [-2, 5])
def test_scf_if_on_runtime_scalar(flag):
    n = 300
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    scale_or_negate[(3,)](x, out, n, flag, BLOCK=128)
    np.testing.assert_array_equal(out, x * np.float32(3.0) if flag > 0 else -x)


def test_softmax_end_to_end_and_compile_time():
    R, C = 33, 781
    x = rng.standard_normal((R, C)).astype(np.float32)
    out = np.full((R, C), np.nan, np.float32)
    t0 = time.perf_counter()
    softmax[(R,)](x, out, C, C, BLOCK=1024)
    first = time.perf_counter() - t0
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert first < 2.0  # cold compile (frontend + passes + LLVM) plus the launch


def test_backend_interface_stages_metadata_timings():
    ck = wb.compile(softmax, "*fp32", "*fp32", "i32", "i32", target="cpu", BLOCK=256,
                    num_warps=8)
    assert ck.metadata.name == "softmax" and ck.metadata.shared == 0
    assert ck.metadata.num_warps == 8
    for stage in ("llir", "asm"):
        text = ck.asm[stage]
        assert len(ck.line_maps[stage]) == len(text.splitlines())
        lines = {loc.line for loc in ck.line_maps[stage] if loc is not None}
        src_line = next(i for i, t in enumerate(ck.src.text.splitlines())
                        if "tl.exp(z)" in t) + ck.src.first_line
        assert src_line in lines, stage
    assert "define" in ck.asm["llir"] and ".loc" in ck.asm["asm"]


def test_compile_direct_records_timings():
    from workbench.frontend import generate_ttir
    from workbench.passes.manager import PassManager
    from workbench.passes.pipelines import ttir_passes
    from workbench.runtime.compiler import parse_signature_entry
    from workbench.runtime.specialization import ArgSpec, Specialization
    names = ["x_ptr", "out_ptr", "stride", "n_cols"]
    sig = ["*fp32", "*fp32", "i32", "i32"]
    entries = tuple(parse_signature_entry(n, s) for n, s in zip(names, sig, strict=True))
    spec = Specialization(entries + (ArgSpec("BLOCK", "constexpr", "constexpr", value=128),))
    opts = Options()
    ctx = CompileContext()
    mod = generate_ttir(softmax.src, spec, opts)
    mod = PassManager(ttir_passes(opts)).run(mod, ctx, "ttir") or mod
    res = CpuBackend(Target.parse("cpu")).compile(mod, spec, opts, ctx)
    assert [s.name for s in res.stages] == ["llir", "asm"]
    assert all(ctx.timings[k] > 0 for k in ("llir", "asm", "jit"))
    assert sum(ctx.timings[k] for k in ("llir", "asm", "jit")) < 1.0
    x = rng.standard_normal((4, 100)).astype(np.float32)
    out = np.full_like(x, np.nan)
    from workbench.backends.base import PointerArg
    args = [PointerArg(a.ctypes.data, a.ctypes.data, a.ctypes.data + a.nbytes, 4, a)
            for a in (x, out)] + [100, 100]
    res.launcher((4, 1, 1), args)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
