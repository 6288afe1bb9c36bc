"""Work counting: static counts from the ttir (loads/stores, caps at array sizes, tl.dot,
elementwise, reductions, loops with constant and launch-scalar trip counts), the exact mode on
the interpreter (masked lanes, distinct bytes, loops as run), overrides and errors."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.testing.examples import add_kernel, softmax_kernel
from workbench.testing.work import Run, Work, WorkCountError, count_work


@wb.jit
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        av = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        bv = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(av, bv)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


@wb.jit
def fma_loop(x, out, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    for _ in range(iters):
        v = tl.fma(v, 0.5, 0.25)
    tl.store(out + offs, v)


@wb.jit
def data_dependent_loop(x, out, n_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    n = tl.load(n_ptr)
    for _ in range(n):
        v = v * 2.0
    tl.store(out + offs, v)


def _vec(n, dt=np.float32):
    return np.ones(n, dt), np.ones(n, dt), np.empty(n, dt)


def test_vector_add_static_counts_and_caps():
    x, y, o = _vec(1000)
    w = count_work(add_kernel, (4,), x, y, o, 1000, BLOCK_SIZE=256)
    assert w.mode == "static" and w.programs == 4 and w.complete
    assert w.flops == 4 * 256                      # one addf per element of each tile
    assert w.bytes_issued == 3 * 4 * 256 * 4       # 3 tiles of 256 fp32 per program
    assert w.bytes_read == 2 * 4000 and w.bytes_written == 4000   # capped at the arrays
    assert w.bytes_by_arg["out_ptr"] == (0.0, 4000)
    assert w.dtype == "fp32"
    assert abs(w.intensity - 1024 / 12000) < 1e-12


def test_vector_add_exact_counts_unmasked_only():
    x, y, o = _vec(1000)
    o[:] = -7
    w = count_work(add_kernel, (4,), x, y, o, 1000, BLOCK_SIZE=256, exact=True)
    assert w.mode == "exact"
    assert w.bytes_read == 8000 and w.bytes_written == 4000 and w.bytes_issued == 12000
    assert w.flops == 1024                         # masked lanes are computed too
    assert (o == -7).all()                         # ran on copies


def test_fp64_dtype_and_no_cap_for_compiled_kernel():
    x, y, o = _vec(512, np.float64)
    compiled = add_kernel.warmup(x, y, o, 512, BLOCK_SIZE=256, grid=(2,))
    w = count_work(compiled, (2,))                 # no arrays known: nothing capped
    assert w.flops_by_dtype == {"fp64": 512.0}
    assert w.bytes == 3 * 512 * 8


def test_matmul_dot_and_loop_trip_count_from_launch_scalar():
    M = N = K = 32
    a, b = np.ones((M, K), np.float32), np.ones((K, N), np.float32)
    c = np.empty((M, N), np.float32)
    w = count_work(matmul, (2, 2), a, b, c, M, N, K, BM=16, BN=16, BK=16)
    assert w.flops_by_dtype["fp32:dot"] == 2 * M * N * K
    # triton-combine folds `acc += tl.dot(a, b)` into the dot's accumulator: no separate add
    assert "fp32" not in w.flops_by_dtype
    assert w.dtype == "fp32:dot"
    assert w.bytes_read == a.nbytes + b.nbytes and w.bytes_written == c.nbytes
    assert w.bytes_issued == 4 * (K // 16) * 2 * 16 * 16 * 4 + c.nbytes
    e = count_work(matmul, (2, 2), a, b, c, M, N, K, BM=16, BN=16, BK=16, exact=True)
    assert (e.flops, e.bytes_read, e.bytes_written) == (w.flops, w.bytes_read, w.bytes_written)


def test_reduction_counts_combines():
    x = np.ones((4, 100), np.float32)
    y = np.empty_like(x)
    w = count_work(softmax_kernel, (4,), y, x, 100, 100, 100, BLOCK_SIZE=128)
    per_row = 3 * 128 + 2 * 127                    # sub, exp, div + max and sum combines
    assert w.flops == 4 * per_row
    e = count_work(softmax_kernel, (4,), y, x, 100, 100, 100, BLOCK_SIZE=128, exact=True)
    assert e.flops == w.flops and e.bytes == 2 * x.nbytes


def test_fma_counts_two_and_runtime_loop():
    x, _, o = _vec(64)
    w = count_work(fma_loop, (1,), x, o, 5, BLOCK=64)
    assert w.flops == 5 * 2 * 64
    e = count_work(fma_loop, (1,), x, o, 5, BLOCK=64, exact=True)
    assert e.flops == w.flops


def test_unknown_trip_count_asks_for_override_or_exact():
    x, _, o = _vec(16)
    n = np.array([3], np.int32)
    with pytest.raises(WorkCountError, match="exact=True"):
        count_work(data_dependent_loop, (1,), x, o, n, BLOCK=16)
    e = count_work(data_dependent_loop, (1,), x, o, n, BLOCK=16, exact=True)
    assert e.flops == 3 * 16
    u = count_work(data_dependent_loop, (1,), x, o, n, BLOCK=16, flops=99, bytes=10)
    assert (u.flops, u.bytes, u.mode) == (99.0, 10.0, "user")


def test_partial_override_keeps_the_other_count():
    x, y, o = _vec(256)
    w = count_work(add_kernel, (1,), x, y, o, 256, BLOCK_SIZE=256, flops=7)
    assert w.flops == 7 and w.bytes == 3 * 1024 and w.mode == "static+user"


def test_callable_grid():
    x, y, o = _vec(512)
    w = count_work(add_kernel, lambda meta: (512 // meta["BLOCK_SIZE"],), x, y, o, 512,
                   BLOCK_SIZE=128)
    assert w.programs == 4


def test_run_rates():
    r = Run("k", seconds=2.0, flops=8.0, bytes=4.0)
    assert (r.intensity, r.flops_per_s, r.bytes_per_s) == (2.0, 4.0, 2.0)
    assert Work(flops=0.0, bytes=0.0).intensity == float("inf")


def test_barriers_executed_multiplies_loop_barriers_by_trip_counts():
    from workbench.testing.work import barriers_executed
    sig = ("*fp16:16", "*fp16:16", "*fp32:16", "i32", "i32", "i32")
    k = wb.compile(matmul, *sig, target="cuda:90", BM=64, BN=64, BK=32)
    ttgir = k.asm["ttgir"]
    loop = ttgir[ttgir.index("scf.for"):]
    in_loop = loop[:loop.index("\n    }")].count("gpu.barrier")
    outside = ttgir.count("gpu.barrier") - in_loop
    assert in_loop > 0
    for K in (64, 320):
        want = outside + in_loop * (K // 32)
        assert barriers_executed(k, {"M": 64, "N": 64, "K": K}) == want
    assert barriers_executed(k, {}) == outside + in_loop      # K unknown: the loop once
    cpu = wb.compile(matmul, *sig, target="cpu", BM=64, BN=64, BK=32)
    assert barriers_executed(cpu, {"K": 64}) is None           # no ttgir on the CPU
