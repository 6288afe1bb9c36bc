"""The roofline view in a real browser: every point's SVG marker carries a tooltip (its
<title>) with the kernel, time, FLOPs, bytes, intensity and percent of roof, and the table
beside the plot has one row per point."""
from __future__ import annotations

CELLS = [
    "from workbench.testing.ceilings import Ceilings\n"
    "from workbench.testing.work import Run\n"
    "from workbench.viz import roofline\n"
    "C = Ceilings(target='cpu', machine='test', bandwidth=10e9, compute={'fp32': 100e9})\n"
    "roofline([Run('triad', 1.0, 0.5e9, 2e9, config={'BLOCK': 1024}),\n"
    "          Run('fma', 1.0, 50e9, 0.5e9), Run('wrong', 0.01, 1e9, 1e9)], C)",
]

POINTS_JS = """() => {
  const view = document.querySelector('[data-wb-view="roofline"]');
  const tips = Array.from(view.querySelectorAll('g[id^="wb-roofline-point-"] > title'))
      .map(t => t.textContent);
  const rows = Array.from(view.querySelectorAll('tr[data-point]')).map(r => r.dataset.point);
  const maths = view.querySelectorAll('mjx-container, .MathJax').length;
  const box = view.getBoundingClientRect();
  return {tips, rows, maths, width: box.width};
}"""


def test_roofline_points_have_tooltips_and_a_table(jupyter_server, run_notebook):
    name = jupyter_server.write_notebook("roofline_view.ipynb", CELLS)
    page = run_notebook(name)
    data = page.page.evaluate(POINTS_JS)
    assert data["rows"] == ["1", "2", "3"], data
    assert len(data["tips"]) == 3 and data["maths"] == 0, data
    assert data["tips"][0].startswith("#1 triad") and "BLOCK=1024" in data["tips"][0]
    assert "intensity 0.25 FLOP/B" in data["tips"][0]
    assert "above its roof" in data["tips"][2]
    assert page.console_errors == [], page.console_errors
