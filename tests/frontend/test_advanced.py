"""The language's advanced ops in ttir: dot, trans, argmax, scans, reduce with a @jit combine
function, atomics (float max synthesised from integer atomics), device_print/device_assert."""
import pytest
from fe_helpers import const, filecheck, ptr, ttir

import workbench.language as tl
from workbench.errors import CompilationError


class _Jit:
    __workbench_jit__ = True

    def __init__(self, fn):
        self.fn = fn


def _add(a, b):
    return a + b


add_fn = _Jit(_add)


def adv(x_ptr, y_ptr, i_ptr, c_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs[:, None] * N + offs[None, :])
    acc = tl.dot(x, tl.trans(x), input_precision="ieee")
    am = tl.argmax(acc, axis=1)
    cs = tl.cumsum(am, 0)
    r = tl.reduce(acc, 0, add_fn)
    old = tl.atomic_add(c_ptr + offs, cs, mask=offs < 8)
    m = tl.atomic_max(y_ptr + offs, r)
    tl.store(i_ptr + offs, am + old)
    tl.device_print("am", am)
    tl.device_assert(am >= 0, "negative")


def test_advanced_ops():
    spec = (ptr("x_ptr"), ptr("y_ptr"), ptr("i_ptr", "*i32"), ptr("c_ptr", "*i32"),
            const("N", 16))
    filecheck(ttir(adv, *spec), """
CHECK: %acc = tt.trans %x_{{[0-9]+}} {order = array<i32: 1, 0>} : tensor<16x16xf32> -> tensor<16x16xf32>
CHECK-NEXT: %acc_{{[0-9]+}} = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
CHECK-NEXT: %acc_{{[0-9]+}} = tt.dot %x_{{[0-9]+}}, %acc, %acc_{{[0-9]+}} : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
CHECK: %[[AM:am_[0-9]+]]:2 = "tt.reduce"(%acc_{{[0-9]+}}, %am_{{[0-9]+}}) <{axis = 1 : i32}> ({
CHECK-NEXT: ^bb0(%am_{{[0-9]+}}: f32, %am_{{[0-9]+}}: i32, %am_{{[0-9]+}}: f32, %am_{{[0-9]+}}: i32):
CHECK: tt.reduce.return %{{.*}}, %{{.*}} : f32, i32
CHECK: }) : (tensor<16x16xf32>, tensor<16x16xi32>) -> (tensor<16xf32>, tensor<16xi32>)
CHECK: %cs = "tt.scan"(%[[AM]]#1) <{axis = 0 : i32, reverse = false}> ({
CHECK: tt.scan.return
CHECK: %r = "tt.reduce"(%acc_{{[0-9]+}}) <{axis = 0 : i32}> ({
CHECK: arith.addf
CHECK: tt.atomic_rmw add, acq_rel, gpu, %old_{{[0-9]+}}, %cs, %old_{{[0-9]+}} : (tensor<16x!tt.ptr<i32>>, tensor<16xi32>, tensor<16xi1>) -> tensor<16xi32>
CHECK: tt.bitcast %r : tensor<16xf32> -> tensor<16xi32>
CHECK: tt.atomic_rmw max, acq_rel, gpu
CHECK: tt.atomic_rmw umin, acq_rel, gpu
CHECK: arith.select
CHECK: tt.store
CHECK: tt.print "am " {hex = false, isSigned = array<i32: 1>} : %[[AM]]#1 : tensor<16xi32>
CHECK-NOT: tt.assert
CHECK: tt.return
""")  # noqa: E501
    filecheck(ttir(adv, *spec, debug=True), 'CHECK: tt.assert %{{.*}}, "negative" : tensor<16xi1>\n')  # noqa: E501


def bad_dot(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs[:, None] * N + offs[None, :])
    y = tl.dot(x, x)


def test_dot_k_too_small_is_an_error():
    with pytest.raises(CompilationError, match="K >= 16"):
        ttir(bad_dot, ptr("x_ptr"), const("N", 8))
