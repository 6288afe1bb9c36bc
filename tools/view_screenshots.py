"""Write screenshots of the layout, bank, explorer and access-map views into docs/.

Renders each view's static HTML (the same HTML a notebook shows) in headless Chromium through
playwright, hovers a cell so the tooltip shows, and saves PNGs:
docs/layout_64x64.png, docs/banks.png, docs/explorer.png, docs/access_map.png.
Needs the ``playwright`` package and a ``chromium`` binary on PATH (no browser download).
Run from the repository root: ``python tools/view_screenshots.py``.
"""
from __future__ import annotations

import base64
import json
import pathlib
import shutil
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import workbench as wb  # noqa: E402
import workbench.language as tl  # noqa: E402
from workbench.layouts import (  # noqa: E402
    BlockedLayout,
    MmaLayout,
    PaddedRowMajor,
    SwizzledSharedLayout,
)
from workbench.viz import access_map, banks_picture, layout_picture  # noqa: E402

PAGE = '<html><body style="width:1150px;margin:8px;font-family:sans-serif">{}</body></html>'


@wb.jit
def masked_tile_copy(x_ptr, y_ptr, rows, cols, stride, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    r = pm * BM + tl.arange(0, BM)
    c = pn * BN + tl.arange(0, BN)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    v = tl.load(x_ptr + r[:, None] * stride + c[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + r[:, None] * stride + c[None, :], v * 2, mask=mask)


def _hover_cell(page, selector: str, x: float, y: float) -> None:
    pt = page.evaluate("""([sel, x, y]) => {
      const svg = document.querySelector(sel);
      const p = new DOMPoint(x, y).matrixTransform(svg.getScreenCTM());
      return [p.x, p.y]; }""", [selector, x, y])
    page.mouse.move(pt[0], pt[1])


def main() -> None:
    from playwright.sync_api import sync_playwright

    from workbench.viz.explorer import ExplorerState, state_to_params
    from workbench.viz.svg_grid import MARGIN_LEFT, MARGIN_TOP
    docs = ROOT / "docs"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH")
    layout = layout_picture(MmaLayout(2, (2, 2), (16, 8)), (64, 64))
    banks = banks_picture(PaddedRowMajor(0), BlockedLayout((1, 1), (32, 1), (1, 1), (0, 1)),
                          (32, 32), "fp32", compare=SwizzledSharedLayout(1, 1, 32, (1, 0)),
                          vector_bytes=4)
    x = np.arange(40 * 64, dtype=np.float32).reshape(40, 64)
    amap = access_map(masked_tile_copy, (3, 2), x, np.zeros_like(x), 40, 50, 64, BM=16, BN=32)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium,
                                    args=["--no-sandbox", "--disable-gpu",
                                          "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.set_content(PAGE.format(layout.html))
        page.click(".wb-zin")
        page.click(".wb-zin")
        page.eval_on_selector(".wb-grid-box", "b => { b.scrollTop = 0; b.scrollLeft = 0; }")
        page.wait_for_timeout(100)
        cp = layout.picture.cell_px
        _hover_cell(page, "svg.wb-grid-svg", MARGIN_LEFT + 9.5 * cp, MARGIN_TOP + 9.5 * cp)
        page.screenshot(path=str(docs / "layout_64x64.png"))
        page.set_content(PAGE.format(banks.html))
        _hover_cell(page, "svg.wb-grid-svg", MARGIN_LEFT + 0.5 * banks.pictures[0].cell_px,
                    MARGIN_TOP + 5.5 * banks.pictures[0].cell_px)
        page.screenshot(path=str(docs / "banks.png"))
        page.set_content(PAGE.format(amap.html))
        page.eval_on_selector(".wb-pid", "s => { s.value = '4'; "
                              "s.dispatchEvent(new Event('input')); }")
        page.screenshot(path=str(docs / "access_map.png"), full_page=True)
        js = (ROOT / "workbench/viz/static/explorer.js").read_bytes()
        url = "data:text/javascript;base64," + base64.b64encode(js).decode()
        params = state_to_params(ExplorerState(shape=(32, 32), shared_kind="none"))
        page.set_content(PAGE.format('<div id="root"></div>'))
        page.evaluate(f"""async (params) => {{
          const m = await import({json.dumps(url)});
          const traits = {{params, owner: {{}}, message: '', bank_html: '',
                           dtypes: ['fp32', 'fp16', 'bf16']}};
          const model = {{get: (k) => traits[k], set: (k, v) => {{ traits[k] = v; }},
                          save_changes: () => {{}}, on: () => {{}}}};
          m.default.render({{model, el: document.getElementById('root')}});
        }}""", params)
        page.screenshot(path=str(docs / "explorer.png"))
        browser.close()
    print("wrote", ", ".join(f"docs/{n}.png" for n in ("layout_64x64", "banks", "access_map",
                                                       "explorer")))


if __name__ == "__main__":
    main()
