"""The IR view's HTML, checked by data: panes, line -> source line attributes, colours,
escaping, debug-info hiding, unique ids, the report strip and the pass-by-pass view."""
from __future__ import annotations

import re
from types import SimpleNamespace as NS

import pytest

from workbench.backends.base import KernelMetadata
from workbench.ir.core import Location
from workbench.viz.ir_lines import palette, source_line_of, split_debug
from workbench.viz.ir_view import render_compiled, render_snapshots, render_stages
from workbench.viz.lexers import highlight_lines
from workbench.viz.view_data import parse_view

F = "/tmp/wb_cells/cell_0123456789ab.py"
SRC = ("@jit\n"
       "def add(x_ptr, n, BLOCK: tl.constexpr):\n"
       "    offs = tl.arange(0, BLOCK)\n"
       "    mask = offs < n\n"
       "    tl.store(x_ptr + offs, 1.0, mask=mask)\n")
FIRST = 10  # the kernel starts on line 10 of the cell file


def L(line, col=5, caller=None, file=F):
    return Location(file, line, col, caller=caller)


TTIR = """\
module {
  tt.func public @add(%x_ptr: !tt.ptr<f32>, %n: i32) attributes {noinline = false} {
    %offs = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32> loc(#loc1)
    %0 = tt.splat %n : i32 -> tensor<4xi32> loc(#loc2)
    %mask = arith.cmpi slt, %offs, %0 : tensor<4xi32> loc(#loc2)
    tt.store %1, %cst, %mask : tensor<4x!tt.ptr<f32>> loc(#loc3)
    tt.return loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc("/tmp/wb_cells/cell_0123456789ab.py":11:1)
#loc1 = loc("/tmp/wb_cells/cell_0123456789ab.py":12:12)
#loc2 = loc("/tmp/wb_cells/cell_0123456789ab.py":13:12)
#loc3 = loc("x"("/tmp/wb_cells/cell_0123456789ab.py":14:5))
#loc4 = loc(unknown)
"""
TTIR_MAP = [None, None, L(12), L(13), L(13), L(14), None, L(11, 1), None] + [None] * 5

LLIR = """\
define void @add(ptr addrspace(1) %0, i32 %1) !dbg !5 {
  %3 = icmp slt i32 %2, %1, !dbg !8
  store float 1.0, ptr addrspace(1) %4, align 4, !dbg !9
  ret void, !dbg !10
}
!5 = distinct !DISubprogram(name: "add", line: 11)
!8 = !DILocation(line: 13, column: 12, scope: !5)
"""
LLIR_MAP = [L(11, 1), L(13), L(14), None, None, None, None]


def view(**kw):
    return render_stages([("ttir", TTIR, TTIR_MAP), ("llir", LLIR, LLIR_MAP)], SRC, F, FIRST,
                         view_id=kw.pop("view_id", "wb-t1"), **kw)


def test_panes_in_order_source_first_and_line_counts():
    d = parse_view(view())
    assert d.panes == ["source", "ttir", "llir"]
    assert len(d.lines["source"]) == 5
    assert len(d.lines["ttir"]) == len(TTIR.splitlines())
    assert len(d.lines["llir"]) == len(LLIR.splitlines())
    assert [x.line for x in d.lines["source"]] == [10, 11, 12, 13, 14]
    assert [x.line for x in d.lines["ttir"]] == list(range(1, 15))


def test_ir_lines_attributed_to_their_source_lines():
    d = parse_view(view())
    ttir = {x.line: x.src for x in d.lines["ttir"]}
    assert ttir[3] == 12 and ttir[4] == 13 and ttir[5] == 13 and ttir[6] == 14
    assert ttir[1] is None and ttir[7] is None and ttir[8] == 11
    llir = {x.line: x.src for x in d.lines["llir"]}
    assert llir == {1: 11, 2: 13, 3: 14, 4: None, 5: None, 6: None, 7: None}
    # the source pane links every line to itself
    assert [x.src for x in d.lines["source"]] == [10, 11, 12, 13, 14]


def test_one_colour_per_source_line_same_in_every_pane():
    d = parse_view(view())
    by_src = {}
    for pane in ("source", "ttir", "llir"):
        for x in d.lines[pane]:
            if x.src is not None and x.colour is not None:
                by_src.setdefault(x.src, set()).add(x.colour)
    assert all(len(c) == 1 for c in by_src.values()), by_src
    colours = [next(iter(by_src[s])) for s in (11, 12, 13, 14)]
    assert len(set(colours)) == 4
    # a source line with no IR gets no colour; unattributed IR lines get none either
    src = {x.line: x.colour for x in d.lines["source"]}
    assert src[10] is None
    assert all(x.colour is None for x in d.lines["ttir"] if x.src is None)


def test_inlined_helper_lines_belong_to_the_call_site():
    helper = Location("/tmp/helpers.py", 3, 9, caller=L(13, 12))
    d = parse_view(render_stages([("ttir", "%0 = arith.addf %a, %b : f32 loc(#loc1)\n",
                                   [helper])], SRC, F, FIRST, view_id="wb-h"))
    (line,) = d.lines["ttir"]
    assert line.src == 13
    assert "helpers.py:3:9" in line.title and "inlined at cell_0123456789ab.py:13:12" in line.title


def test_locations_in_other_files_or_outside_the_kernel_are_not_linked():
    other = [L(12, file="/tmp/other.py"), L(99), L(12)]
    d = parse_view(render_stages([("ttir", "a\nb\nc\n", other)], SRC, F, FIRST, view_id="v"))
    assert [x.src for x in d.lines["ttir"]] == [None, None, 12]


def test_loc_suffixes_and_tables_hidden_by_default_but_kept():
    html = view()
    d = parse_view(html)
    ttir = {x.line: x for x in d.lines["ttir"]}
    assert ttir[3].text.endswith(": tensor<4xi32>") and "loc(" not in ttir[3].text
    assert ttir[3].suffix == " loc(#loc1)"
    assert ttir[6].suffix == " loc(#loc3)"
    assert [n for n, x in ttir.items() if x.debug] == [10, 11, 12, 13, 14]
    assert ttir[13].text.startswith('#loc3 = loc("x"(')
    llir = {x.line: x for x in d.lines["llir"]}
    assert llir[2].suffix == ", !dbg !8" and "!dbg" not in llir[2].text
    assert llir[6].debug and llir[7].debug and not llir[1].debug
    # the CSS hides .wb-loc and .wb-dbg unless the checkbox of this view is checked
    assert re.search(r"#wb-t1 \.wb-loc\{display:none", html)
    assert re.search(r"#wb-t1 \.wb-dbg-box:checked ~ \.wb-panes \.wb-loc\{display:inline", html)
    assert 'id="wb-t1-dbg"' in html and 'for="wb-t1-dbg"' in html
    assert "checked" not in html.split('id="wb-t1-dbg"')[0][-60:]


def test_everything_is_escaped():
    evil_src = "def k(x):  # </pre><script>alert(1)</script> & \"q\"\n    pass\n"
    evil_ir = '%0 = "tt.x"() {s = "<b>&"} : () -> tensor<4x!tt.ptr<f32>>\n'
    html = render_stages([("ttir", evil_ir, [Location("<x>", 1, 1)])], evil_src, "<x>", 1,
                         title="<i>t</i>", report=[("kk<y", "v&")], notes=["<zz-note>"],
                         view_id="wb-e")
    assert "<script>alert" not in html and "<b>&" not in html and "<i>t</i>" not in html
    assert "<zz-note>" not in html and "kk<y" not in html
    d = parse_view(html)
    assert d.lines["source"][0].text == "def k(x):  # </pre><script>alert(1)</script> & \"q\""
    assert d.lines["ttir"][0].text == evil_ir.rstrip("\n")
    assert d.report == {"kk<y": "v&"} and d.notes == ["<zz-note>"]
    assert d.scripts == 1  # only our own linking script


def test_unique_ids_per_view_and_scoped_rules():
    a, b = view(view_id=None), view(view_id=None)
    ida, idb = parse_view(a).view_ids[0], parse_view(b).view_ids[0]
    assert ida != idb and ida.startswith("wb-")
    rules = re.findall(r"^(#[\w-]+)", a.split("<style>")[1].split("</style>")[0], re.M)
    assert rules and set(rules) == {f"#{ida}"}
    assert f'document.getElementById("{ida}")' in a
    with pytest.raises(ValueError):
        view(view_id='x" onload="alert(1)')


def test_hover_linking_works_without_scripts():
    html = view()
    for line in (11, 12, 13, 14):
        assert f'#wb-t1:has(.wb-ln[data-src="{line}"]:hover) .wb-ln[data-src="{line}"]' in html
    assert ':has(.wb-ln[data-src="10"]' not in html  # line 10 has no IR


def test_highlighting_per_stage_and_line_count_preserved():
    lines = ['%0 = tt.load %p : tensor<4x!tt.ptr<f32>, #blocked>', "  // c", '"a b"']
    out = highlight_lines(lines, "ttgir")
    assert len(out) == 3
    assert '<span class="k">tt.load</span>' in out[0]
    assert '<span class="nd">#blocked</span>' in out[0]
    sass = highlight_lines(["        /*0040*/  @!P0 LDG.E R4, [R2.64] ;"], "sass")[0]
    assert '<span class="k">LDG.E</span>' in sass and '<span class="kp">@!P0</span>' in sass
    ptx = highlight_lines(["\tld.global.f32 \t%f1, [%rd4];"], "ptx")[0]
    assert '<span class="k">ld</span><span class="kp">.global</span>' in ptx
    assert highlight_lines([], "llir") == []


def test_split_debug_ptx_and_asm_directives():
    ptx = [".file 1 \"c.py\"", "\t.loc\t1 12 5", "\tadd.s32 %r1, %r2, %r3;",
           "\t.section\t.debug_abbrev", "\t{", ".b8 1", "\t}", "\tret;"]
    assert [s.debug for s in split_debug("ptx", ptx)] == [True, True, False, True, True, True,
                                                           True, False]
    asm = ["\t.cfi_startproc", "\tvaddps %ymm0, %ymm1, %ymm2", "\t.section\t.debug_info,\"\"",
           "\t.long 5", "\t.section\t.text"]
    assert [s.debug for s in split_debug("asm", asm)] == [True, False, True, True, False]


def test_source_line_of_rules():
    assert source_line_of(None, F, 10, 14) is None
    assert source_line_of(L(12), F, 10, 14) == 12
    assert source_line_of(L(12), None, 10, 14) == 12
    assert source_line_of(L(9), F, 10, 14) is None
    assert len(set(palette(20))) == 20


# ------------------------------------------------------------------ compiled objects
def fake_compiled(**over):
    md = KernelMetadata(name="add", target="cuda:90", num_warps=4, num_stages=3, shared=256,
                        n_regs=over.pop("n_regs", None), n_spills=None)
    asm = {"source": SRC, "ttir": TTIR, "ttgir": "#blocked = #ttg.blocked<{sizePerThread = [1]"
           ", threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>\nmodule {\n}\n",
           "llir": LLIR, "cubin": b"\x7fELF...."}
    maps = {"ttir": TTIR_MAP, "ttgir": [None, None, None], "llir": LLIR_MAP}
    src = NS(text=SRC, file=F, first_line=FIRST, name="add")
    snaps = over.pop("snapshots", {})
    return NS(asm=asm, line_maps=maps, metadata=md, src=src, stages=list(asm),
              timings={"frontend": 0.002, "ttir": 0.001}, snapshots=snaps, **over)


def test_render_compiled_default_stages_and_report():
    d = parse_view(render_compiled(fake_compiled(n_regs=18), view_id="wb-c"))
    assert d.panes == ["source", "ttir", "ttgir", "llir"]  # binary cubin skipped
    assert d.report["target"] == "cuda:90" and d.report["num_warps"] == "4"
    assert d.report["shared"] == "256 B" and d.report["registers"] == "18"
    assert "spills" not in d.report  # None is not shown
    assert d.report["#blocked"].startswith("#ttg.blocked<{sizePerThread = [1]")
    assert d.report["compile"] == "3.0 ms"
    assert d.report["steps"] == "frontend 2.0 ms, ttir 1.0 ms"
    assert {x.line: x.src for x in d.lines["llir"]}[2] == 13


def test_render_compiled_chosen_stages_and_missing_ones_noted():
    html = render_compiled(fake_compiled(), "llir, sass,cubin", view_id="wb-c2")
    d = parse_view(html)
    assert d.panes == ["source", "llir"]
    assert any("no stage 'sass'" in n for n in d.notes)
    assert any("cubin: 8 bytes of binary" in n for n in d.notes)


def test_render_snapshots_diffs_and_folds_unchanged_passes():
    a = "module {\n  %0 = arith.constant 1 : i32 loc(#loc1)\n  %1 = arith.addi %0, %0 : i32\n}\n"
    b = "module {\n  %0 = arith.constant 1 : i32 loc(#loc2)\n  %1 = arith.constant 2 : i32\n}\n"
    snaps = {"ttir": [("frontend", a), ("canonicalize", b), ("cse", b.replace("loc2", "loc9"))]}
    html = render_snapshots(fake_compiled(snapshots=snaps), "ttir", view_id="wb-s")
    passes = re.findall(r'data-pass="([^"]+)" data-index="(\d)" data-change="(\w+)"', html)
    assert passes == [("frontend", "0", "full"), ("canonicalize", "1", "changed"),
                      ("cse", "2", "same")]  # a renumbered loc is not a change
    assert "+1 \u22121" in html
    d = parse_view(html)
    rows = d.lines[None]
    added = [r.text for r in rows if "wb-diff-add" in r.classes]
    removed = [r.text for r in rows if "wb-diff-del" in r.classes]
    assert added == ["  %1 = arith.constant 2 : i32"]
    assert removed == ["  %1 = arith.addi %0, %0 : i32"]
    empty = render_snapshots(fake_compiled(), "ttgir", view_id="wb-s2")
    assert "no pass snapshots for stage ttgir" in empty


def test_long_stages_are_cut_with_a_note_and_total_time_is_used():
    text = "".join(f"  %{i} = arith.addi %a, %b : i32\n" for i in range(50))
    d = parse_view(render_stages([("ttir", text, [L(12)] * 50)], SRC, F, FIRST, max_lines=20,
                                 view_id="wb-cut"))
    assert len(d.lines["ttir"]) == 20 and all(x.src == 12 for x in d.lines["ttir"])
    assert d.notes == ["ttir: showing the first 20 of 50 lines"]
    c = fake_compiled()
    c.timings = {"frontend": 0.25, "llir": 0.5, "backend": 0.5, "total": 0.75}
    d = parse_view(render_compiled(c, "ttir", view_id="wb-tot"))
    assert d.report["compile"] == "750.0 ms"
    assert d.report["steps"] == "frontend 250.0 ms, llir 500.0 ms, backend 500.0 ms"


def test_llvm_syntax_pygments_does_not_know_is_not_an_error():
    from pygments.token import Token

    from workbench.viz.lexers import lexer_for
    text = ("%12 = or disjoint i32 %11, %8\n"
            "%5 = call range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n")
    tokens = list(lexer_for("llir").get_tokens(text))
    assert not [v for t, v in tokens if t in Token.Error]
    assert "".join(v for _, v in tokens) == text
