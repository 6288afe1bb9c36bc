"""The CUDA backend's PTX spells what Triton 3.6's own checks look for (qualifier order of
atomics, cache-eviction hints, ...), compiled for cuda:90 without a GPU (ptxas assembles the
text where it is installed), and the same kernels launched on a GPU against numpy."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@wb.jit
def scalar_atomic_k(X, Z, OP: tl.constexpr, SEM: tl.constexpr):
    pid = tl.program_id(0)
    x = tl.load(X + pid)
    if OP == "max":
        tl.atomic_max(Z, x, sem=SEM)
    elif OP == "min":
        tl.atomic_min(Z, x, sem=SEM)
    else:
        tl.atomic_add(Z, x, sem=SEM)


@wb.jit
def tile_atomic_k(X, Z, OLD, n, SEM: tl.constexpr, SCOPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    old = tl.atomic_add(Z + offs, tl.load(X + offs, mask=m), mask=m, sem=SEM, scope=SCOPE)
    tl.store(OLD + offs, old, mask=m)


@wb.jit
def cas_k(L, OLD, SEM: tl.constexpr):
    tl.store(OLD + tl.program_id(0), tl.atomic_cas(L, 0, 1, sem=SEM))


def _atom_quals(ptx: str) -> list[str]:
    """The ``atom`` instructions' names up to the operation (``atom.global.gpu.acq_rel``)."""
    return re.findall(r"\batom(?:\.[a-z_]+)*?\.(?:global)(?:\.[a-z_]+)*?(?=\.(?:add|max|min|"
                      r"cas|exch|and|or|xor)\b)", ptx)


@pytest.mark.parametrize("op,dtype,sem", [("max", "*i32", "release"), ("min", "*fp64", None),
                                          ("add", "*fp32", "relaxed"), ("max", "*i32", "acquire")])
def test_rmw_atomics_spell_scope_then_semantics(op, dtype, sem):
    """Triton's suite asserts ``atom.global.gpu.<sem>`` for read-modify-write atomics."""
    c = wb.compile(scalar_atomic_k, dtype, dtype, target="cuda:90", OP=op, SEM=sem)
    want = f"atom.global.gpu.{sem or 'acq_rel'}."
    quals = _atom_quals(c.asm["ptx"])
    assert quals and all(q + "." == want for q in quals), quals


@pytest.mark.parametrize("sem,scope", [("relaxed", "cta"), ("release", "sys")])
def test_tile_atomics_keep_mask_and_scope(sem, scope):
    c = wb.compile(tile_atomic_k, "*fp32", "*fp32", "*fp32", "i32", target="cuda:90", SEM=sem,
                   SCOPE=scope, BLOCK=256)
    ptx = c.asm["ptx"]
    lines = [ln for ln in ptx.splitlines() if f"atom.global.{scope}.{sem}.add.f32" in ln]
    assert lines and all(ln.strip().startswith("@%p") for ln in lines), lines


@pytest.mark.parametrize("sem", [None, "acquire"])
def test_cas_spells_semantics_then_scope(sem):
    """Triton's compare-and-swap text is ``atom.global.<sem>.gpu.cas`` (its suite asserts
    ``atom.global.<sem>``); on sm_80 the bf16 add loop is ``atom.<sem>.gpu.global.cas``."""
    c = wb.compile(cas_k, "*i32", "*i32", target="cuda:90", SEM=sem)
    assert f"atom.global.{sem or 'acq_rel'}.gpu.cas.b32" in c.asm["ptx"]
    c = wb.compile(tile_atomic_k, "*bf16", "*bf16", "*bf16", "i32", target="cuda:80",
                   SEM="release", SCOPE="gpu", BLOCK=128)
    assert "atom.release.gpu.global.cas.b16" in c.asm["ptx"]


def test_atomic_text_matches_triton():
    """Real Triton's PTX for the same scalar atomic carries the same qualifiers."""
    triton = pytest.importorskip("triton", reason="real Triton 3.6 is the oracle for the text")
    import triton.language as ttl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def k(X, Z):
        ttl.atomic_max(Z, ttl.load(X + ttl.program_id(0)), sem="release")

    theirs = triton.compile(ASTSource(k, signature={"X": "*i32", "Z": "*i32"}, constexprs={}),
                            target=GPUTarget("cuda", 90, 32)).asm["ptx"]
    ours = wb.compile(scalar_atomic_k, "*i32", "*i32", target="cuda:90", OP="max",
                      SEM="release").asm["ptx"]
    assert set(_atom_quals(theirs)) == set(_atom_quals(ours)) == {"atom.global.gpu.release"}


@pytest.mark.gpu
@pytest.mark.parametrize("op,dtype", [("max", np.int32), ("min", np.float64),
                                      ("add", np.float32)])
@pytest.mark.parametrize("sem", [None, "acquire", "release", "relaxed"])
def test_scalar_atomics_on_gpu(op, dtype, sem):
    import workbench.cuda as wcuda
    rng = np.random.default_rng()
    x = (rng.standard_normal(5) * 100).astype(dtype)
    ref = {"max": np.max, "min": np.min, "add": np.sum}[op](x)
    start = {"max": np.iinfo(np.int32).min if dtype == np.int32 else -np.inf,
             "min": np.inf, "add": 0}[op]
    z = wcuda.to_device(np.array([start], dtype))
    scalar_atomic_k[(5,)](wcuda.to_device(x), z, OP=op, SEM=sem)
    np.testing.assert_allclose(z.to_numpy()[0], ref, rtol=1e-6, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("sem,scope", [("relaxed", "cta"), ("release", "sys")])
def test_tile_atomics_on_gpu(sem, scope):
    import workbench.cuda as wcuda
    rng = np.random.default_rng()
    n = 200
    x = rng.standard_normal(256).astype(np.float32)
    z0 = rng.standard_normal(256).astype(np.float32)
    z, old = wcuda.to_device(z0), wcuda.to_device(np.full(256, np.nan, np.float32))
    tile_atomic_k[(1,)](wcuda.to_device(x), z, old, n, SEM=sem, SCOPE=scope, BLOCK=256)
    np.testing.assert_array_equal(old.to_numpy()[:n], z0[:n])
    np.testing.assert_allclose(z.to_numpy()[:n], z0[:n] + x[:n], rtol=1e-6)
    np.testing.assert_array_equal(z.to_numpy()[n:], z0[n:])


@wb.jit
def hinted_copy_k(dst, src, n, LC: tl.constexpr, LE: tl.constexpr, SC: tl.constexpr,
                  SE: tl.constexpr):
    offs = tl.arange(0, 512)
    x = tl.load(src + offs, offs < n, cache_modifier=LC, eviction_policy=LE)
    tl.store(dst + offs, x * 2.0, offs < n, cache_modifier=SC, eviction_policy=SE)


HINTS = [("", "", "", "evict_first"), ("", "evict_last", "", ""),
         (".cg", "evict_last", ".cs", "evict_first"), (".ca", "", ".wt", "")]


@pytest.mark.parametrize("lc,le,sc,se", HINTS)
def test_cache_and_eviction_hints_in_ptx(lc, le, sc, se):
    """``L1::evict_*`` with an L2 policy from ``createpolicy`` (Triton's text); with a cache
    operator the L1 priority is left out (PTX has no form with both) and the L2 hint stays."""
    c = wb.compile(hinted_copy_k, "*fp32", "*fp32", "i32", target="cuda:90", LC=lc, LE=le,
                   SC=sc, SE=se)
    ptx = c.asm["ptx"]
    ld = [ln for ln in ptx.splitlines() if "ld.global" in ln]
    st = [ln for ln in ptx.splitlines() if "st.global" in ln]
    for lines, cop, ev in ((ld, lc, le), (st, sc, se)):
        want = "global" + cop + ("" if not ev else (".L2::cache_hint" if cop else
                                                     f".L1::{ev}.L2::cache_hint")) + ".b32"
        assert lines and all(want in ln for ln in lines), (want, lines)
        if ev:
            assert f"createpolicy.fractional.L2::{ev}.b64" in ptx
    others = {"evict_first", "evict_last"} - {le, se}
    assert not any(o in ptx for o in others)


@pytest.mark.gpu
@pytest.mark.parametrize("lc,le,sc,se", HINTS)
def test_hinted_copy_on_gpu(lc, le, sc, se):
    import workbench.cuda as wcuda
    rng = np.random.default_rng()
    n = 301
    x = rng.standard_normal(512).astype(np.float32)
    out = wcuda.to_device(np.full(512, np.nan, np.float32))
    hinted_copy_k[(1,)](out, wcuda.to_device(x), n, LC=lc, LE=le, SC=sc, SE=se)  # dst, src
    got = out.to_numpy()
    np.testing.assert_array_equal(got[:n], x[:n] * 2.0)
    assert np.isnan(got[n:]).all()


@wb.jit
def small_dot_k(X, Y, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                OUT: tl.constexpr):
    om, on, ok = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(X + om[:, None] * K + ok[None, :])
    y = tl.load(Y + ok[:, None] * N + on[None, :])
    tl.store(Z + om[:, None] * N + on[None, :], tl.dot(x, y, out_dtype=OUT))


@pytest.mark.parametrize("arch", [80, 90])
def test_fp16_accumulator_dot_uses_mma(arch):
    """``out_dtype=tl.float16`` takes the tensor cores with an f16 accumulator (Triton's
    suite looks for ``...k16.f16.f16.f16``), not the FMA path."""
    c = wb.compile(small_dot_k, "*fp16", "*fp16", "*fp16", target=f"cuda:{arch}", M=64, N=64,
                   K=32, OUT=tl.float16)
    ptx = c.asm["ptx"]
    assert "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16" in ptx
    assert re.search(r"[mma|wgmma.mma_async].sync.aligned.m\d+n\d+k16(?:.row.col)?.f16.f16.f16",
                     ptx)
    assert "fma.rn.f32" not in ptx


def test_int8_dot_saturates_as_triton():
    c = wb.compile(small_dot_k, "*i8", "*i8", "*i32", target="cuda:90", M=64, N=64, K=32,
                   OUT=tl.int32)
    assert "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32" in c.asm["ptx"]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,out,m,n,k", [(np.float16, "fp16", 64, 64, 32),
                                             (np.float16, "fp16", 128, 128, 64),
                                             (np.int8, "i32", 64, 64, 64)])
def test_small_dots_on_gpu(dtype, out, m, n, k):
    import workbench.cuda as wcuda
    rng = np.random.default_rng()
    if dtype == np.int8:
        x = rng.integers(-128, 128, (m, k)).astype(np.int8)
        y = rng.integers(-128, 128, (k, n)).astype(np.int8)
        ref = x.astype(np.int64) @ y.astype(np.int64)
        odt, otl = np.int32, tl.int32
    else:
        x = (rng.standard_normal((m, k)) * 0.3).astype(dtype)
        y = (rng.standard_normal((k, n)) * 0.3).astype(dtype)
        ref = x.astype(np.float32) @ y.astype(np.float32)
        odt, otl = np.float16, tl.float16
    z = wcuda.to_device(np.zeros((m, n), odt))
    small_dot_k[(1,)](wcuda.to_device(x), wcuda.to_device(y), z, M=m, N=n, K=k, OUT=otl)
    if dtype == np.int8:
        np.testing.assert_array_equal(z.to_numpy(), ref)
    else:
        np.testing.assert_allclose(z.to_numpy().astype(np.float32), ref, rtol=1e-2, atol=2e-2)


@wb.jit
def multidim_dot_k(X, Y, Z, RANK: tl.constexpr, TRANS_A: tl.constexpr):
    x = tl.load(X + tl.arange(0, 256 << RANK)).reshape([2] * (RANK - 2) + [32, 32])
    y = tl.load(Y + tl.arange(0, 256 << RANK)).reshape([2] * (RANK - 2) + [32, 32])
    if TRANS_A:
        x = tl.trans(x)
    tl.store(Z + tl.arange(0, 256 << RANK), tl.dot(x, y).reshape([256 << RANK]))


def _multidim_case(rank, trans_a):
    rng = np.random.default_rng()
    shape = (2,) * (rank - 2) + (32, 32)
    a = rng.integers(-4, 5, shape).astype(np.float16)
    b = rng.integers(-4, 5, shape).astype(np.float16)
    ref = (np.swapaxes(a, -1, -2) if trans_a else a).astype(np.float32) @ b.astype(np.float32)
    return a, b, ref


@pytest.mark.parametrize("rank,trans_a", [(4, True)])
def test_dot_of_rank_above_three_folds_the_batch(rank, trans_a):
    """Rank >= 4: the batch dims are folded into one (tt.reshape), as Triton's ``tl.dot``."""
    a, b, ref = _multidim_case(rank, trans_a)
    c = np.full(ref.shape, np.nan, np.float32)
    multidim_dot_k[(1,)](a, b, c, rank, trans_a)
    np.testing.assert_array_equal(c, ref)
    ttir = wb.compile(multidim_dot_k, "*fp16", "*fp16", "*fp32", target="cuda:90", RANK=rank,
                      TRANS_A=trans_a).asm["ttir"]
    assert f"tensor<{2 ** (rank - 2)}x32x32xf32> -> tensor<{'2x' * (rank - 2)}32x32xf32>" in ttir


@pytest.mark.gpu
@pytest.mark.parametrize("rank,trans_a", [(4, False), (6, True)])
def test_multidim_dot_on_gpu(rank, trans_a):
    import workbench.cuda as wcuda
    a, b, ref = _multidim_case(rank, trans_a)
    c = wcuda.to_device(np.full(ref.shape, np.nan, np.float32))
    multidim_dot_k[(1,)](wcuda.to_device(a), wcuda.to_device(b), c, rank, trans_a)
    np.testing.assert_allclose(c.to_numpy(), ref, rtol=1e-3, atol=1e-2)
