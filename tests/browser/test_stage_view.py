"""The live stage view in JupyterLab under Chromium: hover linking both ways, instruction help,
pane choice, search; asserted on the page's elements, not on pixels."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.conftest import screenshot
from tests.browser.scheduler import Planned

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

KERNEL = '''%%tilekernel --signature "*fp32:16,*fp32:16,i32,i32,i32" -D BLOCK=1024
@jit
def softmax(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)'''

DIFF = '''from workbench.viz import stage_diff
sig = ("*fp32:16", "*fp32:16", "i32", "i32", "i32")
stage_diff(wb.compile(softmax, *sig, target="cuda:80", BLOCK=1024, num_warps=4),
           wb.compile(softmax, *sig, target="cuda:90", BLOCK=1024, num_warps=8), "ptx")'''

PASSES = '''from workbench.viz import pass_diff, triton_diff
pass_diff(wb.compile(softmax, *sig, target="cuda:90", BLOCK=1024, keep_snapshots=True), "ttgir")'''

# ours beside Triton when the triton extra is installed (the cell says so otherwise)
TRITON = '''try:
    import triton  # noqa: F401
except ImportError:
    print("no triton")
else:
    display(triton_diff(wb.compare(softmax, *sig, BLOCK=1024), ("ttgir", "ptx")))'''

# line 5 of this cell (Jupyter's numbering, the magic's line is line 1) is refused
BAD = '''%%tilekernel --signature "*fp32:16,i32" -D BLOCK=64
@jit
def bad(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, 3)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)'''


NOTEBOOKS = [Planned("stage_view.ipynb", ("%load_ext workbench\nimport workbench as wb", KERNEL,
                                           DIFF, PASSES, TRITON, BAD), width=1500)]


@pytest.fixture(scope="module")
def view(notebooks):
    nb = notebooks.run("stage_view.ipynb")
    nb.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")  # room for the panes
    nb.page.wait_for_selector(".wb-sw .wb-pane[data-stage='ptx'] .wb-ln", state="attached",
                              timeout=30_000)
    yield nb
    nb.close()


def _panes(page, view: int = 0) -> list[str]:
    return page.evaluate("""(i) => Array.from(document.querySelectorAll('.wb-sw')[i]
        .querySelectorAll('.wb-pane')).filter(p => !p.hidden).map(p => p.dataset.stage)""", view)


def _lit(page, view: int = 0) -> dict:
    return page.evaluate("""(i) => { const out = {};
        document.querySelectorAll('.wb-sw')[i].querySelectorAll('.wb-pane').forEach(p => {
            if (!p.hidden) out[p.dataset.stage] = p.querySelectorAll('.wb-ln.wb-hl').length; });
        return out; }""", view)


def test_widget_shows_and_fits_the_output_area(view):
    page = view.page
    assert view.console_errors == [], view.console_errors
    panes = _panes(page)
    assert panes[0] == "source" and "ptx" in panes and len(panes) >= 3, panes
    fit = page.evaluate("""() => { const w = document.querySelector('.wb-sw');
        const area = w.closest('.jp-OutputArea-output');
        return {view: w.getBoundingClientRect().right, area: area.getBoundingClientRect().right,
                maths: w.querySelectorAll('mjx-container').length}; }""")
    assert fit["view"] <= fit["area"] + 1, fit
    assert fit["maths"] == 0, fit
    DOCS.mkdir(exist_ok=True)
    screenshot(page, page.locator(".wb-sw").first, DOCS / "stage_view.png")


def test_hover_source_line_lights_every_pane_and_back(view):
    page = view.page
    src = page.evaluate("""() => { const ls = Array.from(document.querySelector('.wb-sw')
            .querySelectorAll('.wb-pane[data-stage=source] .wb-ln[data-src]'));
        const ok = ls.find(l => l.textContent.includes('tl.max'));
        return ok ? ok.dataset.src : null; }""")
    assert src is not None
    page.locator(".wb-sw").first.locator(
        f".wb-pane[data-stage=source] .wb-ln[data-src='{src}']").hover()
    lit = _lit(page)
    assert all(lit[p] >= 1 for p in _panes(page)), lit
    page.mouse.move(0, 0)
    assert sum(_lit(page).values()) == 0
    # the reverse: a ptx line lights its source line
    ptx_line = page.locator(".wb-sw").first.locator(
        f".wb-pane[data-stage=ptx] .wb-ln[data-src='{src}']").first
    ptx_line.scroll_into_view_if_needed()
    ptx_line.hover()
    lit = _lit(page)
    assert lit["source"] == 1 and all(lit[p] >= 1 for p in _panes(page)), lit


def test_instruction_help_on_hover(view):
    page = view.page
    line = page.locator(".wb-sw").first.locator(
        ".wb-pane[data-stage=ptx] .wb-ln[data-op^='shfl.sync']").first
    line.scroll_into_view_if_needed()
    line.hover()
    tip = page.locator(".wb-sw").first.locator(".wb-help-tip")
    assert tip.is_visible()
    text = tip.inner_text()
    assert "shfl.sync" in text and "lanes of a warp" in text and "PTX ISA" in text, text


def test_choose_panes_and_search(view):
    page = view.page
    first = page.locator(".wb-sw").first
    first.locator(".wb-toolbar input[data-stage=ttir]").check()
    assert "ttir" in _panes(page)
    # the SASS is not made until its box is ticked (nvdisasm runs then, in the kernel)
    assert "sass" not in _panes(page)
    first.locator(".wb-toolbar input[data-stage=sass][data-lazy]").check()
    page.wait_for_selector(".wb-sw .wb-pane[data-stage=sass] .wb-ln", state="attached",
                           timeout=60_000)
    assert "sass" in _panes(page) and "ttir" in _panes(page), _panes(page)
    sass = first.locator(".wb-pane[data-stage=sass] .wb-ln[data-op]").first
    sass.scroll_into_view_if_needed()
    sass.hover()
    assert first.locator(".wb-help-tip").is_visible()
    first.locator(".wb-toolbar input[data-stage=sass]").uncheck()
    assert "sass" not in _panes(page)
    search = first.locator(".wb-pane[data-stage=ptx] .wb-search")
    search.fill("bar.sync")
    found = page.evaluate("""() => Array.from(document.querySelector('.wb-sw').querySelectorAll(
        '.wb-pane[data-stage=ptx] .wb-ln.wb-match')).map(l => l.textContent)""")
    assert found and all("bar.sync" in t for t in found), found
    search.fill("")


def test_errors_name_the_notebook_cell(view):
    view.page.wait_for_selector(".jp-OutputArea-output [data-wb-error]", state="attached",
                                timeout=30_000)
    text, prompt = view.page.evaluate("""() => {
        const errs = Array.from(document.querySelectorAll(
            '.jp-OutputArea-output [data-wb-error]'));
        const cell = errs[0].closest('.jp-Cell');
        return [errs.map(e => e.textContent).join('\\n'),
                cell.querySelector('.jp-InputPrompt').textContent]; }""")
    # the number is the one the cell's prompt shows ("[4]:"), as IPython's own tracebacks say
    shown = re.search(r"\[(\d+)\]", prompt)
    assert shown, prompt
    assert f"In [{shown.group(1)}], line 5, col" in text and "arange" in text, (prompt, text)
    assert "cell_" not in text, text


_PINNED = """(i) => Array.from(document.querySelectorAll('.wb-sw')[i]
    .querySelectorAll('.wb-pane:not([hidden])')).map(p => {
        const box = p.querySelector('.wb-code').getBoundingClientRect();
        const pins = Array.from(p.querySelectorAll('.wb-ln.wb-pin:not(.wb-dbg)'));
        const seen = pins.filter(l => { const r = l.getBoundingClientRect();
            return r.height > 0 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1; });
        return [p.dataset.stage, pins.length, seen.length]; })"""


def test_pinning_a_line_scrolls_every_pane_to_it(view):
    page = view.page
    first = page.locator(".wb-sw").first
    first.locator(".wb-toolbar input[data-opt=sync]").check()
    for stage in _panes(page):                  # every pane at its top
        page.evaluate("""(s) => { document.querySelector('.wb-sw')
            .querySelector(`.wb-pane[data-stage="${s}"] .wb-code`).scrollTop = 0; }""", stage)
    page.wait_for_timeout(200)
    # the kernel's last line: its ptx and sass lines are far below the top of those panes
    first.locator(".wb-pane[data-stage=source] .wb-ln[data-src]").filter(
        has_text="tl.store").click()
    page.wait_for_timeout(500)                  # scroll events of every pane have run
    shown = page.evaluate(_PINNED, 0)
    assert len(shown) >= 3 and all(n >= 1 and seen >= 1 for _, n, seen in shown), shown
    # pinning the same line again unpins it
    first.locator(".wb-pane[data-stage=source] .wb-ln[data-src]").filter(
        has_text="tl.store").click()
    assert all(n == 0 for _, n, _ in page.evaluate(_PINNED, 0))


def test_diff_of_two_targets_links_both(view):
    page = view.page
    assert _panes(page, 1) == ["source", "ptx A", "ptx B"]
    line = page.locator(".wb-sw >> nth=1").locator(
        ".wb-pane[data-stage=source] .wb-ln[data-src]").filter(has_text="tl.max")
    line.hover()
    lit = _lit(page, 1)
    assert lit["source"] == 1 and lit["ptx A"] >= 1 and lit["ptx B"] >= 1, lit


# the source line of the first line with more than 2 px in view (see firstVisibleSrc)
_FIRST_SRC = """(stage) => { const b = document.querySelector('.wb-sw')
    .querySelector(`.wb-pane[data-stage="${stage}"] .wb-code`);
    const top = b.scrollTop;
    for (const l of b.querySelectorAll('.wb-ln[data-src]')) {
        if (l.offsetParent !== null && l.offsetTop + l.offsetHeight > top + 2) {
            return l.dataset.src; } }
    return null; }"""


# a pane's scroll state: the first line's source line as _FIRST_SRC, whether the pane is
# scrolled to its end, and the source lines of every line in view
_IN_VIEW = """(stage) => { const b = document.querySelector('.wb-sw')
    .querySelector(`.wb-pane[data-stage="${stage}"] .wb-code`);
    const top = b.scrollTop, bottom = top + b.clientHeight;
    const seen = Array.from(b.querySelectorAll('.wb-ln[data-src]')).filter(l =>
        l.offsetParent !== null && l.offsetTop + l.offsetHeight > top + 2
        && l.offsetTop < bottom - 2).map(l => l.dataset.src);
    return {first: seen.length ? seen[0] : null, seen,
            end: top >= b.scrollHeight - b.clientHeight - 1}; }"""


def test_scrolling_one_pane_scrolls_the_others_and_wrap_keeps_lines_whole(view):
    page = view.page
    page.evaluate("""() => { const w = document.querySelector('.wb-sw');
        const b = w.querySelector('.wb-pane[data-stage=ptx] .wb-code');
        const ls = Array.from(b.querySelectorAll('.wb-ln[data-src]'));
        const l = ls[Math.floor(ls.length * 0.6)];
        b.scrollTop = l.offsetTop; }""")
    page.wait_for_timeout(300)
    src = page.evaluate(_FIRST_SRC, "ptx")
    assert src is not None
    # every other pane starts at the same source line, or, when it is too short to scroll
    # that far, is scrolled to its end with that source line in view
    for stage in _panes(page):
        shown = page.evaluate(_IN_VIEW, stage)
        assert shown["first"] == src or (shown["end"] and src in shown["seen"]), \
            (stage, src, shown)
    first = page.locator(".wb-sw").first
    first.locator(".wb-toolbar input[data-opt=wrap]").check()
    cut = page.evaluate("""() => { const w = document.querySelector('.wb-sw'); let n = 0;
        w.querySelectorAll('.wb-pane:not([hidden]) .wb-code').forEach(b => {
            if (b.scrollWidth > b.clientWidth + 1) n += 1; }); return n; }""")
    assert cut == 0
    first.locator(".wb-toolbar input[data-opt=wrap]").uncheck()


_MARKED = """(i) => { const w = document.querySelectorAll('.wb-sw')[i]; const out = {};
    w.querySelectorAll('.wb-pane').forEach(p => {
        if (p.hidden || p.dataset.stage === 'source') return;
        const rows = Array.from(p.querySelectorAll('.wb-code > .wb-ln'));
        out[p.dataset.stage] = {
            del: rows.flatMap((r, k) => r.classList.contains('wb-diff-del') ? [k] : []),
            add: rows.flatMap((r, k) => r.classList.contains('wb-diff-add') ? [k] : []),
            code: rows.map(r => r.classList.contains('wb-dbg') ? null
                                : r.querySelector('.wb-tx').textContent.trim())}; });
    return out; }"""


# per diff pane row kind: the computed background colour (r, g, b), None when transparent
_BACKGROUNDS = """(i) => { const w = document.querySelectorAll('.wb-sw')[i];
    const rgb = l => { const c = getComputedStyle(l).backgroundColor.match(/[\\d.]+/g).map(Number);
        return c.length === 4 && c[3] === 0 ? null : c.slice(0, 3); };
    const rows = sel => Array.from(w.querySelectorAll(
        `.wb-pane:not([hidden]):not([data-stage=source]) .wb-code > .wb-ln${sel}`))
        .filter(l => l.offsetParent !== null);
    return {del: rows('.wb-diff-del').map(rgb), add: rows('.wb-diff-add').map(rgb),
            same: rows('[data-src]:not(.wb-diff-del):not(.wb-diff-add)').map(rgb)}; }"""


def _check_pair(marked: dict, left: str, right: str) -> tuple[list, list]:
    a, b = marked[left], marked[right]
    assert not a["add"] and not b["del"]
    # the left pane without its red lines reads as the right pane without its green ones
    keep_a = [c for k, c in enumerate(a["code"]) if c is not None and k not in a["del"]]
    keep_b = [c for k, c in enumerate(b["code"]) if c is not None and k not in b["add"]]
    assert keep_a == keep_b
    return [a["code"][k] for k in a["del"]], [b["code"][k] for k in b["add"]]


def test_pass_diff_marks_the_pass_changes_and_switches_pass(view):
    page = view.page
    panes = _panes(page, 2)
    # it opens on the first pass that changed something: the ttir -> ttgir conversion
    assert panes[0] == "source" and len(panes) == 3, panes
    assert panes[1] == "0. input" and panes[2] == "1. convert-triton-to-tritongpu", panes
    removed, added = _check_pair(page.evaluate(_MARKED, 2), panes[1], panes[2])
    assert removed and any(c.startswith("#blocked = #ttg.blocked<") for c in added), added
    # removed lines are red and added lines green across the line (computed style), and only
    # they: an unchanged line keeps its source colour as a stripe, its background is clear
    colours = page.evaluate(_BACKGROUNDS, 2)
    assert colours["del"] and all(r > g + 30 and r > b + 30 for r, g, b in colours["del"])
    assert colours["add"] and all(g > r + 30 and g > b + 20 for r, g, b in colours["add"])
    assert colours["same"] and all(c is None for c in colours["same"]), colours["same"]
    box = page.locator(".wb-sw >> nth=2")
    box.scroll_into_view_if_needed()
    page.mouse.move(0, 0)               # no hover outline in the picture
    screenshot(page, box, DOCS / "pass_diff.png")
    # any other pass: the list switches both panes and the marks
    pick = box.locator(".wb-diff-pick")
    labels = pick.locator("option").all_text_contents()
    assert len(labels) >= 5 and f"\u2212{len(removed)} +{len(added)}" in labels[0], labels
    for k in range(1, len(labels)):
        pick.select_option(index=k)
        panes = _panes(page, 2)
        assert panes[1].startswith(f"{k}. ") and panes[2].startswith(f"{k + 1}. "), panes
        removed, added = _check_pair(page.evaluate(_MARKED, 2), panes[1], panes[2])
        assert f"\u2212{len(removed)} +{len(added)}" in labels[k], (labels[k], removed, added)
    pick.select_option(index=0)
    # the source links both sides
    line = box.locator(".wb-pane[data-stage=source] .wb-ln[data-src]").filter(has_text="tl.max")
    line.hover()
    lit = _lit(page, 2)
    assert lit["0. input"] >= 1 and lit["1. convert-triton-to-tritongpu"] >= 1, lit


def test_ours_beside_triton_inside_the_widget(view):
    page = view.page
    if page.locator(".wb-sw").count() < 4:
        pytest.skip("the triton extra is not installed in the kernel")
    panes = _panes(page, 3)
    assert panes == ["source", "ttgir ours", "ttgir Triton"], panes
    _check_pair(page.evaluate(_MARKED, 3), "ttgir ours", "ttgir Triton")
    page.locator(".wb-sw >> nth=3").locator(".wb-diff-pick").select_option(index=1)
    assert _panes(page, 3) == ["source", "ptx ours", "ptx Triton"]
    _check_pair(page.evaluate(_MARKED, 3), "ptx ours", "ptx Triton")


_WIDTHS = """() => { const w = document.querySelector('.wb-sw');
    const area = w.closest('.jp-OutputArea-output').getBoundingClientRect();
    const box = w.querySelector('.wb-panes');
    return {panes: Array.from(w.querySelectorAll('.wb-pane:not([hidden])')).map(p =>
                [p.dataset.stage, p.getBoundingClientRect().width]),
            right: w.getBoundingClientRect().right, area: area.right, areaWidth: area.width,
            height: box.getBoundingClientRect().height,
            resize: getComputedStyle(box).resize}; }"""


def test_panes_fill_the_output_area_and_resize_by_dragging(view):
    page = view.page
    page.mouse.move(0, 0)
    before = page.evaluate(_WIDTHS)
    # the panes share the output area's width (the view is not a fixed size)
    total = sum(w for _, w in before["panes"])
    assert 0.85 * before["areaWidth"] <= total <= before["areaWidth"], before
    split = page.locator(".wb-sw").first.locator(".wb-panes > .wb-split").nth(1)
    split.scroll_into_view_if_needed()
    box = split.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 40, y, steps=4)
    page.mouse.move(x + 90, y, steps=4)
    page.mouse.up()
    after = page.evaluate(_WIDTHS)
    (s0, w0), (s1, w1), (s2, w2) = before["panes"][:3]
    got = dict(after["panes"])
    # the second divider moved 90 px: the pane left of it grew by that much, the one right of
    # it shrank by as much, the others kept their widths, and the view still fits its area
    assert abs(got[s1] - (w1 + 90)) <= 3 and abs(got[s2] - (w2 - 90)) <= 3, (before, after)
    assert abs(got[s0] - w0) <= 2, (before, after)
    assert after["right"] <= after["area"] + 1, after
    # the height: the bottom edge of the panes is a vertical resize handle
    assert after["resize"] == "vertical", after
    page.locator(".wb-sw").first.locator(".wb-panes").evaluate(
        "b => { b.style.height = (b.getBoundingClientRect().height + 120) + 'px'; }")
    assert abs(page.evaluate(_WIDTHS)["height"] - (before["height"] + 120)) <= 2


# per source line: the cost cells beside it, and what the panes hold for that line (its
# instructions in ptx, its bar.sync/barrier instructions)
_COSTS = """() => { const w = document.querySelector('.wb-sw'); const out = [];
    const count = (stage, src, pred) => Array.from(w.querySelectorAll(
        `.wb-pane[data-stage="${stage}"] .wb-ln[data-src="${src}"]:not(.wb-dbg)`))
        .filter(l => l.querySelector('.wb-tx').textContent.trim() && pred(l)).length;
    w.querySelectorAll('.wb-pane[data-stage=source] .wb-ln[data-src]').forEach(l => {
        const cell = k => { const c = l.querySelector(`.wb-cost-c[data-k="${k}"]`);
                            return c && !c.hidden ? c.textContent : null; };
        out.push({src: l.dataset.src, text: l.querySelector('.wb-tx').textContent.trim(),
                  ptx: cell('ptx'), bar: cell('barriers'), title: l.title,
                  ptx_lines: count('ptx', l.dataset.src, () => true),
                  bar_lines: count('ptx', l.dataset.src, x => /^(bar|barrier)\\./.test(
                      x.dataset.op || ''))}); });
    return out; }"""


def test_per_source_line_cost_counts_what_the_panes_show(view):
    rows = view.page.evaluate(_COSTS)
    with_code = [r for r in rows if r["ptx_lines"]]
    assert len(with_code) >= 5, rows
    for r in rows:
        # the ptx column is the number of that source line's ptx instructions in the pane
        assert (r["ptx"] or "0") == str(r["ptx_lines"]), r
        assert (r["bar"] or "0") == str(r["bar_lines"]), r
        if r["ptx_lines"]:
            assert f"ptx {r['ptx_lines']}" in r["title"], r
    # the reductions synchronise through shared memory: their lines carry barriers
    assert any(int(r["bar"] or 0) >= 1 for r in rows if "tl.max" in r["text"]
               or "tl.sum" in r["text"]), rows
