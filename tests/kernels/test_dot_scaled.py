"""``tl.dot_scaled`` (microscaled matmul) against a numpy model of Triton's sm_90 semantics:
operands widened to bf16 (fp16 when an operand is fp16; e2m1 unpacked low nibble first),
times ``2**(scale - 127)`` per 32 elements of K (scale 0 gives 0, 255 gives NaN, as Triton's
bf16 bits do), products rounded, fp32 accumulation. Fresh random data each run; ttir checked
against Triton's text."""
import re

import numpy as np
import pytest
from fp8_ref import ML, ml_dtypes

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
BF16 = ml_dtypes.bfloat16


@pytest.fixture
def rng():
    """A generator with a fresh seed, printed so a failing run can be repeated."""
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


@wb.jit
def scaled_mm(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
              K: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr, SCALE_A: tl.constexpr,
              SCALE_B: tl.constexpr, KPACK_B: tl.constexpr):
    PA: tl.constexpr = 2 if FA == "e2m1" else 1
    PB: tl.constexpr = 2 if FB == "e2m1" else 1
    KB: tl.constexpr = K // PB if KPACK_B else K
    NB: tl.constexpr = N if KPACK_B else N // PB
    rm, ka = tl.arange(0, M), tl.arange(0, K // PA)
    kb, nb = tl.arange(0, KB), tl.arange(0, NB)
    ks, rn = tl.arange(0, K // 32), tl.arange(0, N)
    a = tl.load(a_ptr + rm[:, None] * (K // PA) + ka[None, :])
    b = tl.load(b_ptr + kb[:, None] * NB + nb[None, :])
    sa = None
    if SCALE_A:
        sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + ks[None, :])
    sb = None
    if SCALE_B:
        sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + ks[None, :])
    acc = tl.full((M, N), 1.0, tl.float32)
    c = tl.dot_scaled(a, sa, FA, b, sb, FB, acc=acc, rhs_k_pack=KPACK_B)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


def _operand(rng, fmt, rows, cols, pack_axis):
    """(array passed to the kernel, its bf16-exact float64 values of shape rows x cols)."""
    if fmt == "e2m1":
        codes = rng.integers(0, 16, (rows, cols))
        vals = E2M1[codes]
        lo, hi = (codes[:, 0::2], codes[:, 1::2]) if pack_axis == 1 else \
            (codes[0::2, :], codes[1::2, :])
        return (lo | (hi << 4)).astype(np.uint8), vals
    if fmt in ("e4m3", "e5m2"):
        x = rng.uniform(-4, 4, (rows, cols)).astype(ML["float8e4nv" if fmt == "e4m3"
                                                      else "float8e5"])
        return x.view(np.uint8), x.astype(np.float64)
    x = rng.uniform(-4, 4, (rows, cols)).astype(np.float16 if fmt == "fp16" else BF16)
    return x, x.astype(np.float64)


def _scale(rng, rows, groups):
    s = rng.integers(120, 135, (rows, groups)).astype(np.uint8)
    return s, np.exp2(s.astype(np.float64) - 127)


def _scaled(vals, s_vals, k_axis, ct):
    """Scaled operand values rounded to the compute type ``ct`` (bf16, or fp16 when an
    operand is fp16, as Triton decomposes)."""
    rep = np.repeat(s_vals, 32, axis=1)
    rep = rep if k_axis == 1 else rep.T
    return (vals * rep).astype(ct).astype(np.float64)


CASES = [("e2m1", "e2m1", True, True, True), ("e4m3", "e5m2", True, True, True),
         ("e2m1", "e4m3", True, True, True), ("bf16", "e2m1", False, True, True),
         ("e5m2", "e2m1", True, True, False), ("fp16", "bf16", False, False, True),
         ("e2m1", "fp16", True, False, True)]


@pytest.mark.parametrize("fa, fb, scale_a, scale_b, kpack_b", CASES)
def test_dot_scaled_matches_numpy(backend, rng, fa, fb, scale_a, scale_b, kpack_b):
    M, N, K = 16, 16, 64
    a, va = _operand(rng, fa, M, K, 1)
    b, vb = _operand(rng, fb, K, N, 0 if kpack_b else 1)
    sa, sva = _scale(rng, M, K // 32)
    sb, svb = _scale(rng, N, K // 32)
    ct = np.float16 if "fp16" in (fa, fb) else BF16
    if scale_a:
        va = _scaled(va, sva, 1, ct)
    if scale_b:
        vb = _scaled(vb, svb, 0, ct)
    c = np.full((M, N), np.nan, np.float32)
    scaled_mm[(1,)](a, sa, b, sb, c, M=M, N=N, K=K, FA=fa, FB=fb, SCALE_A=scale_a,
                    SCALE_B=scale_b, KPACK_B=kpack_b)
    # the operands are exact in the compute type; only the fp32 sum of K products rounds, so
    # the error is bounded by K * eps(fp32) * sum_k |a b| (a cancelling sum can be small)
    want = 1.0 + va.astype(np.float64) @ vb.astype(np.float64)
    bound = K * 2.0 ** -24 * (1.0 + np.abs(va).astype(np.float64) @ np.abs(vb))
    assert (np.abs(c - want) <= bound + 1e-6).all(), np.abs(c - want).max()


def test_scale_255_makes_its_group_nan(backend, rng):
    M, N, K = 16, 16, 64
    a, _ = _operand(rng, "e4m3", M, K, 1)
    b, _ = _operand(rng, "e4m3", K, N, 0)
    sa, _ = _scale(rng, M, 2)
    sb, _ = _scale(rng, N, 2)
    sa[3, 1] = 255
    c = np.zeros((M, N), np.float32)
    scaled_mm[(1,)](a, sa, b, sb, c, M=M, N=N, K=K, FA="e4m3", FB="e4m3", SCALE_A=True,
                    SCALE_B=True, KPACK_B=True)
    assert np.isnan(c[3]).all() and not np.isnan(np.delete(c, 3, axis=0)).any()


def test_bad_scale_shape_is_refused_at_the_line(backend):
    @wb.jit
    def bad(a_ptr, s_ptr, b_ptr, c_ptr):
        r = tl.arange(0, 32)
        a = tl.load(a_ptr + r[:, None] * 32 + r[None, :])
        b = tl.load(b_ptr + r[:, None] * 32 + r[None, :])
        s = tl.load(s_ptr + r)
        c = tl.dot_scaled(a, s, "e4m3", b, None, "e4m3")
        tl.store(c_ptr + r[:, None] * 32 + r[None, :], c)

    z8 = np.zeros((32, 32), np.uint8)
    with pytest.raises(CompilationError) as info:
        bad[(1,)](z8, np.zeros(32, np.uint8), z8, np.zeros((32, 32), np.float32))
    assert "lhs_scale must be a tensor of shape [32, 1]" in str(info.value)
    assert "tl.dot_scaled(a, s," in str(info.value)


@pytest.mark.parametrize("target", ["cuda:90", "cpu"])
def test_nvfp4_scales_name_the_blackwell_instruction(target):
    @wb.jit
    def nvfp4(a_ptr, s_ptr, b_ptr, c_ptr):
        r = tl.arange(0, 32)
        h = tl.arange(0, 16)
        k = tl.arange(0, 2)
        a = tl.load(a_ptr + r[:, None] * 16 + h[None, :])
        b = tl.load(b_ptr + h[:, None] * 32 + r[None, :])
        s = tl.load(s_ptr + r[:, None] * 2 + k[None, :])  # e4m3 scales, one per 16 values
        c = tl.dot_scaled(a, s, "e2m1", b, None, "e2m1")
        tl.store(c_ptr + r[:, None] * 32 + r[None, :], c)

    with pytest.raises(CompilationError) as info:
        wb.compile(nvfp4, "*u8", "*fp8e4nv", "*u8", "*fp32", target=target)
    msg = str(info.value)
    assert "tcgen05.mma" in msg and "sm_100" in msg and "Blackwell" in msg
    assert "tl.dot_scaled(a, s," in msg  # the user's line


def _dot_scaled_line(text):
    line = next(x for x in text.splitlines() if "tt.dot_scaled" in x)
    line = re.sub(r"%[\w.#]+", "%v", line.split(" loc(")[0].split("=", 1)[1])
    return line.strip()


@pytest.mark.parametrize("fa, fb", [("e2m1", "e4m3"), ("e4m3", "e5m2")])
def test_ttir_tt_dot_scaled_prints_as_triton(fa, fb):
    triton = pytest.importorskip("triton", reason="compares with real Triton's ttir")
    import triton.language as ttl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def ref(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, FA: ttl.constexpr, FB: ttl.constexpr):
        PA: ttl.constexpr = 2 if FA == "e2m1" else 1
        rm, ka, ks = ttl.arange(0, 32), ttl.arange(0, 64 // PA), ttl.arange(0, 2)
        a = ttl.load(a_ptr + rm[:, None] * (64 // PA) + ka[None, :])
        b = ttl.load(b_ptr + ttl.arange(0, 64)[:, None] * 32 + rm[None, :])
        sa = ttl.load(sa_ptr + rm[:, None] * 2 + ks[None, :])
        sb = ttl.load(sb_ptr + rm[:, None] * 2 + ks[None, :])
        ttl.store(c_ptr + rm[:, None] * 32 + rm[None, :], ttl.dot_scaled(a, sa, FA, b, sb, FB))

    sig = {"a_ptr": "*u8", "sa_ptr": "*u8", "b_ptr": "*u8", "sb_ptr": "*u8", "c_ptr": "*fp32",
           "FA": "constexpr", "FB": "constexpr"}
    want = triton.compile(ASTSource(ref, signature=sig, constexprs={"FA": fa, "FB": fb}),
                          target=GPUTarget("cuda", 90, 32)).asm["ttir"]
    got = wb.compile(scaled_mm, "*u8", "*u8", "*u8", "*u8", "*fp32", M=32, N=32, K=64, FA=fa,
                     FB=fb, SCALE_A=True, SCALE_B=True, KPACK_B=True,
                     target="interpreter").asm["ttir"]
    assert _dot_scaled_line(got).replace("%v lhs", "%v lhs") == \
        _dot_scaled_line(want)
