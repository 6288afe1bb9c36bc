"""The layout views inside JupyterLab under Chromium, at 64x64, checked against the layouts'
own data (``workbench.layouts.ownership`` computed here, in the test process):

- the SVG layout picture: hovering sampled cells shows the owner (thread, warp, lane,
  register) in the tooltip;
- the explorer widget: key presses on a slider redraw the canvas within 100 ms (median; timed
  in the page from the input event to the frame after the redraw), and the picture then
  matches the text on the page: the warp of every one of the 4096 cells, read from the
  canvas pixels through the legend's colours, equals the warp of the layout whose parameters
  the controls show; the tooltip agrees too;
- the access map of a masked launch: each program's masked-off lanes are exactly the lanes
  numpy's mask drops;
- the bank view is drawn (and, with the others, written to ``docs/`` as a screenshot);
- the roofline view: every point's SVG marker carries a tooltip (its <title>) with the
  kernel, time, FLOPs, bytes, intensity and percent of roof, and the table beside the plot
  has one row per point.

One notebook holds all of them (one kernel start for the lot).
"""
from __future__ import annotations

import re
import statistics
from pathlib import Path

import numpy as np
import pytest

from workbench.layouts import BlockedLayout, MmaLayout, ownership

DOCS = Path(__file__).resolve().parents[2] / "docs"

SETUP = """import numpy as np
import workbench as wb
import workbench.language as tl
from workbench.layouts import BlockedLayout, MmaLayout, PaddedRowMajor, SwizzledSharedLayout
from workbench.viz import access_map, banks_picture, layout_explorer, layout_picture"""

PICTURE = "layout_picture(MmaLayout(2, (2, 2), (16, 8)), (64, 64))"
EXPLORER = "ex = layout_explorer(BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0)), (64, 64))\nex"
ACCESS = '''@wb.jit
def tile_copy(x_ptr, y_ptr, rows, cols, stride, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    r = pm * BM + tl.arange(0, BM)
    c = pn * BN + tl.arange(0, BN)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    v = tl.load(x_ptr + r[:, None] * stride + c[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + r[:, None] * stride + c[None, :], v * 2, mask=mask)

x = np.random.default_rng().standard_normal((40, 64)).astype(np.float32)
access_map(tile_copy, (3, 2), x, np.zeros_like(x), 40, {cols}, 64, BM=16, BN=32)'''

ROOFLINE = (
    "from workbench.testing.ceilings import Ceilings\n"
    "from workbench.testing.work import Run\n"
    "from workbench.viz import roofline\n"
    "C = Ceilings(target='cpu', machine='test', bandwidth=10e9, compute={'fp32': 100e9})\n"
    "roofline([Run('triad', 1.0, 0.5e9, 2e9, config={'BLOCK': 1024}),\n"
    "          Run('fma', 1.0, 50e9, 0.5e9), Run('wrong', 0.01, 1e9, 1e9)], C)")
# a transpose's column read: row-major (32-way conflict) beside Triton's XOR swizzle
BANKS = ('banks_picture(PaddedRowMajor(0), BlockedLayout((1, 1), (32, 1), (1, 1), (0, 1)), '
         '(32, 32), "fp32", compare=SwizzledSharedLayout(1, 1, 32, (1, 0)))')


@pytest.fixture(scope="module")
def nb(jupyter_server, run_notebook):
    cols = int(np.random.default_rng().integers(33, 60))
    name = jupyter_server.write_notebook(
        "layout_views.ipynb", [SETUP, PICTURE, EXPLORER, ACCESS.format(cols=cols), ROOFLINE,
                               BANKS])
    page = run_notebook(name, width=1400, height=1000)
    page.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    page.page.wait_for_selector(".wb-explorer canvas.wb-layout-canvas", timeout=30_000)
    page.page.wait_for_timeout(300)
    page.cols = cols
    yield page
    page.close()


# scroll the box holding the picture so that cell (r, c) is in view, bring the box into the
# window, and return the cell's centre in client pixels; `sel` finds the box, `target` the
# svg or canvas inside it
_POINT = """([sel, target, r, c, rows, cols]) => {
  const box = document.querySelector(sel);
  const pic = box.querySelector(target);
  let b = pic.getBoundingClientRect();
  box.scrollTop += (b.top + (r + 0.5) * b.height / rows) - (box.getBoundingClientRect().top
                    + box.clientHeight / 2);
  box.scrollIntoView({block: 'center'});
  b = pic.getBoundingClientRect();
  return [b.left + (c + 0.5) * b.width / cols, b.top + (r + 0.5) * b.height / rows];
}"""


def _tip_text(own, i: int, j: int) -> str:
    w, ln, r = own.warp[i, j], own.lane[i, j], own.register[i, j]
    return (f"({i}, {j}), thread {w * 32 + ln}, warp {w}, lane {ln}, register {r}, "
            f"copies {own.copies[i, j]}")


def test_layout_picture_tooltip_names_the_owner(nb):
    page = nb.page
    assert nb.state["unrun"] == 0, nb.state
    own = ownership(MmaLayout(2, (2, 2), (16, 8)), (64, 64))
    # the SVG grid's box: the picture's own view, not the explorer's canvas
    sel = ".wb-grid .wb-grid-box"
    page.wait_for_function("() => document.querySelector('.wb-grid') && "
                           "document.querySelector('.wb-grid').dataset.wbInit === '1'")
    # the picture's SVG includes margins for ticks: map cell -> point through its data
    grid = page.evaluate("() => JSON.parse(document.querySelector('.wb-grid').dataset.wbGrid)")
    assert (grid["rows"], grid["cols"]) == (64, 64)
    for flat in np.random.default_rng().choice(64 * 64, 10, replace=False):
        i, j = divmod(int(flat), 64)
        x, y = page.evaluate("""([sel, x, y]) => {
            const box = document.querySelector(sel); const svg = box.querySelector('svg');
            let p = new DOMPoint(x, y).matrixTransform(svg.getScreenCTM());
            const b = box.getBoundingClientRect();
            box.scrollTop += p.y - (b.top + b.height / 2);
            box.scrollIntoView({block: 'center'});
            p = new DOMPoint(x, y).matrixTransform(svg.getScreenCTM());
            return [p.x, p.y]; }""", [sel, grid["ox"] + (j + 0.5) * grid["cell"],
                                     grid["oy"] + (i + 0.5) * grid["cell"]])
        page.mouse.move(x, y)
        tip = page.locator(".wb-grid .wb-tip").first
        assert tip.is_visible()
        assert tip.text_content() == _tip_text(own, i, j)
    page.locator(".wb-grid").first.screenshot(path=str(DOCS / "layout_64x64.png"))


# warp of every cell as drawn: the canvas pixel a little inside each cell's top-left corner
# (away from the labels and the white grid lines) matched to the nearest legend colour
_DRAWN_WARPS = """() => {
  const root = document.querySelector('.wb-explorer');
  const cv = root.querySelector('canvas.wb-layout-canvas');
  const cols = root.wbCells(), rows = Math.round(cols * cv.height / cv.width);
  const img = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
  const legend = Array.from(root.querySelectorAll('.wb-legend .wb-leg')).map(s => {
    const m = getComputedStyle(s.firstChild).backgroundColor.match(/\\d+/g).map(Number);
    return [+s.textContent.replace('warp ', ''), m]; });
  const cw = cv.width / cols, ch = cv.height / rows, out = [];
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
    const x = Math.floor(c * cw + 0.2 * cw), y = Math.floor(r * ch + 0.2 * ch);
    const k = (y * cv.width + x) * 4;
    let best = -1, dist = 1e9;
    for (const [w, rgb] of legend) {
      const d = Math.abs(rgb[0] - img[k]) + Math.abs(rgb[1] - img[k + 1])
                + Math.abs(rgb[2] - img[k + 2]);
      if (d < dist) { dist = d; best = w; }
    }
    out.push(dist <= 6 ? best : -1);
  }
  return {rows, cols, warps: out};
}"""

# the parameters the page shows as text: each slider's value beside it, each select's choice
_SHOWN = """() => { const out = {};
  document.querySelectorAll('.wb-explorer .wb-ctl').forEach(c => {
    const label = c.querySelector('.wb-ctl-label').textContent;
    const r = c.querySelector('input[type=range]'), s = c.querySelector('select');
    if (r) out[label] = r.nextSibling.textContent;
    else if (s) out[label] = s.options[s.selectedIndex].textContent; });
  return out; }"""

# time from each input event on a slider to the frame after the picture's redraw
_WATCH = """() => { const root = document.querySelector('.wb-explorer');
  window.wbLat = []; let t0 = null;
  document.addEventListener('input', () => { t0 = performance.now(); }, true);
  new MutationObserver(() => { const t = t0; if (t === null) return; t0 = null;
    requestAnimationFrame(() => window.wbLat.push(performance.now() - t)); })
    .observe(root, {attributes: true, attributeFilter: ['data-wb-drawn']}); }"""


def _shown_layout(shown: dict) -> tuple[BlockedLayout, tuple]:
    def dims(name):
        return tuple(int(shown[f"{name}[{d}]"]) for d in range(2))
    order = tuple(int(x) for x in re.findall(r"\d+", shown["order (fastest dim first)"]))
    return (BlockedLayout(dims("sizePerThread"), dims("threadsPerWarp"), dims("warpsPerCTA"),
                          order), dims("shape"))


def _check_picture_matches_text(page) -> tuple:
    lay, shape = _shown_layout(page.evaluate(_SHOWN))
    drawn = page.evaluate(_DRAWN_WARPS)
    own = ownership(lay, shape)
    assert (drawn["rows"], drawn["cols"]) == shape
    assert drawn["warps"] == own.warp.reshape(-1).tolist(), lay
    return lay, own


def test_explorer_follows_its_sliders_within_100ms(nb, record_property):
    page = nb.page
    page.evaluate(_WATCH)
    _check_picture_matches_text(page)
    slider = page.locator('.wb-explorer input[data-param="sizePerThread[1]"]')
    slider.scroll_into_view_if_needed()
    slider.focus()
    rng = np.random.default_rng()
    # five quick presses in a row, then the picture must say what the text says
    for key in rng.choice(["ArrowLeft", "ArrowRight"], 5):
        page.keyboard.press(str(key))
    page.wait_for_timeout(100)
    _check_picture_matches_text(page)
    wpc = page.locator('.wb-explorer input[data-param="warpsPerCTA[0]"]')
    wpc.focus()
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft"):
        page.keyboard.press(key)
        page.wait_for_timeout(100)
        _check_picture_matches_text(page)
    lat = page.evaluate("() => window.wbLat")
    # a press at a slider's end changes nothing and paints no frame, so the count varies;
    # the warpsPerCTA presses move at least once (right, right, left)
    assert len(lat) >= 1, lat
    record_property("explorer_input_to_frame_ms", lat)
    print(f"explorer 64x64 in JupyterLab: input -> painted frame, median "
          f"{statistics.median(lat):.1f} ms, max {max(lat):.1f} ms over {len(lat)} moves")
    assert statistics.median(lat) < 100, lat
    # Python hears of the controls once they rest; its answer must not undo the picture
    page.wait_for_timeout(1500)
    lay, own = _check_picture_matches_text(page)
    for flat in rng.choice(64 * 64, 8, replace=False):
        i, j = divmod(int(flat), 64)
        x, y = page.evaluate(_POINT, [".wb-explorer .wb-canvas-box", "canvas", i, j, 64, 64])
        page.mouse.move(x, y)
        assert page.locator(".wb-explorer > .wb-tip").text_content() == _tip_text(own, i, j)
    assert nb.console_errors == [], nb.console_errors
    page.locator(".wb-explorer").first.screenshot(path=str(DOCS / "explorer.png"))


def test_access_map_marks_exactly_the_masked_lanes(nb):
    page = nb.page
    cols = nb.cols
    pid = page.locator(".wb-access .wb-pid").first
    pid.scroll_into_view_if_needed()
    n_prog = 6
    for p in np.random.default_rng().permutation(n_prog)[:4]:
        pid.focus()                     # the keys a user presses (JupyterLab must not eat
        page.keyboard.press("Home")     # them as notebook shortcuts)
        for _ in range(int(p)):
            page.keyboard.press("ArrowRight")
        assert page.get_attribute(".wb-access", "data-wb-program") == str(p)
        drawn = np.array(page.eval_on_selector(
            '.wb-access-array[data-wb-array="x_ptr"] .wb-cells',
            "g => Array.from(g.children).slice(0, 40 * 64).map(c => +c.dataset.state)"))
        pn, pm = divmod(int(p), 3)     # programs in launch order, axis 0 fastest: grid (3, 2)
        r = pm * 16 + np.arange(16)
        c = pn * 32 + np.arange(32)
        rr, cc = np.broadcast_arrays(r[:, None], c[None, :])
        inside = rr < 40                # lanes that fall on the 40 x 64 array at all
        masked = inside & ~(cc < cols)
        assert sorted(np.flatnonzero(drawn == 4)) == sorted((rr * 64 + cc)[masked])
        loaded = inside & (cc < cols)
        assert sorted(np.flatnonzero((drawn != 0) & (drawn != 4))) == \
            sorted((rr * 64 + cc)[loaded])
    page.mouse.move(0, 0)
    page.locator(".wb-access").first.screenshot(path=str(DOCS / "access_map.png"))


POINTS_JS = """() => {
  const view = document.querySelector('[data-wb-view="roofline"]');
  const tips = Array.from(view.querySelectorAll('g[id^="wb-roofline-point-"] > title'))
      .map(t => t.textContent);
  const rows = Array.from(view.querySelectorAll('tr[data-point]')).map(r => r.dataset.point);
  const maths = view.querySelectorAll('mjx-container, .MathJax').length;
  const box = view.getBoundingClientRect();
  return {tips, rows, maths, width: box.width};
}"""


def test_roofline_points_have_tooltips_and_a_table(nb):
    data = nb.page.evaluate(POINTS_JS)
    assert data["rows"] == ["1", "2", "3"], data
    assert len(data["tips"]) == 3 and data["maths"] == 0, data
    assert data["tips"][0].startswith("#1 triad") and "BLOCK=1024" in data["tips"][0]
    assert "intensity 0.25 FLOP/B" in data["tips"][0]
    assert "above its roof" in data["tips"][2]
    assert nb.console_errors == [], nb.console_errors
    nb.page.locator('[data-wb-view="roofline"]').first.screenshot(
        path=str(DOCS / "roofline.png"))


def test_bank_view_compares_two_shared_layouts(nb):
    titles = nb.page.evaluate("""() => Array.from(document.querySelectorAll(
        '.wb-grid[data-wb-kind="banks"] .wb-grid-title')).map(t => t.textContent)""")
    # the last cell's two (the explorer shows a bank view too): row-major puts the column in
    # one bank; the swizzle spreads it over all 32
    plain, swizzled = titles[-2:]
    assert "32 wavefront(s)" in plain and "32-way" in plain and "row-major" in plain, plain
    assert "1 wavefront(s)" in swizzled and "maxPhase = 32" in swizzled, swizzled
    assert nb.console_errors == [], nb.console_errors
    nb.page.mouse.move(0, 0)
    # both pictures, side by side in their flex row: a window tall enough to hold them whole
    size = nb.page.viewport_size
    nb.page.set_viewport_size({"width": size["width"], "height": 2400})
    pair = nb.page.locator('.wb-grid[data-wb-kind="banks"]').last.locator("xpath=../..")
    pair.evaluate("e => e.scrollIntoView({block: 'start'})")
    nb.page.wait_for_timeout(200)
    pair.screenshot(path=str(DOCS / "banks.png"))
    nb.page.set_viewport_size(size)
