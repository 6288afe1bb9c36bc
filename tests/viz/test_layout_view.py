"""Layout pictures, tested by the data they drew (not pixels)."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from workbench.layouts import BlockedLayout, LayoutError, MmaLayout, SwizzledSharedLayout  # noqa: E402
from workbench.viz.layout_view import MAX_LABELLED_CELLS, layout_figure  # noqa: E402


def test_mma_picture_labels_follow_ptx_fragment():
    fig = layout_figure(MmaLayout(2, (2, 2), (16, 8)), (32, 16))
    own, labels = fig.workbench_data, fig.workbench_labels
    assert labels[0, 0] == "T0:0" and labels[0, 1] == "T0:1" and labels[8, 0] == "T0:2"
    assert labels[1, 2] == "T5:0"  # row = groupID 1, col = 2*tig + 0 -> lane 5
    assert own.warp[0, 8] == 1 and own.warp[16, 0] == 2
    assert fig.workbench_highlight.all()


def test_one_warp_view_greys_the_others():
    lay = BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0))
    fig = layout_figure(lay, (32, 16), warp=2)
    assert np.array_equal(fig.workbench_highlight, fig.workbench_data.warp == 2)
    assert fig.workbench_labels[0, 0] == ""


def test_one_thread_view():
    fig = layout_figure(BlockedLayout((4,), (32,), (4,), (0,)), (1024,), thread=5)
    shown = np.argwhere(fig.workbench_highlight.reshape(-1)).ravel()
    assert list(shown) == [20, 21, 22, 23, 532, 533, 534, 535]
    assert fig.workbench_labels.reshape(-1)[532] == "T5:4"


def test_thread_view_of_replicated_layout_shows_its_copies():
    # 8 elements over 128 threads: lane 9 of warp 3 holds element 1 (a copy)
    fig = layout_figure(BlockedLayout((1,), (32,), (4,), (0,)), (8,), warp=3, thread=9)
    assert list(np.argwhere(fig.workbench_highlight.reshape(-1)).ravel()) == [1]
    assert fig.workbench_labels.reshape(-1)[1] == "T9:0"


def test_large_tile_drops_labels():
    fig = layout_figure(BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0)), (128, 128))
    assert 128 * 128 > MAX_LABELLED_CELLS
    assert (fig.workbench_labels == "").all()
    assert fig.workbench_data.warp.shape == (128, 128)


def test_per_thread_hardware_view():
    fig = layout_figure(MmaLayout(2, (1, 1), (16, 8)), (16, 8), per_thread=True)
    labels = fig.workbench_labels
    assert labels.shape == (32, 4)
    assert list(labels[5]) == ["(1,2)", "(1,3)", "(9,2)", "(9,3)"]


def test_bad_input():
    with pytest.raises(ValueError, match="warp = 9"):
        layout_figure(BlockedLayout((1,), (32,), (4,), (0,)), (128,), warp=9)
    with pytest.raises(LayoutError, match="distributed"):
        layout_figure(SwizzledSharedLayout(1, 1, 1, (1, 0)), (8, 8))


def test_short_names_in_the_viz_namespace():
    import workbench.viz as viz
    from workbench.layouts import BlockedLayout, ownership
    lay = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
    fig = viz.layout(lay, (32, 32))
    ref = ownership(lay, (32, 32))
    assert (fig.workbench_data.lane == ref.lane).all()
    assert viz.banks is viz.banks_picture
    import workbench.viz.explorer  # noqa: F401 - importing the submodule must not shadow names
    import workbench.viz.layout_view  # noqa: F401
    assert callable(viz.layout_explorer) and viz.layout is viz.layout_picture
    assert callable(viz.layout_figure) and viz.layout_figure.__module__.endswith("layout_view")


def test_big_tiles_say_why_they_have_no_labels():
    lay = BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0))
    big = layout_figure(lay, (64, 64))
    assert 64 * 64 > MAX_LABELLED_CELLS and (big.workbench_labels == "").all()
    assert "no T<lane>:<reg> labels above" in big.axes[0].get_title()
    small = layout_figure(lay, (16, 32))
    assert small.workbench_labels[0, 0] == "T0:0"
    assert "no T<lane>:<reg> labels" not in small.axes[0].get_title()
