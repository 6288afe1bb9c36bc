"""Per-thread data for code generation: register part XOR lane/warp part."""
import itertools

import pytest

from workbench.layouts import (
    BlockedLayout,
    DotOperandLayout,
    MmaLayout,
    SliceLayout,
    SwizzledSharedLayout,
    elements_per_thread,
    is_disjoint,
    num_registers,
    ownership,
    register_offsets,
    thread_bases,
)
from workbench.layouts.codegen_support import thread_coords

CASES = [
    (BlockedLayout((4,), (32,), (4,), (0,)), (1024,)),
    (BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0)), (128, 64)),
    (MmaLayout(2, (2, 2), (16, 8)), (64, 32)),
    (DotOperandLayout(0, MmaLayout(2, (2, 2), (16, 8)), 2), (32, 32)),
    (SliceLayout(1, BlockedLayout((1, 4), (1, 32), (4, 1), (1, 0))), (64,)),
]


@pytest.mark.parametrize("layout,shape", CASES)
def test_xor_formula_reproduces_ownership(layout, shape):
    own = ownership(layout, shape)
    for w, ln in itertools.product(range(own.num_warps), (0, 3, 17, 31)):
        assert thread_coords(layout, shape, w, ln) == own.thread_elements(w, ln)


@pytest.mark.parametrize("layout,shape", CASES)
def test_distributed_layouts_are_disjoint(layout, shape):
    assert is_disjoint(layout, shape)


def test_vector_add_numbers():
    lay, shape = BlockedLayout((4,), (32,), (4,), (0,)), (1024,)
    assert num_registers(lay, shape) == elements_per_thread(lay, shape) == 8
    assert register_offsets(lay, shape) == [(0,), (1,), (2,), (3,), (512,), (513,), (514,), (515,)]
    assert thread_bases(lay, shape) == {"lane": [(4,), (8,), (16,), (32,), (64,)],
                                        "warp": [(128,), (256,)]}


def test_swizzle_is_not_disjoint():
    assert not is_disjoint(SwizzledSharedLayout(1, 1, 8, (1, 0)), (8, 8), in_dims=("offset",))
