"""workbench.tools.cublas.CublasLt, the cuBLAS baseline of Triton's tutorial 09: C = A @ B^T
on the GPU against torch in float64; without a GPU, a ToolMissingError that says why."""
import numpy as np
import pytest

from workbench.errors import ToolMissingError
from workbench.tools.cublas import CublasLt


def test_without_a_gpu_it_says_why():
    torch = pytest.importorskip("torch", reason="the baseline runs through torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the baseline works here")
    with pytest.raises(ToolMissingError, match="torch with a CUDA GPU"):
        CublasLt(None)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float8_e4m3fn"])
def test_matmul_and_gemm_on_the_gpu(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    M, N, K = (int(x) * 16 for x in rng.integers(4, 12, 3))
    td = getattr(torch, dtype)
    a = torch.tensor(rng.uniform(-2, 2, (M, K)), device="cuda").to(td)
    b = torch.tensor(rng.uniform(-2, 2, (N, K)), device="cuda").to(td)
    blas = CublasLt(torch.empty(1 << 20, dtype=torch.uint8, device="cuda"))
    out_dtype = torch.float16 if dtype == "float8_e4m3fn" else td
    c = torch.empty((M, N), device="cuda", dtype=out_dtype)
    blas.matmul(a, b, c)
    want = a.double() @ b.double().T
    torch.testing.assert_close(c.double(), want, rtol=2e-2, atol=2e-2 * K ** 0.5)
    if dtype != "float8_e4m3fn":
        d = torch.empty_like(c)
        blas.gemm(a, b, c, d, 0.5, 2.0)
        torch.testing.assert_close(d.double(), 0.5 * want + 2.0 * c.double(), rtol=2e-2,
                                   atol=2e-2 * K ** 0.5)
