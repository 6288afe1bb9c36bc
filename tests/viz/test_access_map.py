"""Program-level access maps, by data: masks against numpy, program maps against the grid
arithmetic, coalescing counts against hand-computed sectors."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.viz.access_map import access_map


@wb.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2, mask=mask)


@wb.jit
def tile_kernel(x_ptr, y_ptr, rows, cols, stride, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    r = pm * BM + tl.arange(0, BM)
    c = pn * BN + tl.arange(0, BN)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    v = tl.load(x_ptr + r[:, None] * stride + c[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + r[:, None] * stride + c[None, :], v + 1, mask=mask)


def test_masked_1d_launch_marks_exactly_the_masked_lanes():
    rng = np.random.default_rng()
    n = int(rng.integers(97, 127))
    x = rng.standard_normal(n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    am = access_map(scale_kernel, (triton_cdiv(n, 32),), x, y, n, BLOCK=32)
    np.testing.assert_array_equal(y, x * 2)  # it really ran
    assert len(am.programs) == 4 and len(am.accesses) == 8
    for a in am.accesses:
        offs = a.program * 32 + np.arange(32)
        assert a.array == ("x_ptr" if a.kind == "load" else "y_ptr")
        np.testing.assert_array_equal(a.indices, offs)
        np.testing.assert_array_equal(a.mask, offs < n)
    load = next(s for s in am.sites if s.kind == "load")
    assert load.keep_fraction == pytest.approx(n / 128)
    assert "tl.load(x_ptr + offs, mask=mask)" in load.source
    np.testing.assert_array_equal(am.program_map("y_ptr"), np.arange(n) // 32)
    assert any("masked-off lane(s) point outside x_ptr" in t for t in am.notes)


def triton_cdiv(a, b):
    return -(-a // b)


def test_masked_2d_tiles_draw_masked_lanes_inside_the_array():
    rng = np.random.default_rng()
    # a 40 x 64 buffer of which the kernel may touch rows < 40 and columns < cols
    cols = int(rng.integers(33, 60))
    x = rng.standard_normal((40, 64)).astype(np.float32)
    y = np.zeros_like(x)
    am = access_map(tile_kernel, (3, 2), x, y, 40, cols, 64, BM=16, BN=32)
    np.testing.assert_array_equal(y[:, :cols], x[:, :cols] + 1)
    assert (y[:, cols:] == 0).all()
    for pid in am.programs:
        pm, pn = pid[0], pid[1]
        r = pm * 16 + np.arange(16)
        c = pn * 32 + np.arange(32)
        mask = (r[:, None] < 40) & (c[None, :] < cols)
        st = am.states(pid, "x_ptr")
        want = np.zeros((40, 64), np.int8)
        rr, cc = np.broadcast_arrays(r[:, None], c[None, :])
        inside = rr < 40  # lanes whose address lies inside the 40 x 64 buffer
        want[rr[inside & mask], cc[inside & mask]] = 1
        want[rr[inside & ~mask], cc[inside & ~mask]] = 4
        np.testing.assert_array_equal(st, want)
        (ld,) = [a for a in am.of_program(pid) if a.kind == "load"]
        np.testing.assert_array_equal(ld.mask, mask.reshape(-1))
        np.testing.assert_array_equal(ld.indices, (rr * 64 + cc).reshape(-1))
    # the program map is the grid arithmetic: program = pm + 3 * pn
    pmap = am.program_map("y_ptr")
    rr, cc = np.indices((40, 64))
    want = np.where(cc < cols, rr // 16 + 3 * (cc // 32), -1)
    np.testing.assert_array_equal(pmap, want)
    # the program map labels each program once, at the centre of its tile
    from workbench.viz.access_map import order_picture
    pic = order_picture(am, "y_ptr")
    centres = {t: (r, c) for r, c, t in pic.overlays}
    assert set(centres) == {str(p) for p in range(6)}
    for p in range(6):
        pm, pn = p % 3, p // 3
        rows = min(16, 40 - 16 * pm)
        cols_here = min(32, cols - 32 * pn)
        assert centres[str(p)] == (16 * pm + rows / 2, 32 * pn + cols_here / 2)
    html = am.html
    assert html.count('class="wb-access-array"') == 2 and 'class="wb-pid"' in html
    assert "wbAccessInit" in html and html.count('data-wb-kind="program-map"') == 1


def test_coalescing_counts():
    # contiguous fp32: a warp moves 128 bytes = 4 sectors, all used when aligned to 32 bytes
    buf = np.zeros(64 + 8, np.float32)
    start = (-buf.ctypes.data % 32) // 4
    x = buf[start:start + 64]
    y = np.zeros(64, np.float32)
    assert x.ctypes.data % 32 == 0
    am = access_map(scale_kernel, (2,), x, y, 64, BLOCK=32)
    load = next(s for s in am.sites if s.kind == "load")
    assert (load.requests, load.sectors, load.bytes) == (2, 8, 256)
    assert load.bytes_per_sector == 32.0 and load.keep_fraction == 1.0


def test_strided_access_wastes_sectors():
    x = np.zeros((32, 64), np.float32)
    y = np.zeros((32, 64), np.float32)
    # one column of 32 rows: each lane in its own sector (4 of 32 bytes used)
    am = access_map(tile_kernel, (1, 1), x, y, 32, 1, 64, BM=32, BN=1)
    load = next(s for s in am.sites if s.kind == "load")
    assert load.requests == 1 and load.sectors == 32 and load.bytes == 128
    assert load.bytes_per_sector == 4.0
