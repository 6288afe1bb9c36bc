"""Per-thread coordinates used by the NVPTX lowering agree with the layout ownership maps."""
from __future__ import annotations

import numpy as np
import pytest

from workbench.codegen.nvptx.threads import ThreadLayout, register_map, thread_layout
from workbench.errors import UnsupportedError
from workbench.ir.types import TensorType, f32
from workbench.layouts.blocked import blocked_for_shape, default_blocked
from workbench.layouts.encodings import BlockedLayout, SliceLayout
from workbench.layouts.ownership import ownership

CASES = [
    (default_blocked((1024,), 4), (1024,)),
    (blocked_for_shape((1024,), (4,), (0,), 4), (1024,)),
    (default_blocked((64, 128), 4), (64, 128)),
    (BlockedLayout((1, 4), (1, 32), (4, 1), (1, 0)), (64, 128)),
    (BlockedLayout((2, 1), (8, 4), (1, 2), (0, 1)), (16, 16)),      # broadcast along dim 1
    (SliceLayout(1, BlockedLayout((1, 4), (1, 32), (4, 1), (1, 0))), (64,)),
    (SliceLayout(0, default_blocked((32, 64), 8)), (64,)),
]


@pytest.mark.parametrize("enc,shape", CASES, ids=[f"{type(e).__name__}{s}" for e, s in CASES])
def test_thread_coords_match_ownership(enc, shape):
    tl = thread_layout(TensorType(shape, f32, enc))
    own = ownership(enc, shape)
    warps = own.num_warps
    seen = np.zeros(shape, np.int64)
    for w in range(warps):
        for lane in range(32):
            coords = tl.coords(w, lane)
            assert coords == own.thread_elements(w, lane)
            for c in set(coords):
                seen[c] += 1
    # every element is held by as many threads as ownership counts copies (duplicates in a
    # thread's registers counted once)
    assert seen.min() >= 1
    assert int(seen.sum()) <= int(own.copies.sum())


def test_register_map_expand_dims_and_broadcast():
    parent = BlockedLayout((1, 4), (1, 32), (4, 1), (1, 0))
    sl = thread_layout(TensorType((128,), f32, SliceLayout(0, parent)))
    row = thread_layout(TensorType((1, 128), f32, parent))
    m = register_map(sl, row, lambda c: (c[1],))
    for w in range(4):
        for lane in (0, 7, 31):
            src = sl.coords(w, lane)
            dst = row.coords(w, lane)
            assert [src[i] for i in m] == [(c[1],) for c in dst]
    full = thread_layout(TensorType((64, 128), f32, parent))
    mb = register_map(row, full, lambda c: (0, c[1]))
    src, dst = row.coords(2, 5), full.coords(2, 5)
    assert [src[i] for i in mb] == [(0, c[1]) for c in dst]


def test_register_map_refuses_cross_thread_moves():
    a = thread_layout(TensorType((1024,), f32, default_blocked((1024,), 4)))
    b = thread_layout(TensorType((1024,), f32, blocked_for_shape((1024,), (4,), (0,), 4)))
    with pytest.raises(UnsupportedError, match="other threads"):
        register_map(a, b, lambda c: c)


def test_thread_layout_needs_an_encoding():
    with pytest.raises(UnsupportedError, match="no layout encoding"):
        thread_layout(TensorType((16,), f32, None))


def test_thread_part_is_xor_of_bases():
    tl = ThreadLayout((8, 8), ((0, 0), (0, 1)), ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0)), ())
    assert tl.thread_part(0, 0b00101) == (1, 2)
    assert tl.coords(0, 31) == [(7, 6), (7, 7)]
