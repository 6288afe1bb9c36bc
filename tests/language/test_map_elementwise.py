"""tl.map_elementwise: the scalar function compiled into the region of one
tt.map_elementwise op (Triton's generic form in ttir), run on every backend (the backends
rewrite it as tile ops), against numpy with fresh random inputs."""
import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from tests.frontend.fe_helpers import const, filecheck, ptr, ttir
from workbench.errors import CompilationError


@wb.jit
def _gap_and_max(a, b):
    if a > b:
        return a - b, a
    return b - a, b


@wb.jit
def gap_kernel(x_ptr, y_ptr, gap_ptr, hi_ptr, N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N)
    a = tl.load(x_ptr + offs)
    b = tl.load(y_ptr + offs)
    gap, hi = tl.map_elementwise(_gap_and_max, a, b)
    tl.store(gap_ptr + offs, gap)
    tl.store(hi_ptr + offs, hi)


def test_two_results_with_a_branch(backend, rng):
    x = rng.standard_normal(256).astype(np.float32)
    y = rng.standard_normal(256).astype(np.float32)
    gap = np.full(256, np.nan, np.float32)
    hi = np.full(256, np.nan, np.float32)
    launch(backend, gap_kernel, (2,), x, y, gap, hi, N=128)
    np.testing.assert_array_equal(gap, np.where(x > y, x - y, y - x))
    np.testing.assert_array_equal(hi, np.maximum(x, y))


@wb.jit
def _sign3(x, y):
    if x < y:
        return -1
    elif x == y:
        return 0
    else:
        return 1


@wb.jit
def _safe_div(a, b):
    if b != 0:
        return a // b
    return -7


@wb.jit
def int_kernel(a_ptr, b_ptr, s_ptr, q_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(s_ptr + offs, tl.map_elementwise(_sign3, a, b))
    tl.store(q_ptr + offs, tl.map_elementwise(_safe_div, a, b))


def test_nested_branches_and_a_guarded_division(backend, rng):
    """Elements with b == 0 take the other branch: the division must not trap there."""
    a = rng.integers(-50, 50, 128).astype(np.int32)
    b = rng.integers(-3, 4, 128).astype(np.int32)
    b[:4] = 0
    s = np.full(128, 99, np.int32)
    q = np.full(128, 99, np.int32)
    launch(backend, int_kernel, (1,), a, b, s, q, N=128)
    np.testing.assert_array_equal(s, np.sign(a.astype(np.int64) - b))
    safe_b = np.where(b == 0, 1, b)
    trunc = np.sign(a) * np.sign(safe_b) * (np.abs(a) // np.abs(safe_b))  # C division
    np.testing.assert_array_equal(q, np.where(b != 0, trunc, -7))


@wb.jit
def _divmod2(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@wb.jit
def _pairs4(a0, a1, a2, a3):
    # mixes the elements of one pack: element k of the result is a[k] - a[k ^ 1]
    return a0 - a1, a1 - a0, a2 - a3, a3 - a2


@wb.jit
def pack_kernel(a_ptr, b_ptr, c_ptr, d_ptr, e_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c, d = tl.map_elementwise(_divmod2, a, b, pack=2)
    tl.store(c_ptr + offs, c)
    tl.store(d_ptr + offs, d)
    (e,) = tl.map_elementwise(_pairs4, a, pack=4)  # a tuple came back: a 1-tuple
    tl.store(e_ptr + offs, e)


def test_pack_takes_consecutive_elements(backend, rng):
    a = rng.integers(0, 2**31, 64, dtype=np.uint32)
    b = rng.integers(1, 2**16, 64, dtype=np.uint32)
    c, d, e = (np.zeros(64, np.uint32) for _ in range(3))
    launch(backend, pack_kernel, (1,), a, b, c, d, e, N=64)
    np.testing.assert_array_equal(c, a // b)
    np.testing.assert_array_equal(d, a % b)
    partner = a[np.arange(64) ^ 1]
    np.testing.assert_array_equal(e, a - partner)


@wb.jit
def _add_scale(x, y, s):
    return x * s + y


@wb.jit
def broadcast_kernel(x_ptr, y_ptr, o_ptr, s, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows)          # [M, 1]
    y = tl.load(y_ptr + cols)          # [1, N]
    out = tl.map_elementwise(_add_scale, x, y, s)
    tl.store(o_ptr + rows * N + cols, out)


def test_inputs_broadcast_and_scalars_splat(backend, rng):
    x = rng.standard_normal(8).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)
    out = np.full((8, 16), np.nan, np.float32)
    s = float(rng.uniform(0.5, 2.0))
    launch(backend, broadcast_kernel, (1,), x, y, out, s, M=8, N=16)
    ref = x[:, None].astype(np.float32) * np.float32(s) + y[None, :]
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_ttir_keeps_the_region_op():
    text = ttir(gap_kernel, ptr("x_ptr"), ptr("y_ptr"), ptr("gap_ptr"), ptr("hi_ptr"),
                const("N", 128))
    filecheck(text, """
CHECK: %[[A0:a.*]] = tt.load
CHECK: %[[B0:b.*]] = tt.load
CHECK: %[[R:.*]]:2 = "tt.map_elementwise"(%[[A0]], %[[B0]]) <{pack = 1 : i32}> ({
CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
CHECK-NEXT: %[[C:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f32
CHECK: scf.if %[[C]] -> (f32, f32) {
CHECK: arith.subf %[[A]], %[[B]] : f32
CHECK: } else {
CHECK: arith.subf %[[B]], %[[A]] : f32
CHECK: tt.map_elementwise.return %{{.*}}#0, %{{.*}}#1 : f32, f32
CHECK-NEXT: }) : (tensor<128xf32>, tensor<128xf32>) -> (tensor<128xf32>, tensor<128xf32>)
CHECK: tt.store %{{.*}}, %[[R]]#0
CHECK: tt.store %{{.*}}, %[[R]]#1
""")


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_cuda_compiles_the_rewritten_tiles(target):
    k = wb.compile(pack_kernel, "*u32", "*u32", "*u32", "*u32", "*u32", N=64, target=target)
    assert '"tt.map_elementwise"' in k.asm["ttir"]
    assert "tt.map_elementwise" not in k.asm["ttgir"]
    assert "tt.split" in k.asm["ttgir"] and "tt.join" in k.asm["ttgir"]
    assert "div.u32" in k.asm["ptx"] or "rem.u32" in k.asm["ptx"]
    g = wb.compile(gap_kernel, "*fp32", "*fp32", "*fp32", "*fp32", N=128, target=target)
    assert "arith.select" in g.asm["ttgir"] and "selp.f32" in g.asm["ptx"]


@wb.jit
def bad_pack_kernel(a_ptr, N: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, N))
    tl.store(a_ptr + tl.arange(0, N), tl.map_elementwise(_add_scale, a, a, a, pack=3))


def test_bad_pack_points_at_the_call():
    with pytest.raises(CompilationError) as e:
        wb.compile(bad_pack_kernel, "*fp32", N=16, target="interpreter")
    assert "pack=3" in str(e.value) and "tl.map_elementwise(_add_scale" in str(e.value)
