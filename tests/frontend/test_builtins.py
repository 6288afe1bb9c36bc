"""Builtins and Python constructs on compile-time values, checked in the emitted ttir."""
import re

import pytest
from fe_helpers import const, filecheck, ptr, scalar, ttir

import workbench.language as tl
from workbench.errors import CompilationError


def shapes(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    b = tl.broadcast_to(x[None, :], (4, N))
    r = tl.reshape(b, 4 * N)
    e = tl.expand_dims(x, 1)
    t = tl.sum(b, axis=None, keep_dims=True)
    tl.store(out_ptr + offs, x + tl.sum(r) + tl.max(e) + tl.sum(t))


def test_shape_builtins():
    filecheck(ttir(shapes, ptr("x_ptr"), ptr("out_ptr"), const("N", 8)), """
CHECK: %b = tt.expand_dims %x_1 {axis = 0 : i32} : tensor<8xf32> -> tensor<1x8xf32>
CHECK-NEXT: %b_{{[0-9]+}} = tt.broadcast %b : tensor<1x8xf32> -> tensor<4x8xf32>
CHECK-NEXT: %r = tt.reshape %b_{{[0-9]+}} : tensor<4x8xf32> -> tensor<32xf32>
CHECK-NEXT: %e = tt.expand_dims %x_1 {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
CHECK-NEXT: %t = tt.reshape %b_{{[0-9]+}} allow_reorder : tensor<4x8xf32> -> tensor<32xf32>
CHECK-NEXT: %t_{{[0-9]+}} = "tt.reduce"(%t) <{axis = 0 : i32}>
CHECK: }) : (tensor<32xf32>) -> f32
CHECK-NEXT: %t_{{[0-9]+}} = tt.splat %t_{{[0-9]+}} : f32 -> tensor<1xf32>
CHECK-NEXT: %t_{{[0-9]+}} = tt.expand_dims %t_{{[0-9]+}} {axis = 1 : i32} : tensor<1xf32> -> tensor<1x1xf32>
CHECK: tt.reshape %e allow_reorder : tensor<8x1xf32> -> tensor<8xf32>
""")  # noqa: E501


def misc(x_ptr, out_ptr, n, N: tl.constexpr):
    """docstrings are ignored"""
    pid = tl.program_id(1)
    np_ = tl.num_programs(2)
    offs = tl.multiple_of(tl.arange(0, N), 4)
    a, b = N // 2, max(N, 3)
    K: tl.constexpr = min(a, b) + len((1, 2)) + int(2.5)
    x = tl.load(x_ptr + offs, mask=(offs < n) & (pid < np_), other=float("-inf"))
    y = tl.where(x > 0, x, 0.0)
    z = tl.sigmoid(y) + tl.math.exp2(y) + tl.abs(y) + x.sum(0) + tl.rsqrt(y)
    z += tl.minimum(y, K) * tl.maximum(y, 1)
    c = tl.cdiv(n, K)
    w = z if K > 4 else y
    pass
    tl.store(out_ptr + offs + c, w, mask=offs < n)


def test_misc_builtins_and_python_values():
    filecheck(ttir(misc, ptr("x_ptr"), ptr("out_ptr"), scalar("n"), const("N", 16)), """
CHECK: %pid = tt.get_program_id y : i32
CHECK: %np_ = tt.get_num_programs z : i32
CHECK: %offs = tt.make_range {{.*}} : tensor<16xi32>
CHECK: arith.cmpi slt, %pid, %np_ : i32
CHECK: %x_{{[0-9]+}} = arith.constant dense<0xFF800000> : tensor<16xf32>
CHECK: %y = arith.constant dense<0.000000e+00> : tensor<16xf32>
CHECK: %y_{{[0-9]+}} = arith.cmpf ogt
CHECK: arith.select %y_{{[0-9]+}}, %x_{{[0-9]+}}, %y_{{[0-9]+}} : tensor<16xi1>, tensor<16xf32>
CHECK: %z = arith.constant dense<0.000000e+00> : tensor<16xf32>
CHECK: arith.subf %z
CHECK: math.exp
CHECK: arith.divf
CHECK: math.exp2
CHECK: math.absf
CHECK: "tt.reduce"
CHECK: math.rsqrt
CHECK: %c12_i32 = arith.constant 12 : i32
CHECK-NEXT: %z_{{[0-9]+}} = arith.sitofp %c12_i32 : i32 to f32
CHECK: arith.minnumf
CHECK: arith.maxnumf
CHECK: %c12_i32_{{[0-9]+}} = arith.constant 12 : i32
CHECK: %c = arith.addi %n, %c12_i32_{{[0-9]+}}
CHECK: arith.subi
CHECK: %c_{{[0-9]+}} = arith.divsi
CHECK: tt.store
""")
    text = ttir(misc, ptr("x_ptr"), ptr("out_ptr"), scalar("n"), const("N", 16))
    assert re.search(r"tt.make_range \{end = 16 : i32, start = 0 : i32[^}]*\} : tensor<16xi32>",
                     text)


def test_multiple_of_is_recorded_on_the_defining_op():
    from workbench.frontend import KernelSource, generate_ttir
    from workbench.runtime.specialization import Specialization
    m = generate_ttir(KernelSource.from_function(misc), Specialization(
        (ptr("x_ptr"), ptr("out_ptr"), scalar("n"), const("N", 16))))
    rng = [op for op in m.walk() if op.name == "tt.make_range"]
    assert rng[0].attributes["tt.divisibility"] == [4]


def static_stuff(x_ptr, N: tl.constexpr):
    tl.static_assert(N % 2 == 0, "N must be even")
    tl.static_print("N is", N, "twice", N * 2)
    for i in tl.static_range(0, N, 2):
        tl.store(x_ptr + i, i)


def test_static_print_assert_and_static_range(capsys):
    text = ttir(static_stuff, ptr("x_ptr", "*i32"), const("N", 4))
    assert capsys.readouterr().out == "N is 4 twice 8\n"
    filecheck(text, """
CHECK: %c0_i32 = arith.constant 0 : i32
CHECK-NEXT: %0 = tt.addptr %x_ptr, %c0_i32 : !tt.ptr<i32>, i32
CHECK-NEXT: %c0_i32_{{[0-9]+}} = arith.constant 0 : i32
CHECK-NEXT: tt.store %0, %c0_i32_{{[0-9]+}} : !tt.ptr<i32>
CHECK: %c2_i32 = arith.constant 2 : i32
CHECK: tt.store
CHECK-NOT: tt.store
""")
    with pytest.raises(CompilationError, match="static_assert failed: N must be even"):
        ttir(static_stuff, ptr("x_ptr", "*i32"), const("N", 3))


def logic(x_ptr, n, N: tl.constexpr):
    offs = tl.arange(0, N)
    m = (offs < n) and (offs > 2) or not (offs == 5)
    flag = N > 4 and n > 0
    if flag:
        tl.store(x_ptr + offs, 1, mask=m)


def test_logical_ops_and_runtime_if_without_else():
    filecheck(ttir(logic, ptr("x_ptr", "*i32"), scalar("n"), const("N", 8)), """
CHECK: %m_{{[0-9]+}} = arith.andi %m_{{[0-9]+}}, %m_{{[0-9]+}} : tensor<8xi1>
CHECK: arith.cmpi eq
CHECK: %m_{{[0-9]+}} = arith.xori %m_{{[0-9]+}}, %m_{{[0-9]+}} : tensor<8xi1>
CHECK: %m_{{[0-9]+}} = arith.ori
CHECK: %flag = arith.cmpi sgt, %n, %c0_i32 : i32
CHECK: scf.if %flag {
CHECK: tt.store
CHECK-NOT: scf.yield
CHECK: }
""")


def loop_reverse(x_ptr, n, N: tl.constexpr):
    acc = 0
    for i in tl.range(n, 0, -1, num_stages=2):
        acc = acc + i
    tl.store(x_ptr, acc)


def test_runtime_loop_reverse_and_promoted_scalar():
    filecheck(ttir(loop_reverse, ptr("x_ptr", "*i32"), scalar("n"), const("N", 8)), """
CHECK: %0 = arith.subi %n, %c0_i32
CHECK: %acc = scf.for %i = %c0_i32_0 to %0 step %c1_i32 iter_args(%acc_2 = %c0_i32_1) -> (i32)  : i32 {
CHECK: arith.subi %n, %i : i32
CHECK: arith.addi
CHECK: scf.yield
CHECK: } {tt.num_stages = 2 : i32}
CHECK: tt.store %x_ptr, %acc : !tt.ptr<i32>
""")  # noqa: E501


def bad_block_if(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    if x > 0:
        x = x + 1


def test_runtime_if_on_a_tile_is_an_error():
    with pytest.raises(CompilationError, match="if condition must be a scalar"):
        ttir(bad_block_if, ptr("x_ptr"), const("N", 4))
