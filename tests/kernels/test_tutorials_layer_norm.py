"""Layer-norm backward in the form of Triton's tutorial 05 (``_layer_norm_bwd_dx_fused`` and
``_layer_norm_bwd_dwdb``), written for this project. The first kernel computes ``dx`` for its
row and adds the row's ``dw``/``db`` contributions into one of ``GROUP_SIZE_M`` partial buffers
(row ``r`` uses buffer ``r % GROUP_SIZE_M``) under a spin lock: ``atomic_cas`` in a ``while``
condition, a ``Count`` word that tells the first writer of a buffer to store instead of
accumulate, ``atomic_xchg`` to release. The second kernel sums the partial buffers.

Checked against a float64 numpy reference on the interpreter and the CPU backend (whose
programs run on several worker threads at once, so the lock is contended), with fresh random
inputs, NaN-poisoned outputs and partial buffers (a first writer that read its buffer would
spread NaN), masked columns, a row stride wider than ``N``, and ``M`` not a multiple of
``GROUP_SIZE_M`` (also ``M < GROUP_SIZE_M``: some buffers are never written). Every launched
specialisation also compiles to PTX for sm_80 and sm_90 (tests/kernels/conftest.py); one test
checks the lock's PTX; a ``gpu`` test runs the kernels on CUDA with torch tensors."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@wb.jit
def layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                            GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # DX, DY, X: [M, stride] rows (N used); DW, DB: [GROUP_SIZE_M, N] partial sums;
    # Lock: [2 * GROUP_SIZE_M] int32 zeros, the locks then the per-buffer write counts.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    in_row = cols < N
    group = row % GROUP_SIZE_M
    Lock += group
    Count = Lock + GROUP_SIZE_M
    DW += group * N + cols
    DB += group * N + cols

    x = tl.load(X + row * stride + cols, mask=in_row, other=0.).to(tl.float32)
    dy = tl.load(DY + row * stride + cols, mask=in_row, other=0.).to(tl.float32)
    w = tl.load(W + cols, mask=in_row).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    # y = xhat * w + b  =>  dx = rstd * (w*dy - mean(w*dy) - xhat * mean(xhat * w*dy))
    xhat = tl.where(in_row, (x - mean) * rstd, 0.)
    wdy = tl.where(in_row, w * dy, 0.)
    mean_xhat_wdy = tl.sum(xhat * wdy, axis=0) / N
    mean_wdy = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * mean_xhat_wdy + mean_wdy)) * rstd
    tl.store(DX + row * stride + cols, dx, mask=in_row)

    dw_row = (dy * xhat).to(w.dtype)
    db_row = dy.to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:  # this buffer's first writer: its content is not initialised
        tl.atomic_xchg(Count, 1)
    else:
        dw_row += tl.load(DW, mask=in_row)
        db_row += tl.load(DB, mask=in_row)
    tl.store(DW, dw_row, mask=in_row)
    tl.store(DB, db_row, mask=in_row)
    tl.debug_barrier()  # on a GPU every thread's store is done before the lock is released
    tl.atomic_xchg(Lock, 0)


@wb.jit
def layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N,
                        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # FINAL_DW[c] = sum of DW[0:M, c] (M partial buffers of N), likewise for DB.
    cols = tl.program_id(0) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for first in range(0, M, BLOCK_SIZE_M):
        rows = first + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows < M)[:, None] & (cols < N)[None, :]
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


def make_inputs(m, n, pad):
    """Fresh fp32 inputs: x, dy as [m, n + pad] rows (padding NaN: a read past N would show),
    w [n], and the forward pass's mean/rstd [m] (fp32, from float64). Returns seed and arrays."""
    seed = int(np.random.SeedSequence().entropy)
    rng = np.random.default_rng(seed)
    x = np.full((m, n + pad), np.nan, np.float32)
    dy = np.full((m, n + pad), np.nan, np.float32)
    x[:, :n] = rng.standard_normal((m, n)) * 2.0 + rng.uniform(-1, 1, (m, 1))
    dy[:, :n] = rng.standard_normal((m, n))
    w = rng.uniform(0.5, 1.5, n).astype(np.float32)
    xs = x[:, :n].astype(np.float64)
    mean = xs.mean(1).astype(np.float32)
    rstd = (1 / np.sqrt(xs.var(1) + 1e-5)).astype(np.float32)
    return seed, x, dy, w, mean, rstd


def reference(x, dy, w, mean, rstd, n):
    """In float64 for y = (x - mean) * rstd * w + b: dx [m, n], dw [n], db [n], and per column
    the sums of |terms| of dw and db (for their tolerances)."""
    x, dy = x[:, :n].astype(np.float64), dy[:, :n].astype(np.float64)
    mu, rs = mean.astype(np.float64)[:, None], rstd.astype(np.float64)[:, None]
    xhat = (x - mu) * rs
    wdy = w.astype(np.float64) * dy
    dx = (wdy - xhat * (xhat * wdy).mean(1, keepdims=True) - wdy.mean(1, keepdims=True)) * rs
    return dx, (dy * xhat).sum(0), dy.sum(0), np.abs(dy * xhat).sum(0), np.abs(dy).sum(0)


def assert_close(name, got, want, tol, msg):
    """|got - want| <= tol elementwise (tol broadcasts); NaN fails."""
    err = np.abs(got.astype(np.float64) - want)
    tol = np.broadcast_to(tol, err.shape)
    bad = ~(err <= tol)
    assert not bad.any(), (f"{msg}: {name}: {bad.sum()} of {bad.size} elements off, first at "
                           f"{np.argwhere(bad)[:4].tolist()}: got {got[bad][:4]}, want "
                           f"{want[bad][:4]}, tolerance {tol[bad][:4]}")


def fused_backward(dy, x, w, mean, rstd, n, group_size_m, full):
    """Launch both kernels as the tutorial's host code does, except that the partial buffers
    are NaN-poisoned instead of zeroed and only the ``min(m, group_size_m)`` written ones are
    summed. ``full(shape, value, kind)`` (kind "f32" or "i32") allocates on the inputs'
    device. Returns dx [m, stride], dw [n], db [n], (dw_part, db_part) (each [group_size_m,
    n]) and the lock and count words [2 * group_size_m]."""
    m, stride = x.shape
    dx = full((m, stride), float("nan"), "f32")
    dw_part = full((group_size_m, n), float("nan"), "f32")
    db_part = full((group_size_m, n), float("nan"), "f32")
    locks = full((2 * group_size_m,), 0, "i32")
    layer_norm_bwd_dx_fused[(m,)](dx, dy, dw_part, db_part, x, w, mean, rstd, locks, stride, n,
                                  GROUP_SIZE_M=group_size_m,
                                  BLOCK_SIZE_N=wb.next_power_of_2(n))
    dw, db = full((n,), float("nan"), "f32"), full((n,), float("nan"), "f32")
    used = min(m, group_size_m)  # buffers past row m - 1 were never written
    layer_norm_bwd_dwdb[(wb.cdiv(n, 32),)](dw_part, db_part, dw, db, used, n,
                                           BLOCK_SIZE_M=8, BLOCK_SIZE_N=32)
    return dx, dw, db, (dw_part, db_part), locks


def check(seed, outs, x, dy, w, mean, rstd, group_size_m):
    """Every element of dx, dw, db against the float64 reference, with fp32 tolerances
    (u = 2^-24, the unit roundoff): dx is a few fp32 operations on two row means of N terms,
    values of order 1 (1e-6 absolute, about 17 u, plus 4e-6 = 67 u relative); dw and db are
    fp32 sums of M terms, each a product of a few rounded operations: (4 + 2 sqrt(M)) u
    sum|terms| (the sqrt(M) part: the probabilistic rounding-error bound of a sum, Higham and
    Mary, SIAM J. Sci. Comput. 41(5), 2019). Also: the padding of dx and the unused partial
    buffers untouched, every lock released, each used buffer's count 1."""
    dx, dw, db, parts, locks = outs
    m, stride = x.shape
    n = w.shape[0]
    dx_ref, dw_ref, db_ref, dw_abs, db_abs = reference(x, dy, w, mean, rstd, n)
    msg = f"seed {seed}, M={m}, N={n}, stride={stride}, GROUP_SIZE_M={group_size_m}"
    assert_close("dx", dx[:, :n], dx_ref, 1e-6 + 4e-6 * np.abs(dx_ref), msg)
    assert np.isnan(dx[:, n:]).all(), msg
    sum_tol = (4 + 2 * np.sqrt(m)) * np.finfo(np.float32).eps / 2
    assert_close("dw", dw, dw_ref, sum_tol * dw_abs, msg)
    assert_close("db", db, db_ref, sum_tol * db_abs, msg)
    used = min(m, group_size_m)
    for part in parts:
        assert not np.isnan(part[:used]).any() and np.isnan(part[used:]).all(), msg
    np.testing.assert_array_equal(locks[:group_size_m], 0, err_msg=msg)
    np.testing.assert_array_equal(locks[group_size_m:],
                                  np.arange(group_size_m) < used, err_msg=msg)


def numpy_full(shape, value, kind):
    return np.full(shape, value, np.float32 if kind == "f32" else np.int32)


# (M, N, GROUP_SIZE_M, row padding): N not a power of two (masked columns), M not a multiple of
# GROUP_SIZE_M, M < GROUP_SIZE_M, a power-of-two N, many rows per buffer (contended locks)
SHAPES = [(37, 100, 8, 0), (5, 33, 8, 3), (64, 256, 16, 0), (203, 781, 4, 5), (150, 48, 1, 0)]


@pytest.mark.parametrize("m,n,group_size_m,pad", SHAPES)
def test_layer_norm_backward_fused_lock(backend, m, n, group_size_m, pad):
    seed, x, dy, w, mean, rstd = make_inputs(m, n, pad)
    outs = fused_backward(dy, x, w, mean, rstd, n, group_size_m, numpy_full)
    check(seed, outs, x, dy, w, mean, rstd, group_size_m)


def test_layer_norm_backward_fused_lock_many_programs_cpu(monkeypatch):
    """8191 programs on every worker thread of the CPU backend, three locks, three launches:
    the lock is contended (without it, updates of a partial buffer get lost: a lock that does
    not exclude failed about three launches in four when this test was written)."""
    monkeypatch.delenv("WORKBENCH_INTERPRET", raising=False)
    for _ in range(3):
        seed, x, dy, w, mean, rstd = make_inputs(8191, 100, 0)
        outs = fused_backward(dy, x, w, mean, rstd, 100, 3, numpy_full)
        check(seed, outs, x, dy, w, mean, rstd, 3)


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_layer_norm_backward_fused_lock_ptx(target):
    """The lock in PTX: one thread of the CTA does the compare-and-swap (acq_rel, gpu scope)
    and the exchanges, the others learn the result through shared memory after a barrier;
    ptxas assembles it where installed."""
    from workbench.backends.nvidia_tools import find_tool
    c = wb.compile(layer_norm_bwd_dx_fused, "*fp32", "*fp32", "*fp32", "*fp32", "*fp32",
                   "*fp32", "*fp32", "*fp32", "*i32", "i32", "i32", target=target,
                   GROUP_SIZE_M=16, BLOCK_SIZE_N=1024)
    ptx = c.asm["ptx"]
    cas = [ln for ln in ptx.splitlines() if "atom.global.acq_rel.gpu.cas.b32" in ln]
    xchg = [ln for ln in ptx.splitlines() if "atom.global.gpu.acq_rel.exch.b32" in ln]
    assert len(cas) == 1 and cas[0].strip().startswith("@%p"), cas
    assert len(xchg) == 2 and all(ln.strip().startswith("@%p") for ln in xchg), xchg
    assert "bar.sync" in ptx
    if find_tool("ptxas") is not None:
        assert "cubin" in c.asm, c.extra


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,group_size_m,pad", [(37, 100, 8, 0), (5, 33, 8, 3),
                                                  (1151, 781, 64, 3), (4096, 1024, 32, 0)])
def test_layer_norm_backward_fused_lock_gpu(m, n, group_size_m, pad):
    torch = pytest.importorskip("torch")
    seed, x, dy, w, mean, rstd = make_inputs(m, n, pad)
    kinds = {"f32": torch.float32, "i32": torch.int32}

    def full(shape, value, kind):
        return torch.full(shape, value, dtype=kinds[kind], device="cuda")
    dev = [torch.from_numpy(a).cuda() for a in (dy, x, w, mean, rstd)]
    outs = fused_backward(*dev, n, group_size_m, full)
    torch.cuda.synchronize()
    dx, dw, db, parts, locks = (o.cpu().numpy() if not isinstance(o, tuple)
                                else tuple(p.cpu().numpy() for p in o) for o in outs)
    check(seed, (dx, dw, db, parts, locks), x, dy, w, mean, rstd, group_size_m)
