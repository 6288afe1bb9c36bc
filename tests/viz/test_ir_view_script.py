"""The view's linking script, run under node against a small mock DOM: hover lights every
line of a source line in every pane, click pins it and scrolls the other panes, a second
click unpins. Skipped where node is not installed."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from workbench.ir.core import Location
from workbench.viz.ir_view import render_stages

NODE = shutil.which("node")

MOCK_DOM = r"""
const script = require('fs').readFileSync(0, 'utf8');
function Line(src, top, dbg) {
  const cls = new Set(['wb-ln'].concat(dbg ? ['wb-dbg'] : []));
  const e = {dataset: {src: src}, offsetTop: top, classList: {
    toggle: (c, on) => { if (on) cls.add(c); else cls.delete(c); },
    has: (c) => cls.has(c)}};
  e.closest = (sel) => e;
  e.cls = cls;
  return e;
}
function Pane(lines) {
  const code = {clientHeight: 300, scrollTop: 0};
  return {lines, code, contains: (e) => lines.includes(e),
          querySelector: (sel) => {
            if (sel === '.wb-code') return code;
            const m = sel.match(/data-src="(\d+)"\]:not\(\.wb-dbg\)/);
            return lines.find(l => l.dataset.src === m[1] && !l.cls.has('wb-dbg')) || null; }};
}
const src = Pane([Line('1', 0), Line('2', 20)]);
const ir = Pane([Line('2', 0, true), Line('1', 500), Line('2', 900), Line('1', 1200)]);
const all = src.lines.concat(ir.lines);
const handlers = {};
const root = {dataset: {}, addEventListener: (t, f) => { handlers[t] = f; },
  querySelectorAll: (sel) => {
    if (sel === '.wb-pane') return [src, ir];
    const m = sel.match(/data-src="(\d+)"/);
    return all.filter(l => l.dataset.src === m[1]); }};
let asked = null;
global.document = {getElementById: (id) => { asked = id; return root; }};
eval(script);
eval(script);  // a second run (re-render) must not bind twice
const state = () => all.map(l => [...l.cls].filter(c => c !== 'wb-ln' && c !== 'wb-dbg').sort().join('+'));
const out = {asked, bound: root.dataset.wbBound, n_handlers: Object.keys(handlers).length};
handlers.mouseover({target: src.lines[1]}); out.hover = state();
handlers.mouseout({target: src.lines[1]}); out.after_out = state();
handlers.click({target: src.lines[1]}); out.pinned = state(); out.scroll = ir.code.scrollTop;
handlers.click({target: ir.lines[1]}); out.repinned = state();
handlers.click({target: ir.lines[1]}); out.unpinned = state();
console.log(JSON.stringify(out));
"""  # noqa: E501


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_linking_script_under_a_mock_dom():
    html = render_stages([("ttir", "a\nb\n", [Location("f.py", 1, 1), None])], "x\ny\n", "f.py",
                         1, view_id="wb-js")
    (script,) = re.findall(r"<script>(.*?)</script>", html, re.S)
    run = subprocess.run([NODE, "-e", MOCK_DOM], input=script, capture_output=True, text=True,
                         timeout=30)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["asked"] == "wb-js" and out["bound"] == "1" and out["n_handlers"] == 3
    # lines: src1, src2 | ir: 2(debug), 1, 2, 1
    assert out["hover"] == ["", "wb-hl", "wb-hl", "", "wb-hl", ""]
    assert out["after_out"] == [""] * 6
    assert out["pinned"] == ["", "wb-pin", "wb-pin", "", "wb-pin", ""]
    assert out["scroll"] == 900 - 300 / 3  # first non-debug line of source line 2 in ir
    assert out["repinned"] == ["wb-pin", "", "", "wb-pin", "", "wb-pin"]
    assert out["unpinned"] == [""] * 6
