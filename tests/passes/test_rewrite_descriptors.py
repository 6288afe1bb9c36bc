"""triton-rewrite-tensor-descriptor-to-pointer: descriptor ops become pointer tiles with a
bounds mask (text in, text out), host descriptor arguments become Triton's sm_80 parameter
list, and descriptors carried by a loop travel as their parts."""
from __future__ import annotations

import pytest

from tests.filecheck_util import check
from tests.passes.util import kernel, run
from workbench.ir.parser import parse_module
from workbench.passes import PassManager
from workbench.passes.rewrite_descriptors import (
    DescriptorRewriteError,
    RewriteTensorDescriptorToPointer,
)


def test_device_descriptor_load_becomes_a_masked_load_with_padding():
    out = run([RewriteTensorDescriptorToPointer()], kernel("""
        %c1 = arith.constant 1 : i64
        %s = arith.extsi %m : i32 to i64
        %d = tt.make_tensor_descriptor %p, [%n, %m], [%s, %c1] {padding = 2 : i32} : <f32>, <tensor<4x8xf32>>
        %v = tt.descriptor_load %d[%n, %m] : !tt.tensordesc<tensor<4x8xf32>> -> tensor<4x8xf32>
        tt.descriptor_store %d[%n, %m], %v : !tt.tensordesc<tensor<4x8xf32>>, tensor<4x8xf32>
    """))  # noqa: E501
    check(out, """
CHECK-NOT: tt.make_tensor_descriptor
CHECK: tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
CHECK: tt.expand_dims {{.*}} {axis = 1 : i32} : tensor<4xi64> -> tensor<4x1xi64>
CHECK: tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
CHECK: tt.expand_dims {{.*}} {axis = 0 : i32} : tensor<8xi64> -> tensor<1x8xi64>
CHECK: arith.cmpi sge
CHECK: arith.cmpi slt
CHECK: tt.addptr {{.*}} : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi64>
CHECK: arith.constant dense<0x7FC00000> : tensor<4x8xf32>
CHECK: %[[V:.*]] = tt.load {{.*}} : tensor<4x8x!tt.ptr<f32>>
CHECK: tt.store {{.*}}, %[[V]], {{.*}} : tensor<4x8x!tt.ptr<f32>>
CHECK-NOT: tt.descriptor
""")


def test_reduce_of_unsigned_max_is_umax_and_float_add_is_fadd():
    out = run([RewriteTensorDescriptorToPointer()], kernel("""
        %c1 = arith.constant 1 : i64
        %d = tt.make_tensor_descriptor %p, [%n], [%c1] : <f32>, <tensor<16xf32>>
        %v = tt.descriptor_load %d[%m] : !tt.tensordesc<tensor<16xf32>> -> tensor<16xf32>
        tt.descriptor_reduce add, %d[%m], %v : !tt.tensordesc<tensor<16xf32>>, tensor<16xf32>
    """))
    check(out, "CHECK: tt.atomic_rmw fadd, relaxed, gpu")


def test_host_descriptor_arguments_and_loop_carried_parts():
    text = """module {
  tt.func public @k(%d: !tt.tensordesc<tensor<2x16xui16>>, %d_0: i32, %d_1: i32, %d_2: i64, %d_3: i64, %n: i32) attributes {noinline = false} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r:5 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %d, %b = %d_0, %c = %d_1, %e = %d_2, %f = %d_3) -> (!tt.tensordesc<tensor<2x16xui16>>, i32, i32, i64, i64) : i32 {
      %v = tt.descriptor_load %a[%i, %c0] : !tt.tensordesc<tensor<2x16xui16>> -> tensor<2x16xi16>
      tt.descriptor_reduce max, %a[%c0, %i], %v : !tt.tensordesc<tensor<2x16xui16>>, tensor<2x16xi16>
      scf.yield %a, %b, %c, %e, %f : !tt.tensordesc<tensor<2x16xui16>>, i32, i32, i64, i64
    }
    tt.return
  }
}
"""  # noqa: E501
    m = parse_module(text)
    PassManager([RewriteTensorDescriptorToPointer()], verify=True).run(m, None, "test")
    from workbench.ir.printer import print_module
    out = print_module(m, locations=False)
    check(out, r"""
CHECK: tt.func public @k(%d: !tt.ptr<i16> {tt.divisibility = 16 : i32}, %{{\w+}}: i64, %{{\w+}}: i64, %{{\w+}}: i64, %{{\w+}}: i64, %{{\w+}}: i1, %{{\w+}}: i32, %{{\w+}}: i32, %{{\w+}}: i64, %{{\w+}}: i64, %n: i32)
CHECK: scf.for {{.*}} -> (!tt.ptr<i16>, i64, i64, i64, i64, i1, i32, i32, i64, i64)
CHECK: tt.load
CHECK: tt.atomic_rmw umax, relaxed, gpu
CHECK: scf.yield {{.*}} : !tt.ptr<i16>, i64, i64, i64, i64, i1, i32, i32, i64, i64
CHECK-NOT: tensordesc
""")  # noqa: E501


def test_a_descriptor_passed_to_a_call_is_refused():
    text = kernel("""
        %c1 = arith.constant 1 : i64
        %d = tt.make_tensor_descriptor %p, [%n], [%c1] : <f32>, <tensor<16xf32>>
        tt.call @g(%d) : (!tt.tensordesc<tensor<16xf32>>) -> ()
    """)
    with pytest.raises(DescriptorRewriteError, match="tt.call"):
        PassManager([RewriteTensorDescriptorToPointer()]).run(parse_module(text), None, "test")
