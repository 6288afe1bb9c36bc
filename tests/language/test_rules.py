"""The language rules as pure functions: dtypes, promotion table, to_tensor typing, shape
checks, constexpr arithmetic, host helpers."""
import math

import pytest

import workbench.language as tl
from workbench.ir import types as irt
from workbench.language import dtypes as dt
from workbench.language.core import LanguageError
from workbench.language.semantic import (
    computation_type,
    integer_promote,
    type_of_py,
    validate_block_shape,
)
from workbench.language.utils import cdiv, next_power_of_2


def test_dtype_attributes():
    assert tl.uint32.to_ir() == irt.i32 and tl.int32.to_ir() == irt.i32
    assert tl.int1.to_ir() == irt.i1 and tl.bfloat16.to_ir() == irt.bf16
    assert tl.pointer_type(tl.float16).to_ir() == irt.PointerType(irt.f16)
    assert tl.float16.is_floating() and not tl.int8.is_floating()
    assert tl.int8.is_int_signed() and not tl.uint8.is_int_signed()
    assert tl.int1.is_int_unsigned() and tl.int1.is_bool()
    assert [d.primitive_bitwidth for d in (tl.int1, tl.uint16, tl.bfloat16, tl.float64)] == \
        [1, 16, 16, 64]
    assert tl.float32.fp_mantissa_width == 23 and tl.bfloat16.fp_mantissa_width == 7
    assert tl.pointer_type(tl.int8) == tl.pointer_type(tl.int8) != tl.pointer_type(tl.uint8)
    assert dt.from_short_name("*fp32") == tl.pointer_type(tl.float32)
    assert dt.from_short_name("u64") == tl.uint64 and str(tl.bfloat16) == "bf16"
    with pytest.raises(ValueError):
        dt.from_short_name("f8")


@pytest.mark.parametrize("a,b,div,expected", [
    (tl.float64, tl.float16, False, tl.float64),
    (tl.float16, tl.float16, True, tl.float32),   # / and % do not exist below fp32
    (tl.float32, tl.int64, False, tl.float32),
    (tl.float16, tl.bfloat16, False, tl.float16),
    (tl.bfloat16, tl.bfloat16, False, tl.bfloat16),
    (tl.bfloat16, tl.int8, False, tl.float32),
    (tl.int8, tl.float16, False, tl.float16),
    (tl.int32, tl.uint32, False, tl.uint32),
    (tl.int64, tl.uint32, False, tl.int64),
    (tl.int8, tl.int16, False, tl.int16),
    (tl.uint8, tl.int1, False, tl.uint8),
])
def test_tensor_tensor_promotion(a, b, div, expected):
    assert computation_type(a, False, b, False, div) == expected
    assert computation_type(b, False, a, False, div) == expected


@pytest.mark.parametrize("scalar,tensor_ty,div,expected", [
    (2.0, tl.float16, False, tl.float16),   # same kind: the tensor wins
    (2.0, tl.float16, True, tl.float32),
    (1, tl.uint8, False, tl.uint8),
    (4.0, tl.int16, False, tl.float32),     # higher kind: the scalar's own type joins
    (1e300, tl.int16, False, tl.float64),
    (True, tl.int8, False, tl.int8),
    (3, tl.int1, False, tl.int32),
])
def test_scalar_tensor_promotion(scalar, tensor_ty, div, expected):
    assert computation_type(type_of_py(scalar), True, tensor_ty, False, div) == expected
    assert computation_type(tensor_ty, False, type_of_py(scalar), True, div) == expected


def test_mixed_signedness_div_is_error():
    with pytest.raises(LanguageError, match="different signedness"):
        computation_type(tl.uint32, False, tl.int32, False, True)
    assert integer_promote(tl.uint16, tl.int32) == tl.int32


def test_to_tensor_types():
    assert type_of_py(5) == tl.int32 and type_of_py(2**31) == tl.uint32
    assert type_of_py(-2**31 - 1) == tl.int64 and type_of_py(2**63) == tl.uint64
    assert type_of_py(True) == tl.int1
    assert type_of_py(0.5) == tl.float32 and type_of_py(math.inf) == tl.float32
    assert type_of_py(1e-40) == tl.float64
    with pytest.raises(LanguageError):
        type_of_py(2**64)


def test_block_shape_rules():
    assert validate_block_shape((1, 16, tl.constexpr(4))) == (1, 16, 4)
    with pytest.raises(LanguageError, match="Shape element 1 must be a power of 2"):
        validate_block_shape((16, 12))
    with pytest.raises(LanguageError, match="exceeds"):
        validate_block_shape((2048, 1024))


def test_constexpr_uses_python_semantics():
    assert (tl.constexpr(-7) // 2).value == -4
    assert (tl.constexpr(-7) % 2).value == 1
    assert (3 * tl.constexpr(4)).value == 12 and (tl.constexpr(7) / 2).value == 3.5
    assert (tl.constexpr(3) < 4).value is True and int(tl.constexpr(5)) == 5


def test_host_helpers():
    assert [cdiv(x, 4) for x in (0, 1, 4, 5)] == [0, 1, 1, 2]
    assert [next_power_of_2(x) for x in (0, 1, 2, 3, 1000, 1024)] == [1, 1, 2, 4, 1024, 1024]
    with pytest.raises(RuntimeError, match="inside a @jit kernel"):
        tl.program_id(0)
