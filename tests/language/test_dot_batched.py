"""Batched ``tl.dot``: [B, M, K] @ [B, K, N] -> [B, M, N], one matrix product per batch
index, checked against numpy's matmul on the interpreter and the CPU backend, compiled for
CUDA (its FMA layout compared with real Triton's where Triton takes the FMA path too), and
run on a GPU where there is one."""
import importlib.util
import inspect
import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def batched_dot(a_ptr, b_ptr, c_ptr, d_ptr, BATCH: tl.constexpr, M: tl.constexpr,
                N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr, WITH_ACC: tl.constexpr):
    z = tl.arange(0, BATCH)[:, None, None]
    rows = tl.arange(0, M)[None, :, None]
    cols = tl.arange(0, N)[None, None, :]
    a = tl.load(a_ptr + z * M * K + rows * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + z * K * N + tl.arange(0, K)[None, :, None] * N + cols)
    if WITH_ACC:
        acc = tl.load(c_ptr + z * M * N + rows * N + cols)
        out = tl.dot(a, b, acc, input_precision=PREC)
    else:
        out = tl.dot(a, b, input_precision=PREC)
    tl.store(d_ptr + z * M * N + rows * N + cols, out)


def _inputs(rng, dtype, shape_a, shape_b):
    if np.dtype(dtype).kind == "i":
        return (rng.integers(-100, 100, shape_a).astype(dtype),
                rng.integers(-100, 100, shape_b).astype(dtype))
    return (rng.standard_normal(shape_a).astype(dtype), rng.standard_normal(shape_b).astype(dtype))


@pytest.mark.parametrize("dtype, prec, batch, m, n, k", [
    (np.float32, "ieee", 2, 16, 16, 16),
    (np.float16, "tf32", 4, 16, 32, 16),
    (np.int8, "tf32", 2, 16, 16, 32),
    (np.float32, "ieee", 8, 32, 16, 16),
])
@pytest.mark.parametrize("with_acc", [False, True])
def test_batched_dot_matches_numpy(backend, rng, dtype, prec, batch, m, n, k, with_acc):
    a, b = _inputs(rng, dtype, (batch, m, k), (batch, k, n))
    acc_t = np.int32 if np.dtype(dtype).kind == "i" else np.float32
    acc = (rng.integers(-1000, 1000, (batch, m, n)) if acc_t == np.int32
           else rng.standard_normal((batch, m, n))).astype(acc_t)
    out = np.full((batch, m, n), -7, dtype=acc_t)
    batched_dot[(1,)](a, b, acc, out, batch, m, n, k, prec, with_acc)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64)) + (acc if with_acc else 0)
    if acc_t == np.int32:
        np.testing.assert_array_equal(out, want.astype(np.int64).astype(np.int32))
    else:
        # each output sums k products in fp32: error within k * eps32 * sum |a||b|
        bound = k * 2.0 ** -23 * (np.matmul(np.abs(a).astype(np.float64),
                                            np.abs(b).astype(np.float64)) + 1.0)
        assert np.all(np.abs(out - want) <= bound), np.abs(out - want).max()


def test_batched_dot_tf32_rounds_inputs(backend, rng):
    """fp32 inputs with the default precision are rounded to TF32 before the products, as on
    a GPU's tensor cores: the result differs from the fp32 product by the TF32 rounding."""
    a, b = _inputs(rng, np.float32, (2, 16, 16), (2, 16, 16))
    out = np.zeros((2, 16, 16), np.float32)
    batched_dot[(1,)](a, b, out, out, 2, 16, 16, 16, "tf32", False)
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    err = np.abs(out - exact)
    scale = np.matmul(np.abs(a), np.abs(b)).astype(np.float64)
    # TF32 keeps 10 mantissa bits and drops the rest (toward zero): each factor is off by up
    # to 2**-10 of itself, so a product by up to 2 * 2**-10
    assert np.all(err <= 2.0 ** -9 * scale + 1e-5)
    assert err.max() > 16 * 2.0 ** -23 * scale.max()  # and not the full fp32 product


def test_batched_dot_shape_errors_point_at_the_line():
    @wb.jit
    def bad(a_ptr, out_ptr):
        a = tl.load(a_ptr + tl.arange(0, 16)[:, None, None] * 0 + tl.arange(0, 16)[None, :, None]
                    + tl.arange(0, 16)[None, None, :])
        b = tl.load(a_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
        tl.store(out_ptr + tl.arange(0, 16), tl.sum(tl.sum(tl.dot(a, b), axis=2), axis=1))

    x = np.zeros(4096, np.float32)
    with pytest.raises(CompilationError, match="two tiles of one rank >= 2") as e:
        bad[(1,)](x, x)
    assert "tl.dot(a, b)" in str(e.value)


def _dot_layout(ttgir: str) -> str:
    """The encoding text of the first tt.dot's result."""
    line = next(ln for ln in ttgir.splitlines() if "tt.dot " in ln)
    alias = re.search(r"-> tensor<[^,]+, (#\w+)>", line).group(1)
    return next(ln.split(" = ", 1)[1] for ln in ttgir.splitlines()
                if ln.startswith(alias + " = "))


@pytest.mark.parametrize("batch, m, n, num_warps", [(2, 16, 16, 4), (4, 32, 32, 4),
                                                    (2, 64, 64, 8), (8, 16, 16, 1)])
def test_batched_fma_dot_layout_is_tritons(tmp_path, batch, m, n, num_warps):
    """An fp32 "ieee" batched dot stays on FMA in Triton too: the blocked result layout of
    ``convert-triton-to-tritongpu`` must be the one real Triton prints."""
    triton = pytest.importorskip("triton", reason="the layout comparison needs Triton 3.6")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    # the same source, under Triton's own jit and language module
    body = inspect.getsource(batched_dot.fn).replace("@wb.jit\n", "@triton.jit\n")
    path = tmp_path / "batched_dot_for_triton.py"
    path.write_text("import triton\nimport triton.language as tl\n\n" + body)
    spec = importlib.util.spec_from_file_location("batched_dot_for_triton", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ours = wb.compile(batched_dot, "*fp32", "*fp32", "*fp32", "*fp32", BATCH=batch, M=m, N=n,
                      K=16, PREC="ieee", WITH_ACC=False, target="cuda:90", num_warps=num_warps)
    src = ASTSource(mod.batched_dot,
                    signature={"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32",
                               "d_ptr": "*fp32", "BATCH": "constexpr", "M": "constexpr",
                               "N": "constexpr", "K": "constexpr", "PREC": "constexpr",
                               "WITH_ACC": "constexpr"},
                    constexprs={"BATCH": batch, "M": m, "N": n, "K": 16, "PREC": "ieee",
                                "WITH_ACC": False})
    theirs = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": num_warps})
    assert _dot_layout(ours.asm["ttgir"]) == _dot_layout(theirs.asm["ttgir"])
    assert ".version" in ours.asm["ptx"]


@pytest.mark.gpu
def test_batched_dot_on_gpu(rng):
    torch = pytest.importorskip("torch")
    for dtype, prec in ((np.float16, "tf32"), (np.float32, "ieee")):
        a, b = _inputs(rng, dtype, (4, 32, 16), (4, 16, 32))
        out = torch.zeros((4, 32, 32), dtype=torch.float32, device="cuda")
        batched_dot[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), out, out,
                          4, 32, 32, 16, prec, False)
        want = np.matmul(a.astype(np.float64), b.astype(np.float64))
        np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-3, atol=1e-3)
