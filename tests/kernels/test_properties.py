"""Property tests (hypothesis): random power-of-two block sizes, shapes, dtypes and masks; the
interpreter, the CPU backend and numpy agree. Kernels are compiled once per specialisation and
cached, so examples mostly cost launches."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as wb
import workbench.language as tl
from workbench.errors import UnsupportedError

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
DTYPES = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "int8": np.int8,
          "uint16": np.uint16}


@pytest.fixture(autouse=True)
def ptx_for_every_cpu_kernel():
    """These properties are about the interpreter and the CPU backend agreeing; the PTX of
    the same kernels is checked by the other tests of tests/kernels."""
    yield


def run_both(kernel, grid, make_args, **kw):
    """Run ``kernel`` on the interpreter and on the CPU with fresh copies of the arguments
    ``make_args()`` returns; returns the two argument lists after the launches."""
    import os
    results = []
    for interp in ("1", ""):
        args = make_args()
        old = os.environ.get("WORKBENCH_INTERPRET")
        os.environ["WORKBENCH_INTERPRET"] = interp
        try:
            kernel[grid](*args, **kw)
        except UnsupportedError as e:
            if not interp and "CPU backend" in str(e):
                pytest.xfail(f"CPU backend: {str(e).splitlines()[0]}")
            raise
        finally:
            if old is None:
                os.environ.pop("WORKBENCH_INTERPRET", None)
            else:
                os.environ["WORKBENCH_INTERPRET"] = old
        results.append(args)
    return results


def values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype)


@wb.jit
def masked_axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    y = tl.load(y_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, x * alpha + y, mask=mask)


@SETTINGS
@given(n=st.integers(1, 300), log_block=st.integers(4, 8), dtype=st.sampled_from(list(DTYPES)),
       seed=st.integers(0, 2**32 - 1))
def test_masked_elementwise(n, log_block, dtype, seed):
    rng = np.random.default_rng(seed)
    d = DTYPES[dtype]
    x, y = values(rng, d, n), values(rng, d, n)
    alpha = 3
    block = 1 << log_block
    (a, b) = run_both(masked_axpy, (wb.cdiv(n, block),),
                      lambda: [x, y, np.zeros(n + 7, d), n, alpha], BLOCK=block)
    with np.errstate(over="ignore"):
        ref = (x * d(alpha) + y).astype(d)
    np.testing.assert_array_equal(a[2][:n], ref)
    np.testing.assert_array_equal(b[2][:n], ref)
    assert not a[2][n:].any() and not b[2][n:].any()


@wb.jit
def reduce_2d(x_ptr, s_ptr, m_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr,
              AXIS: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0)
    s = tl.sum(x.to(tl.float32), axis=AXIS)
    mx = tl.max(tl.where(mask, x.to(tl.float32), -float("inf")), axis=AXIS)
    r = tl.arange(0, BM if AXIS == 1 else BN)
    tl.store(s_ptr + r, s)
    tl.store(m_ptr + r, mx)


@SETTINGS
@given(m=st.integers(1, 16), n=st.integers(1, 40), axis=st.sampled_from([0, 1]),
       dtype=st.sampled_from(["float32", "float16", "int32"]), seed=st.integers(0, 2**32 - 1))
def test_reductions_with_masks(m, n, axis, dtype, seed):
    rng = np.random.default_rng(seed)
    x = values(rng, DTYPES[dtype], (m, n))
    bm, bn = 16, 64
    size = bm if axis == 1 else bn
    res = run_both(reduce_2d, (1,), lambda: [x, np.zeros(size, np.float32),
                                             np.zeros(size, np.float32), m, n],
                   BM=bm, BN=bn, AXIS=axis)
    x32 = x.astype(np.float32)
    k = m if axis == 1 else n
    for args in res:
        np.testing.assert_allclose(args[1][:k], x32.sum(axis), rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(args[2][:k], x32.max(axis))
    if dtype == "int32":  # exact: both backends give the same sums
        np.testing.assert_array_equal(res[0][1], res[1][1])


@wb.jit
def shape_mix(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    idx = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + idx)
    y = tl.sort(tl.flip(tl.trans(x), 1))  # (C, R), each row sorted
    z = tl.interleave(y, y * 2)  # (C, 2R)
    tl.store(out_ptr + tl.arange(0, C)[:, None] * (2 * R) + tl.arange(0, 2 * R)[None, :], z)


@SETTINGS
@given(log_r=st.integers(0, 4), log_c=st.integers(0, 4), seed=st.integers(0, 2**32 - 1))
def test_shape_ops(log_r, log_c, seed):
    r, c = 1 << log_r, 1 << log_c
    x = np.random.default_rng(seed).integers(-50, 50, (r, c)).astype(np.int32)
    res = run_both(shape_mix, (1,), lambda: [x, np.zeros((c, 2 * r), np.int32)], R=r, C=c)
    y = np.sort(x.T[:, ::-1], axis=1)
    ref = np.stack([y, y * 2], -1).reshape(c, 2 * r)
    for args in res:
        np.testing.assert_array_equal(args[1], ref)


@wb.jit
def dot_tile(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@SETTINGS
@given(log_m=st.integers(0, 5), log_n=st.integers(0, 5), log_k=st.integers(4, 6),
       dtype=st.sampled_from(["float32", "float16"]), seed=st.integers(0, 2**32 - 1))
def test_dot_shapes(log_m, log_n, log_k, dtype, seed):
    m, n, k = 1 << log_m, 1 << log_n, 1 << log_k
    rng = np.random.default_rng(seed)
    d = DTYPES[dtype]
    a, b = values(rng, d, (m, k)), values(rng, d, (k, n))
    res = run_both(dot_tile, (1,), lambda: [a, b, np.zeros((m, n), np.float32)], M=m, N=n, K=k)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for args in res:
        np.testing.assert_allclose(args[2], ref, rtol=1e-4, atol=1e-3)
