"""Line maps read back from debug info: LLVM IR ``!dbg`` and assembly ``.file``/``.loc``."""
from __future__ import annotations

from tests.ir_kit import FILE, K, ptr
from workbench.codegen.lineinfo import directive_line_locs, llir_line_locs
from workbench.ir.core import Location
from workbench.ir.types import f32, i32


def _kernel():
    k = K("scale", [("x", ptr(f32)), ("o", ptr(f32)), ("n", i32)])
    x, o, n = k.args
    offs = k.at(12, 3).arange(0, 64)
    mask = k.at(13, 7).cmp("arith.cmpi", "slt", offs, k.splat(n, (64,)))
    v = k.at(14, 9).load(k.addptr(x, offs), mask)
    e = k.at(15, 11).unary("math.exp", v)
    k.at(16, 5).store(k.addptr(o, offs), e, mask)
    return k.ret().compile()


def test_llir_survives_o3_with_source_lines():
    res = _kernel()
    llir = res.stages[0]
    assert llir.name == "llir" and "!dbg" in llir.text
    lines = llir.text.splitlines()
    assert len(llir.line_locs) == len(lines)
    by_line = {}
    for text, loc in zip(lines, llir.line_locs, strict=False):
        if loc is not None:
            assert loc.file == FILE
            by_line.setdefault(loc.line, []).append(text)
    # the optimised IR still attributes instructions to the kernel's lines
    assert {13, 14, 15, 16} <= set(by_line)
    # exp is inline code on the CPU (workbench.codegen.cpu.vmath): its rint and fma
    assert any(("exp" in t or "llvm.rint" in t) for t in by_line[15])
    assert any("store" in t for t in by_line[16])
    assert any(("load" in t or "gather" in t) for t in by_line[14])
    assert all(t.strip() == "" or not t.startswith("!") for ts in by_line.values() for t in ts)
    assert any(loc is not None and loc.col == 11 for loc in llir.line_locs)


def test_asm_has_loc_directives_mapped_to_instructions():
    res = _kernel()
    asm = res.stages[1]
    assert asm.name == "asm" and ".loc" in asm.text and ".file" in asm.text
    lines = asm.text.splitlines()
    assert len(asm.line_locs) == len(lines)
    mapped = [(t, loc) for t, loc in zip(lines, asm.line_locs, strict=False) if loc is not None]
    assert {loc.line for _, loc in mapped} >= {14, 16}
    assert all(loc.file == FILE for _, loc in mapped)
    for t, _ in mapped:  # only instruction lines are mapped, never directives or labels
        s = t.strip()
        assert s and not s.startswith((".", "#")) and not s.endswith(":")


def test_llir_line_locs_inlined_at_and_lexical_block():
    text = "\n".join([
        "define void @k() !dbg !4 {",
        "  %a = fadd float 1.0, 2.0, !dbg !10",
        "  %b = fmul float %a, %a, !dbg !11",
        "  ret void",
        "}",
        '!1 = !DIFile(filename: "k.py", directory: "/src")',
        '!2 = !DIFile(filename: "/abs/helpers.py", directory: "/src")',
        "!4 = distinct !DISubprogram(name: \"k\", scope: !1, file: !1, line: 3, unit: !0)",
        "!5 = distinct !DISubprogram(name: \"h\", scope: !2, file: !2, line: 40, unit: !0)",
        "!6 = distinct !DILexicalBlock(scope: !4, file: !1, line: 7, column: 2)",
        "!10 = !DILocation(line: 8, column: 4, scope: !6)",
        "!11 = !DILocation(line: 41, column: 12, scope: !5, inlinedAt: !10)",
    ])
    locs = llir_line_locs(text)
    assert len(locs) == len(text.splitlines())
    assert locs[0] == Location("/src/k.py", 3, 1)
    assert locs[1] == Location("/src/k.py", 8, 4)
    assert locs[2] == Location("/abs/helpers.py", 41, 12, None, Location("/src/k.py", 8, 4))
    assert locs[3] is None and locs[5] is None and locs[10] is None


def test_directive_line_locs_x86_and_ptx():
    x86 = "\n".join([
        '\t.file\t"k"',
        '\t.file\t1 "/src" "k.py"',
        "k:",
        "\t.loc\t1 5 3 prologue_end",
        "\tvmovups\t(%rdi), %ymm0",
        "# %bb.1:",
        "\t.loc\t1 0 3 is_stmt 0",
        "\tretq",
    ])
    locs = directive_line_locs(x86)
    assert locs[4] == Location("/src/k.py", 5, 3)
    assert locs[7] is None  # line 0: compiler-generated
    assert locs[0] is None and locs[2] is None and locs[3] is None and locs[5] is None
    ptx = "\n".join([
        '\t.file\t1 "/src/k.py"',
        '\t.file\t2 "/src/h.py"',
        ".visible .entry k(",
        ")",
        "{",
        "\t.loc\t1 9 14",
        "\tld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd4];",
        "@%p1 bra \t$L__BB0_2;",
        "$L__BB0_2:",
        "\t.loc\t2 30 7, function_name $L__info_string0, inlined_at 1 12 5",
        "\tst.global.f32 \t[%rd5], %f5;",
        "}",
    ])
    locs = directive_line_locs(ptx)
    assert locs[6] == Location("/src/k.py", 9, 14)
    assert locs[7] == Location("/src/k.py", 9, 14)
    assert locs[8] is None
    assert locs[10] == Location("/src/h.py", 30, 7, None, Location("/src/k.py", 12, 5))
    assert locs[11] is None and locs[4] is None
