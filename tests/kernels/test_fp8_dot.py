"""``tl.dot`` on 8-bit float tiles: any two fp8 dtypes, fp32 or fp16 results, an accumulator,
``max_num_imprecise_acc``; float8e4b15 upcasts to fp16 first (as in Triton). Compared with
numpy on the exact fp8 values (every product of two fp8 values is exact in fp32)."""
import numpy as np
import pytest
from fp8_ref import ML

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@pytest.fixture
def rng():
    """A generator with a fresh seed, printed so a failing run can be repeated."""
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


@wb.jit
def fp8_matmul(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
               OUT: tl.constexpr, IMPRECISE: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, out_dtype=OUT, max_num_imprecise_acc=IMPRECISE)
    c = tl.dot(a, b, c, out_dtype=OUT)  # with an accumulator: 2 * a @ b
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


def _fp8(rng, shape, name):
    """Random fp8 values (finite, |x| <= 8 so fp16 sums stay representable)."""
    x = rng.uniform(-8, 8, shape).astype(np.float32)
    return x.astype(ML[name])


@pytest.mark.parametrize("na, nb, out", [("float8e4nv", "float8e4nv", "float32"),
                                         ("float8e5", "float8e5", "float16"),
                                         ("float8e4nv", "float8e5", "float32"),
                                         ("float8e4b8", "float8e5b16", "float32")])
def test_fp8_dot_matches_numpy(backend, rng, na, nb, out):
    M, N, K = 16, 16, 32
    a, b = _fp8(rng, (M, K), na), _fp8(rng, (K, N), nb)
    c = np.full((M, N), np.nan, out)
    fp8_matmul[(1,)](a, b, c, M=M, N=N, K=K, OUT=getattr(tl, out), IMPRECISE=32)
    ref = 2 * (a.astype(np.float64) @ b.astype(np.float64))
    tol = 1e-5 if out == "float32" else 4e-3
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=tol, atol=tol * 32)


def test_float8e4b15_dot_upcasts_to_fp16(backend, rng):
    M, N, K = 16, 16, 32
    # e4b15 codes with |x| < 1.875: exponent field 0..15, 3 mantissa bits
    ca = rng.integers(0, 256, (M, K), dtype=np.uint8)
    cb = rng.integers(0, 256, (K, N), dtype=np.uint8)
    c = np.zeros((M, N), np.float32)
    fp8_matmul[(1,)](wb.reinterpret(ca, tl.float8e4b15), wb.reinterpret(cb, tl.float8e4b15), c,
                     M=M, N=N, K=K, OUT=tl.float32, IMPRECISE=None)
    from fp8_ref import e4b15_value
    ref = 2 * (e4b15_value(ca) @ e4b15_value(cb))
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)


@wb.jit
def mixed_dot(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 32 + r[None, :])
    tl.store(c_ptr + r[:, None] * 32 + r[None, :], tl.dot(a, b))


def test_fp8_with_fp16_is_refused_at_the_line(backend):
    with pytest.raises(CompilationError) as info:
        mixed_dot[(1,)](np.zeros((32, 32), ML["float8e5"]), np.zeros((32, 32), np.float16),
                        np.zeros((32, 32), np.float32))
    assert "tl.dot(a, b)" in str(info.value) and "8-bit float partner" in str(info.value)


def test_max_num_imprecise_acc_above_k_is_refused(backend, rng):
    a = _fp8(rng, (16, 32), "float8e4nv")
    with pytest.raises(CompilationError, match="max_num_imprecise_acc"):
        fp8_matmul[(1,)](a, _fp8(rng, (32, 16), "float8e4nv"), np.zeros((16, 16), np.float32),
                         M=16, N=16, K=32, OUT=tl.float32, IMPRECISE=64)


def test_ttir_dot_on_fp8_prints_as_triton():
    c = wb.compile(fp8_matmul, "*fp8e4nv", "*fp8e5", "*fp32", M=16, N=16, K=32, OUT=tl.float32,
                   IMPRECISE=32, target="interpreter")
    line = next(x for x in c.asm["ttir"].splitlines() if "maxNumImpreciseAcc" in x)
    assert "tt.dot" in line and "maxNumImpreciseAcc = 32" in line
    assert "tensor<16x32xf8E4M3FN> * tensor<32x16xf8E5M2> -> tensor<16x16xf32>" in line


@pytest.mark.parametrize("name, arch, refused", [
    ("float8e5", 80, False), ("float8e4nv", 80, True), ("float8e4nv", 90, False),
    ("float8e4b8", 90, True), ("float8e5b16", 90, True)])
def test_cuda_targets_take_triton_s_fp8_dot_formats(name, arch, refused):
    args = (np.zeros((16, 32), ML[name]), np.zeros((32, 16), ML[name]),
            np.zeros((16, 16), np.float32))

    def compile_():
        return wb.compile(fp8_matmul, *args, target=f"cuda:{arch}", M=16, N=16, K=32,
                          OUT=tl.float32, IMPRECISE=0)
    if not refused:
        assert ".entry" in compile_().asm["ptx"]
        return
    with pytest.raises(CompilationError, match=f"not supported in this architecture "
                                               f"\\(sm_{arch}\\)") as info:
        compile_()
    assert "def fp8_matmul(a_ptr" in str(info.value)   # the pointer parameters: at the def
    assert "not supported in this architecture" in str(info.value.__cause__)
