"""The JIT object, the in-memory cache, workbench.compile and CompiledKernel (needs the
frontend, passes and CPU backend)."""
import inspect
import sys

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError, LaunchError, TargetError


@wb.jit
def axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
             mask=m)


def fresh_axpy():
    """A new JITFunction of the same kernel, with an empty cache."""
    return wb.jit(axpy.fn)


def aligned(n, dtype=np.float32, shift=0):
    a = np.random.default_rng().standard_normal(n + 32).astype(dtype)
    off = (-a.ctypes.data % 16) // a.itemsize + shift
    return a[off:off + n]


def launch(k, n=96, dtype=np.float32, block=32, shift=0, **kw):
    x, y = aligned(n, dtype, shift), aligned(n, dtype)
    out = np.full(n, np.nan, dtype)
    ck = k[(wb.cdiv(n, block),)](x, y, out, 2.0, n, BLOCK=block, **kw)
    np.testing.assert_allclose(out, (2.0 * x + y).astype(dtype), rtol=1e-6)
    return ck


def test_import_and_compile_never_load_the_notebook_stack():
    code = (
        "import sys, numpy as np, workbench as wb, workbench.language as tl\n"
        "@wb.jit\n"
        "def k(x, n, B: tl.constexpr):\n"
        "    o = tl.arange(0, B)\n"
        "    tl.store(x + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)\n"
        "a = np.arange(10, dtype=np.float32)\n"
        "k[(1,)](a, 10, B=16)\n"
        "assert a[3] == 6.0\n"
        "bad = [m for m in ('IPython', 'ipywidgets', 'matplotlib') if m in sys.modules]\n"
        "print('loaded:', bad)\n")
    import os
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)  # kernels need a real file for their source
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(wb.__file__)))
    try:
        r = subprocess.run([sys.executable, f.name], capture_output=True, text=True, env=env,
                           timeout=120)
    finally:
        os.unlink(f.name)
    assert r.returncode == 0, r.stderr
    assert "loaded: []" in r.stdout


def test_public_api():
    assert wb.language is tl and isinstance(wb.__version__, str)
    assert wb.cdiv(10, 4) == 3 and wb.next_power_of_2(100) == 128
    assert callable(wb.load_ipython_extension)
    for name in ("CompilationError", "LaunchError", "OutOfBoundsError", "TargetError",
                 "ToolMissingError", "UnsupportedError"):
        assert issubclass(getattr(wb, name), wb.WorkbenchError)


def plain_scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)


def test_compile_plain_function_for_interpreter_and_warmup():
    pytest.importorskip("workbench.backends.interpreter")
    ck = wb.compile(plain_scale, "*i32", "i32", BLOCK=8, target="interpreter")
    assert str(ck.target) == "interpreter" and ck.stages[:2] == ["source", "ttir"]
    a = np.arange(8, dtype=np.int32)
    ck[(1,)](a, 5)
    np.testing.assert_array_equal(a, [0, 3, 6, 9, 12, 5, 6, 7])
    jf = wb.jit(plain_scale)
    w = jf.warmup(a, 5, BLOCK=8)
    assert len(jf.cache) == 1 and w is jf[(1,)](a, 5, BLOCK=8)
    np.testing.assert_array_equal(a, [0, 9, 18, 27, 36, 5, 6, 7])  # warmup ran nothing


def test_same_launch_reuses_binary():
    k = fresh_axpy()
    first = launch(k)
    assert launch(k) is first
    assert len(k.cache) == 1


@pytest.mark.parametrize("change", [
    dict(block=64), dict(dtype=np.float64), dict(n=97), dict(n=1, block=32), dict(shift=1),
    dict(num_warps=8), dict(num_stages=2),
])
def test_different_specialisation_compiles_anew(change):
    k = fresh_axpy()
    base = launch(k)
    other = launch(k, **change)
    assert other is not base and len(k.cache) == 2
    assert other.spec.key() != base.spec.key() or other.options != base.options
    assert launch(k, **change) is other  # and that one is reused in turn


def test_interpret_env_switches_target(monkeypatch):
    pytest.importorskip("workbench.backends.interpreter")
    k = fresh_axpy()
    cpu = launch(k)
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    interp = launch(k)
    assert str(cpu.target) == "cpu" and str(interp.target) == "interpreter"
    assert interp is not cpu


def test_spec_of_equal_to_one_and_divisibility():
    k = fresh_axpy()
    ck = launch(k, n=1)
    n_spec = ck.spec.args[4]
    assert n_spec.equal_to_1 and not n_spec.passed
    ck = launch(k, n=160)
    assert ck.spec.args[4].divisible_by_16 and ck.spec.args[0].divisible_by_16


def test_do_not_specialize():
    k = wb.jit(axpy.fn, do_not_specialize=["n"])
    ck = launch(k, n=1)
    assert not ck.spec.args[4].equal_to_1 and ck.spec.args[4].passed
    assert launch(k, n=32) is not None
    with pytest.raises(LaunchError, match="do_not_specialize entry 'nope'"):
        launch(wb.jit(axpy.fn, do_not_specialize=["nope"]))


def test_asm_stages_and_line_maps():
    ck = launch(fresh_axpy())
    assert ck.stages == list(ck.asm) == ["source", "ttir", "llir", "asm"]
    assert "def axpy(" in ck.asm["source"] and "tt.func" in ck.asm["ttir"]
    assert "axpy" in ck.asm["ttir"]
    for stage, text in ck.asm.items():
        assert len(ck.line_maps[stage]) == len(text.splitlines()), stage
    lines, first = inspect.getsourcelines(axpy.fn)
    src_map = ck.line_maps["source"]
    assert src_map[0].line == first and src_map[-1].line == first + len(lines) - 1
    assert all(loc.file == __file__ for loc in src_map)
    ttir_lines = {loc.line for loc in ck.line_maps["ttir"] if loc is not None}
    assert ttir_lines and ttir_lines <= set(range(first, first + len(lines)))
    md = ck.metadata
    assert (md.name, md.num_warps, md.num_stages) == ("axpy", 4, 3)
    assert {"frontend", "ttir_passes", "backend", "total"} <= set(ck.timings)
    assert ck.timings["total"] >= ck.timings["frontend"] > 0


def test_compile_with_signature_strings_and_examples():
    k = fresh_axpy()
    ck = wb.compile(k, "*fp32:16", "*fp32:16", "*fp32:16", "fp32", "i32", BLOCK=32)
    assert ck.spec.signature_text() == "*fp32:16, *fp32:16, *fp32:16, fp32, i32"
    assert str(ck.target) == "cpu"
    # the compiled kernel launches directly, and refuses arguments it was not compiled for
    n = 70
    x, y, out = aligned(n), aligned(n), np.full(n, np.nan, np.float32)
    ck[(wb.cdiv(n, 32),)](x, y, out, 3.0, n)
    np.testing.assert_allclose(out, 3.0 * x + y, rtol=1e-6)
    with pytest.raises(LaunchError, match="divisibility by 16"):
        ck[(1,)](x[1:], y[1:], out[1:], 3.0, n - 1)
    with pytest.raises(LaunchError, match="BLOCK=32"):
        ck[(1,)](x, y, out, 3.0, n, BLOCK=64)
    # a second launch with arguments of the same kind takes the fast path (checked once);
    # others are still checked
    out[:] = np.nan
    ck[(wb.cdiv(n, 32),)](x, y, out, 2.0, n, BLOCK=32)
    ck[(wb.cdiv(n, 32),)](x, y, out, 2.0, n, BLOCK=32)
    np.testing.assert_allclose(out, 2.0 * x + y, rtol=1e-6)
    assert len(ck._fits) == 1
    with pytest.raises(LaunchError, match="divisibility by 16"):
        ck[(1,)](x[1:], y[1:], out[1:], 3.0, n - 1, BLOCK=32)
    with pytest.raises(LaunchError, match="BLOCK=32"):
        ck[(1,)](x, y, out, 3.0, n, BLOCK=64)
    # same specialisation as a launch -> the cached binary
    ex = wb.compile(k, x, y, out, 3.0, 70, BLOCK=32)
    assert ex.spec.signature_text() == "*fp32:16, *fp32:16, *fp32:16, fp32, i32"
    assert ex is ck
    snap = wb.compile(k, x, y, out, 3.0, 70, BLOCK=32, keep_snapshots=True)
    names = [name for name, _ in snap.snapshots["ttir"]]
    assert names[0] == "input" and len(names) >= 3


def test_compile_errors():
    with pytest.raises(LaunchError, match="needs 5 signature entries"):
        wb.compile(axpy, "*fp32", "*fp32", BLOCK=4)
    with pytest.raises(LaunchError, match="'\\*fq32' is not a signature entry"):
        wb.compile(axpy, "*fq32", "*fp32", "*fp32", "fp32", "i32", BLOCK=4)
    with pytest.raises(TargetError, match="cuda:90"):
        wb.compile(axpy, "*fp32", "*fp32", "*fp32", "fp32", "i32", BLOCK=4, target="tpu")
    with pytest.raises(LaunchError, match="missing argument for constexpr parameter 'BLOCK'"):
        wb.compile(axpy, "*fp32", "*fp32", "*fp32", "fp32", "i32")


def test_compile_for_cuda_compile_only():
    try:
        ck = wb.compile(axpy, "*fp32:16", "*fp32:16", "*fp32:16", "fp32", "i32", BLOCK=256,
                        target="cuda:90")
    except TargetError as e:
        if "not available" in str(e):
            pytest.skip(str(e))
        raise
    assert ck.stages[:5] == ["source", "ttir", "ttgir", "llir", "ptx"]
    assert ".target sm_90" in ck.asm["ptx"]


def test_launch_errors():
    x = aligned(16)
    with pytest.raises(LaunchError, match="cannot be called like a Python function"):
        axpy(x, x, x, 1.0, 16)
    with pytest.raises(LaunchError, match="has no parameter 'BLOK'"):
        axpy[(1,)](x, x, x, 1.0, 16, BLOK=16)
    with pytest.raises(LaunchError, match="num_warps"):
        axpy[(1,)](x, x, x, 1.0, 16, BLOCK=16, num_warps=3)
    with pytest.raises(LaunchError, match="grid"):
        axpy[(1, 2, 3, 4)](x, x, x, 1.0, 16, BLOCK=16)


@wb.jit
def broken(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    try:
        tl.store(x_ptr + offs, 1.0)
    except Exception:
        pass


def test_errors_surface_at_first_launch_not_at_decoration():
    lines, first = inspect.getsourcelines(broken.fn)
    try_line = first + next(i for i, ln in enumerate(lines) if "try:" in ln)
    with pytest.raises(CompilationError) as ei:
        broken[(1,)](np.zeros(8, np.float32), BLOCK=8)
    assert f"{__file__}:{try_line}:" in str(ei.value)


def test_repr_and_html():
    ck = launch(fresh_axpy())
    r = repr(ck)
    assert "axpy" in r and "target=cpu" in r and "BLOCK" in r
    html = ck._repr_html_()
    assert isinstance(html, str) and "axpy" in html
