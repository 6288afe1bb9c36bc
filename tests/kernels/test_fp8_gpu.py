"""fp8 conversions, fp8 ``tl.dot`` and ``tl.dot_scaled`` on an NVIDIA GPU (torch CUDA
tensors; sm_90 takes the ``cvt.rn.satfinite`` path, sm_80 the integer one), against the same
references as the CPU tests. Skipped where no CUDA device is usable."""
import numpy as np
import pytest
from fp8_ref import ML, same_codes, saturating
from test_dot_scaled import _operand, _scale, _scaled, scaled_mm
from test_fp8 import down_up, upcast
from test_fp8_dot import fp8_matmul

import workbench.language as tl
from workbench.errors import CompilationError

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch", reason="CUDA tensors")
TORCH = {"float8e4nv": "float8_e4m3fn", "float8e5": "float8_e5m2",
         "float8e4b8": "float8_e4m3fnuz", "float8e5b16": "float8_e5m2fnuz"}
#: AMD's formats: a CUDA target refuses conversions to and from them, as Triton does
REFUSED = ("float8e4b8", "float8e5b16")


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


@pytest.mark.parametrize("name", list(ML))
@pytest.mark.parametrize("rounding", [None, "rtz"])
def test_narrowing_on_the_gpu(rng, name, rounding):
    n = 1024
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-22, 20, n)).astype(np.float32)
    x[:8] = [np.nan, np.inf, -np.inf, 1e6, -1e6, 0.0, -0.0, 464.0]
    xd = torch.from_numpy(x).cuda()
    y = torch.zeros(n, dtype=torch.uint8, device="cuda")
    z = torch.zeros(n, dtype=torch.float32, device="cuda")
    if name in REFUSED:
        with pytest.raises(CompilationError, match="not supported in this architecture"):
            down_up[(1,)](xd, y.view(getattr(torch, TORCH[name])), z, DST=getattr(tl, name),
                          R=rounding, N=n)
        return
    down_up[(1,)](xd, y.view(getattr(torch, TORCH[name])), z, DST=getattr(tl, name),
                  R=rounding, N=n)
    want = saturating(x.astype(np.float64), name, rtz=rounding == "rtz")
    got = y.cpu().numpy()
    ok = same_codes(got, want, name)
    assert ok.all(), (x[~ok][:8], got[~ok][:8], want[~ok][:8])


@pytest.mark.parametrize("name", list(ML))
def test_widening_on_the_gpu(name):
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).cuda()
    y = torch.zeros(256, dtype=torch.float32, device="cuda")
    if name in REFUSED:
        with pytest.raises(CompilationError, match="not supported in this architecture"):
            upcast[(1,)](codes.view(getattr(torch, TORCH[name])), y, N=256)
        return
    upcast[(1,)](codes.view(getattr(torch, TORCH[name])), y, N=256)
    want = np.arange(256, dtype=np.uint8).view(ML[name]).astype(np.float32)
    np.testing.assert_array_equal(y.cpu().numpy(), want)


def test_fp8_dot_on_the_gpu(rng):
    M, N, K = 16, 16, 32
    a = rng.uniform(-8, 8, (M, K)).astype(np.float32).astype(ML["float8e4nv"])
    b = rng.uniform(-8, 8, (K, N)).astype(np.float32).astype(ML["float8e5"])
    ad = torch.from_numpy(a.view(np.uint8)).cuda().view(torch.float8_e4m3fn)
    bd = torch.from_numpy(b.view(np.uint8)).cuda().view(torch.float8_e5m2)
    c = torch.zeros((M, N), dtype=torch.float32, device="cuda")
    fp8_matmul[(1,)](ad, bd, c, M=M, N=N, K=K, OUT=tl.float32, IMPRECISE=None)
    ref = 2 * (a.astype(np.float64) @ b.astype(np.float64))
    np.testing.assert_allclose(c.cpu().numpy(), ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("fa, fb", [("e2m1", "e4m3"), ("e5m2", "e2m1"), ("bf16", "e2m1")])
def test_dot_scaled_on_the_gpu(rng, fa, fb):
    from fp8_ref import ml_dtypes
    M, N, K = 16, 16, 64
    a, va = _operand(rng, fa, M, K, 1)
    b, vb = _operand(rng, fb, K, N, 0)
    sa, sva = _scale(rng, M, K // 32)
    sb, svb = _scale(rng, N, K // 32)
    scale_a = fa != "bf16"
    if scale_a:
        va = _scaled(va, sva, 1, ml_dtypes.bfloat16)
    vb = _scaled(vb, svb, 0, ml_dtypes.bfloat16)

    def dev(x):
        if x.dtype == ml_dtypes.bfloat16:
            return torch.from_numpy(x.view(np.uint16).astype(np.int32)).to(torch.int16) \
                .cuda().view(torch.bfloat16)
        return torch.from_numpy(x).cuda()
    c = torch.zeros((M, N), dtype=torch.float32, device="cuda")
    scaled_mm[(1,)](dev(a), dev(sa), dev(b), dev(sb), c, M=M, N=N, K=K, FA=fa, FB=fb,
                    SCALE_A=scale_a, SCALE_B=True, KPACK_B=True)
    np.testing.assert_allclose(c.cpu().numpy(), 1.0 + va @ vb, rtol=1e-5, atol=1e-4)
