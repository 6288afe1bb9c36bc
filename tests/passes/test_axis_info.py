"""AxisInfo analysis: exact contiguity / divisibility / constancy of typical index expressions
(values worked out by hand from Triton 3.6's AxisInfo.cpp rules)."""
from __future__ import annotations

import pytest

from workbench.ir.core import functions
from workbench.ir.parser import parse_module
from workbench.passes.axis_info import MAX_DIVISOR, AxisInfo, AxisInfoAnalysis, join

M = MAX_DIVISOR


def analyse(body: str, params: str = "%p: !tt.ptr<f32> {tt.divisibility = 16 : i32}, "
            "%n: i32 {tt.divisibility = 16 : i32}, %s: i32"):
    text = (f"module {{\n  tt.func public @k({params}) attributes {{noinline = false}} {{\n"
            + "".join(f"    {ln.strip()}\n" for ln in body.strip().splitlines())
            + "    tt.return\n  }\n}\n")
    func = functions(parse_module(text))[0]
    an = AxisInfoAnalysis(func)
    vals = {a.name: a for a in func.regions[0].block.args}
    for op in func.walk():
        for r in op.results:
            vals[r.name] = r
        for region in op.regions:
            for b in region.blocks:
                for a in b.args:
                    vals[a.name] = a
    return lambda name: an.get(vals[name]), vals


def triple(info: AxisInfo):
    return list(info.contiguity), list(info.divisibility), list(info.constancy)


ADD = """
%c = arith.constant 1024 : i32
%pid = tt.get_program_id x : i32
%base = arith.muli %pid, %c : i32
%r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
%sb = tt.splat %base : i32 -> tensor<1024xi32>
%offs = arith.addi %sb, %r : tensor<1024xi32>
%sn = tt.splat %n : i32 -> tensor<1024xi32>
%mask = arith.cmpi slt, %offs, %sn : tensor<1024xi32>
%sp = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
%ptr = tt.addptr %sp, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
%x = tt.load %ptr, %mask : tensor<1024x!tt.ptr<f32>>
"""


def test_pid_times_block_plus_arange():
    info, _ = analyse(ADD)
    assert triple(info("c")) == ([1], [1024], [1]) and info("c").value == 1024
    assert triple(info("pid")) == ([1], [1], [1])  # no rule for program_id: pessimistic
    assert triple(info("base")) == ([1], [1024], [1])
    assert triple(info("r")) == ([1024], [M], [1])
    assert triple(info("sb")) == ([1], [1024], [1024])
    assert triple(info("offs")) == ([1024], [1024], [1])
    # mask: runs of 16 equal values (n is a multiple of 16, offs runs start at multiples of 16)
    assert triple(info("mask")) == ([1], [1], [16])
    # pointers: divisibility in bytes, 16 from the argument, offsets scaled by 4 bytes
    assert triple(info("sp")) == ([1], [16], [1024])
    assert triple(info("ptr")) == ([1024], [16], [1])


def test_load_result_is_unknown_and_args_seeded_from_attributes():
    info, _ = analyse(ADD)
    assert triple(info("x")) == ([1], [1], [1])  # float: no rule
    assert triple(info("p")) == ([1], [16], [1])
    assert triple(info("n")) == ([1], [16], [1])
    assert triple(info("s")) == ([1], [1], [1])


ROW = """
%row = tt.get_program_id x : i32
%cols = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
%o1 = arith.muli %row, %s : i32
%p1 = tt.addptr %p, %o1 : !tt.ptr<f32>, i32
%sp1 = tt.splat %p1 : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
%q1 = tt.addptr %sp1, %cols : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
%o2 = arith.muli %row, %n : i32
%p2 = tt.addptr %p, %o2 : !tt.ptr<f32>, i32
%sp2 = tt.splat %p2 : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
%q2 = tt.addptr %sp2, %cols : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
"""


def test_row_times_stride_plus_cols_with_and_without_divisible_stride():
    info, _ = analyse(ROW)
    # %s has no hint: row * s divisible by 1 -> 4 bytes -> only 4-byte aligned rows
    assert triple(info("o1")) == ([1], [1], [1])
    assert triple(info("p1")) == ([1], [4], [1])
    assert triple(info("q1")) == ([1024], [4], [1])
    # %n divisible by 16: row * n divisible by 16 elements = 64 bytes; gcd with 16 -> 16
    assert triple(info("o2")) == ([1], [16], [1])
    assert triple(info("q2")) == ([1024], [16], [1])


TILE = """
%c128 = arith.constant dense<128> : tensor<64x1xi32>
%rm = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
%rows = tt.expand_dims %rm {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
%roff = arith.muli %rows, %c128 : tensor<64x1xi32>
%sp = tt.splat %p : !tt.ptr<f32> -> tensor<64x1x!tt.ptr<f32>>
%rp = tt.addptr %sp, %roff : tensor<64x1x!tt.ptr<f32>>, tensor<64x1xi32>
%rn = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
%cols = tt.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
%bp = tt.broadcast %rp : tensor<64x1x!tt.ptr<f32>> -> tensor<64x128x!tt.ptr<f32>>
%bc = tt.broadcast %cols : tensor<1x128xi32> -> tensor<64x128xi32>
%ptr = tt.addptr %bp, %bc : tensor<64x128x!tt.ptr<f32>>, tensor<64x128xi32>
%ss = tt.splat %s : i32 -> tensor<64x1xi32>
%roff2 = arith.muli %rows, %ss : tensor<64x1xi32>
"""


def test_2d_broadcast_tile():
    info, _ = analyse(TILE)
    assert triple(info("c128")) == ([1, 1], [128, 128], [64, 1])
    # expand_dims of a contiguous range: the new dim's divisibility is 1 (not 2^62)
    assert triple(info("rows")) == ([64, 1], [M, 1], [1, 1])
    assert triple(info("cols")) == ([1, 128], [1, M], [1, 1])
    # [2^n, 2^n+1, ...] times 128: each element is a multiple of 128, runs are gone
    assert triple(info("roff")) == ([1, 1], [128, 128], [1, 1])
    assert triple(info("rp")) == ([1, 1], [16, 16], [1, 1])
    assert triple(info("bp")) == ([1, 1], [16, 16], [1, 128])
    assert triple(info("bc")) == ([1, 128], [1, M], [64, 1])
    # dim 0: the broadcast column offsets start at 0, 1, 2.. down the rows -> 4 bytes
    assert triple(info("ptr")) == ([1, 128], [4, 16], [1, 1])
    assert triple(info("roff2")) == ([1, 1], [1, 1], [1, 1])


def test_pointer_divisibility_is_in_bytes_for_f16():
    info, _ = analyse("""
        %c8 = arith.constant 8 : i32
        %pid = tt.get_program_id x : i32
        %o = arith.muli %pid, %c8 : i32
        %q = tt.addptr %h, %o : !tt.ptr<f16>, i32
        %q2 = tt.addptr %h, %pid : !tt.ptr<f16>, i32
    """, "%h: !tt.ptr<f16> {tt.divisibility = 16 : i32}")
    assert triple(info("o")) == ([1], [8], [1])      # elements
    assert triple(info("q")) == ([1], [16], [1])     # bytes: gcd(16, 8 * 2)
    assert triple(info("q2")) == ([1], [2], [1])     # gcd(16, 1 * 2)


def test_hints_multiple_of_and_max_contiguous_override():
    info, _ = analyse("""
        %pid = tt.get_program_id x : i32
        %o = "arith.muli"(%pid, %s) <{tt.divisibility = array<i32: 8>}> : (i32, i32) -> i32
        %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
        %sn = tt.splat %s : i32 -> tensor<64xi32>
        %m = arith.remsi %r, %sn : tensor<64xi32>
        %mh = "arith.remsi"(%r, %sn) <{tt.contiguity = array<i32: 64>, tt.divisibility = array<i32: 64>}> : (tensor<64xi32>, tensor<64xi32>) -> tensor<64xi32>
    """)  # noqa: E501
    assert triple(info("o")) == ([1], [8], [1])
    assert triple(info("m")) == ([1], [1], [1])
    assert triple(info("mh")) == ([64], [64], [1])


def test_div_rem_shift_and_logic():
    info, _ = analyse("""
        %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
        %c16 = arith.constant dense<16> : tensor<256xi32>
        %c2 = arith.constant dense<2> : tensor<256xi32>
        %q = arith.divsi %r, %c16 : tensor<256xi32>
        %m = arith.remsi %r, %c16 : tensor<256xi32>
        %sh = arith.shli %q, %c2 : tensor<256xi32>
        %a = arith.andi %r, %c16 : tensor<256xi32>
        %d = arith.subi %r, %c16 : tensor<256xi32>
        %k = arith.constant 6 : i32
        %k2 = arith.constant 4 : i32
        %kk = arith.addi %k, %k2 : i32
    """)
    assert triple(info("q")) == ([1], [1], [16])       # r // 16: runs of 16 equal values
    assert triple(info("m")) == ([16], [16], [1])      # r % 16: runs of 16 from multiples of 16
    assert triple(info("sh")) == ([1], [4], [16])      # (r // 16) << 2
    assert triple(info("a")) == ([1], [1], [1])
    assert triple(info("d")) == ([256], [16], [1])     # r - 16 keeps contiguity
    assert triple(info("kk")) == ([1], [2], [1]) and info("kk").value == 10


def test_select_and_cmp_of_constants():
    info, _ = analyse("""
        %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
        %c64 = arith.constant dense<64> : tensor<128xi32>
        %lt = arith.cmpi slt, %r, %c64 : tensor<128xi32>
        %z = arith.constant dense<0> : tensor<128xi32>
        %sel = arith.select %lt, %r, %z : tensor<128xi1>, tensor<128xi32>
        %t = arith.constant true
        %sel2 = arith.select %t, %r, %z : i1, tensor<128xi32>
    """)
    assert triple(info("lt")) == ([1], [1], [64])
    assert triple(info("sel")) == ([1], [1], [1])      # gcd(contig 128, constancy 1, cond 64)
    assert triple(info("sel2")) == ([128], [M], [1])   # a constant condition picks a side


def test_scf_for_pointer_advanced_by_a_block_keeps_contiguity():
    info, vals = analyse("""
        %c0 = arith.constant 0 : i32
        %c32 = arith.constant 32 : i32
        %c8 = arith.constant 8 : i32
        %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
        %sp = tt.splat %p : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
        %ptr = tt.addptr %sp, %r : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
        %step = tt.splat %c32 : i32 -> tensor<32xi32>
        %res = scf.for %i = %c0 to %n step %c8 iter_args(%it = %ptr) -> (tensor<32x!tt.ptr<f32>>) : i32 {
          %nxt = tt.addptr %it, %step : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
          scf.yield %nxt : tensor<32x!tt.ptr<f32>>
        }
    """)  # noqa: E501
    assert triple(info("i")) == ([1], [8], [1])        # gcd(div(lb) = 2^62, div(step) = 8)
    assert triple(info("it")) == ([32], [16], [1])
    assert triple(info("nxt")) == ([32], [16], [1])
    assert triple(info("res")) == ([32], [16], [1])


def test_join_and_of():
    a = AxisInfo((4,), (16,), (1,))
    b = AxisInfo((2,), (16,), (1,))
    assert triple(join(a, b)) == ([2], [2], [1])  # run starts move: bounded by contiguity
    assert triple(join(a, a)) == ([4], [16], [1])
    _, vals = analyse(ADD)
    assert triple(AxisInfo.of(vals["ptr"])) == ([1024], [16], [1])
    assert str(AxisInfo.of(vals["c"])) == \
        "contiguity = [1], divisibility = [1024], constancy = [1], value = 1024"


@pytest.mark.parametrize("start,div", [(0, M), (16, 16), (12, 4), (1, 1)])
def test_make_range_divisibility_from_start(start, div):
    info, _ = analyse(f"%r = tt.make_range {{end = {start + 32} : i32, start = {start} : i32}}"
                      " : tensor<32xi32>")
    assert triple(info("r")) == ([32], [div], [1])


@pytest.mark.parametrize("inc,div", [("%c32", 16), ("%c4", 8), ("%n", 16), ("%s", 2)])
def test_scf_for_2d_f16_pointer_advanced_by_invariant_offset(inc, div):
    """The tutorial matmul's ``a_ptrs += BLOCK_K * stride_ak``: a loop-carried tensor of fp16
    pointers advanced by a loop-invariant splat keeps the init's contiguity; its divisibility
    (bytes) is gcd(init = 16, increment * 2), Triton's join of init and yielded value."""
    info, _ = analyse(f"""
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        %c32 = arith.constant 32 : i32
        %c4 = arith.constant 4 : i32
        %rm = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32>
        %rk = tt.make_range {{end = 32 : i32, start = 0 : i32}} : tensor<32xi32>
        %em = tt.expand_dims %rm {{axis = 1 : i32}} : tensor<64xi32> -> tensor<64x1xi32>
        %sn = tt.splat %n : i32 -> tensor<64x1xi32>
        %rows = arith.muli %em, %sn : tensor<64x1xi32>
        %ek = tt.expand_dims %rk {{axis = 0 : i32}} : tensor<32xi32> -> tensor<1x32xi32>
        %br = tt.broadcast %rows : tensor<64x1xi32> -> tensor<64x32xi32>
        %bk = tt.broadcast %ek : tensor<1x32xi32> -> tensor<64x32xi32>
        %off = arith.addi %br, %bk : tensor<64x32xi32>
        %sp = tt.splat %p : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>>
        %ptr = tt.addptr %sp, %off : tensor<64x32x!tt.ptr<f16>>, tensor<64x32xi32>
        %res = scf.for %i = %c0 to %n step %c1 iter_args(%it = %ptr) -> (tensor<64x32x!tt.ptr<f16>>) : i32 {{
          %step = tt.splat {inc} : i32 -> tensor<64x32xi32>
          %nxt = tt.addptr %it, %step : tensor<64x32x!tt.ptr<f16>>, tensor<64x32xi32>
          scf.yield %nxt : tensor<64x32x!tt.ptr<f16>>
        }}
    """, params="%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, "  # noqa: E501
                "%n: i32 {tt.divisibility = 16 : i32}, %s: i32")
    # dim 0 (rows): 2 bytes, as in Triton (expand_dims of a contiguous range gives the new dim
    # divisibility 1); dim 1 (the contiguous one) is what vectorisation reads
    assert triple(info("ptr")) == ([1, 32], [2, 16], [1, 1])
    assert triple(info("it")) == ([1, 32], [2, div], [1, 1])
    assert triple(info("res")) == ([1, 32], [2, div], [1, 1])
