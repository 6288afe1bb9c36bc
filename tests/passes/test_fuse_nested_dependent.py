"""tritongpu-fuse-nested-loops on nests whose inner loop is stated to run, ``tl.assume(ub >
lb)`` (Triton 3.6's ``matchPositiveTripCount``): inner bounds that depend on the outer loop
give a length loop and one flat loop, as test_core's ``test_tl_range_fuse_dependent``
checks; bounds known before the nest give one loop without the empty-inner-loop guard. The
fused IR is run by the interpreter (ttgir) and by the CPU backend (the pass applied to the
ttir, then the CPU lowering) against Python's nest with random bounds, and assembled by
ptxas for sm_80 and sm_90. Nests Triton does not fuse (two inner loops, no ``tl.assume``)
stay nested."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends import nvidia_tools
from workbench.backends.base import PointerArg
from workbench.backends.cpu.backend import CpuBackend
from workbench.config import CompileContext, Options, Target
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.passes import PassManager
from workbench.passes.fuse_nested_loops import FuseNestedLoops
from workbench.passes.pipelines import ttgir_passes

from .pipeline_kernels import pipelined_ttgir, run_ttgir

HAVE_PTXAS = nvidia_tools.find_tool("ptxas") is not None
rng = np.random.default_rng()


@wb.jit
def dependent(ub, out_i_ptr, out_j_ptr):
    """test_core's ``test_tl_range_fuse_dependent`` kernel."""
    k = 0
    for i in tl.range(0, ub, flatten=True):
        lower_bound = i * 2
        upper_bound = lower_bound + i + 1
        tl.assume(upper_bound > lower_bound)
        for j in tl.range(lower_bound, upper_bound):
            tl.store(out_i_ptr + k, i)
            tl.store(out_j_ptr + k, j)
            k += 1


@wb.jit
def dependent_rows(x_ptr, out_ptr, cnt_ptr, M, W, BLOCK: tl.constexpr):
    """Row m sums the BLOCK-wide chunks start, start + 2, ... < stop of row m (W chunks
    wide), start = m % 3, stop = start + m + 1; a prologue pointer read in the body, an
    accumulator reset per row, a counter carried across the nest, an epilogue store."""
    offs = tl.arange(0, BLOCK)
    count = 0
    for m in tl.range(0, M, flatten=True):
        row = x_ptr + m * W * BLOCK
        start = m % 3
        stop = start + m + 1
        tl.assume(start < stop)
        acc = tl.zeros((BLOCK,), tl.float32)
        for k in tl.range(start, stop, 2):
            acc += tl.load(row + k * BLOCK + offs)
            count += 1
        tl.store(out_ptr + m * BLOCK + offs, acc)
    tl.store(cnt_ptr, count)


@wb.jit
def assumed_invariant(ub, n, out_ptr):
    k = 0
    for i in tl.range(0, ub, flatten=True):
        tl.assume(n > 0)
        for j in tl.range(0, n):
            tl.store(out_ptr + k, i * 100 + j)
            k += 1


@wb.jit
def two_inner(ub, out_ptr):
    for i in tl.range(0, ub, flatten=True):
        for j in tl.range(0, ub):
            tl.store(out_ptr + i * 32 + j, i + j)
        for j in tl.range(0, ub):
            tl.store(out_ptr + 1024 + i * 32 + j, i - j)


@wb.jit
def dependent_dot(a_ptr, b_ptr, c_ptr, T, BLOCK: tl.constexpr):
    """c[t] = sum over k in [t, t + t % 2 + 1) of a[k] @ b[k] (BLOCK x BLOCK fp16 tiles);
    the inner lower bound is the outer induction variable itself."""
    r = tl.arange(0, BLOCK)
    tile = r[:, None] * BLOCK + r[None, :]
    for t in tl.range(0, T, flatten=True):
        hi = t + t % 2 + 1
        tl.assume(hi > t)
        acc = tl.zeros((BLOCK, BLOCK), tl.float32)
        for k in tl.range(t, hi):
            a = tl.load(a_ptr + k * BLOCK * BLOCK + tile)
            b = tl.load(b_ptr + k * BLOCK * BLOCK + tile)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + t * BLOCK * BLOCK + tile, acc)


@wb.jit
def read_back(ub, out_ptr):
    """Outer iter args read in the inner body (``s``, ``old``), one carried through the
    inner loop (``t``), one set by the prologue (``c``), one by the epilogue (``s``)."""
    s = 0
    t = 100
    c = 7
    for i in tl.range(0, ub, flatten=True):
        lo = i
        hi = i + 2 + i % 3
        tl.assume(lo < hi)
        x = s * 2
        old = c
        c = c + i
        for j in tl.range(lo, hi):
            tl.store(out_ptr + i * 8 + j - lo, s + t + j + old * 1000 + c * 100000)
            t += 1
        s = s + x + 1
    tl.store(out_ptr + 1000, s)
    tl.store(out_ptr + 1001, t)
    tl.store(out_ptr + 1002, c)


DEP_SIG = ["i32", "*i32", "*i32"]
ROWS_SIG = ["*fp32", "*fp32", "*i32", "i32", "i32"]


def _nested(module) -> bool:
    return any(inner.name == "scf.for" for op in module.walk() if op.name == "scf.for"
               for inner in op.walk() if inner is not op)


def _triton_test_checks(ttgir: str) -> None:
    """The ttgir assertions of test_core's ``test_tl_range_fuse_dependent``."""
    ttgir = ttgir[ttgir.find("scf.for"):]
    assert ttgir[:ttgir.find("}")].count("scf.for") == 1
    ttgir = ttgir[ttgir.find("}"):]
    assert ttgir.count("scf.for") == 1


def _dependent_ref(ub: int) -> tuple[np.ndarray, np.ndarray]:
    ri, rj = np.zeros(1024, np.int32), np.zeros(1024, np.int32)
    k = 0
    for i in range(ub):
        for j in range(2 * i, 3 * i + 1):
            ri[k], rj[k] = i, j
            k += 1
    return ri, rj


def _rows_ref(x: np.ndarray, M: int) -> tuple[np.ndarray, int]:
    out = np.zeros((M, 16), np.float64)
    count = 0
    for m in range(M):
        start = m % 3
        for k in range(start, start + m + 1, 2):
            out[m] += x[m, k]
            count += 1
    return out, count


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_dependent_bounds_as_tritons_test(target):
    c = wb.compile(dependent, *DEP_SIG, target=target)
    assert "tt.flatten" in c.asm["ttir"] and "llvm.intr.assume" in c.asm["ttir"]
    _triton_test_checks(c.asm["ttgir"])
    body = c.asm["ttgir"].split("scf.for")[2]
    assert "scf.if" in body and "llvm.intr.assume" in body and "tt.flatten" not in body


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_fused_dependent_runs_the_nest_interpreted(target):
    m = pipelined_ttgir(dependent, DEP_SIG, target=target)
    for ub in [0, 1, *rng.integers(2, 20, size=3)]:
        oi, oj = np.full(1024, -7, np.int32), np.full(1024, -7, np.int32)
        run_ttgir(m, (1, 1, 1), [int(ub), oi, oj])
        ri, rj = _dependent_ref(int(ub))
        k = int(ub) * (int(ub) + 1) // 2  # stores made
        np.testing.assert_array_equal(oi[:k], ri[:k])
        np.testing.assert_array_equal(oj[:k], rj[:k])
        assert (oi[k:] == -7).all() and (oj[k:] == -7).all()


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_outer_values_read_back_in_the_fused_loop(target):
    m = pipelined_ttgir(read_back, ["i32", "*i32"], target=target)
    assert not _nested(m)
    for ub in [0, 1, *rng.integers(2, 12, size=2)]:
        ref = np.full(1024, -3, np.int32)
        read_back[(1,)](int(ub), ref)  # the nest as written, on the CPU backend
        out = np.full(1024, -3, np.int32)
        run_ttgir(m, (1, 1, 1), [int(ub), out])
        np.testing.assert_array_equal(out, ref)


def test_fused_rows_interpreted():
    m = pipelined_ttgir(dependent_rows, ROWS_SIG, target="cuda:90", BLOCK=16)
    text = print_module(m, locations=False)
    assert text.count("scf.for") == 2 and not _nested(m)
    for M in [0, 1, *rng.integers(2, 12, size=2)]:
        M = int(M)
        W = M + 3
        x = rng.standard_normal((max(M, 1), W, 16)).astype(np.float32)
        out = np.full((max(M, 1), 16), np.nan, np.float32)
        cnt = np.full(1, -1, np.int32)
        run_ttgir(m, (1, 1, 1), [x, out, cnt, M, W])
        want, count = _rows_ref(x, M)
        assert cnt[0] == count
        np.testing.assert_allclose(out[:M], want, rtol=1e-5, atol=1e-5)


def _cpu_fused(kernel, sig, **constexprs):
    """``kernel``'s ttir with the pass applied, lowered by the CPU backend (the CPU pipeline
    does not run the pass; this checks that the fused loop lowers there too)."""
    c = wb.compile(kernel, *sig, target="interpreter", **constexprs)
    m = parse_module(c.asm["ttir"])
    FuseNestedLoops().run(m)
    assert not _nested(m)
    return CpuBackend(Target.parse("cpu")).compile(m, None, Options(), CompileContext())


def _parg(a: np.ndarray) -> PointerArg:
    return PointerArg(a.ctypes.data, a.ctypes.data, a.ctypes.data + a.nbytes, a.itemsize, a)


def test_fused_dependent_on_the_cpu_backend():
    res = _cpu_fused(dependent, DEP_SIG)
    for ub in [0, 1, *rng.integers(2, 20, size=3)]:
        oi, oj = np.zeros(1024, np.int32), np.zeros(1024, np.int32)
        res.launcher((1, 1, 1), [int(ub), _parg(oi), _parg(oj)])
        ri, rj = _dependent_ref(int(ub))
        np.testing.assert_array_equal(oi, ri)
        np.testing.assert_array_equal(oj, rj)


def test_fused_rows_on_the_cpu_backend():
    res = _cpu_fused(dependent_rows, ROWS_SIG, BLOCK=16)
    for M in [1, *rng.integers(2, 12, size=2)]:
        M = int(M)
        W = M + 3
        x = rng.standard_normal((M, W, 16)).astype(np.float32)
        out = np.full((M, 16), np.nan, np.float32)
        cnt = np.full(1, -1, np.int32)
        res.launcher((1, 1, 1), [_parg(x), _parg(out), _parg(cnt), M, W])
        want, count = _rows_ref(x, M)
        assert cnt[0] == count
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_cpu_backend_runs_the_nest_as_written():
    # Triton runs the pass in make_ttgir only; the CPU backend compiles the ttir as written
    ub = int(rng.integers(3, 15))
    oi, oj = np.zeros(1024, np.int32), np.zeros(1024, np.int32)
    dependent[(1,)](ub, oi, oj)
    ri, rj = _dependent_ref(ub)
    np.testing.assert_array_equal(oi, ri)
    np.testing.assert_array_equal(oj, rj)


def test_assumed_positive_invariant_bounds_need_no_guard():
    m = pipelined_ttgir(assumed_invariant, ["i32", "i32", "*i32"], target="cuda:90")
    assert print_module(m, locations=False).count("scf.for") == 1  # Triton: one loop
    ub, n = (int(v) for v in rng.integers(1, 9, size=2))
    out = np.full(128, -1, np.int32)
    run_ttgir(m, (1, 1, 1), [ub, n, out])
    want = np.array([i * 100 + j for i in range(ub) for j in range(n)], np.int32)
    np.testing.assert_array_equal(out[:len(want)], want)
    assert (out[len(want):] == -1).all()


def test_two_inner_loops_stay_nested():
    # Triton's shouldFuse: exactly one child loop
    m = pipelined_ttgir(two_inner, ["i32", "*i32"], target="cuda:90")
    assert _nested(m) and print_module(m, locations=False).count("scf.for") == 3
    ub = int(rng.integers(2, 9))
    out = np.zeros(2048, np.int32)
    run_ttgir(m, (1, 1, 1), [ub, out])
    i, j = np.indices((ub, ub))
    np.testing.assert_array_equal(out[:1024].reshape(32, 32)[:ub, :ub], i + j)
    np.testing.assert_array_equal(out[1024:].reshape(32, 32)[:ub, :ub], i - j)


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_dot_nest_with_the_pipeliner(target):
    """By default a dot-from-loads nest is left to the cp.async pipeliner (a note says so);
    fused anyway, the pipeliner leaves the flat loop unpipelined and the result is right."""
    c = wb.compile(dependent_dot, "*fp16", "*fp16", "*fp32", "i32", target="interpreter",
                   BLOCK=32)
    passes = ttgir_passes(Options(num_warps=4, num_stages=3), Target.parse(target))
    fuse = next(p for p in passes if isinstance(p, FuseNestedLoops))
    default = PassManager(passes, verify=True).run(parse_module(c.asm["ttir"]), None, "ttgir")
    assert _nested(default) and fuse.notes
    passes[passes.index(fuse)] = FuseNestedLoops(num_stages=1)
    m = PassManager(passes, verify=True).run(parse_module(c.asm["ttir"]), None, "ttgir")
    assert not _nested(m)
    T = int(rng.integers(2, 6))
    a = rng.standard_normal((2 * T + 2, 32, 32)).astype(np.float16)
    b = rng.standard_normal((2 * T + 2, 32, 32)).astype(np.float16)
    for mod in (default, m):
        out = np.full((T, 32, 32), np.nan, np.float32)
        run_ttgir(mod, (1, 1, 1), [a, b, out, T])
        for t in range(T):
            ref = sum(a[k].astype(np.float32) @ b[k].astype(np.float32)
                      for k in range(t, t + t % 2 + 1))
            np.testing.assert_allclose(out[t], ref, rtol=1e-2, atol=5e-2)


@pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas not installed")
@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
@pytest.mark.parametrize("kernel, sig, consts", [(dependent, DEP_SIG, {}),
                                                 (dependent_rows, ROWS_SIG, {"BLOCK": 16})])
def test_ptxas_assembles_the_fused_loop(target, kernel, sig, consts):
    c = wb.compile(kernel, *sig, target=target, **consts)
    _triton_test_checks(c.asm["ttgir"])
    assert "@llvm.assume" in c.asm["llir"]
    assert c.asm["cubin"].startswith("cubin:")


@wb.jit
def tensor_assume(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.assume(offs < BLOCK)
    tl.store(x_ptr + offs, offs)


def test_assume_emission():
    # a scalar condition gives llvm.intr.assume (it parses back); a tensor one gives none
    assert "llvm.intr" not in wb.compile(tensor_assume, "*i32", target="interpreter",
                                      BLOCK=16).asm["ttir"]
    c = wb.compile(dependent, *DEP_SIG, target="interpreter")
    assert c.asm["ttir"].count("llvm.intr.assume") == 1
    assert print_module(parse_module(c.asm["ttir"]), locations=False).count(
        "llvm.intr.assume") == 1
    c = wb.compile(dependent_rows, *ROWS_SIG, target="interpreter", BLOCK=16)
    assert "llvm.intr.assume %" in c.asm["ttir"]
