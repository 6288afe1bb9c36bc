"""``CompiledKernel.layouts()`` lists every ttgir value with its layout, from the real compiler."""
import pytest

import workbench
from workbench.layouts import BlockedLayout, LayoutError, SliceLayout, ownership
from workbench.testing.examples import softmax_kernel


def test_layouts_of_compiled_softmax():
    c = workbench.compile(softmax_kernel, "*fp32:16", "*fp32:16", "i32", "i32", "i32",
                          target="cuda:90", num_warps=4, BLOCK_SIZE=1024)
    table = c.layouts()
    by_name = {v.name: v for v in table}
    cols = by_name["%cols"]
    assert cols.encoding == BlockedLayout((1,), (32,), (4,), (0,))
    lines = softmax_kernel.src.text.splitlines()
    arange_line = next(i for i, t in enumerate(lines) if "cols = tl.arange" in t)
    assert cols.loc.line == softmax_kernel.src.first_line + arange_line
    # the figure draws exactly the ownership of that layout
    fig = table.draw("%cols")
    own = fig.workbench_data
    ref = ownership(cols.encoding, (1024,))
    assert (own.lane == ref.lane).all() and (own.warp == ref.warp).all()
    assert not any(isinstance(v.encoding, SliceLayout) and v.encoding.parent is None
                   for v in table)


def test_layouts_need_a_gpu_target():
    c = workbench.compile(softmax_kernel, "*fp32:16", "*fp32:16", "i32", "i32", "i32",
                          target="cpu", BLOCK_SIZE=1024)
    with pytest.raises(LayoutError):
        c.layouts()


def test_draw_by_variable_name_takes_the_tile_the_variable_holds():
    from workbench.testing.examples import add_kernel
    c = workbench.compile(add_kernel, "*fp32:16", "*fp32:16", "*fp32:16", "i32",
                          target="cuda:90", BLOCK_SIZE=1024)
    table = c.layouts()
    names = [v.name for v in table]
    # `offsets = pid * BLOCK_SIZE + tl.arange(...)`: %offsets is the scalar pid * BLOCK_SIZE
    # (no layout), the tiles are %offsets_0, %offsets_1...; the variable's last tile is drawn
    tiles = [n for n in names if n.startswith("%offsets_")]
    assert "%offsets" not in names and len(tiles) > 1
    assert table.draw("offsets").workbench_value.name == tiles[-1]
    assert table.draw(tiles[0]).workbench_value.name == tiles[0]  # exact names stay exact
    assert table.draw("mask").workbench_value.name == "%mask"
    with pytest.raises(LayoutError, match="no value %nope"):
        table.draw("nope")
