"""CPU backend fast paths: contiguous accesses (vector loads/stores, per-run bounds checks),
lane-parallel reductions, the register-blocked dot micro-kernel (edge blocks, in-place
accumulator), the dynamic-chunk grid loop and the reusable launcher; each vs numpy with fresh
random inputs and poisoned outputs."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import OutOfBoundsError

rng = np.random.default_rng()


@wb.jit
def _add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
             mask=m)


@wb.jit
def _copy_unmasked(x_ptr, o_ptr, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + shift
    tl.store(o_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), tl.load(x_ptr + offs))


def test_contiguous_add_is_vector_code_and_correct_with_masked_tail():
    n = 5000 + int(rng.integers(0, 100))
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    o = np.full(n, np.nan, np.float32)
    k = _add[(wb.cdiv(n, 256),)](x, y, o, n, BLOCK=256)
    np.testing.assert_array_equal(o, x + y)
    asm = k.asm["asm"]
    assert "gather" not in asm and "scatter" not in asm
    assert "vaddps\t%zmm" in asm or "vaddps\t%ymm" in asm


@pytest.mark.parametrize("shift", [7, -3])
def test_contiguous_run_out_of_bounds_names_first_bad_element(shift):
    block = 64
    x = rng.standard_normal(block * 4).astype(np.float32)
    o = np.zeros_like(x)
    with pytest.raises(OutOfBoundsError) as ei:
        _copy_unmasked[(4,)](x, o, shift, BLOCK=block)
    e = ei.value
    if shift > 0:  # program 3 reads past the end: first bad element is x[256]
        assert e.program_id == (3, 0, 0) and e.offset == 4 * block * 4
    else:  # program 0 reads x[-3]: its first element
        assert e.program_id == (0, 0, 0) and e.offset == -3 * 4
    _copy_unmasked[(4,)](x, o, 0, BLOCK=block)
    np.testing.assert_array_equal(o, x)


@wb.jit
def _runs_of_four(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    offs = (r // 4) * 8 + r % 4  # runs of 4 consecutive elements, 8 apart
    m = offs < n
    tl.store(o_ptr + r, tl.load(x_ptr + offs, mask=m, other=-1.0))


def test_short_runs_from_axis_info_and_masks():
    x = rng.standard_normal(100).astype(np.float32)
    o = np.full(64, np.nan, np.float32)
    _runs_of_four[(1,)](x, o, 100, BLOCK=64)
    r = np.arange(64)
    offs = (r // 4) * 8 + r % 4
    np.testing.assert_array_equal(o, np.where(offs < 100, x[np.minimum(offs, 99)], -1.0))
    with pytest.raises(OutOfBoundsError):
        _runs_of_four[(1,)](x, o, 1000, BLOCK=64)  # mask lets offsets >= 100 through


@wb.jit
def _transpose(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    # x is N x M row-major: x[n, m] at n * M + m -> contiguous along dim 0 of this tile
    t = tl.load(x_ptr + rn[None, :] * M + rm[:, None])
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], t)


def test_tile_contiguous_along_dim0():
    x = rng.standard_normal((32, 16)).astype(np.float32)
    o = np.full((16, 32), np.nan, np.float32)
    _transpose[(1,)](x, o, M=16, N=32)
    np.testing.assert_array_equal(o, x.T)


@wb.jit
def _row_reduce(x_ptr, s_ptr, mx_ptr, am_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0)
    tl.store(s_ptr + row, tl.sum(x, axis=0))
    tl.store(mx_ptr + row, tl.max(x, axis=0))
    tl.store(am_ptr + row, tl.argmax(x, axis=0))


@pytest.mark.parametrize("n,block", [(1000, 1024), (16, 16), (3, 4), (40, 64), (2, 2)])
def test_lane_reductions_int_exact_and_float_close(n, block):
    xi = rng.integers(-50, 50, (9, n)).astype(np.int32)
    s, mx, am = (np.full(9, -7, np.int32) for _ in range(3))
    _row_reduce[(9,)](xi, s, mx, am, N=n, BLOCK=block)
    padded = np.pad(xi, ((0, 0), (0, block - n)))
    np.testing.assert_array_equal(s, padded.sum(1))
    np.testing.assert_array_equal(mx, padded.max(1))
    np.testing.assert_array_equal(am, padded.argmax(1))  # ties: the lowest index
    xf = rng.standard_normal((9, n)).astype(np.float32)
    sf, mf = np.zeros(9, np.float32), np.zeros(9, np.float32)
    _row_reduce[(9,)](xf, sf, mf, am, N=n, BLOCK=block)
    np.testing.assert_allclose(sf, xf.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(mf, np.maximum(xf.max(1), 0) if block > n else xf.max(1))


@wb.jit
def _dot_loop(a_ptr, b_ptr, c_ptr, d_ptr, M: tl.constexpr, N: tl.constexpr,
              K: tl.constexpr, STEPS: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    acc = tl.zeros((M, N), dtype=c_ptr.dtype.element_ty)
    for s in range(STEPS):
        a = tl.load(a_ptr + s * M * K + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + s * K * N + rk[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
    # a second dot whose accumulator is used again afterwards (no in-place update)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    d = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(d_ptr + rm[:, None] * N + rn[None, :], d + acc)


@pytest.mark.parametrize("m,n,k,dtype", [(16, 16, 16, np.float32), (128, 16, 16, np.float32),
                                         (16, 128, 16, np.float32), (32, 32, 16, np.float64),
                                         (64, 64, 32, np.float32)])
def test_dot_micro_kernel_blocks_and_in_place_accumulator(m, n, k, dtype):
    steps = 3
    a = rng.standard_normal((steps, m, k)).astype(dtype)
    b = rng.standard_normal((steps, k, n)).astype(dtype)
    c = np.full((m, n), np.nan, dtype)
    d = np.full((m, n), np.nan, dtype)
    _dot_loop[(1,)](a, b, c, d, M=m, N=n, K=k, STEPS=steps)
    ref = sum(a[s].astype(np.float64) @ b[s].astype(np.float64) for s in range(steps))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(c, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(d, a[0].astype(np.float64) @ b[0] + 2 * ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("m,n,k,t", [(6, 20, 3, "f32"), (5, 7, 2, "f32"), (3, 8, 5, "f64"),
                                     (9, 48, 4, "f32")])
def test_dot_edge_blocks_hand_built(m, n, k, t):
    """Shapes the frontend never makes (not powers of two): bottom/right edge blocks of the
    micro-kernel (4- and 8-wide vectors, leftover rows and vectors) and the scalar path."""
    from test_cpu_while_dot import _dot_kernel

    from tests.ir_kit import run
    from workbench.ir.types import f32, f64
    it = {"f32": f32, "f64": f64}[t]
    dt = {"f32": np.float32, "f64": np.float64}[t]
    kern = _dot_kernel(m, n, k, it, it, it, "ieee")
    res = kern.compile()
    a = rng.standard_normal((m, k)).astype(dt)
    b = rng.standard_normal((k, n)).astype(dt)
    c = rng.standard_normal((m, n)).astype(dt)
    out = np.full((m, n), np.nan, dt)
    run(res, 1, a, b, c, out)
    np.testing.assert_allclose(out, c + a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@wb.jit
def _fail_from(o_ptr, first_bad, n):
    pid = tl.program_id(0)
    off = tl.where(pid >= first_bad, n + pid, pid)
    tl.store(o_ptr + off, pid)


def test_dynamic_chunks_report_lowest_failing_program():
    n = 3000
    o = np.zeros(n, np.int32)
    for first in (2999, 1777, 5):
        with pytest.raises(OutOfBoundsError) as ei:
            _fail_from[(n,)](o, first, n)
        assert ei.value.program_id == (first, 0, 0)
    _fail_from[(n,)](o, n, n)
    np.testing.assert_array_equal(o, np.arange(n))


def test_concurrent_launches_of_one_kernel_from_threads():
    n = 1 << 16
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(4)]
    outs = [np.zeros(n, np.float32) for _ in range(4)]
    _add[(n // 512,)](xs[0], xs[0], outs[0], n, BLOCK=512)
    errors = []

    def work(i):
        try:
            for _ in range(20):
                _add[(n // 512,)](xs[i], xs[i], outs[i], n, BLOCK=512)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for x, o in zip(xs, outs, strict=True):
        np.testing.assert_array_equal(o, 2 * x)


def test_launch_in_a_forked_child_after_launches_in_the_parent():
    """The helper threads of the parent do not exist in a forked child: its launches must
    still run (on a fresh pool) instead of waiting forever."""
    import os

    import workbench as wb
    import workbench.language as tl

    @wb.jit
    def fill(out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, offs.to(tl.float32), mask=offs < n)

    n = 1 << 16
    out = np.zeros(n, np.float32)
    fill[(n // 256,)](out, n, BLOCK=256)  # many programs: the parent's helper threads run
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            out2 = np.zeros(n, np.float32)
            fill[(n // 256,)](out2, n, BLOCK=256)
            code = 0 if np.array_equal(out2, np.arange(n, dtype=np.float32)) else 2
        finally:
            os._exit(code)
    import time
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise AssertionError("the forked child's launch hung")
    assert os.waitstatus_to_exitcode(status) == 0
