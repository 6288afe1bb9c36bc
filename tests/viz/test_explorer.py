"""The layout explorer: its state logic by data, and the widget driven without a browser."""
import dataclasses

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from workbench.layouts import (  # noqa: E402
    BlockedLayout,
    DotOperandLayout,
    MmaLayout,
    PaddedRowMajor,
    SliceLayout,
    SwizzledSharedLayout,
    ownership,
)
from workbench.viz.explorer import ExplorerState, layout_explorer, render  # noqa: E402

# lane i holds row i of a 32x32 tile: reading a row-major tile column by column
COLUMN_READER = dict(size_per_thread=(1, 1), threads_per_warp=(32, 1), warps_per_cta=(1, 1),
                     order=(0, 1))


def test_default_is_the_coalesced_fp32_blocked_layout():
    res = ExplorerState().evaluate()
    assert res.error is None
    assert res.layout == BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
    facts = " ".join(res.facts)
    assert "16-byte accesses" in facts and "128 contiguous bytes" in facts
    assert "8 register(s) per thread" in facts  # 32*32 / 128 threads
    fp16 = dataclasses.replace(ExplorerState(), dtype="fp16").evaluate()
    assert "8-byte accesses" in " ".join(fp16.facts)


def test_invalid_parameters_become_the_layout_error_text():
    bad = dataclasses.replace(ExplorerState(), threads_per_warp=(8, 8))
    res = bad.evaluate()  # never raises
    assert res.layout is None and "threadsPerWarp = [8, 8] has product 64" in res.error
    res = dataclasses.replace(ExplorerState(), kind="mma", mma_version=3,
                              mma_warps=(2, 1)).evaluate()
    assert res.layout is None and "warp groups" in res.error
    res = dataclasses.replace(ExplorerState(), shape=(64,)).evaluate()
    assert "rank 2" in res.error and "rank 1" in res.error
    res = dataclasses.replace(ExplorerState(), kind="fixed", fixed_text="#ttg.blocked<{").evaluate()
    assert res.layout is None and res.error
    view = render(bad)
    assert view.layout_fig is None and view.bank_fig is None
    assert 'data-wb-layout-error="1"' in view.message_html and "threadsPerWarp" in view.message_html


def test_textbook_transpose_conflict_and_its_fixes():
    st = dataclasses.replace(ExplorerState(), shared_kind="padded", pad=0, **COLUMN_READER)
    res = st.evaluate()
    assert res.report.conflict_degree == 32 and res.plain_report is None
    swz = dataclasses.replace(st, shared_kind="swizzled", vec=1, per_phase=1, max_phase=32)
    res = swz.evaluate()
    assert res.shared == SwizzledSharedLayout(1, 1, 32, (1, 0))
    assert res.report.conflict_degree == 1 and res.plain_report.conflict_degree == 32
    assert dataclasses.replace(st, pad=1).evaluate().report.conflict_degree == 1
    assert "32-way" in " ".join(st.evaluate().facts)


def test_bank_errors_leave_the_layout_picture():
    st = dataclasses.replace(ExplorerState(), vector_bytes=16, **COLUMN_READER)
    res = st.evaluate()  # 16 B = 4 registers; the column reader has 32 per thread: fine
    assert res.bank_error is None and res.report.vector_bytes == 16
    res = dataclasses.replace(ExplorerState(), size_per_thread=(1, 1), threads_per_warp=(1, 32),
                              vector_bytes=16, shape=(4, 32)).evaluate()
    assert res.layout is not None and res.report is None and "vector_bytes" in res.bank_error
    res = dataclasses.replace(ExplorerState(), request=999).evaluate()
    assert res.layout is not None and "request = 999" in res.bank_error
    res = dataclasses.replace(ExplorerState(), shape=(128,), shared_kind="swizzled",
                              size_per_thread=(4,), threads_per_warp=(32,), warps_per_cta=(4,),
                              order=(0,)).evaluate()
    assert res.error is None and res.report is None  # no bank view for rank-1 tiles


@pytest.mark.parametrize("layout", [
    BlockedLayout((2, 2), (8, 4), (2, 2), (0, 1)),
    MmaLayout(2, (4, 1), (16, 8)),
    MmaLayout(3, (4, 1), (16, 64, 16)),
    DotOperandLayout(1, MmaLayout(2, (2, 2), (16, 8)), 2),
    SliceLayout(0, BlockedLayout((1, 1), (4, 8), (2, 2), (1, 0))),
], ids=["blocked", "mma2", "mma3", "dot_op", "slice"])
def test_state_round_trips_every_kind(layout):
    shape = (64,) if isinstance(layout, SliceLayout) else (64, 64)
    st = ExplorerState.from_layout(str(layout), shape)
    assert st.layout() == layout
    if isinstance(layout, SliceLayout):
        assert st.kind == "fixed"


def test_render_draws_the_state():
    st = dataclasses.replace(ExplorerState(), shape=(16, 32), warp=1, shared_kind="swizzled",
                             vec=4, per_phase=1, max_phase=8, vector_bytes=16)
    view = render(st)
    lay = BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
    assert np.array_equal(view.layout_fig.workbench_data.warp, ownership(lay, (16, 32)).warp)
    assert np.array_equal(view.layout_fig.workbench_highlight,
                          view.layout_fig.workbench_data.warp == 1)
    reports = view.bank_fig.workbench_data["reports"]
    assert [type(r.shared) for r in reports] == [SwizzledSharedLayout, PaddedRowMajor]
    assert reports[0].vector_bytes == 16 and "#ttg.blocked" in view.message_html


def test_widget_updates_and_survives_bad_values():
    box = layout_explorer("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], "
                          "warpsPerCTA = [4, 1], order = [1, 0]}>", shape=(8, 32))
    assert box.result.layout == BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0))
    assert box.params["threads_per_warp"] == [4, 8] and "#ttg.blocked" in box.message
    assert 'data-wb-kind="banks"' in box.bank_html
    assert box.owner == {"params": box.params}  # blocked: the browser computes the map
    box.params = {**box.params, "threads_per_warp": [8, 8]}  # invalid
    assert box.result.error and "threadsPerWarp" in box.message
    assert 'data-wb-layout-error="1"' in box.message and box.bank_html == ""
    box.params = {**box.params, "threads_per_warp": [8, 4]}  # valid again
    assert box.result.layout == BlockedLayout((1, 4), (8, 4), (4, 1), (1, 0))
    box.params = {**box.params, "kind": "mma", "shared_kind": "none"}
    mma = MmaLayout(2, (2, 2), (16, 8))
    assert box.result.layout == mma and box.bank_html == ""
    own = ownership(mma, (8, 32))
    assert box.owner["warp"] == own.warp.reshape(-1).tolist()
    assert box.owner["reg"] == own.register.reshape(-1).tolist()
    box.params = {**box.params, "vector_bytes": 16, "kind": "blocked", "shared_kind": "padded",
                  "pad": 1}
    assert box.result.report.vector_bytes == 16  # "bytes per lane" reaches the bank view
