"""cse and dce: merging pure ops (into nested regions, never memory ops) and removing dead
side-effect-free ops (iteratively, inside regions, private functions)."""
from __future__ import annotations

from tests.filecheck_util import check
from tests.passes.util import kernel, run
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.passes import CSE, DCE


def test_cse_merges_pure_ops_and_keeps_memory_ops():
    out = run([CSE()], kernel("""
        %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
        %r2 = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
        %s = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
        %s2 = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
        %a = tt.addptr %s, %r : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
        %a2 = tt.addptr %s2, %r2 : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
        %x = tt.load %a : tensor<4x!tt.ptr<f32>>
        %y = tt.load %a2 : tensor<4x!tt.ptr<f32>>
        %lt = arith.cmpi slt, %n, %m : i32
        %le = arith.cmpi sle, %n, %m : i32
        %z = arith.addf %x, %y : tensor<4xf32>
        tt.store %a2, %z : tensor<4x!tt.ptr<f32>>
        tt.store %a2, %z : tensor<4x!tt.ptr<f32>>
        tt.print "" {hex = false, isSigned = array<i32: 1, 1>}: %lt, %le : i1, i1
    """))
    check(out, """
CHECK: %r = tt.make_range
CHECK-NEXT: %s = tt.splat %p
CHECK-NEXT: %a = tt.addptr %s, %r
CHECK-NEXT: %x = tt.load %a
CHECK-NEXT: %y = tt.load %a
CHECK-NEXT: %lt = arith.cmpi slt, %n, %m
CHECK-NEXT: %le = arith.cmpi sle, %n, %m
CHECK-NEXT: %z = arith.addf %x, %y
CHECK-NEXT: tt.store %a, %z
CHECK-NEXT: tt.store %a, %z
""")


def test_cse_reaches_into_regions_but_not_out_of_them():
    out = run([CSE()], kernel("""
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        %k = arith.muli %n, %m : i32
        scf.for %i = %c0 to %n step %c1 : i32 {
          %c0_dup = arith.constant 0 : i32
          %k2 = arith.muli %n, %m : i32
          %in = arith.addi %i, %k2 : i32
          %in2 = arith.addi %i, %k : i32
          %v = tt.addptr %p, %in2 : !tt.ptr<f32>, i32
          tt.store %v, %f : !tt.ptr<f32>
          %w = tt.addptr %p, %in : !tt.ptr<f32>, i32
          tt.store %w, %f : !tt.ptr<f32>
          scf.yield
        }
        %after = arith.addi %k, %c0 : i32
        %w2 = tt.addptr %p, %after : !tt.ptr<f32>, i32
        tt.store %w2, %f : !tt.ptr<f32>
    """))
    # %k2 and %c0_dup merge into the outer values; %in2 merges into %in; the loop-local %in
    # is not visible after the loop, so %after stays.
    check(out, """
CHECK: scf.for %i = %c0 to %n step %c1 : i32 {
CHECK-NEXT: %in = arith.addi %i, %k : i32
CHECK-NEXT: %v = tt.addptr %p, %in
CHECK-NEXT: tt.store %v, %f
CHECK-NEXT: tt.store %v, %f
CHECK: %after = arith.addi %k, %c0 : i32
""")


def test_cse_does_not_merge_different_attributes_or_types():
    out = run([CSE()], kernel("""
        %a = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
        %b = tt.make_range {end = 5 : i32, start = 1 : i32} : tensor<4xi32>
        %c = arith.constant 1 : i32
        %d = arith.constant 1 : i64
        %e = arith.constant true
        %s = arith.addi %a, %b : tensor<4xi32>
        %x = arith.extsi %c : i32 to i64
        %y = arith.addi %x, %d : i64
        %z = arith.select %e, %n, %m : i1, i32
        tt.print "" {hex = false, isSigned = array<i32: 1, 1, 1>}: %s, %y, %z : tensor<4xi32>, i64, i32
    """))  # noqa: E501
    check(out, """
CHECK: %a = tt.make_range {end = 4 : i32, start = 0 : i32}
CHECK-NEXT: %b = tt.make_range {end = 5 : i32, start = 1 : i32}
CHECK-NEXT: %c = arith.constant 1 : i32
CHECK-NEXT: %d = arith.constant 1 : i64
CHECK-NEXT: %e = arith.constant true
""")


def test_dce_removes_dead_chains_inside_regions_and_keeps_effects():
    out = run([DCE()], kernel("""
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        %dead1 = arith.addi %n, %m : i32
        %dead2 = arith.muli %dead1, %dead1 : i32
        %ld = tt.load %p : !tt.ptr<f32>
        %vol = tt.load %p {isVolatile = true} : !tt.ptr<f32>
        %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %f) -> (f32) : i32 {
          %unused = arith.addi %i, %i : i32
          %next = arith.addf %a, %a : f32
          scf.yield %next : f32
        }
        scf.for %j = %c0 to %n step %c1 : i32 {
          %inner = arith.addi %j, %j : i32
          %q = tt.addptr %p, %inner : !tt.ptr<f32>, i32
          tt.store %q, %f : !tt.ptr<f32>
          scf.yield
        }
        %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
        %red = "tt.reduce"(%r) <{axis = 0 : i32}> ({
        ^bb0(%x: i32, %y: i32):
          %s = arith.addi %x, %y : i32
          tt.reduce.return %s : i32
        }) : (tensor<4xi32>) -> i32
    """))
    check(out, """
CHECK: tt.func public @k
CHECK-NEXT: %c0 = arith.constant 0 : i32
CHECK-NEXT: %c1 = arith.constant 1 : i32
CHECK-NEXT: %vol = tt.load %p {isVolatile = true}
CHECK-NEXT: scf.for %j = %c0 to %n step %c1 : i32 {
CHECK-NEXT: %inner = arith.addi %j, %j
CHECK-NEXT: %q = tt.addptr %p, %inner
CHECK-NEXT: tt.store %q, %f
CHECK-NEXT: }
CHECK-NEXT: tt.return
""")


def test_dce_removes_unused_private_functions():
    text = """module {
  tt.func private @helper(%a: i32) attributes {noinline = true} {
    tt.return
  }
  tt.func private @used(%a: i32) attributes {noinline = true} {
    tt.return
  }
  tt.func public @k(%n: i32) attributes {noinline = false} {
    "tt.call"(%n) <{callee = "used"}> : (i32) -> ()
    tt.return
  }
}
"""
    m = parse_module(text)
    DCE().run(m, None)
    out = print_module(m, locations=False)
    assert "@helper" not in out and "@used" in out and 'tt.call @used(%n) : (i32) -> ()' in out


def test_immutable_local_allocs_of_one_value_are_merged_before_allocation():
    # Triton gives an immutable ttg.local_alloc no memory effect until shared memory is
    # allocated, so CSE merges two of the same value (tutorial 06's backward stores k and v
    # once, not once per loop); a mutable one, or one already placed, is never merged
    from workbench.ir.parser import parse_module
    from workbench.ir.printer import print_module
    from workbench.passes.effects import is_pure
    t, mem = "tensor<16x16xf16, #blocked>", "!ttg.memdesc<16x16xf16, #shared, #smem"
    blocked = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], "
               "warpsPerCTA = [4, 1], order = [1, 0]}>")
    m = parse_module(f"""
#blocked = {blocked}
#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @k(%x: {t}) {{
    %a = ttg.local_alloc %x : ({t}) -> {mem}>
    %b = ttg.local_alloc %x : ({t}) -> {mem}>
    %c = ttg.local_alloc %x {{allocation.offset = 0 : i32}} : ({t}) -> {mem}>
    %d = ttg.local_alloc : () -> {mem}, mutable>
    %e = ttg.local_load %a : {mem}> -> {t}
    %f = ttg.local_load %b : {mem}> -> {t}
    tt.return
  }}
}}
""")

    ops = {op.results[0].name: op for op in m.walk() if op.name == "ttg.local_alloc"}
    assert [is_pure(ops[n]) for n in ("a", "b", "c", "d")] == [True, True, False, False]
    from workbench.passes import CSE
    CSE().run(m)
    text = print_module(m, locations=False)
    assert text.count("ttg.local_alloc %x :") == 1          # %b merged into %a
    assert text.count("ttg.local_load %a") == 2
