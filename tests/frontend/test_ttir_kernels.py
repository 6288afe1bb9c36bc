"""ttir of whole kernels, checked FileCheck style: vector add, 2-D tiles, softmax, control
flow, helpers, specialisation."""
from fe_helpers import const, filecheck, ptr, scalar, ttir

import workbench.language as tl

THIS_FILE = __file__


def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


ADD_SPEC = (ptr("x_ptr"), ptr("y_ptr"), ptr("out_ptr"), scalar("n_elements", div16=True),
            const("BLOCK_SIZE", 1024))


def test_vector_add_ttir():
    filecheck(ttir(add_kernel, *ADD_SPEC), """
CHECK: module {
CHECK-NEXT: tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %out_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n_elements: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
CHECK-NEXT: %pid = tt.get_program_id x : i32
CHECK-NEXT: %c1024_i32 = arith.constant 1024 : i32
CHECK-NEXT: %offs = arith.muli %pid, %c1024_i32 : i32
CHECK-NEXT: %offs_0 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
CHECK-NEXT: %offs_1 = tt.splat %offs : i32 -> tensor<1024xi32>
CHECK-NEXT: %offs_2 = arith.addi %offs_1, %offs_0 : tensor<1024xi32>
CHECK-NEXT: %mask = tt.splat %n_elements : i32 -> tensor<1024xi32>
CHECK-NEXT: %mask_3 = arith.cmpi slt, %offs_2, %mask : tensor<1024xi32>
CHECK-NEXT: %x = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
CHECK-NEXT: %x_4 = tt.addptr %x, %offs_2 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
CHECK-NEXT: %x_5 = tt.load %x_4, %mask_3 : tensor<1024x!tt.ptr<f32>>
CHECK:      %y_7 = tt.load %y_6, %mask_3 : tensor<1024x!tt.ptr<f32>>
CHECK-NEXT: %0 = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
CHECK-NEXT: %1 = tt.addptr %0, %offs_2 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
CHECK-NEXT: %2 = arith.addf %x_5, %y_7 : tensor<1024xf32>
CHECK-NEXT: tt.store %1, %2, %mask_3 : tensor<1024x!tt.ptr<f32>>
CHECK-NEXT: tt.return
CHECK-NEXT: }
CHECK-NEXT: }
""")  # noqa: E501


def test_vector_add_locations_name_user_lines():
    text = ttir(add_kernel, *ADD_SPEC, locations=True)
    first = add_kernel.__code__.co_firstlineno
    # offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE): the BinOp starts at col 12,
    # tl.arange at col 31 (1-based), two lines below the def
    filecheck(text, f"""
CHECK: %offs = arith.muli %pid, %c1024_i32 : i32 loc([[L1:#loc[0-9]+]])
CHECK: %offs_0 = tt.make_range {{{{.*}}}} loc([[L2:#loc[0-9]+]])
CHECK: tt.return
CHECK-NEXT: }} loc([[LF:#loc[0-9]+]])
CHECK-DAG: [[L1]] = loc("offs"("{THIS_FILE}":{first + 2}:12))
CHECK-DAG: [[L2]] = loc("offs"("{THIS_FILE}":{first + 2}:31))
CHECK-DAG: [[LF]] = loc("{THIS_FILE}":{first}:1)
""")


def test_equal_to_1_and_no_divisibility():
    spec = (ptr("x_ptr", div16=False), ptr("y_ptr"), ptr("out_ptr"),
            scalar("n_elements", one=True), const("BLOCK_SIZE", 128))
    filecheck(ttir(add_kernel, *spec), """
CHECK: tt.func public @add_kernel(%x_ptr: !tt.ptr<f32>, %y_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %out_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes
CHECK: tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
CHECK: %mask = arith.constant dense<1> : tensor<128xi32>
CHECK-NEXT: %mask_3 = arith.cmpi slt, %offs_2, %mask : tensor<128xi32>
""")  # noqa: E501


def tile2d(x_ptr, out_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    offs = rm[:, None] * stride_m + rn[None, :] * stride_n
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * 2.0 + rn[None, :], mask=mask)


def test_2d_tile_strides_and_broadcasting():
    spec = (ptr("x_ptr"), ptr("out_ptr"), scalar("M"), scalar("N"), scalar("stride_m"),
            scalar("stride_n", one=True), const("BM", 16), const("BN", 32))
    filecheck(ttir(tile2d, *spec), """
CHECK: %rn = tt.get_program_id y : i32
CHECK: %offs = tt.expand_dims %rm_3 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
CHECK-NEXT: %offs_8 = tt.splat %stride_m : i32 -> tensor<16x1xi32>
CHECK-NEXT: %offs_9 = arith.muli %offs, %offs_8 : tensor<16x1xi32>
CHECK-NEXT: %offs_10 = tt.expand_dims %rn_7 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
CHECK-NEXT: %offs_11 = arith.constant dense<1> : tensor<1x32xi32>
CHECK-NEXT: %offs_12 = arith.muli %offs_10, %offs_11 : tensor<1x32xi32>
CHECK-NEXT: %offs_13 = tt.broadcast %offs_9 : tensor<16x1xi32> -> tensor<16x32xi32>
CHECK-NEXT: %offs_14 = tt.broadcast %offs_12 : tensor<1x32xi32> -> tensor<16x32xi32>
CHECK-NEXT: %offs_15 = arith.addi %offs_13, %offs_14 : tensor<16x32xi32>
CHECK: %mask_{{[0-9]+}} = arith.andi %{{.*}}, %{{.*}} : tensor<16x32xi1>
CHECK: %x = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<16x32x!tt.ptr<f32>>
CHECK: %x_25 = arith.constant dense<0.000000e+00> : tensor<16x32xf32>
CHECK-NEXT: %x_26 = tt.load %x_24, %mask_{{[0-9]+}}, %x_25 : tensor<16x32x!tt.ptr<f32>>
CHECK: arith.constant dense<2.000000e+00> : tensor<16x32xf32>
CHECK: arith.mulf %x_26, %{{.*}} : tensor<16x32xf32>
CHECK: tt.expand_dims %rn_7 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
CHECK: arith.sitofp %{{.*}} : tensor<1x32xi32> to tensor<1x32xf32>
CHECK: tt.broadcast %{{.*}} : tensor<1x32xf32> -> tensor<16x32xf32>
CHECK: arith.addf
CHECK: tt.store
""")


def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + cols, num / den, mask=mask)


def test_softmax_ttir():
    spec = (ptr("out_ptr"), ptr("in_ptr"), scalar("in_stride"), scalar("out_stride"),
            scalar("n_cols"), const("BLOCK", 1024))
    filecheck(ttir(softmax_kernel, *spec), """
CHECK: %x_1 = tt.addptr %in_ptr, %x : !tt.ptr<f32>, i32
CHECK: %x_4 = arith.constant dense<0xFF800000> : tensor<1024xf32>
CHECK-NEXT: %x_5 = tt.load %x_3, %mask_0, %x_4 : tensor<1024x!tt.ptr<f32>>
CHECK-NEXT: %x_6 = "tt.reduce"(%x_5) <{axis = 0 : i32}> ({
CHECK-NEXT: ^bb0(%x_9: f32, %x_10: f32):
CHECK-NEXT: %x_11 = arith.maxnumf %x_9, %x_10 : f32
CHECK-NEXT: tt.reduce.return %x_11 : f32
CHECK-NEXT: }) : (tensor<1024xf32>) -> f32
CHECK-NEXT: %x_7 = tt.splat %x_6 : f32 -> tensor<1024xf32>
CHECK-NEXT: %x_8 = arith.subf %x_5, %x_7 : tensor<1024xf32>
CHECK-NEXT: %num = math.exp %x_8 : tensor<1024xf32>
CHECK-NEXT: %den = "tt.reduce"(%num) <{axis = 0 : i32}> ({
CHECK: arith.addf
CHECK: }) : (tensor<1024xf32>) -> f32
CHECK: %4 = tt.splat %den : f32 -> tensor<1024xf32>
CHECK-NEXT: %5 = arith.divf %num, %4 : tensor<1024xf32>
CHECK-NEXT: tt.store %3, %5, %mask_0
""")


def softmax2d(x_ptr, out_ptr, AXIS: tl.constexpr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    m = tl.max(x, axis=AXIS, keep_dims=True)
    e = tl.exp(x - m)
    s = tl.sum(e, axis=AXIS)
    if AXIS == 0:
        y = e / s[None, :]
    else:
        y = e / s[:, None]
    tl.store(out_ptr + offs, y)


def test_softmax_2d_axis0_and_axis1():
    base = (ptr("x_ptr"), ptr("out_ptr"))
    t1 = ttir(softmax2d, *base, const("AXIS", 1), const("R", 8), const("C", 64))
    filecheck(t1, """
CHECK: %m = "tt.reduce"(%x_9) <{axis = 1 : i32}> ({
CHECK: arith.maxnumf
CHECK: }) : (tensor<8x64xf32>) -> tensor<8xf32>
CHECK-NEXT: %m_10 = tt.expand_dims %m {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
CHECK: %s = "tt.reduce"(%e_12) <{axis = 1 : i32}> ({
CHECK: }) : (tensor<8x64xf32>) -> tensor<8xf32>
CHECK: %y = tt.expand_dims %s {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
CHECK-NOT: axis = 0
CHECK: tt.store
""")
    t0 = ttir(softmax2d, *base, const("AXIS", 0), const("R", 8), const("C", 64))
    filecheck(t0, """
CHECK: "tt.reduce"(%x_9) <{axis = 0 : i32}>
CHECK: }) : (tensor<8x64xf32>) -> tensor<64xf32>
CHECK: tt.expand_dims %m {axis = 0 : i32} : tensor<64xf32> -> tensor<1x64xf32>
CHECK: %s = "tt.reduce"(%e_12) <{axis = 0 : i32}>
CHECK: %y = tt.expand_dims %s {axis = 0 : i32} : tensor<64xf32> -> tensor<1x64xf32>
""")


def const_if(x_ptr, FLAG: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if FLAG:
        x = tl.exp(x)
    elif N > 1000:
        x = x + undefined_name  # noqa: F821 (dead branch: never compiled)
    else:
        x = tl.sqrt(x)
    tl.store(x_ptr + offs, x)


def test_constexpr_if_dead_branch_not_compiled():
    filecheck(ttir(const_if, ptr("x_ptr"), const("FLAG", True), const("N", 16)), """
CHECK: math.exp
CHECK-NOT: math.sqrt
""")
    filecheck(ttir(const_if, ptr("x_ptr"), const("FLAG", False), const("N", 16)), """
CHECK-NOT: math.exp
CHECK: math.sqrt
""")


def loops(x_ptr, n, N: tl.constexpr):
    offs = tl.arange(0, N)
    acc = tl.zeros((N,), tl.float32)
    for i in range(0, n):
        acc += tl.load(x_ptr + i * N + offs)
    for j in tl.static_range(2):
        acc = acc * 2
    if n > 4:
        acc = acc + 1.0
    else:
        acc = acc - 1.0
    tl.store(x_ptr + offs, acc)


def test_scf_for_scf_if_and_static_range():
    filecheck(ttir(loops, ptr("x_ptr"), scalar("n"), const("N", 32)), """
CHECK: %acc = arith.constant dense<0.000000e+00> : tensor<32xf32>
CHECK: %c0_i32 = arith.constant 0 : i32
CHECK: %c1_i32 = arith.constant 1 : i32
CHECK: %acc_{{[0-9]+}} = scf.for %i = %c0_i32 to %n step %c1_i32 iter_args(%acc_{{[0-9]+}} = %acc) -> (tensor<32xf32>) : i32 {
CHECK: tt.load
CHECK: arith.addf
CHECK: scf.yield
CHECK: }
CHECK: arith.mulf
CHECK: arith.mulf
CHECK: arith.cmpi sgt, %n, %{{.*}} : i32
CHECK: scf.if %{{.*}} -> (tensor<32xf32>) {
CHECK: arith.addf
CHECK: } else {
CHECK: arith.subf
CHECK: }
CHECK: tt.store
""")  # noqa: E501


def _scaled(x, s: tl.constexpr):
    y = x * s
    return y, y + 1.0


class _Jit:
    """A stand-in for the runtime's JIT object (the contract: __workbench_jit__, .fn)."""
    __workbench_jit__ = True

    def __init__(self, fn):
        self.fn = fn


scaled = _Jit(_scaled)


def with_helper(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a, b = scaled(tl.load(x_ptr + offs), 3.0)
    tl.store(x_ptr + offs, a + b)


def test_jit_helper_inlined_with_caller_location():
    text = ttir(with_helper, ptr("x_ptr"), const("N", 8), locations=True)
    helper_line = _scaled.__code__.co_firstlineno + 1
    call_line = with_helper.__code__.co_firstlineno + 2
    # the helper's ops carry the helper's line with the call site as caller
    from workbench.frontend import KernelSource, generate_ttir
    from workbench.runtime.specialization import Specialization
    module = generate_ttir(KernelSource.from_function(with_helper),
                           Specialization((ptr("x_ptr"), const("N", 8))))
    muls = [op for op in module.walk() if op.name == "arith.mulf"]
    assert len(muls) == 1
    loc = muls[0].loc
    assert (loc.file, loc.line, loc.col, loc.name) == (THIS_FILE, helper_line, 9, "y")
    assert loc.caller is not None
    assert (loc.caller.file, loc.caller.line, loc.caller.col) == (THIS_FILE, call_line, 12)
    assert "tt.call" not in text
