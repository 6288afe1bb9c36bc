"""The static renderings of the live views, alone in Chromium (as nbviewer, GitHub or a page
without the widget front end shows them): one line on top says that the live widget did not
load, and the static view under it still works (hover linking of the stage view)."""
from __future__ import annotations

import numpy as np

import workbench as wb
from workbench.layouts import BlockedLayout
from workbench.testing.examples import add_kernel
from workbench.viz import stage_view
from workbench.viz.explorer import layout_explorer

NOTICE_JS = """() => { const n = document.querySelector('[data-wb-fallback="1"]');
  const r = n.getBoundingClientRect(); const lh = parseFloat(getComputedStyle(n).lineHeight);
  const next = n.nextElementSibling.getBoundingClientRect();
  return {text: n.innerText, height: r.height, lineHeight: lh, visible: r.width > 0,
          first: document.body.firstElementChild === n, below: next.top >= r.bottom - 0.5}; }"""


def _page(browser, html: str, width: int):
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.set_content("<!doctype html><meta charset='utf-8'><body>" + html + "</body>")
    return page


def test_fallbacks_alone_in_the_browser(browser):
    block = int(np.random.default_rng().choice([128, 256, 512]))
    compiled = wb.compile(add_kernel, "*fp32:16", "*fp32:16", "*fp32:16", "i32",
                          target="cuda:80", BLOCK_SIZE=block)
    stage_html = stage_view(compiled, "ttgir,ptx")._repr_mimebundle_()[0]["text/html"]
    explorer_html = layout_explorer(BlockedLayout((1, 4), (4, 8), (4, 1), (1, 0)),
                                    (64, 64))._repr_mimebundle_()[0]["text/html"]
    for html, what, width in ((stage_html, "stage view", 1200), (stage_html, "stage view", 480),
                              (explorer_html, "layout explorer", 480)):
        page = _page(browser, html, width)
        try:
            n = page.evaluate(NOTICE_JS)
            assert n["visible"] and n["first"] and n["below"], n
            assert n["text"].startswith(f"Static {what}: the live widget did not load"), n
            assert n["height"] < 1.6 * n["lineHeight"], n          # one line at any width
        finally:
            page.close()
    # the static stage view under the notice still links a source line to its IR lines
    page = _page(browser, stage_html, 1200)
    try:
        line = page.locator("[data-wb-view=ir] .wb-pane[data-stage=source] [data-src]").filter(
            has_text="tl.load").first
        line.hover()
        lit = page.evaluate("""() => Object.fromEntries(Array.from(document.querySelectorAll(
            '[data-wb-view=ir] .wb-pane')).map(p => [p.dataset.stage,
            p.querySelectorAll('.wb-ln.wb-hl').length]))""")
        assert set(lit) == {"source", "ttgir", "ptx"} and all(v >= 1 for v in lit.values()), lit
    finally:
        page.close()
