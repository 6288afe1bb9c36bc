"""The CPU backend's bounds check leaves pointers made from integers alone (a table of
addresses of arrays that are not launch arguments, Triton's grouped-GEMM pattern): Triton
checks nothing, and the launch does not know those arrays. Pointers derived from the
parameters stay checked."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import OutOfBoundsError


@wb.jit
def gather_rows(table_ptr, out_table_ptr, N: tl.constexpr):
    g = tl.program_id(0)
    src = tl.load(table_ptr + g).to(tl.pointer_type(tl.float32))
    dst = tl.load(out_table_ptr + g).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, N)
    acc = tl.zeros((N,), tl.float32)
    for k in range(0, 2):  # loop-carried pointers made from integers
        acc += tl.load(src + k * N + offs)
    tl.store(dst + offs, acc * (g + 1))


def test_pointers_from_an_address_table_run_on_the_cpu():
    rng = np.random.default_rng()
    srcs = [rng.standard_normal(64).astype(np.float32) for _ in range(3)]
    dsts = [np.full(32, np.nan, np.float32) for _ in range(3)]
    table = np.array([a.ctypes.data for a in srcs], dtype=np.int64)
    out_table = np.array([a.ctypes.data for a in dsts], dtype=np.int64)
    k = wb.compile(gather_rows, table, out_table, N=32, target="cpu")
    k[(3,)](table, out_table)
    for g in range(3):
        want = (srcs[g][:32] + srcs[g][32:]) * np.float32(g + 1)
        np.testing.assert_allclose(dsts[g], want, rtol=1e-6)


@wb.jit
def past_the_end(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(x_ptr + offs + N, tl.load(x_ptr + offs))


def test_parameter_pointers_are_still_checked():
    x = np.zeros(16, np.float32)
    k = wb.compile(past_the_end, x, N=16, target="cpu")
    with pytest.raises(OutOfBoundsError):
        k[(1,)](x)
