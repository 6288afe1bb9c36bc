"""A one-element tile becomes a scalar through ``tt.unsplat``, as in Triton 3.6 (more cases
beside tests/language/test_unsplat.py): ``tl.split`` of a ``[2]`` tile, ``tl.reshape(x, ())``,
``x.item()`` and an ``if`` on a one-element tile. Checked against numpy on both host
backends, in the printed ttir/ttgir, and on a GPU."""
import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from workbench.compiler import ASTSource, GPUTarget


@wb.jit
def to_scalars(x_ptr, out_ptr):
    pair = tl.load(x_ptr + tl.arange(0, 2))
    lo, hi = tl.split(pair)
    tl.static_assert(lo.shape == [])
    one = tl.load(x_ptr + 2 + tl.arange(0, 1))
    r = tl.reshape(one, ())
    it = tl.load(x_ptr + 3 + tl.arange(0, 1)).item()
    flag = tl.load(x_ptr + 4 + tl.arange(0, 1)) > 0
    if flag:
        it = it * 2
    tl.store(out_ptr, lo)
    tl.store(out_ptr + 1, hi)
    tl.store(out_ptr + 2, r + 1)
    tl.store(out_ptr + 3, it)


def _expected(x):
    return np.array([x[0], x[1], x[2] + 1, x[3] * 2 if x[4] > 0 else x[3]], x.dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_one_element_tiles_become_scalars(backend, rng, dtype):
    for _ in range(2):  # both branches of the `if` (almost surely)
        x = (rng.standard_normal(5) * 100).astype(dtype)
        out = np.zeros(4, dtype)
        launch(backend, to_scalars, (1,), x, out)
        np.testing.assert_array_equal(out, _expected(x))


def test_unsplat_in_the_ir_as_triton_prints_it():
    k = wb.compile(ASTSource(to_scalars, signature={"x_ptr": "*i64", "out_ptr": "*i64"},
                             constexprs={}), target=GPUTarget("cuda", 90, 32))
    ttir, ttgir = k.asm["ttir"], k.asm["ttgir"]
    assert ttir.count("tt.unsplat") == 5  # two halves, the reshape, item, the condition
    assert "tt.split %0 : tensor<1x2xi64> -> tensor<1xi64>" in ttir
    assert "tt.reshape" not in ttir  # a scalar is never a reshape result
    # the element is read in the layout it has: no convert before an unsplat
    for line in ttgir.splitlines():
        if "tt.unsplat" in line:
            src = line.split("tt.unsplat ")[1].split(" ")[0]
            assert f"ttg.convert_layout {src}" not in ttgir


@pytest.mark.gpu
def test_one_element_tiles_become_scalars_on_gpu(rng):
    torch = pytest.importorskip("torch")
    x = (rng.standard_normal(5) * 100).astype(np.int64)
    out = torch.zeros(4, dtype=torch.int64, device="cuda")
    to_scalars[(1,)](torch.from_numpy(x).cuda(), out)
    np.testing.assert_array_equal(out.cpu().numpy(), _expected(x))
