"""``.type`` of a compile-time value is ``constexpr_type(value)`` (equal when the values
are); a number bound by a plain ``x = ...`` is a scalar tensor for Triton, so its ``.type``
is the tensor's dtype (int -> int32, float -> fp32)."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError
from workbench.language.tuples import constexpr_type


@wb.jit
def types_kernel(out_ptr, C: tl.constexpr, LIFTED: tl.constexpr):
    local: tl.constexpr = C
    tl.static_assert(C.type == constexpr_type(C))
    tl.static_assert(local.type == C.type)
    plain = C
    tl.static_assert(plain.type == LIFTED)
    tl.store(out_ptr, plain * 2)


@pytest.mark.parametrize("kind", ["int", "float"])
def test_constexpr_type_and_lifted_type(backend, kind):
    rng = np.random.default_rng()
    if kind == "int":
        c, lifted, out = int(rng.integers(-1000, 1000)), tl.int32, np.zeros(1, np.int32)
    else:
        c, lifted, out = float(rng.uniform(-8, 8)), tl.float32, np.zeros(1, np.float32)
    types_kernel[(1,)](out, c, lifted)
    np.testing.assert_allclose(out[0], np.float32(c) * 2 if kind == "float" else c * 2)


@wb.jit
def mismatched(out_ptr, A: tl.constexpr, B: tl.constexpr):
    tl.static_assert(A.type == B.type)
    tl.store(out_ptr, A)


def test_constexpr_types_of_different_values_differ():
    out = np.zeros(1, np.int32)
    mismatched[(1,)](out, 3, 3)
    assert out[0] == 3
    with pytest.raises(CompilationError):
        mismatched[(1,)](out, 3, 4)


def test_constexpr_type_outside_a_kernel():
    assert tl.constexpr(5).type == constexpr_type(5)
    assert tl.constexpr(5).type != constexpr_type(6)
    assert constexpr_type(2.5) == constexpr_type(2.5)
