"""A @jit helper that returns a value on one path and falls off its end on another returns
``ub.poison`` there, as Triton's code generator does; a local bound to a number is a tensor in
Triton, so ``if flag:`` on it is a runtime if (folded by canonicalize when the flag is a
constant, which leaves the poison alone, as in Triton's ttir)."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@wb.jit
def _maybe(x):
    flag = False
    if flag:
        return x


@wb.jit
def _poison_kernel(out_ptr):
    zero = 0
    tl.store(out_ptr, _maybe(zero))


@wb.jit
def _first_positive(x, y):
    if x > 0:
        return x
    if y > 0:
        return y


@wb.jit
def _runtime_kernel(out_ptr, a, b):
    tl.store(out_ptr, _first_positive(a, b))


def test_the_fall_off_path_is_poison_in_ttir_and_llir():
    k = wb.compile(_poison_kernel, "*i32", target="cuda:90")
    ttir = k.asm["ttir"]
    assert "%0 = ub.poison : i32" in ttir and "tt.store %out_ptr, %0" in ttir
    assert "scf.if" not in ttir                      # the constant condition folded
    assert "i32 poison" in k.asm["llir"]


def test_poison_kernels_run(backend):
    out = np.full(1, 7, np.int32)
    _poison_kernel[(1,)](out)                         # any value is right; it must run


@pytest.mark.parametrize("a, b", [(3, -1), (-2, 5), (4, 9)])
def test_a_runtime_path_that_returns_gives_its_value(backend, a, b):
    out = np.zeros(1, np.int32)
    _runtime_kernel[(1,)](out, a, b)
    assert out[0] == (a if a > 0 else b)


def test_a_poison_branch_folds_to_the_other_value():
    # the inner if yields b or poison: canonicalize keeps b, as MLIR folds select(c, b, poison)
    k = wb.compile(_runtime_kernel, "*i32", "i32", "i32", target="interpreter")
    ttir = k.asm["ttir"]
    assert ttir.count("scf.if") == 1 and "ub.poison" not in ttir
