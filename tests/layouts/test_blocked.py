"""Blocked layouts: Triton's builders against real Triton 3.6 output, and ownership against the
closed form (including shapes smaller and larger than the CTA tile)."""
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.layouts import (
    BlockedLayout,
    blocked_for_shape,
    default_blocked,
    ownership,
    parse_aliases,
    to_linear,
)
from workbench.layouts.blocked import coalesced_blocked

from .closed_forms import blocked_elements, blocked_owner_table

IR_DIR = Path("/work/shared/reference/triton-3.6-ir")
B = BlockedLayout


@pytest.mark.parametrize("shape,nw,expect", [
    # the reference text: [1024] with 4 warps starts as spt [1], tpw [32], wpc [4]
    ((1024,), 4, B((1,), (32,), (4,), (0,))),
    # ir_blockptr.txt: a 32x64 block-pointer copy keeps the default layout
    ((32, 64), 4, B((1, 1), (1, 32), (2, 2), (1, 0))),
    # ir_rowsum.txt #blocked1: the [64] output
    ((64,), 4, B((1,), (32,), (4,), (0,))),
    # ir_softmax.txt: a 1-D 1024 row with an unaligned stride keeps [1], [32], [4]
    ((1024,), 4, B((1,), (32,), (4,), (0,))),
    # shapes smaller than a warp
    ((16,), 4, B((1,), (32,), (4,), (0,))),
    ((4, 4), 4, B((1, 1), (8, 4), (4, 1), (1, 0))),
    ((1, 8), 1, B((1, 1), (4, 8), (1, 1), (1, 0))),
    ((128, 2), 8, B((1, 1), (16, 2), (8, 1), (1, 0))),
    ((2, 2, 256), 4, B((1, 1, 1), (1, 1, 32), (1, 1, 4), (2, 1, 0))),
])
def test_default_blocked(shape, nw, expect):
    assert default_blocked(shape, nw) == expect


@pytest.mark.parametrize("shape,spt,order,nw,expect", [
    # the worked example of BlockedEncodingAttr::get (TritonGPUAttrDefs.td)
    ((128, 64), (1, 8), (1, 0), 8, B((1, 8), (4, 8), (8, 1), (1, 0))),
    # ir_matmul_sm80.txt: B tile 32x128 and A tile 128x32 fp16, 4 warps
    ((32, 128), (1, 8), (1, 0), 4, B((1, 8), (2, 16), (4, 1), (1, 0))),
    ((128, 32), (1, 8), (1, 0), 4, B((1, 8), (8, 4), (4, 1), (1, 0))),
    # ir_matmul_sm90.txt: 8 warps
    ((64, 128), (1, 8), (1, 0), 8, B((1, 8), (2, 16), (8, 1), (1, 0))),
    # ir_rowsum.txt: 64x128 fp32 after coalescing (4 per thread)
    ((64, 128), (1, 4), (1, 0), 4, B((1, 4), (1, 32), (4, 1), (1, 0))),
    # ir_add.txt: 1024 fp32, 4 per thread
    ((1024,), (4,), (0,), 4, B((4,), (32,), (4,), (0,))),
])
def test_blocked_for_shape(shape, spt, order, nw, expect):
    assert blocked_for_shape(shape, spt, order, nw) == expect


def test_coalesced_blocked_caps_per_thread():
    assert coalesced_blocked((1024,), (0,), 4, 4) == B((4,), (32,), (4,), (0,))
    # 64 elements over 128 threads: per-thread width capped to 1
    assert coalesced_blocked((64,), (0,), 4, 4) == B((1,), (32,), (4,), (0,))


def test_every_blocked_alias_in_the_reference_ir_is_rebuilt_by_the_builder():
    """Each #blocked printed by Triton equals blocked_for_shape(shape, its spt, its order)."""
    shapes = {  # tensor shapes each alias is used with in the files
        ("ir_add.txt", "#blocked"): (1024,),
        ("ir_blockptr.txt", "#blocked"): (32, 64),
        ("ir_rowsum.txt", "#blocked"): (64, 128),
        ("ir_rowsum.txt", "#blocked1"): (64,),
        ("ir_softmax.txt", "#blocked"): (1024,),
        ("ir_matmul_sm80.txt", "#blocked"): (32, 128),
        ("ir_matmul_sm80.txt", "#blocked1"): (128, 32),
        ("ir_matmul_sm90.txt", "#blocked"): (64, 128),
        ("ir_matmul_sm90.txt", "#blocked1"): (128, 64),
    }
    warps = {"ir_matmul_sm90.txt": 8}
    seen = 0
    for (fname, alias), shape in shapes.items():
        text = (IR_DIR / fname).read_text()
        ttgir = text[text.index("===== ttgir") if "===== ttgir" in text else 0:]
        aliases = parse_aliases(ttgir)
        lay = aliases[alias]
        dims = "x".join(str(d) for d in shape)
        assert re.search(rf"tensor<{dims}x[^,]+, {alias}>", ttgir), (fname, alias, shape)
        rebuilt = blocked_for_shape(shape, lay.size_per_thread, lay.order, warps.get(fname, 4))
        assert rebuilt == lay, (fname, alias)
        seen += 1
    assert seen == 9


PARAMS = [
    # (spt, tpw, wpc, order, shape): equal to, larger than (wrap) and smaller than (broadcast)
    ((4,), (32,), (4,), (0,), (1024,)),
    ((4,), (32,), (4,), (0,), (512,)),
    ((4,), (32,), (4,), (0,), (64,)),
    ((1,), (32,), (4,), (0,), (8,)),
    ((1, 8), (4, 8), (8, 1), (1, 0), (128, 64)),
    ((1, 8), (4, 8), (8, 1), (1, 0), (16, 16)),
    ((2, 2), (8, 4), (2, 2), (0, 1), (64, 32)),
    ((2, 2), (8, 4), (2, 2), (0, 1), (4, 2)),
    ((1, 4), (1, 32), (4, 1), (1, 0), (64, 128)),
    ((2, 1, 2), (2, 4, 4), (1, 2, 1), (2, 0, 1), (8, 16, 4)),
]


@pytest.mark.parametrize("spt,tpw,wpc,order,shape", PARAMS)
def test_blocked_ownership_equals_closed_form(spt, tpw, wpc, order, shape):
    own = ownership(BlockedLayout(spt, tpw, wpc, order), shape)
    table = blocked_owner_table(spt, tpw, wpc, order, shape)
    for coord, owners in table.items():
        w, ln, r = min(owners)
        assert (own.warp[coord], own.lane[coord], own.register[coord]) == (w, ln, r), coord
        assert own.copies[coord] == len(owners)


def test_vector_add_linear_layout_matches_reference():
    ll = to_linear(B((4,), (32,), (4,), (0,)), (1024,))
    assert ll.in_dim_bases("register") == ((1,), (2,), (512,))
    assert ll.in_dim_bases("lane") == ((4,), (8,), (16,), (32,), (64,))
    assert ll.in_dim_bases("warp") == ((128,), (256,))


def test_small_shape_broadcasts_with_copies():
    # 4 warps x 32 lanes over 8 elements: 16 copies each, owner is warp 0
    own = ownership(B((1,), (32,), (4,), (0,)), (8,))
    assert (own.copies == 16).all()
    assert (own.warp == 0).all() and np.array_equal(own.lane, np.arange(8))


def test_thread_elements_register_order():
    own = ownership(B((1, 8), (4, 8), (8, 1), (1, 0)), (128, 64))
    # lane 9: lane_d1 = 1, lane_d0 = 1; 8 contiguous columns, then repetition along dim0 (+32)
    assert own.thread_elements(0, 9)[:9] == [(1, 8 + j) for j in range(8)] + [(33, 8)]


@st.composite
def blocked_cases(draw):
    rank = draw(st.integers(1, 3))
    log_tpw = [0] * rank
    for _ in range(5):
        log_tpw[draw(st.integers(0, rank - 1))] += 1
    log_wpc = [0] * rank
    for _ in range(draw(st.integers(0, 3))):
        log_wpc[draw(st.integers(0, rank - 1))] += 1
    spt = tuple(1 << draw(st.integers(0, 2)) for _ in range(rank))
    order = tuple(draw(st.permutations(range(rank))))
    shape = tuple(1 << draw(st.integers(0, 7 if rank == 1 else 5 if rank == 2 else 3))
                  for _ in range(rank))
    return spt, tuple(1 << x for x in log_tpw), tuple(1 << x for x in log_wpc), order, shape


@settings(max_examples=60, deadline=None)
@given(blocked_cases())
def test_property_to_linear_equals_closed_form(case):
    spt, tpw, wpc, order, shape = case
    ll = to_linear(BlockedLayout(spt, tpw, wpc, order), shape)
    coords = ll.coords()
    for w in range(coords.shape[0]):
        for ln in (0, 1, 5, 17, 31):
            exp = blocked_elements(spt, tpw, wpc, order, shape, w, ln)
            got = [tuple(int(x) for x in c) for c in coords[w, ln]]
            assert got == exp


@settings(max_examples=40, deadline=None)
@given(blocked_cases())
def test_property_default_and_builder_layouts_cover_the_tile(case):
    _, _, wpc, order, shape = case
    nw = int(np.prod(wpc))
    lay = default_blocked(shape, nw)
    assert lay.num_warps == nw and int(np.prod(lay.threads_per_warp)) == 32
    own = ownership(lay, shape)
    assert own.copies.sum() == nw * 32 * own.num_registers
