"""The views' JavaScript in a real (headless) Chromium: the explorer's blocked-layout owner map
equals Python's, a slider move redraws within 100 ms, the layout tooltip names the owner, and
the access map's program slider shows each program's masked lanes. Skips without the
``playwright`` package or a ``chromium`` binary (never downloads a browser)."""
import base64
import json
import shutil
import statistics
from importlib import resources

import numpy as np
import pytest

from workbench.layouts import BlockedLayout, ownership

playwright = pytest.importorskip("playwright.sync_api",
                                 reason="the playwright package is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH")

BLOCKED_CASES = [
    ((1, 4), (4, 8), (4, 1), (1, 0), (32, 32)),
    ((2, 2), (8, 4), (2, 2), (0, 1), (64, 16)),
    ((1, 1), (32, 1), (1, 4), (0, 1), (8, 8)),       # smaller than the CTA tile: broadcast
    ((4,), (32,), (4,), (0,), (1024,)),
    ((1,), (32,), (8,), (0,), (64,)),                # broadcast in 1-D
    ((1, 8), (2, 16), (8, 1), (1, 0), (256, 128)),   # repeats
]


@pytest.fixture(scope="module")
def page(browser):
    pg = browser.new_page(viewport={"width": 1200, "height": 900})
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.set_content('<html><body><div id="root" style="width:1100px"></div></body></html>')
    pg.errors = errors
    yield pg
    pg.close()


def _import_explorer(page):
    js = resources.files("workbench.viz").joinpath("static/explorer.js").read_bytes()
    url = "data:text/javascript;base64," + base64.b64encode(js).decode()
    page.evaluate(f"async () => {{ window.wbExplorer = await import({json.dumps(url)}); }}")


def _random_case(rng):
    """Fresh random blocked parameters: rank 1 or 2, threadsPerWarp of product 32, any
    sizePerThread and warpsPerCTA, shapes from 1 to 256 (broadcast and repeats)."""
    rank = int(rng.integers(1, 3))
    split = int(rng.integers(0, 6))
    tpw = (32,) if rank == 1 else (2 ** split, 2 ** (5 - split))
    spt = tuple(int(2 ** rng.integers(0, 4)) for _ in range(rank))
    wpc = tuple(int(2 ** rng.integers(0, 3)) for _ in range(rank))
    order = tuple(int(d) for d in rng.permutation(rank))
    shape = tuple(int(2 ** rng.integers(0, 9 if rank == 1 else 8)) for _ in range(rank))
    return spt, tpw, wpc, order, shape


@pytest.mark.parametrize("case", BLOCKED_CASES + ["random"] * 6,
                         ids=lambda c: "random" if c == "random" else "x".join(map(str, c[4])))
def test_explorer_js_owner_map_equals_python(page, case):
    if case == "random":
        case = _random_case(np.random.default_rng())
    spt, tpw, wpc, order, shape = case
    _import_explorer(page)
    got = page.evaluate(
        "([a, b, c, d, e]) => { const o = wbExplorer.blockedOwners(a, b, c, d, e);"
        " return {warp: Array.from(o.warp), lane: Array.from(o.lane), reg: Array.from(o.reg),"
        " copies: Array.from(o.copies)}; }", [list(spt), list(tpw), list(wpc), list(order),
                                              list(shape)])
    own = ownership(BlockedLayout(spt, tpw, wpc, order), shape)
    assert got["warp"] == own.warp.reshape(-1).tolist()
    assert got["lane"] == own.lane.reshape(-1).tolist()
    assert got["reg"] == own.register.reshape(-1).tolist()
    assert got["copies"] == own.copies.reshape(-1).tolist()
    assert not page.errors


MOUNT = """(params) => {
  const root = document.getElementById('root'); root.innerHTML = '';
  const traits = {params, owner: {}, message: '', bank_html: '', dtypes: ['fp32', 'fp16']};
  window.saves = 0;
  const model = {get: (k) => traits[k], set: (k, v) => { traits[k] = v; },
                 save_changes: () => { window.saves++; }, on: () => {}};
  wbExplorer.default.render({model, el: root});
  window.wbModel = traits;
}"""

MOVE = """async ([name, index]) => {
  const s = document.querySelector(`input[data-param="${name}"]`);
  const before = +document.getElementById('root').dataset.wbDrawn;
  const t0 = performance.now();
  s.value = String(index);
  s.dispatchEvent(new Event('input'));
  await new Promise((r) => requestAnimationFrame(() => r()));
  const t1 = performance.now();
  return {ms: t1 - t0, drawn: +document.getElementById('root').dataset.wbDrawn - before};
}"""


def _params(spt, tpw, wpc, order, shape):
    from workbench.viz.explorer import ExplorerState, state_to_params
    st = ExplorerState(shape=shape, size_per_thread=spt, threads_per_warp=tpw,
                       warps_per_cta=wpc, order=order, shared_kind="none")
    return state_to_params(st)


@pytest.mark.parametrize("shape", [(64, 64), (256, 256)], ids=["64x64", "256x256"])
def test_explorer_slider_redraws_within_100ms(page, shape, record_property):
    _import_explorer(page)
    page.evaluate(MOUNT, _params((1, 4), (4, 8), (4, 1), (1, 0), shape))
    labels = page.eval_on_selector_all(".wb-ctl-label", "els => els.map(e => e.textContent)")
    for name in ("sizePerThread[0]", "sizePerThread[1]", "threadsPerWarp[0]",
                 "threadsPerWarp[1]", "warpsPerCTA[0]", "warpsPerCTA[1]",
                 "bytes per lane (vector)"):
        assert name in labels  # full names, never cut
    times = []
    for value in (0, 1, 3, 2, 4, 2, 1, 3):  # sizePerThread[1] = 1, 2, 8, 4, 16, 4, 2, 8
        r = page.evaluate(MOVE, ["sizePerThread[1]", value])
        assert r["drawn"] == 1
        times.append(r["ms"])
    spt1 = [1, 2, 4, 8, 16, 32][3]
    drawn = page.evaluate("() => { const o = document.getElementById('root').wbOwners();"
                          " return {warp: Array.from(o.warp), reg: Array.from(o.reg)}; }")
    own = ownership(BlockedLayout((1, spt1), (4, 8), (4, 1), (1, 0)), shape)
    assert drawn["warp"] == own.warp.reshape(-1).tolist()
    assert drawn["reg"] == own.register.reshape(-1).tolist()
    page.wait_for_timeout(300)  # Python hears of the controls once they rest (80 ms)
    assert page.evaluate("() => wbModel.params.size_per_thread") == [1, spt1]
    assert page.evaluate("() => saves") >= 1
    med = statistics.median(times)
    record_property("slider_to_picture_ms", times)
    print(f"explorer {shape}: slider input -> picture painted, median {med:.1f} ms, "
          f"max {max(times):.1f} ms over {len(times)} moves")
    if shape == (64, 64):
        assert med < 100
    # an invalid combination: the error shows at once, no picture
    page.evaluate(MOVE, ["threadsPerWarp[0]", 3])  # [8, 8]: product 64
    err = page.text_content(".wb-status")
    assert "threadsPerWarp = [8, 8] has product 64" in err
    assert not page.errors


def test_layout_tooltip_names_the_owner(page):
    from workbench.viz.layout_svg import layout_picture
    lay = BlockedLayout((2, 4), (4, 8), (2, 2), (1, 0))
    view = layout_picture(lay, (64, 64))
    page.set_content(f'<html><body style="width:1150px;margin:0">{view.html}</body></html>')
    own = ownership(lay, (64, 64))
    rng = np.random.default_rng()
    d = view.picture
    from workbench.viz.svg_grid import MARGIN_LEFT, MARGIN_TOP
    where = """([x, y]) => {  // scroll the cell (SVG units) into view, return its client point
      const box = document.querySelector('.wb-grid-box');
      const svg = box.querySelector('svg');
      let p = new DOMPoint(x, y).matrixTransform(svg.getScreenCTM());
      const b = box.getBoundingClientRect();
      box.scrollTop += p.y - (b.top + b.height / 2);
      p = new DOMPoint(x, y).matrixTransform(svg.getScreenCTM());
      return [p.x, p.y];
    }"""
    for flat in rng.choice(64 * 64, 12, replace=False):
        i, j = divmod(int(flat), 64)
        x, y = page.evaluate(where, [MARGIN_LEFT + (j + 0.5) * d.cell_px,
                                     MARGIN_TOP + (i + 0.5) * d.cell_px])
        page.mouse.move(x, y)
        tip = page.text_content(".wb-tip")
        w, ln, r = own.warp[i, j], own.lane[i, j], own.register[i, j]
        assert tip == (f"({i}, {j}), thread {w * 32 + ln}, warp {w}, lane {ln}, "
                       f"register {r}, copies 1")
    # labels: none at the fitted width (cells ~16 px), drawn by the script once zoomed
    assert page.get_attribute(".wb-grid", "data-wb-labels") == "0"
    page.click(".wb-zin")
    page.click(".wb-zin")
    n = int(page.get_attribute(".wb-grid", "data-wb-labels"))
    assert n > 0
    texts = page.eval_on_selector_all(".wb-lbls text", "ts => ts.map(t => [t.dataset.i,"
                                      " t.textContent])")
    for i, t in texts[:50]:
        k = int(i)
        assert t == f"T{own.lane.reshape(-1)[k]}:{own.register.reshape(-1)[k]}"
    assert not page.errors


def test_access_map_slider_marks_each_programs_masked_lanes(page):
    from test_access_map import tile_kernel

    from workbench.viz.access_map import access_map
    rng = np.random.default_rng()
    cols = int(rng.integers(33, 60))
    x = rng.standard_normal((40, 64)).astype(np.float32)
    y = np.zeros_like(x)
    am = access_map(tile_kernel, (3, 2), x, y, 40, cols, 64, BM=16, BN=32)
    page.set_content(f'<html><body style="width:1150px">{am.html}</body></html>')
    for p in (0, 4, 5, 2):
        page.eval_on_selector(".wb-pid", f"s => {{ s.value = '{p}'; "
                              "s.dispatchEvent(new Event('input')); }")
        assert page.get_attribute(".wb-access", "data-wb-program") == str(p)
        drawn = page.eval_on_selector(
            '.wb-access-array[data-wb-array="x_ptr"] .wb-cells',
            "g => Array.from(g.children).slice(0, 40 * 64).map(c => +c.dataset.state)")
        want = am.states(am.programs[p], "x_ptr").reshape(-1)
        assert drawn == want.tolist()
        # the masked-off lanes of this program, by numpy
        pm, pn = am.programs[p][:2]
        r = pm * 16 + np.arange(16)
        c = pn * 32 + np.arange(32)
        rr, cc = np.broadcast_arrays(r[:, None], c[None, :])
        masked = (rr < 40) & ~((rr < 40) & (cc < cols))
        assert sorted(np.flatnonzero(np.array(drawn) == 4)) == sorted((rr * 64 + cc)[masked])
    assert not page.errors
