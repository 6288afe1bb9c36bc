"""``tl.gather(src, index, axis)``: the result takes the index's shape and picks
``src[.., index[c], ..]`` along ``axis``, checked against numpy's ``take_along_axis`` with fresh
random inputs (index tiles larger and smaller than the source along the axis, negative axes,
several dtypes), on both host backends; the ttir text Triton prints; the frontend's checks; the
CUDA lowering compiled everywhere and run on a GPU where one exists."""
import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def gather_2d(src_ptr, idx_ptr, out_ptr, SM: tl.constexpr, SN: tl.constexpr, IM: tl.constexpr,
              IN: tl.constexpr, AXIS: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, SM)[:, None] * SN + tl.arange(0, SN)[None, :])
    offs = tl.arange(0, IM)[:, None] * IN + tl.arange(0, IN)[None, :]
    out = tl.gather(src, tl.load(idx_ptr + offs), AXIS)
    tl.store(out_ptr + offs, out)


@wb.jit
def gather_1d_method(src_ptr, idx_ptr, out_ptr, S: tl.constexpr, N: tl.constexpr):
    src = tl.load(src_ptr + tl.arange(0, S))
    idx = tl.load(idx_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), src.gather(idx, axis=0))


def _case(rng, dtype, src_shape, idx_shape, axis, idx_dtype=np.int32):
    if np.dtype(dtype).kind == "f":
        src = rng.standard_normal(src_shape).astype(dtype)
    else:
        src = rng.integers(-1000, 1000, src_shape).astype(dtype)
    idx = rng.integers(0, src_shape[axis], idx_shape).astype(idx_dtype)
    return src, idx, np.take_along_axis(src, idx.astype(np.int64), axis=axis)


@pytest.mark.parametrize("dtype, src_shape, idx_shape, axis", [
    (np.float32, (4, 4), (8, 4), 0), (np.int16, (16, 8), (4, 8), 0),
    (np.float32, (8, 16), (8, 32), 1), (np.int16, (32, 16), (32, 4), -1),
    (np.float32, (16, 32), (16, 32), 1)])
def test_gather_2d_against_numpy(backend, rng, dtype, src_shape, idx_shape, axis):
    src, idx, want = _case(rng, dtype, src_shape, idx_shape, axis)
    out = np.zeros(idx_shape, dtype)
    launch(backend, gather_2d, (1,), src, idx, out, *src_shape, *idx_shape, axis)
    np.testing.assert_array_equal(out, want)


def test_gather_1d_as_a_method_with_int64_indices(backend, rng):
    src, idx, want = _case(rng, np.float32, (32,), (64,), 0, np.int64)
    out = np.zeros(64, np.float32)
    launch(backend, gather_1d_method, (1,), src, idx, out, 32, 64)
    np.testing.assert_array_equal(out, want)


def test_gather_index_out_of_range_raises(backend, rng):
    src, idx, _ = _case(rng, np.float32, (16,), (16,), 0)
    idx[5] = 16
    with pytest.raises(Exception, match="out of range"):
        launch(backend, gather_1d_method, (1,), src, idx, np.zeros(16, np.float32), 16, 16)


@pytest.mark.parametrize("body, message", [
    ("tl.gather(src, idx.to(tl.float32), 0)", "index must be an integer tensor"),
    ("tl.gather(src, tl.reshape(idx, (4, 2, 2)), 0)", "must have the same rank"),
    ("tl.gather(src, idx, 2)", "gather axis 2 must be < source rank"),
    ("tl.gather(src, tl.reshape(idx, (2, 8)), 0)", "index dim 1 .8. must match"),
])
def test_gather_frontend_checks(body, message):
    text = ("@wb.jit\ndef bad(p, q):\n"
            "    src = tl.load(p + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :])\n"
            "    idx = tl.load(q + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :])\n"
            f"    tl.store(p + tl.arange(0, 4), tl.ravel({body}))\n")
    ns: dict = {}
    exec(text, {"wb": wb, "tl": tl}, ns)
    kernel = ns["bad"]
    with pytest.raises(CompilationError, match=message) as e:
        wb.compile(kernel, "*fp32", "*i32", target="cpu")
    assert body in str(e.value)


@pytest.mark.parametrize("arch", [80, 90])
def test_gather_ttir_and_cuda_lowering(arch):
    asm = wb.compile(gather_2d, "*fp32", "*i32", "*fp32", SM=8, SN=16, IM=32, IN=16, AXIS=0,
                     target=f"cuda:{arch}").asm
    line = next(ln for ln in asm["ttir"].splitlines() if "tt.gather" in ln)  # Triton's text
    assert "{axis = 0 : i32} : (tensor<8x16xf32>, tensor<32x16xi32>) -> tensor<32x16xf32>" \
        in line
    assert "bar.sync" in asm["ptx"] and "ld.shared" in asm["ptx"]


@pytest.mark.gpu
@pytest.mark.parametrize("src_shape, idx_shape, axis", [
    ((32,), (64,), 0), ((4, 4), (8, 4), 0), ((128, 64), (256, 64), 0), ((128, 64), (128, 128), 1)])
def test_gather_on_gpu(rng, src_shape, idx_shape, axis):
    torch = pytest.importorskip("torch")
    src, idx, want = _case(rng, np.float32, src_shape, idx_shape, axis)
    out = torch.zeros(idx_shape, dtype=torch.float32, device="cuda")
    s, i = torch.from_numpy(src).cuda(), torch.from_numpy(idx).cuda()
    if len(src_shape) == 1:
        gather_1d_method[(1,)](s, i, out, src_shape[0], idx_shape[0])
    else:
        gather_2d[(1,)](s, i, out, *src_shape, *idx_shape, axis)
    np.testing.assert_array_equal(out.cpu().numpy(), want)
