"""tritongpu-fuse-nested-loops (``tl.range(..., flatten=True)``) on CUDA targets: the nest
becomes one ``scf.for`` as in Triton 3.6 (test_core's ``test_tl_range_fuse`` checks the
ttgir for exactly that), and the fused ttgir, run by the interpreter, computes what the
nest computes, for empty, one-iteration and longer loops. Nests the pass leaves alone: no
``flatten``, inner bounds that depend on the outer loop, an inner K loop the pipeliner
takes."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.ir.printer import print_module

from .pipeline_kernels import pipelined_ttgir, run_ttgir


@wb.jit
def fuse_counter(ub, out_ptr):
    k = 1
    for i in tl.range(0, ub, flatten=True):
        for j in tl.range(0, ub):
            tl.store(out_ptr + i * 32 + j, k)
            k += 1


@wb.jit
def fuse_rows(x_ptr, out_ptr, cnt_ptr, M, K, BLOCK: tl.constexpr, STEP: tl.constexpr):
    """Row sums of an M x K matrix, STEP rows apart, BLOCK columns per inner iteration;
    the outer loop also counts its iterations."""
    count = 0
    offs = tl.arange(0, BLOCK)
    for m in tl.range(1, M, STEP, flatten=True):
        base = x_ptr + m * K  # prologue
        acc = tl.zeros((BLOCK,), tl.float32)
        for k in range(0, K, BLOCK):
            acc += tl.load(base + k + offs, mask=k + offs < K, other=0.0)
        tl.store(out_ptr + m * BLOCK + offs, acc * 2)  # epilogue
        count += 1
    tl.store(cnt_ptr, count)


@wb.jit
def no_flatten(ub, out_ptr):
    for i in tl.range(0, ub):
        for j in tl.range(0, ub):
            tl.store(out_ptr + i * 32 + j, i + j)


@wb.jit
def dependent_bounds(ub, out_ptr):
    for i in tl.range(0, ub, flatten=True):
        for j in tl.range(i, ub):
            tl.store(out_ptr + i * 32 + j, i + j)


def _loops(module) -> int:
    return print_module(module, locations=False).count("scf.for")


def _nested(module) -> bool:
    """Whether an scf.for sits inside another."""
    return any(inner.name == "scf.for" for op in module.walk() if op.name == "scf.for"
               for inner in op.walk() if inner is not op)


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_flatten_gives_one_loop_as_triton(target):
    m = pipelined_ttgir(fuse_counter, ["i32", "*i32"], target=target)
    text = print_module(m, locations=False)
    assert text.count("scf.for") == 1, text  # Triton's test_tl_range_fuse assertion
    assert "tt.flatten" not in text.split("scf.for", 1)[1].split("\n")[0]


@pytest.mark.parametrize("ub", [0, 1, 3, 10])
def test_fused_counter_computes_the_nest(ub):
    m = pipelined_ttgir(fuse_counter, ["i32", "*i32"], target="cuda:90")
    out = np.zeros((32, 32), np.int32)
    run_ttgir(m, (1, 1, 1), [ub, out])
    ref = np.zeros((32, 32), np.int32)
    ref[:ub, :ub] = np.arange(1, ub * ub + 1).reshape(ub, ub)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("M, K, step", [(9, 40, 2), (2, 16, 1), (1, 16, 1), (7, 0, 3),
                                        (12, 5, 4)])
def test_fused_rows_with_prologue_epilogue_and_carried_values(M, K, step):
    m = pipelined_ttgir(fuse_rows, ["*fp32", "*fp32", "*i32", "i32", "i32"], BLOCK=16,
                        STEP=step, target="cuda:90")
    # the fused loop, and (as in Triton) a copy of the nest without its inner loop for
    # len(inner) <= 0, under an scf.if
    assert _loops(m) == 2 and not _nested(m)
    rng = np.random.default_rng()
    x = rng.standard_normal((max(M, 1), max(K, 1))).astype(np.float32)
    out = np.full((max(M, 1), 16), np.nan, np.float32)
    cnt = np.zeros(1, np.int32)
    run_ttgir(m, (1, 1, 1), [x, out, cnt, M, K])
    rows = list(range(1, M, step))
    assert cnt[0] == len(rows)
    for r in rows:
        want = np.zeros(16, np.float64)
        for k in range(0, K, 16):
            seg = x[r, k:k + 16].astype(np.float64)
            want[:len(seg)] += seg
        np.testing.assert_allclose(out[r], 2 * want, rtol=1e-5, atol=1e-5)
    untouched = [r for r in range(out.shape[0]) if r not in rows]
    assert np.isnan(out[untouched]).all()


def test_nests_left_alone():
    assert _nested(pipelined_ttgir(no_flatten, ["i32", "*i32"], target="cuda:90"))
    # inner bounds read the outer induction variable (Triton needs a tl.assume here)
    m = pipelined_ttgir(dependent_bounds, ["i32", "*i32"], target="cuda:90")
    assert _nested(m)
    out = np.zeros((32, 32), np.int32)
    run_ttgir(m, (1, 1, 1), [6, out])
    i, j = np.indices((32, 32))
    np.testing.assert_array_equal(out, np.where((i < 6) & (j >= i) & (j < 6), i + j, 0))


def test_cpu_and_interpreter_keep_the_nest():
    # the pass is part of the CUDA pipeline only; other targets run the kernel as written
    out = np.zeros((32, 32), np.int32)
    fuse_counter[(1,)](4, out)
    ref = np.zeros((32, 32), np.int32)
    ref[:4, :4] = np.arange(1, 17).reshape(4, 4)
    np.testing.assert_array_equal(out, ref)
