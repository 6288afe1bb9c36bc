"""SVG layout and bank pictures, tested by the data they draw (tooltips, labels, geometry)."""
import json
import re

import numpy as np
import pytest

from workbench.layouts import (
    BlockedLayout,
    MmaLayout,
    PaddedRowMajor,
    SwizzledSharedLayout,
    bank_conflicts,
    ownership,
)
from workbench.viz.bank_view import banks_picture, word_wavefronts
from workbench.viz.layout_svg import STRIP, grid_shape, layout_picture
from workbench.viz.svg_grid import MIN_FONT_PX, NOMINAL_WIDTH, label_font


def _grid_data(html_text):
    m = re.search(r'data-wb-grid="([^"]*)"', html_text)
    import html
    return json.loads(html.unescape(m.group(1)))


@pytest.mark.parametrize("layout", [BlockedLayout((2, 4), (4, 8), (2, 2), (1, 0)),
                                    MmaLayout(2, (2, 2), (16, 8)),
                                    BlockedLayout((1, 1), (32, 1), (1, 4), (0, 1))],
                         ids=["blocked", "mma", "column-major"])
def test_64x64_tooltips_give_the_owner_of_sampled_elements(layout):
    view = layout_picture(layout, (64, 64))
    own = ownership(layout, (64, 64))
    rng = np.random.default_rng()
    cells = view.cells
    data = _grid_data(view.html)
    assert len(cells) == 64 * 64 and data["rows"] == 64 and data["cols"] == 64
    for flat in rng.choice(64 * 64, 40, replace=False):
        i, j = divmod(int(flat), 64)
        cell = cells[flat]
        w, ln, r = int(own.warp[i, j]), int(own.lane[i, j]), int(own.register[i, j])
        assert cell["index"] == (i, j) and (cell["row"], cell["col"]) == (i, j)
        assert (cell["warp"], cell["lane"], cell["register"]) == (w, ln, r)
        assert cell["thread"] == w * 32 + ln
        # the element really is at that (warp, lane, register) of the linear layout
        assert own.linear.apply(register=r, lane=ln, warp=w) == (i, j)
        assert view.picture.tooltip(int(flat)) == (
            f"({i}, {j}), thread {w * 32 + ln}, warp {w}, lane {ln}, register {r}, copies 1")
        # the script reads the same numbers from the page
        assert [data["fields"][k][flat] for k in ("warp", "lane", "register")] == [w, ln, r]
        assert data["labels"][flat] == f"T{ln}:{r}"


def test_labels_only_where_they_fit():
    lay = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
    small = layout_picture(lay, (16, 16))
    big = layout_picture(lay, (64, 64))
    assert small.picture.cell_px * 16 <= NOMINAL_WIDTH
    assert (small.shown_labels() == small.labels).all()
    assert small.html.count("<text") >= 16 * 16
    # at 64x64 a cell is NOMINAL_WIDTH / 64 px: too small for "T31:7" at MIN_FONT_PX
    assert label_font(NOMINAL_WIDTH / 64, "T31:7", big.picture.longest)[0] < MIN_FONT_PX
    assert (big.shown_labels() == "").all()
    assert 'data-i="' not in big.html  # no static labels; the script draws them on zoom
    # zoomed 4x, the same picture shows them all
    zoomed = big.shown_labels(4 * big.picture.cell_px)
    assert (zoomed == big.labels).all() and zoomed[0, 0] == "T0:0"
    # one font for every label of a picture
    sizes = {label_font(40, lb, big.picture.longest)[0] for lb in big.labels.reshape(-1)}
    assert len(sizes) == 1


def test_one_d_layout_is_a_strip():
    lay = BlockedLayout((4,), (32,), (4,), (0,))
    view = layout_picture(lay, (1024,))
    assert grid_shape((1024,)) == (1024 // STRIP, STRIP)
    assert view.labels.shape == (16, 64)
    assert view.picture.row_ticks[:3] == [(0, "0"), (1, "64"), (2, "128")]
    own = ownership(lay, (1024,))
    for k in (0, 5, 130, 777, 1023):
        c = view.cells[k]
        assert (c["row"], c["col"]) == divmod(k, 64) and c["index"] == (k,)
        assert (c["warp"], c["lane"], c["register"]) == (own.warp[k], own.lane[k],
                                                          own.register[k])
        # the tooltip names the element, not its place in the strip
        w, ln = own.warp[k], own.lane[k]
        assert view.picture.tooltip(k).startswith(
            f"element {k}, thread {w * 32 + ln}, warp {w}, lane {ln}, register "
            f"{own.register[k]}"), view.picture.tooltip(k)
    short = layout_picture(BlockedLayout((1,), (32,), (1,), (0,)), (16,))
    assert short.labels.shape == (1, 16)  # 16 elements of 32 lanes: one short row


def test_thread_and_warp_selection():
    lay = BlockedLayout((4,), (32,), (4,), (0,))
    view = layout_picture(lay, (1024,), thread=5)
    shown = np.flatnonzero(view.highlight.reshape(-1))
    assert list(shown) == [20, 21, 22, 23, 532, 533, 534, 535]
    assert view.labels.reshape(-1)[532] == "T5:4" and view.labels.reshape(-1)[0] == ""
    w = layout_picture(BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0)), (32, 16), warp=2)
    assert np.array_equal(w.highlight, w.ownership.warp == 2)
    assert [t for _, t in w.picture.legend] == ["warp 2"]


def test_legend_is_html_and_lists_every_warp():
    view = layout_picture(BlockedLayout((1, 1), (4, 8), (32, 1), (1, 0)), (128, 8))
    assert view.html.count('class="wb-leg"') == 32
    assert re.search(r'class="wb-legend" style="display:flex;flex-wrap:wrap', view.html)
    assert "<script>" in view.html and "wbGridInit" in view.html


def test_256x256_stays_drawable():
    view = layout_picture(BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0)), (256, 256))
    assert view.labels.shape == (256, 256) and view.html.count("<rect") < 20000
    assert len(view.html) < 4_000_000


def test_bank_view_tooltips_give_address_bank_and_wavefront():
    reader = BlockedLayout((1, 1), (32, 1), (1, 1), (0, 1))
    view = banks_picture(PaddedRowMajor(0), reader, (32, 32), "fp32",
                      compare=SwizzledSharedLayout(1, 1, 32, (1, 0)), vector_bytes=4)
    plain, swz = view.pictures
    assert view.grids[0]["wavefronts"] == 32 and view.grids[1]["wavefronts"] == 1
    # row-major: lane i reads word i*32 (bank 0) in wavefront i
    for lane in (0, 7, 31):
        k = lane * 32
        assert plain.tooltip(k) == (f"({lane}, 0), byte address {lane * 128}, bank 0, "
                                    f"lanes {lane}, wavefront {lane}")
    marked = plain.marked.reshape(32, 32)
    assert marked[:, 0].all() and not marked[:, 1:].any()
    # swizzled: lane i in bank i, all in wavefront 0
    rep = bank_conflicts(SwizzledSharedLayout(1, 1, 32, (1, 0)), reader, (32, 32), "fp32", 4)
    wf = word_wavefronts(rep)
    assert set(wf.values()) == {0} and len(wf) == 32
    banks = np.asarray(swz.fields["bank"])
    lanes = [swz.fields["lanes"][k] for k in range(len(swz.labels)) if swz.fields["lanes"][k]]
    assert sorted(int(x) for x in lanes) == list(range(32))
    assert sorted(banks[[k for k in range(len(swz.labels)) if swz.fields["lanes"][k]]]) == \
        list(range(32))
