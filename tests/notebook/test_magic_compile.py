"""``%%tilekernel`` with the real compiler: the stages of a kernel defined in a cell, each IR
line attributed to the cell line it came from; launches from the magic; compile errors pointing
at the cell's line."""
from __future__ import annotations

import numpy as np

from workbench.viz.view_data import parse_view

ADD = '''\
@jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
'''
# cell lines (1-based, as Jupyter numbers them: line 1 is %%tilekernel) of the statements above
PID, OFFS, MASK, LOAD_X, LOAD_Y, STORE = 4, 5, 6, 7, 8, 9


def ops_by_line(lines, op: str) -> set:
    """The source lines of the IR lines that contain ``op``."""
    return {x.src for x in lines if op in x.text and not x.debug}


def test_cpu_stages_attributed_to_cell_lines(shell):
    html = shell.html(f'%%tilekernel --target cpu --signature "*fp32:16,*fp32:16,*fp32:16,i32" '
                      f"-D BLOCK=64\n{ADD}")
    d = parse_view(html)
    assert d.panes == ["source", "ttir", "llir", "asm"]
    assert d.report["target"] == "cpu" and d.report["kernel"] == "add"
    assert [x.line for x in d.lines["source"]] == list(range(2, 10))
    ttir = d.lines["ttir"]
    assert ops_by_line(ttir, "tt.get_program_id") == {PID}
    assert ops_by_line(ttir, "tt.make_range") == {OFFS}
    assert ops_by_line(ttir, "arith.cmpi slt") == {MASK}
    assert ops_by_line(ttir, "tt.load") == {LOAD_X, LOAD_Y}
    assert ops_by_line(ttir, "tt.store") == {STORE}
    assert ops_by_line(ttir, "arith.addf") == {STORE}
    # loc suffixes are split off (hidden) and the #loc table is marked debug
    assert all("loc(" not in x.text for x in ttir if not x.debug)
    assert any(x.suffix.startswith(" loc(") for x in ttir)
    assert any(x.debug and x.text.startswith("#loc") for x in ttir)
    # the lower stages carry line info too (from debug info), within the kernel's lines
    for stage in ("llir", "asm"):
        srcs = {x.src for x in d.lines[stage]} - {None}
        assert srcs and srcs <= set(range(2, 10)), (stage, srcs)
        assert STORE in srcs
    # one colour per source line across panes
    colour = {x.line: x.colour for x in d.lines["source"]}
    for stage in ("ttir", "llir", "asm"):
        assert all(x.colour == colour[x.src] for x in d.lines[stage] if x.src), stage


def test_launch_from_the_magic_runs_and_shows_its_specialisation(shell):
    n = 100
    shell.ns.update(x=np.arange(n, dtype=np.float32), y=np.ones(n, np.float32),
                    out=np.full(n, np.nan, np.float32), n=n)
    html = shell.html(f'%%tilekernel --target cpu --stages ttir '
                      f'--launch "add[(4,)](x, y, out, n, BLOCK=32)"\n{ADD}')
    np.testing.assert_array_equal(shell.ns["out"], np.arange(n) + 1)
    d = parse_view(html)
    assert d.panes == ["source", "ttir"]
    assert any("tensor<32xi32>" in x.text for x in d.lines["ttir"])  # BLOCK=32 specialised
    assert d.report["target"] == "cpu"


def test_compile_error_points_at_the_cell_line(shell):
    bad = ADD.replace("tl.arange(0, BLOCK)", "tl.arange(0, 3)")
    result, outputs, _ = shell.run(
        f'%%tilekernel --target cpu --signature "*fp32,*fp32,*fp32,i32" -D BLOCK=4\n{bad}')
    assert shell.failed(result)
    text = outputs[0]["text/plain"]
    assert "while compiling add for cpu" in text
    assert f"In [{shell.ip.execution_count}], line {OFFS}, col " in text and "cell_" not in text
    assert "    offs = pid * BLOCK + tl.arange(0, 3)" in text and "^" in text
    assert 'data-wb-error="1"' in outputs[0]["text/html"]
    assert "Traceback" not in text
    assert "Triton's position" not in text + outputs[0]["text/html"]   # the cell line says it
    assert shell.ip.run_cell("2 * 21").result == 42


def test_default_view_is_cuda90_compiled_without_a_gpu(shell):
    html = shell.html(f'%%tilekernel --signature "*fp32:16,*fp32:16,*fp32:16,i32" '
                      f"-D BLOCK=256 --stages ttir,ttgir,llir,ptx\n{ADD}")
    d = parse_view(html)
    assert d.panes == ["source", "ttir", "ttgir", "llir", "ptx"]
    assert d.report["target"] == "cuda:90"
    assert d.report["#blocked"].startswith("#ttg.blocked<{sizePerThread = [")
    ttgir = d.lines["ttgir"]
    assert ops_by_line(ttgir, "tt.load") == {LOAD_X, LOAD_Y}
    assert ops_by_line(ttgir, "tt.store") == {STORE}
    ptx = d.lines["ptx"]
    assert ops_by_line(ptx, "ld.global") <= {LOAD_X, LOAD_Y} and ops_by_line(ptx, "ld.global")
    assert ops_by_line(ptx, "st.global") == {STORE}
    assert any(x.debug and x.text.lstrip().startswith(".loc") for x in ptx)


def test_launch_on_cpu_is_shown_for_the_cuda_view_target(shell):
    n = 70
    shell.ns.update(x=np.ones(n, np.float32), y=np.ones(n, np.float32),
                    out=np.zeros(n, np.float32), n=n)
    html = shell.html(f'%%tilekernel --stages ptx --launch "add[(3,)](x, y, out, n, BLOCK=32)"'
                      f"\n{ADD}")
    np.testing.assert_array_equal(shell.ns["out"], np.full(n, 2.0))
    d = parse_view(html)
    assert d.panes == ["source", "ptx"] and d.report["target"] == "cuda:90"
    assert "ran on cpu; the stages shown are the same specialisation compiled for cuda:90" \
        in html


def test_missing_constexpr_value_asks_for_a_define(shell):
    result, outputs, _ = shell.run(f'%%tilekernel --target cpu --signature "*fp32,*fp32,*fp32,i32"'
                                   f"\n{ADD}")
    assert shell.failed(result)
    text = outputs[0]["text/plain"]
    assert "add needs a value for its constexpr parameter BLOCK" in text
    assert "Add -D BLOCK=... to the %%tilekernel line" in text
    assert "to the launch" not in text and "Traceback" not in text


def test_signature_and_define_mistakes_are_named(shell):
    result, outputs, _ = shell.run(f'%%tilekernel --target cpu --signature "*fp32,*fp32,i32" '
                                   f"-D BLOCK=64\n{ADD}")
    assert shell.failed(result)
    text = outputs[0]["text/plain"]
    assert "--signature has 3 entries; add has 4 non-constexpr parameters (x_ptr, y_ptr, " \
           "out_ptr, n)" in text
    result, outputs, _ = shell.run(f'%%tilekernel --target cpu --signature '
                                   f'"*fp32,*fp32,*fp32,i32" -D BLOK=64\n{ADD}')
    assert shell.failed(result)
    text = outputs[0]["text/plain"]
    assert "-D BLOK: 'BLOK' is not a parameter of add" in text and "BLOCK" in text
