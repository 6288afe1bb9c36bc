"""``tritongpu-allocate-shared-memory``: 128-byte aligned offsets, reuse of bytes between
buffers whose live ranges do not overlap, total in ``ttg.shared``."""
from __future__ import annotations

from workbench.ir.parser import parse_module
from workbench.passes.allocate_shared import AllocateShared

SH = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
BL = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"  # noqa: E501


def _module(body: str):
    head = ('module attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func public @k(%x: '
            f'tensor<64x64xf16, {BL}>) attributes {{noinline = false}} {{\n')
    return parse_module(head + body + "    tt.return\n  }\n}\n")


def _allocs(m):
    return [op for op in m.walk() if op.name == "ttg.local_alloc"]


def test_disjoint_live_ranges_share_bytes():
    md = f"!ttg.memdesc<64x64xf16, {SH}, #smem>"
    m = _module(f"""    %a = ttg.local_alloc %x : (tensor<64x64xf16, {BL}>) -> {md}
    %b = ttg.local_load %a : {md} -> tensor<64x64xf16, {BL}>
    %c = ttg.local_alloc %b : (tensor<64x64xf16, {BL}>) -> {md}
    %d = ttg.local_load %c : {md} -> tensor<64x64xf16, {BL}>
""")
    AllocateShared().run(m)
    a, c = _allocs(m)
    # %a dies at its local_load, before %c is made: both at offset 0
    assert a.attributes["allocation.offset"] == 0 == c.attributes["allocation.offset"]
    assert m.attributes["ttg.shared"] == 64 * 64 * 2


def test_overlapping_live_ranges_do_not_share():
    md = f"!ttg.memdesc<64x64xf16, {SH}, #smem>"
    md3 = f"!ttg.memdesc<3x64x32xf16, {SH}, #smem, mutable>"
    m = _module(f"""    %a = ttg.local_alloc %x : (tensor<64x64xf16, {BL}>) -> {md}
    %m = ttg.local_alloc : () -> {md3}
    %b = ttg.local_load %a : {md} -> tensor<64x64xf16, {BL}>
""")
    AllocateShared().run(m)
    a, mb = _allocs(m)
    offs = sorted([a.attributes["allocation.offset"], mb.attributes["allocation.offset"]])
    assert offs == [0, 3 * 64 * 32 * 2]  # the larger buffer first, the other after it
    assert m.attributes["ttg.shared"] == 3 * 64 * 32 * 2 + 64 * 64 * 2
    assert all(o % 128 == 0 for o in offs)


MMA = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"  # noqa: E501


def _scratch_of_converts(n: int):
    return lambda op: n if op.name == "ttg.convert_layout" else 0


def test_scratch_after_a_loop_reuses_the_dead_pipeline_buffers():
    md3 = f"!ttg.memdesc<3x64x32xf16, {SH}, #smem, mutable>"
    m = _module(f"""    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %m = ttg.local_alloc : () -> {md3}
    scf.for %i = %c0 to %c1 step %c1 : i32 {{
      %s = ttg.memdesc_index %m[%i] : {md3} -> !ttg.memdesc<64x32xf16, {SH}, #smem, mutable>
      scf.yield
    }}
    %y = ttg.convert_layout %x : tensor<64x64xf16, {BL}> -> tensor<64x64xf16, {MMA}>
""")
    AllocateShared(scratch=_scratch_of_converts(8192)).run(m)
    cvt = next(op for op in m.walk() if op.name == "ttg.convert_layout")
    # the buffers are dead after the loop: the conversion's 8 KB start at 0 inside their 12 KB
    assert cvt.attributes["allocation.offset"] == 0
    assert m.attributes["ttg.shared"] == 3 * 64 * 32 * 2


def test_scratch_inside_the_loop_does_not_overlap_live_buffers():
    md3 = f"!ttg.memdesc<3x64x32xf16, {SH}, #smem, mutable>"
    m = _module(f"""    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %m = ttg.local_alloc : () -> {md3}
    scf.for %i = %c0 to %c1 step %c1 : i32 {{
      %y = ttg.convert_layout %x : tensor<64x64xf16, {BL}> -> tensor<64x64xf16, {MMA}>
      %s = ttg.memdesc_index %m[%i] : {md3} -> !ttg.memdesc<64x32xf16, {SH}, #smem, mutable>
      scf.yield
    }}
""")
    AllocateShared(scratch=_scratch_of_converts(100)).run(m)
    (alloc,) = _allocs(m)
    cvt = next(op for op in m.walk() if op.name == "ttg.convert_layout")
    assert alloc.attributes["allocation.offset"] == 0
    assert cvt.attributes["allocation.offset"] == 3 * 64 * 32 * 2  # 128-aligned, after it
    assert m.attributes["ttg.shared"] == 3 * 64 * 32 * 2 + 100


def test_two_conversions_share_their_scratch():
    m = _module(f"""\
    %y = ttg.convert_layout %x : tensor<64x64xf16, {BL}> -> tensor<64x64xf16, {MMA}>
    %z = ttg.convert_layout %y : tensor<64x64xf16, {MMA}> -> tensor<64x64xf16, {BL}>
""")
    AllocateShared(scratch=_scratch_of_converts(8192)).run(m)
    offs = [op.attributes["allocation.offset"] for op in m.walk()
            if op.name == "ttg.convert_layout"]
    assert offs == [0, 0] and m.attributes["ttg.shared"] == 8192
