"""Bank pictures, tested by the data they drew (not pixels)."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from workbench.layouts import BlockedLayout, PaddedRowMajor, SwizzledSharedLayout  # noqa: E402
from workbench.viz.bank_view import banks_figure  # noqa: E402

COLUMN_READER = BlockedLayout((1, 1), (32, 1), (1, 1), (0, 1))


def test_transpose_conflict_versus_swizzle_side_by_side():
    fig = banks_figure(PaddedRowMajor(0), COLUMN_READER, (32, 32), "fp32",
                       compare=SwizzledSharedLayout(1, 1, 32, (1, 0)), vector_bytes=4)
    data = fig.workbench_data
    plain, swz = data["grids"]
    assert plain["wavefronts"] == 32 and swz["wavefronts"] == 1
    # row-major: 32 lines, every lane in bank 0, all marked as conflicts
    assert plain["lanes"].shape == (32, 32)
    assert [plain["lanes"][i, 0] for i in range(32)] == [[i] for i in range(32)]
    assert plain["conflict"][:, 0].all() and not plain["conflict"][:, 1:].any()
    # swizzled: lane i lands in bank i, no conflict
    assert not swz["conflict"].any()
    hit = sorted(b for (_, b), ls in __import__("numpy").ndenumerate(swz["lanes"]) if ls)
    assert hit == list(range(32))
    assert len(fig.axes) == 2 and "32 wavefront" in fig.axes[0].get_title()


def test_padding_and_request_choice():
    fig = banks_figure(PaddedRowMajor(1), COLUMN_READER, (32, 32), "fp32", request=3,
                       vector_bytes=4)
    g = fig.workbench_data["grids"][0]
    assert g["wavefronts"] == 1 and g["registers"] == (3,)
    with pytest.raises(IndexError):
        banks_figure(PaddedRowMajor(1), COLUMN_READER, (32, 32), "fp32", request=99, vector_bytes=4)


def test_broadcast_is_not_a_conflict():
    # fp16 row read: lanes 2k and 2k+1 share a word -> labelled with both lanes, no conflict
    reader = BlockedLayout((1, 1), (1, 32), (1, 1), (1, 0))
    fig = banks_figure(PaddedRowMajor(0), reader, (32, 32), "fp16", vector_bytes=2)
    g = fig.workbench_data["grids"][0]
    assert g["lanes"][0, 0] == [0, 1] and not g["conflict"].any()
