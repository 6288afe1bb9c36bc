"""``%%tilekernel`` driven through an IPython InteractiveShell: options, cell files, kernel
definition, errors shown (and the shell surviving), and the wiring of --signature / --launch
to the view. ``workbench.compile`` is replaced here by a stand-in that gives every source line
of the kernel one IR line, so these tests run without the compiler; test_magic_compile.py
runs the real one."""
from __future__ import annotations

import linecache
import os
from types import SimpleNamespace as NS

import pytest

import workbench
from workbench.backends.base import KernelMetadata
from workbench.ir.core import Location
from workbench.runtime.jit import JITFunction
from workbench.runtime.specialization import ArgSpec, Specialization
from workbench.viz.view_data import parse_view

KERNEL = '''\
@jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)
'''


def fake_compiled(kernel, target, calls, spec=None, options=None):
    """One ttir line per kernel source line after the def, located at that line."""
    src = kernel.src
    lines = src.text.splitlines()
    ttir, locs = ["module {"], [None]
    for i, line in enumerate(lines[2:], start=src.first_line + 2):
        ttir.append(f"  %{i} = tt.op{i} : i32 loc(#loc{i})")
        locs.append(Location(src.file, i, len(line) - len(line.lstrip()) + 1))
    ttir.append("}")
    locs.append(None)
    md = KernelMetadata(name=src.name, target=str(target), num_warps=4, num_stages=3)
    calls.append((kernel, str(target)))
    return NS(asm={"source": src.text, "ttir": "\n".join(ttir) + "\n"},
              line_maps={"ttir": locs}, metadata=md, src=src, stages=["source", "ttir"],
              timings={}, snapshots={}, target=target, name=src.name,
              spec=spec, options=options or workbench.config.Options())


@pytest.fixture
def fake_compile(monkeypatch):
    calls = []

    def compile(fn, *sig, target="cpu", **kw):
        assert len(sig) == 4, sig
        compile.kw = kw
        compile.sig = sig
        return fake_compiled(fn, target, calls)

    monkeypatch.setattr(workbench, "compile", compile)
    compile.calls = calls
    return compile


def cell(options: str, body: str = KERNEL) -> str:
    return f"%%tilekernel {options}\n{body}"


def test_load_ext_registers_magic_and_names(shell):
    assert "tilekernel" in shell.ip.magics_manager.magics["cell"]
    assert shell.ns["jit"] is workbench.jit
    import workbench.language as tl
    assert shell.ns["tl"] is tl


def test_cell_defines_kernels_in_a_content_hashed_file(shell, tmp_path):
    html = shell.html(cell(""))
    add = shell.ns["add"]
    assert isinstance(add, JITFunction)
    path = add.fn.__code__.co_filename
    assert os.path.dirname(path) == str(tmp_path / "cache" / "cells")
    assert os.path.basename(path).startswith("cell_") and path.endswith(".py")
    # line 1 of the file stands for the %%tilekernel line: file lines are Jupyter's cell lines
    first, rest = open(path).read().split("\n", 1)
    assert first.startswith("# %%tilekernel") and rest == KERNEL
    assert linecache.getline(path, 3).startswith("def add(")
    # without --signature/--launch: the source pane and a note on how to see the stages
    d = parse_view(html)
    assert d.panes == ["source"]
    assert [x.line for x in d.lines["source"]] == list(range(2, 9))
    assert '--signature "*fp32,*fp32,*fp32,i32" -D BLOCK=...' in d.notes[0]
    # the same cell again reuses the same file
    shell.html(cell(""))
    assert shell.ns["add"].fn.__code__.co_filename == path


def test_signature_compiles_for_the_view_target_and_attributes_lines(shell, fake_compile):
    html = shell.html(cell('--signature "*fp32:16, *fp32:16,*fp32:16,i32" -D BLOCK=2*64 '
                           "--num-warps 8"))
    assert fake_compile.sig == ("*fp32:16", "*fp32:16", "*fp32:16", "i32")
    assert fake_compile.kw == {"BLOCK": 128, "num_warps": 8}
    assert fake_compile.calls[-1][1] == "cuda:90"  # the view's default target
    d = parse_view(html)
    assert d.panes == ["source", "ttir"]
    ttir = d.lines["ttir"]
    # line i of the ttir pane came from cell line i + 2 (4..8; line 1 is %%tilekernel)
    assert [(x.line, x.src) for x in ttir] == [(1, None), (2, 4), (3, 5), (4, 6), (5, 7),
                                                (6, 8), (7, None)]
    assert ttir[1].text == "  %4 = tt.op4 : i32" and ttir[1].suffix == " loc(#loc4)"
    src_colours = {x.line: x.colour for x in d.lines["source"]}
    assert all(src_colours[x.src] == x.colour for x in ttir if x.src)


def test_target_option_and_kernel_choice(shell, fake_compile):
    two = KERNEL + "\n@jit\ndef other(a_ptr, b_ptr, c_ptr, n):\n    pass\n"
    html = shell.html(cell('--target cpu --signature "*fp32,*fp32,*fp32,i32" --kernel add '
                           "-D BLOCK=16", two))
    assert fake_compile.calls[-1] == (shell.ns["add"], "cpu")
    assert "this cell defines add, other; showing add" in html
    assert isinstance(shell.ns["other"], JITFunction)
    shell.html(cell('--signature "*fp32,*fp32,*fp32,i32"', two))
    assert fake_compile.calls[-1][0] is shell.ns["other"]  # default: the last kernel


def test_launch_result_shown_and_recompiled_for_the_view_target(shell, monkeypatch):
    calls = []
    spec = Specialization((ArgSpec("x_ptr", "pointer", "*fp32", True),
                           ArgSpec("BLOCK", "constexpr", "constexpr", value=32)))

    def compile_for(self, spec_, options, target, keep_snapshots=False):
        calls.append((spec_, str(target), keep_snapshots))
        compile_for.num_warps = options.num_warps
        return fake_compiled(self, target, [], spec_, options)

    monkeypatch.setattr(JITFunction, "compile_for", compile_for)
    shell.ns["ran"] = lambda k: fake_compiled(k, workbench.config.Target("cpu"), [], spec)
    html = shell.html(cell('--launch "ran(add)"'))
    assert calls == [(spec, "cuda:90", False)]
    assert "ran on cpu; the stages shown are the same specialisation compiled for cuda:90" in html
    assert parse_view(html).panes == ["source", "ttir"]
    calls.clear()
    html = shell.html(cell('--target cpu --launch "ran(add)"'))
    assert calls == []  # same target: the launch's own compiled kernel is shown
    assert "cpu" in parse_view(html).report["target"]
    html = shell.html(cell('--target cpu --num-warps 2 --launch "ran(add)"'))
    assert [(c[1], c[2]) for c in calls] == [("cpu", False)]  # other options: recompiled
    assert compile_for.num_warps == 2
    assert "ran on" not in html


def test_launch_returning_something_else_is_a_note(shell):
    html = shell.html(cell('--launch "1 + 1"'))
    assert "--launch returned int, not a compiled kernel" in html


@pytest.mark.parametrize("options, expected", [
    ("--bogus", "unrecognized arguments: --bogus"),
    ("--bogus 3", "unrecognized arguments: --bogus 3"),
    ("--help --bogus", "unrecognized arguments: --bogus"),
    ("--num-warps x", "invalid int value"),
    ("--num-warps 0", "--num-warps must be a positive integer"),
    ("-D BLOCK", "-D expects NAME=VALUE"),
    ('--launch "unterminated', "cannot split the option line"),
])
def test_bad_options_show_usage_and_fail_the_cell(shell, options, expected):
    html = shell.html(cell(options), fails=True)
    assert 'data-wb-usage="1"' in html and expected in html
    assert "--signature SIG" in html  # the usage text
    assert "add" not in shell.ns  # nothing ran


def test_help(shell):
    html = shell.html("%%tilekernel --help\nx = 1\n")
    assert "%%tilekernel options" in html and "--launch EXPR" in html
    assert "x" not in shell.ns
    html = shell.html("%tilekernel")
    assert "a cell magic" in html and "--launch EXPR" in html


def test_unknown_target_is_a_clear_error(shell):
    html = shell.html(cell("--target tpu"), fails=True)
    assert 'data-wb-error="1"' in html and "unknown target &#x27;tpu&#x27;" in html


def test_syntax_error_points_at_the_cell_line_and_shell_survives(shell):
    n = shell.ip.execution_count
    result, outputs, _ = shell.run("%%tilekernel\n@jit\ndef k(x_ptr):\n    y = (1 +\n")
    assert shell.failed(result)
    text = outputs[0]["text/plain"]
    path_line = text.splitlines()[1]
    # named as IPython names cells: In [n], line k (the cell's own line numbers)
    assert path_line == f"In [{n}], line 4, col 9: SyntaxError: '(' was never closed"
    assert "    y = (1 +" in text and "^" in text
    assert 'data-wb-error="1"' in outputs[0]["text/html"]
    assert shell.ip.run_cell("1 + 1").result == 2  # the shell still works


def test_exception_in_cell_points_at_the_line(shell):
    n = shell.ip.execution_count
    result, outputs, _ = shell.run("%%tilekernel\nx = 1\ny = undefined_name + 1\n")
    assert shell.failed(result)
    text = outputs[0]["text/plain"]
    assert "NameError while running the cell" in text
    assert f"In [{n}], line 3, col 5: NameError: name 'undefined_name' is not defined" in text
    assert "cell_" not in text
    assert "    y = undefined_name + 1\n        ^^^^^^^^^^^^^^" in text


def test_errors_of_compile_and_launch_are_shown(shell, monkeypatch):
    def compile(fn, *sig, **kw):
        raise workbench.CompilationError("tiles of shapes [4] and [8] do not match",
                                         Location(fn.src.file, 7, 9), "Make them agree.")
    monkeypatch.setattr(workbench, "compile", compile)
    result, outputs, _ = shell.run(cell('--signature "*fp32,*fp32,*fp32,i32" -D BLOCK=4'))
    assert shell.failed(result)
    text = outputs[0]["text/plain"]
    assert "CompilationError while compiling add for cuda:90" in text
    assert f"In [{shell.ip.execution_count}], line 7, col 9: tiles of shapes [4] and [8] do " \
        "not match" in text
    assert "    x = tl.load(x_ptr + offs, mask=mask)\n            ^" in text
    result, outputs, _ = shell.run(cell('--launch "add[1](1, 2)"'))
    assert shell.failed(result) and "while launching: add[1](1, 2)" in outputs[0]["text/plain"]
    result, outputs, _ = shell.run(cell('-D BLOCK=nope --signature "*fp32,*fp32,*fp32,i32"'))
    assert "NameError while evaluating a -D value" in outputs[0]["text/plain"]


def test_cell_without_kernels_and_unknown_kernel_name(shell):
    assert "defines no @jit kernel" in shell.html("%%tilekernel\nx = 3\n")
    assert shell.ns["x"] == 3
    html = shell.html(cell("--kernel nope"), fails=True)
    assert "--kernel nope: no @jit kernel of that name" in html and "defined by this cell: add" \
        in html


def test_the_cell_number_is_the_one_ipython_gave_the_cell():
    # IPython 9 with ipykernel 7 has execution_count one ahead while a cell runs; the number
    # its compiler gave the running cell's code is the one the prompt and tracebacks show
    from types import SimpleNamespace

    from workbench.notebook.cells import current_cell_number
    shell = SimpleNamespace(execution_count=6, compile=SimpleNamespace(
        _filename_map={"/tmp/ipykernel_1/111.py": 4, "/tmp/ipykernel_1/222.py": 5}))
    assert current_cell_number(shell) == 5
    assert current_cell_number(SimpleNamespace(execution_count=3)) == 3
    assert current_cell_number(None) is None
