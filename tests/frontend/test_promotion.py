"""Type promotion, integer division and casts in emitted ttir (Triton's
``docs/python-api/triton-semantics.rst`` and ``python/triton/language/semantic.py``)."""
import pytest
from fe_helpers import const, filecheck, ptr, ttir

import workbench.language as tl
from workbench.errors import CompilationError


def binop(a_ptr, b_ptr, out_ptr, OP: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    if OP == "add":
        c = a + b
    elif OP == "div":
        c = a / b
    elif OP == "floordiv":
        c = a // b
    elif OP == "mod":
        c = a % b
    elif OP == "lt":
        c = a < b
    elif OP == "mul_scalar":
        c = a * 2.0
    elif OP == "add_scalar_float":
        c = a + 1.5
    elif OP == "add_scalar_int":
        c = a + 1
    elif OP == "rshift":
        c = a >> b
    else:
        c = tl.maximum(a, b)
    tl.store(out_ptr + offs, c)


def _ir(ta, tb, tout, op):
    return ttir(binop, ptr("a_ptr", "*" + ta), ptr("b_ptr", "*" + tb), ptr("out_ptr", "*" + tout),
                const("OP", op), const("N", 16))


def test_int8_plus_float_scalar_is_fp32():
    filecheck(_ir("i8", "i8", "fp32", "add_scalar_float"), """
CHECK: %c = arith.sitofp %a_1 : tensor<16xi8> to tensor<16xf32>
CHECK-NEXT: %c_{{[0-9]+}} = arith.constant dense<1.500000e+00> : tensor<16xf32>
CHECK-NEXT: arith.addf %c, %c_{{[0-9]+}} : tensor<16xf32>
""")


def test_int8_plus_int_scalar_stays_int8():
    filecheck(_ir("i8", "i8", "i8", "add_scalar_int"), """
CHECK: %c = arith.constant dense<1> : tensor<16xi8>
CHECK-NEXT: arith.addi %a_1, %c : tensor<16xi8>
""")


def test_int8_plus_fp16_tensor_is_fp16():
    filecheck(_ir("i8", "fp16", "fp16", "add"), """
CHECK: %c = arith.sitofp %a_1 : tensor<16xi8> to tensor<16xf16>
CHECK-NEXT: arith.addf %c, %b_3 : tensor<16xf16>
""")


def test_fp16_times_python_float_stays_fp16():
    filecheck(_ir("fp16", "fp16", "fp16", "mul_scalar"), """
CHECK: %c = arith.constant dense<2.000000e+00> : tensor<16xf16>
CHECK-NEXT: arith.mulf %a_1, %c : tensor<16xf16>
CHECK-NOT: arith.extf
""")


def test_int_div_int_is_fp32():
    filecheck(_ir("i32", "i32", "fp32", "div"), """
CHECK: %c = arith.sitofp %a_1 : tensor<16xi32> to tensor<16xf32>
CHECK-NEXT: %c_{{[0-9]+}} = arith.sitofp %b_3 : tensor<16xi32> to tensor<16xf32>
CHECK-NEXT: arith.divf %c, %c_{{[0-9]+}} : tensor<16xf32>
""")


def test_fp16_div_fp16_goes_through_fp32():
    filecheck(_ir("fp16", "fp16", "fp16", "div"), """
CHECK: arith.extf %a_1 : tensor<16xf16> to tensor<16xf32>
CHECK: arith.extf %b_3 : tensor<16xf16> to tensor<16xf32>
CHECK: arith.divf {{.*}} : tensor<16xf32>
CHECK: arith.truncf {{.*}} : tensor<16xf32> to tensor<16xf16>
""")


def test_uint32_plus_int32_is_unsigned():
    filecheck(_ir("u32", "i32", "u32", "add"), """
CHECK: %c = arith.addi %a_1, %b_3 : tensor<16xi32>
""")
    filecheck(_ir("u32", "i32", "i1", "lt"), """
CHECK: arith.cmpi ult, %a_1, %b_3 : tensor<16xi32>
""")
    filecheck(_ir("u32", "u32", "u32", "rshift"), "CHECK: arith.shrui %a_1, %b_3\n")
    filecheck(_ir("u32", "u32", "u32", "max"), "CHECK: arith.maxui %a_1, %b_3\n")
    filecheck(_ir("u32", "u32", "u32", "floordiv"), "CHECK: arith.divui %a_1, %b_3\n")


def test_int64_plus_uint32_is_int64():
    filecheck(_ir("i64", "u32", "i64", "add"), """
CHECK: %c = arith.extui %b_3 : tensor<16xi32> to tensor<16xi64>
CHECK-NEXT: arith.addi %a_1, %c : tensor<16xi64>
""")


def test_floordiv_mod_signed_are_c_truncating():
    filecheck(_ir("i32", "i32", "i32", "floordiv"), "CHECK: arith.divsi %a_1, %b_3 : tensor<16xi32>\n")  # noqa: E501
    filecheck(_ir("i32", "i32", "i32", "mod"), "CHECK: arith.remsi %a_1, %b_3 : tensor<16xi32>\n")
    filecheck(_ir("i16", "i32", "i32", "floordiv"), """
CHECK: %c = arith.extsi %a_1 : tensor<16xi16> to tensor<16xi32>
CHECK-NEXT: arith.divsi %c, %b_3 : tensor<16xi32>
""")
    filecheck(_ir("fp32", "fp32", "fp32", "mod"), "CHECK: arith.remf %a_1, %b_3\n")
    filecheck(_ir("fp32", "fp32", "fp32", "max"), "CHECK: arith.maxnumf %a_1, %b_3\n")


def test_store_casts_to_pointee_and_bool_goes_through_int8():
    filecheck(_ir("fp32", "fp32", "fp16", "add"), """
CHECK: %c = arith.addf %a_1, %b_3 : tensor<16xf32>
CHECK: arith.truncf %c : tensor<16xf32> to tensor<16xf16>
CHECK: tt.store
""")
    filecheck(_ir("fp32", "fp32", "i1", "lt"), """
CHECK: %c = arith.cmpf olt, %a_1, %b_3 : tensor<16xf32>
CHECK: tt.bitcast %{{.*}} : tensor<16x!tt.ptr<i1>> -> tensor<16x!tt.ptr<i8>>
CHECK: arith.extui %c : tensor<16xi1> to tensor<16xi8>
CHECK: tt.store
""")


def test_mixed_signedness_floordiv_is_an_error():
    with pytest.raises(CompilationError) as e:
        _ir("u32", "i32", "u32", "floordiv")
    assert "different signedness" in e.value.reason
    assert e.value.loc.line == binop.__code__.co_firstlineno + 9


def reductions(x_ptr, out_ptr, WHICH: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    if WHICH == "sum":
        r = tl.sum(x, axis=0)
    elif WHICH == "max":
        r = tl.max(x, axis=0)
    else:
        r = tl.min(x)
    tl.store(out_ptr, r)


@pytest.mark.parametrize("ty,which,checks", [
    ("fp16", "sum", "CHECK: \"tt.reduce\"(%x_2)\nCHECK: arith.addf {{.*}} : f16\n"
                    "CHECK: (tensor<8xf16>) -> f16\n"),
    ("fp16", "max", "CHECK: %r = arith.extf %x_2 : tensor<8xf16> to tensor<8xf32>\n"
                    "CHECK: arith.maxnumf {{.*}} : f32\n"),
    ("i8", "sum", "CHECK: %r = arith.extsi %x_2 : tensor<8xi8> to tensor<8xi32>\n"
                  "CHECK: arith.addi {{.*}} : i32\n"),
    ("u8", "min", "CHECK: %r = arith.extui %x_2 : tensor<8xi8> to tensor<8xi32>\n"
                  "CHECK: arith.minsi {{.*}} : i32\n"),
    ("u16", "sum", "CHECK: arith.extui %x_2 : tensor<8xi16> to tensor<8xi32>\n"
                   "CHECK: arith.addi {{.*}} : i32\n"),
])
def test_reduction_accumulation_dtypes(ty, which, checks):
    filecheck(ttir(reductions, ptr("x_ptr", "*" + ty), ptr("out_ptr", "*fp32"),
                   const("WHICH", which), const("N", 8)), checks)


def casts(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    a = x.to(tl.bfloat16)
    b = x.to(tl.float16, fp_downcast_rounding="rtz")
    c = x.to(tl.int32, bitcast=True)
    d = a.to(tl.float16)
    e = x.to(tl.int1)
    tl.store(out_ptr + tl.arange(0, N), a + b + c + d + e)


def test_casts():
    filecheck(ttir(casts, ptr("x_ptr"), ptr("out_ptr"), const("N", 4)), """
CHECK: %a = arith.truncf %x_2 : tensor<4xf32> to tensor<4xbf16>
CHECK: %b = tt.fp_to_fp %x_2, rounding = rtz : tensor<4xf32> -> tensor<4xf16>
CHECK: %c = tt.bitcast %x_2 : tensor<4xf32> -> tensor<4xi32>
CHECK: %d = arith.extf %a : tensor<4xbf16> to tensor<4xf32>
CHECK-NEXT: %d_{{[0-9]+}} = arith.truncf %d : tensor<4xf32> to tensor<4xf16>
CHECK: %e = arith.constant dense<0.000000e+00> : tensor<4xf32>
CHECK-NEXT: %e_{{[0-9]+}} = arith.cmpf une, %x_2, %e : tensor<4xf32>
""")
