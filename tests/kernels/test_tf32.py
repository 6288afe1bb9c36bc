"""``tl.dot`` on fp32 tiles with the default ``input_precision="tf32"``: each operand keeps its
10 high mantissa bits (the 13 low bits are dropped, round toward zero), as the tensor cores
of sm_80 and sm_90 do with the raw fp32 registers Triton 3.6 passes them; ``"ieee"`` keeps
full fp32. Values are chosen so that rounding to nearest would give another answer."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@wb.jit
def f32_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
            PREC: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision=PREC))


def truncated(x: np.ndarray) -> np.ndarray:
    """The TF32 value the tensor core reads: the 13 low mantissa bits cleared."""
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def test_each_operand_is_truncated_not_rounded(backend):
    """a[i, 0] * 1.0 gives a[i, 0] as TF32 reads it: 1 + 2**-11 + 2**-12 is 1.0 (rounding to
    nearest would give 1 + 2**-10), -e is -2.7167969 (not -2.71875)."""
    M = N = K = 16
    vals = np.array([1 + 2**-11 + 2**-12, -(1 + 2**-11 + 2**-12), 1 + 2**-10 + 2**-11,
                     -2.718281828, 3.14159265, 1e-3, -7e5, 2.0], np.float32)
    a = np.zeros((M, K), np.float32)
    b = np.zeros((K, N), np.float32)
    a[:len(vals), 0] = vals
    b[0, :] = 1.0
    for prec, want in (("tf32", truncated(vals)), ("ieee", vals)):
        c = np.full((M, N), np.nan, np.float32)
        f32_dot[(1,)](a, b, c, M=M, N=N, K=K, PREC=prec)
        np.testing.assert_array_equal(c[:len(vals), 0], want)
        np.testing.assert_array_equal(c[len(vals):, :], 0.0)
    assert truncated(vals)[0] == 1.0 and truncated(vals)[3] == np.float32(-2.7167969)


def test_random_tiles_match_the_truncated_product(backend, rng):
    M, N, K = 32, 32, 64
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    f32_dot[(1,)](a, b, c, M=M, N=N, K=K, PREC="tf32")
    ref = truncated(a).astype(np.float64) @ truncated(b).astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
    rounded_err = np.abs(a.astype(np.float64) @ b.astype(np.float64) - ref).max()
    assert np.abs(c - ref).max() < rounded_err / 10  # the emulation is not plain fp32


def test_ptx_passes_raw_registers_like_triton():
    """No ``cvt.rna.tf32.f32``: the fp32 registers go to ``mma.sync`` (sm_80) and ``wgmma``
    (sm_90) as they are, as in Triton 3.6's PTX for the same kernel."""
    for target, instr in (("cuda:80", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
                          ("cuda:90", "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32")):
        ptx = wb.compile(f32_dot, "*fp32:16", "*fp32:16", "*fp32:16", target=target,
                         M=64, N=64, K=32, PREC="tf32").asm["ptx"]
        assert instr in ptx, target
        assert "cvt.rna.tf32" not in ptx, target


@pytest.mark.gpu
def test_gpu_tensor_core_agrees_with_the_emulation(rng):
    """On the GPU (mma.sync and wgmma) the product equals the truncated-operand product to
    the accumulation order, and the crafted values come out exactly truncated."""
    torch = pytest.importorskip("torch", reason="CUDA tensors")
    for M, warps in ((64, 4), (16, 1)):
        N, K = M, 64
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        a[0, :] = 0.0
        a[0, 0] = 1 + 2**-11 + 2**-12
        c = torch.full((M, N), float("nan"), device="cuda")
        f32_dot[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, M=M, N=N, K=K,
                      PREC="tf32", num_warps=warps)
        got = c.cpu().numpy()
        ref = truncated(a).astype(np.float64) @ truncated(b).astype(np.float64)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got[0, :], truncated(b[0, :]))
