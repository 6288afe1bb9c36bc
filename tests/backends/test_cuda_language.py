"""The language on the CUDA backend: atomics, scans, device_print/device_assert, erf and f64
math, tt.dot (FMA and mma.sync). Every kernel compiles to PTX for sm_80 and sm_90 and ptxas
assembles it; ``gpu``-marked tests run them against numpy (fresh random inputs, NaN-poisoned
outputs) where a GPU is present."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends import nvidia_tools

PTXAS = nvidia_tools.find_tool("ptxas")


@wb.jit
def atomics_k(x_ptr, out_ptr, old_ptr, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    dst = out_ptr + offs % 5
    if KIND == "add":
        old = tl.atomic_add(dst, x, mask=m)
    elif KIND == "max":
        old = tl.atomic_max(dst, x, mask=m)
    elif KIND == "min":
        old = tl.atomic_min(dst, x, mask=m)
    elif KIND == "and":
        old = tl.atomic_and(dst, x, mask=m)
    elif KIND == "or":
        old = tl.atomic_or(dst, x, mask=m)
    elif KIND == "xor":
        old = tl.atomic_xor(dst, x, mask=m)
    else:
        old = tl.atomic_xchg(out_ptr + offs, x, mask=m)
    tl.store(old_ptr + offs, old, mask=m)


@wb.jit
def atomic_sem_k(ptr, SEM: tl.constexpr, SCOPE: tl.constexpr):
    tl.atomic_add(ptr + tl.arange(0, 32), 1, sem=SEM, scope=SCOPE)


@wb.jit
def cas_k(lock_ptr, out_ptr):
    # each program takes the lock in turn and bumps a counter it guards
    pid = tl.program_id(0)
    old = tl.atomic_cas(lock_ptr, pid, pid + 1)
    tl.store(out_ptr + pid, old)


@wb.jit
def scalar_add_k(ptr, val_ptr, old_ptr):
    old = tl.atomic_add(ptr, tl.load(val_ptr + tl.program_id(0)))
    tl.store(old_ptr + tl.program_id(0), old)


@wb.jit
def scan_k(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr,
           REV: tl.constexpr, PROD: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + r * N + c)
    if PROD:
        y = tl.cumprod(x, axis=AXIS, reverse=REV)
    else:
        y = tl.cumsum(x, axis=AXIS, reverse=REV)
    tl.store(out_ptr + r * N + c, y)


@wb.jit
def _pick_max(a, ia, b, ib):
    take = b > a
    return tl.where(take, b, a), tl.where(take, ib, ia)


@wb.jit
def running_argmax_k(x_ptr, v_ptr, i_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    v, i = tl.associative_scan((x, offs), 0, _pick_max)
    tl.store(v_ptr + offs, v)
    tl.store(i_ptr + offs, i)


@wb.jit
def print_k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.device_print("x=", x)


@wb.jit(debug=True)
def assert_k(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_assert(x < 100, "x must stay below 100")


@wb.jit
def math_k(x_ptr, d_ptr, erf_ptr, exp_ptr, log_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    d = tl.load(d_ptr + offs, mask=m)
    tl.store(erf_ptr + offs, tl.erf(x), mask=m)
    tl.store(exp_ptr + offs, tl.exp(d), mask=m)
    tl.store(log_ptr + offs, tl.log(tl.abs(d)), mask=m)


@wb.jit
def dot_k(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
          PREC: tl.constexpr, ACC_INT: tl.constexpr, LOOP: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    if ACC_INT:
        acc = tl.zeros((M, N), dtype=tl.int32)
    else:
        acc = tl.zeros((M, N), dtype=tl.float32)
    BK: tl.constexpr = K // LOOP
    rk = tl.arange(0, BK)
    for kk in range(LOOP):
        a = tl.load(a_ptr + rm[:, None] * K + (kk * BK + rk)[None, :])
        b = tl.load(b_ptr + (kk * BK + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _ptx(kernel, sig, arch, **kw):
    c = wb.compile(kernel, *sig, target=f"cuda:{arch}", **kw)
    ptx = c.asm["ptx"]
    if PTXAS:
        assert "sass" in c.asm or "cubin" in c.asm, "ptxas did not assemble the PTX"
        assert c.metadata.n_spills == 0
    return c, ptx


ARCHS = [80, 90]


def count(ptx, pat):
    return len(re.findall(pat, ptx))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kind,dtype,instr", [
    ("add", "*fp32", r"atom\.global\.gpu\.acq_rel\.add\.f32"),
    ("add", "*fp16", r"atom\.global\.gpu\.acq_rel\.add\.noftz\.f16"),
    ("add", "*i32", r"atom\.global\.gpu\.acq_rel\.add\.u32"),
    ("add", "*i64", r"atom\.global\.gpu\.acq_rel\.add\.u64"),
    ("add", "*fp64", r"atom\.global\.gpu\.acq_rel\.add\.f64"),
    ("max", "*i32", r"atom\.global\.gpu\.acq_rel\.max\.s32"),
    ("min", "*u32", r"atom\.global\.gpu\.acq_rel\.min\.u32"),
    ("max", "*fp32", r"atom\.global\.gpu\.acq_rel\.min\.u32"),   # negative values: umin
    ("min", "*fp32", r"atom\.global\.gpu\.acq_rel\.max\.u32"),
    ("and", "*i32", r"atom\.global\.gpu\.acq_rel\.and\.b32"),
    ("or", "*i64", r"atom\.global\.gpu\.acq_rel\.or\.b64"),
    ("xor", "*i32", r"atom\.global\.gpu\.acq_rel\.xor\.b32"),
    ("xchg", "*fp32", r"atom\.global\.gpu\.acq_rel\.exch\.b32"),
])
def test_atomic_rmw_ptx(kind, dtype, instr, arch):
    _, ptx = _ptx(atomics_k, [dtype] * 3 + ["i32"], arch, KIND=kind, BLOCK=128)
    assert re.search(instr, ptx), instr
    # default layout: 1 element per thread -> one predicated atom per register
    assert re.search(r"@%p\d+ atom\.global", ptx)


@pytest.mark.parametrize("arch", ARCHS)
def test_bf16_atomic_add(arch):
    _, ptx = _ptx(atomics_k, ["*bf16"] * 3 + ["i32"], arch, KIND="add", BLOCK=128)
    if arch >= 90:
        assert "atom.global.gpu.acq_rel.add.noftz.bf16" in ptx
    else:
        assert "atom.acq_rel.gpu.global.cas.b16" in ptx and "cvt.rn.bf16.f32" in ptx


@pytest.mark.parametrize("sem,scope", [("relaxed", "cta"), ("acquire", "sys"),
                                       ("release", "gpu"), ("acq_rel", "gpu")])
def test_atomic_sem_scope(sem, scope):
    _, ptx = _ptx(atomic_sem_k, ["*i32"], 80, SEM=sem, SCOPE=scope)
    assert f"atom.global.{scope}.{sem}.add.u32" in ptx


def test_broadcast_atomic_is_issued_once_per_element():
    # 32 elements, 4 warps: warps 1-3 hold copies; only warp 0 issues, owners share old values
    _, ptx = _ptx(atomic_sem_k, ["*i32"], 80, SEM="relaxed", SCOPE="gpu")
    assert count(ptx, r"atom\.global") == 1
    c, ptx = _ptx(scalar_add_k, ["*fp32", "*fp32", "*fp32"], 90)
    assert count(ptx, r"atom\.global") == 1 and "bar.sync" in ptx  # old value shared
    assert c.metadata.shared >= 4


@pytest.mark.parametrize("arch", ARCHS)
def test_atomic_cas_ptx(arch):
    _, ptx = _ptx(cas_k, ["*i32", "*i32"], arch)
    assert "atom.global.acq_rel.gpu.cas.b32" in ptx


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("m,n,axis,rev", [(32, 64, 1, False), (32, 64, 1, True),
                                          (32, 64, 0, False), (64, 16, 0, True),
                                          (4, 256, 1, False), (256, 4, 0, False)])
def test_scan_ptx(m, n, axis, rev, arch):
    c, ptx = _ptx(scan_k, ["*fp32", "*fp32"], arch, M=m, N=n, AXIS=axis, REV=rev, PROD=False)
    lay = c.layouts() if callable(getattr(c, "layouts", None)) else None
    del lay
    if axis == 1 and n >= 32:
        assert count(ptx, r"shfl\.sync\.(up|down)\.b32") > 0
        assert ("shfl.sync.down" in ptx) == rev


def test_scan_kogge_stone_rounds():
    # 1-D 1024, default layout (1 per thread, 32 lanes, 4 warps): 8 repetitions ("runs");
    # per run and operand 5 Kogge-Stone rounds + 1 exclusive shuffle
    c, ptx = _ptx(running_argmax_k, ["*fp32", "*fp32", "*i32"], 90, N=1024)
    ups = count(ptx, r"shfl\.sync\.up\.b32")
    assert ups == 8 * 2 * (5 + 1), ups
    assert count(ptx, r"bar\.sync") >= 1 and c.metadata.shared > 0


@pytest.mark.parametrize("arch", ARCHS)
def test_print_ptx(arch):
    c, ptx = _ptx(print_k, ["*fp32", "i32"], arch, BLOCK=128)
    assert ".extern .func  (.param .b32 func_retval0) vprintf" in ptx
    assert count(ptx, r"call\.uni \(retval0\), vprintf") == 1  # 1 element per thread
    fmt = "pid (%u, %u, %u) idx (%u) x= %f\n"
    assert ", ".join(str(b) for b in fmt.encode()) in ptx.replace("\n", "")


@pytest.mark.parametrize("arch", ARCHS)
def test_assert_ptx(arch):
    _, ptx = _ptx(assert_k, ["*fp32"], arch, BLOCK=128)
    assert "__assertfail" in ptx
    msg = ", ".join(str(b) for b in b"x must stay below 100")
    assert msg in ptx


@pytest.mark.parametrize("arch", ARCHS)
def test_math_ptx(arch):
    _, ptx = _ptx(math_k, ["*fp32", "*fp64", "*fp32", "*fp64", "*fp64", "i32"], arch,
                  BLOCK=128)
    assert "ex2.approx.f32" in ptx and "fma.rn.f64" in ptx and "div.rn.f64" in ptx


def test_erf_polynomial_matches_math_erf():
    """The f32 polynomial of mathlib evaluated in float32 with fma-free numpy arithmetic."""
    import math

    from workbench.codegen.nvptx.mathlib import ERF_LARGE, ERF_SMALL

    def ev(x):
        x = np.float32(x)
        t = abs(x)
        if t < 1:
            r = np.float32(0)
            for c in np.float32(ERF_SMALL):
                r = np.float32(r * x * x + c)
            return float(np.float32(r * x))
        if t >= 4:
            return float(np.sign(x))
        q = np.float32(0)
        for c in np.float32(ERF_LARGE):
            q = np.float32(q * t + c)
        return float(np.sign(x) * (1 - np.exp(np.float32(q))))
    xs = np.linspace(-5, 5, 4001)
    assert max(abs(ev(x) - math.erf(x)) for x in xs) < 3e-7


#: 16-byte aligned operands (without the hint a thread's run of fp16/int8 elements could be
#: under cp.async's 4 bytes and the K loop would not be pipelined, as in Triton 3.6)
DOT_CASES = {
    "fp16": (["*fp16:16", "*fp16:16", "*fp32"], dict(PREC="tf32", ACC_INT=False)),
    "bf16": (["*bf16:16", "*bf16:16", "*fp32"], dict(PREC="tf32", ACC_INT=False)),
    "tf32": (["*fp32:16", "*fp32:16", "*fp32"], dict(PREC="tf32", ACC_INT=False)),
    "int8": (["*i8:16", "*i8:16", "*i32"], dict(PREC="tf32", ACC_INT=True)),
    "ieee": (["*fp32", "*fp32", "*fp32"], dict(PREC="ieee", ACC_INT=False)),
}
MMA_TEXT = {"fp16": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
            "bf16": "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
            "tf32": "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
            "int8": "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32"}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", sorted(DOT_CASES))
def test_dot_ptx(case, arch):
    sig, kw = DOT_CASES[case]
    m, n, k = (32, 32, 32) if case == "ieee" else (64, 64, 64)
    c, ptx = _ptx(dot_k, sig, arch, M=m, N=n, K=k, LOOP=2, **kw)
    if case == "ieee":  # FMA: 8 results per thread, K/2 fma each per (maybe unrolled) step
        assert "mma.sync" not in ptx
        assert count(ptx, r"fma\.rn\.f32") in (8 * k // 2, 8 * k)
        return
    kin = {"fp16": 16, "bf16": 16, "tf32": 8, "int8": 32}[case]
    if arch >= 90 and case in ("fp16", "bf16", "tf32"):  # Hopper: wgmma (test_cuda_wgmma.py)
        e = {"tf32": "tf32"}.get(case, case.replace("fp", "f"))
        # one warp group, m64n64k16 (k8 for tf32): K/kin per (maybe unrolled) K step of 32
        assert count(ptx, re.escape(f"wgmma.mma_async.sync.aligned.m64n64k{kin}.f32.{e}.{e}")) \
            in (k // 2 // kin, k // kin)
        assert "mma.sync" not in ptx and "ldmatrix" not in ptx
        assert "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], " \
               f"instrShape = [16, 64, {kin}]}}>" in c.asm["ttgir"]
        return
    # per warp (2x2 warps, 32x32 warp tiles): 2 x 4 tiles x K/kin, the K loop not unrolled
    assert count(ptx, re.escape(MMA_TEXT[case])) in (2 * 4 * (k // 2) // kin,
                                                    2 * 4 * k // kin)
    ttgir = c.asm["ttgir"]
    assert "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], " \
           "instrShape = [16, 8]}>" in ttgir
    # the K loop is software-pipelined (num_stages=3): two 2-slot buffers (mma.sync reads
    # its operands into registers: num_stages - 1 slots, as Triton) filled by async copies
    # (two prologue stages + one in the loop per operand), read by local_load
    assert ttgir.count("ttg.local_alloc") == 2 and ttgir.count("ttg.local_load") == 2
    assert "!ttg.memdesc<2x64x32x" in ttgir and ttgir.count('ttg.async_wait') == 2
    acc = c.extra["shared_accesses"]
    # the loop reads its slots, then refills them: prologue copies, loads, the loop's copies
    assert [a["op"].split(" ")[0] for a in acc] == \
        ["ttg.async_copy_global_to_local"] * 4 + ["ttg.local_load"] * 2 + \
        ["ttg.async_copy_global_to_local"] * 2 + \
        ["ttg.convert_layout"] * 2  # the epilogue's #mma -> #blocked, through swizzled smem
    assert all(a["conflict_degree"] >= 1.0 and a["wavefronts"] > 0 for a in acc)
    if case in ("fp16", "bf16"):
        assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
        assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
        assert [a["conflict_degree"] for a in acc if "ldmatrix" in a["op"]] == [1.0, 1.0]


def test_dot_smaller_than_the_mma_tile_takes_mma():
    """N = 4 < 8: Triton 3.6's MMA v2 has no minimum tile, so the columns repeat inside
    ``mma.m16n8k16`` (one per warp tile and K step) instead of taking the FMA path."""
    c, ptx = _ptx(dot_k, ["*fp16", "*fp16", "*fp32"], 80, M=16, N=4, K=16, LOOP=1,
                  PREC="tf32", ACC_INT=False)
    assert count(ptx, re.escape(MMA_TEXT["fp16"])) >= 1 and "fma.rn.f32" not in ptx
    assert "#ttg.dot_op<{opIdx = 0, parent = #mma" in c.asm["ttgir"]


# on the GPU ------------------------------------------------------------------------------
def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(a)


def _sync():
    from workbench.backends import cuda_driver
    cuda_driver.synchronize()


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["add", "max", "min", "and", "or", "xor", "xchg"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_atomics_gpu(kind, dtype):
    if dtype == np.float32 and kind in ("and", "or", "xor"):
        pytest.skip("integer op")
    rng = np.random.default_rng()
    n = 1000
    x = (rng.standard_normal(n) * 100).astype(dtype)
    init = (rng.standard_normal(n) * 100).astype(dtype)
    dx, dout, dold = _dev(x), _dev(init.copy()), _dev(np.full(n, np.nan, np.float32).view(dtype))
    atomics_k[(n + 127) // 128,](dx, dout, dold, n, KIND=kind, BLOCK=128)
    _sync()
    out, old = dout.to_numpy(), dold.to_numpy()
    if kind == "xchg":
        np.testing.assert_array_equal(out, x)
        np.testing.assert_array_equal(old, init)
        return
    want = init.copy()
    fn = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    for j in range(5):
        want[j] = fn.reduce(np.concatenate([[init[j]], x[j::5]]))
    if dtype == np.float32 and kind == "add":
        np.testing.assert_allclose(out[:5], want[:5], rtol=1e-4, atol=1e-2)
    else:
        np.testing.assert_array_equal(out[:5], want[:5])
    np.testing.assert_array_equal(out[5:], init[5:])
    assert not np.isnan(old.astype(np.float64)).any()


@pytest.mark.gpu
def test_atomic_cas_and_scalar_gpu():
    n = 64
    dlock, dout = _dev(np.zeros(1, np.int32)), _dev(np.full(n, -7, np.int32))
    for _ in range(1):
        cas_k[(n,)](dlock, dout)
    _sync()
    old = dout.to_numpy()
    assert dlock.to_numpy()[0] in range(1, n + 1) and (old >= 0).all()
    vals = np.random.default_rng().standard_normal(n).astype(np.float32)
    dp, dv, dold = _dev(np.zeros(1, np.float32)), _dev(vals), _dev(np.full(n, np.nan, np.float32))
    scalar_add_k[(n,)](dp, dv, dold)
    _sync()
    np.testing.assert_allclose(dp.to_numpy()[0], vals.sum(), rtol=1e-4, atol=1e-4)
    assert not np.isnan(dold.to_numpy()).any()


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,axis,rev,prod", [(32, 64, 1, False, False), (32, 64, 1, True, False),
                                               (32, 64, 0, False, False), (64, 16, 0, True, False),
                                               (4, 256, 1, False, False), (256, 4, 0, False, False),
                                               (16, 32, 1, False, True)])
def test_scan_gpu(m, n, axis, rev, prod):
    rng = np.random.default_rng()
    x = rng.integers(-3, 4, (m, n)).astype(np.float32) if not prod else \
        rng.choice([-1.0, 1.0, 2.0, 0.5], (m, n)).astype(np.float32)
    dx, do = _dev(x), _dev(np.full((m, n), np.nan, np.float32))
    scan_k[(1,)](dx, do, M=m, N=n, AXIS=axis, REV=rev, PROD=prod)
    _sync()
    xs = np.flip(x, axis) if rev else x
    want = (np.cumprod if prod else np.cumsum)(xs, axis=axis)
    want = np.flip(want, axis) if rev else want
    np.testing.assert_array_equal(do.to_numpy(), want)


@pytest.mark.gpu
def test_associative_scan_two_operands_gpu():
    n = 1024
    x = np.random.default_rng().standard_normal(n).astype(np.float32)
    dx, dv, di = _dev(x), _dev(np.full(n, np.nan, np.float32)), _dev(np.full(n, -1, np.int32))
    running_argmax_k[(1,)](dx, dv, di, N=n)
    _sync()
    np.testing.assert_array_equal(dv.to_numpy(), np.maximum.accumulate(x))
    idx = np.array([int(np.argmax(x[:i + 1])) for i in range(n)])
    np.testing.assert_array_equal(di.to_numpy(), idx)


@pytest.mark.gpu
def test_math_gpu():
    import math
    rng = np.random.default_rng()
    n = 5000
    x = (rng.standard_normal(n) * 2).astype(np.float32)
    d = rng.uniform(-700, 700, n)
    d[:4] = [0.0, 1e-310, -745.5, 709.7]
    outs = [_dev(np.full(n, np.nan, t)) for t in (np.float32, np.float64, np.float64)]
    math_k[((n + 127) // 128,)](_dev(x), _dev(d), *outs, n, BLOCK=128)
    _sync()
    erf, ex, lg = (o.to_numpy() for o in outs)
    np.testing.assert_allclose(erf, [math.erf(v) for v in x], rtol=0, atol=5e-7)
    np.testing.assert_allclose(ex, np.exp(d), rtol=2e-15, atol=0)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(lg, np.log(np.abs(d)), rtol=2e-15, atol=1e-300)


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(DOT_CASES))
@pytest.mark.parametrize("mnk,loop", [((64, 64, 64), 2), ((128, 64, 32), 1), ((16, 8, 16), 1)])
def test_dot_gpu(case, mnk, loop):
    m, n, k = mnk
    if case == "int8" and k < 32:
        k = 32
    rng = np.random.default_rng()
    sig, kw = DOT_CASES[case]
    if case == "int8":
        a, b = (rng.integers(-128, 128, s).astype(np.int8) for s in ((m, k), (k, n)))
        want = a.astype(np.int64) @ b.astype(np.int64)
        out = np.full((m, n), -99, np.int32)
    else:
        a, b = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n)))
        if case == "fp16":
            a, b = a.astype(np.float16), b.astype(np.float16)
        want = a.astype(np.float64) @ b.astype(np.float64)
        out = np.full((m, n), np.nan, np.float32)
    if case == "bf16":
        import ml_dtypes
        a, b = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
        want = a.astype(np.float64) @ b.astype(np.float64)
    da, db, dc = _dev(a), _dev(b), _dev(out)
    dot_k[(1,)](da, db, dc, M=m, N=n, K=k, LOOP=loop, **kw)
    _sync()
    got = dc.to_numpy()
    if case == "int8":
        np.testing.assert_array_equal(got, want)
    else:
        tol = {"tf32": 2e-2, "ieee": 1e-4}.get(case, 1e-3) * np.sqrt(k)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.gpu
def test_print_and_assert_gpu(tmp_path):
    """Run in a subprocess: printf goes to the process's stdout and an assert kills the
    CUDA context."""
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(__import__('pathlib').Path(__file__).parent)!r})
        import numpy as np
        from test_cuda_language import print_k, assert_k, _dev, _sync
        x = np.arange(8, dtype=np.float32) * 0.5
        print_k[(1,)](_dev(x), 5, BLOCK=8, num_warps=1)
        _sync()
        sys.stdout.flush()
        y = np.zeros(128, np.float32); y[77] = 1000.0
        assert_k[(1,)](_dev(y), BLOCK=128)
        try:
            _sync()
            print("NO ASSERT")
        except Exception as e:
            print("ASSERT", e)
    """))
    import os
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=300)
    out = r.stdout + r.stderr
    for i in range(8):
        val = 0.5 * i if i < 5 else 0.0
        assert f"pid (0, 0, 0) idx ({i}) x= {val:f}" in out, out
    assert "ASSERT" in out and "NO ASSERT" not in out, out
    assert "x must stay below 100" in out, out
