"""CPU backend: tt.print (text identical to the interpreter's, program-id order across worker
threads), tt.assert (program id, line, message), tt.gather (vs np.take_along_axis, index
check), gpu.barrier, on hand-built ttir."""
from __future__ import annotations

import numpy as np
import pytest

from tests.ir_kit import FILE, K, ptr, run
from workbench.backends.interp.errors import InterpreterError
from workbench.backends.interpreter import DeviceAssertionError, InterpreterBackend
from workbench.config import CompileContext, Options, Target
from workbench.errors import WorkbenchError
from workbench.ir.types import TensorType, bf16, f16, f32, i32, i64

rng = np.random.default_rng()


def _interp_run(k, grid, *args):
    res = InterpreterBackend(Target.parse("interpreter")).compile(k.module, None, Options(),
                                                                  CompileContext())
    run(res, grid, *args)


def _print_kernel(hexa=False):
    k = K("pr", [("x", ptr(i32)), ("f", ptr(f32)), ("h", ptr(bf16)), ("s", i64)])
    xp, fp, hp, s = k.args
    r4 = k.arange(0, 4)
    x = k.load(k.addptr(xp, r4))
    f = k.load(k.addptr(fp, r4))
    h = k.load(k.addptr(hp, r4))
    neg = k.cmp("arith.cmpi", "slt", x, k.const(0, TensorType((4,), i32)))
    y = k.bin("arith.muli", x, k.splat(k.pid(), (4,)))
    k.b.create("tt.print", [k.pid(), y, f, h, neg, s], [],
               {"prefix": " vals: ", "hex": hexa, "isSigned": [1, 0, 1, 1, 0, 1]})
    return k.ret()


@pytest.mark.parametrize("hexa", [False, True])
def test_print_matches_interpreter_text_in_program_order(capfd, hexa):
    k = _print_kernel(hexa)
    res = k.compile()
    res.launcher.workers = 3
    x = rng.integers(-50, 50, 4).astype(np.int32)
    f = rng.standard_normal(4).astype(np.float32)
    h = (rng.standard_normal(4).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    run(res, 7, x, f, h, -(2 ** 40) - 3)
    cpu = capfd.readouterr().out
    _interp_run(k, 7, x, f, h, -(2 ** 40) - 3)
    ref = capfd.readouterr().out
    assert cpu == ref
    lines = cpu.splitlines()
    assert len(lines) == 7 and all(ln.startswith(f"pid ({p}, 0, 0)  vals: {hex(p) if hexa else p} ")
                                   for p, ln in enumerate(lines))


def test_print_in_a_loop_and_scalar_only(capsys):
    from test_cpu_while_dot import build_while
    k = K("loop", [("n", i32)])
    n, = k.args

    def before(k, a):
        return k.cmp("arith.cmpi", "slt", a[0], n), [a[0]]

    def after(k, a):
        k.b.create("tt.print", [a[0]], [], {"prefix": "i=", "hex": False, "isSigned": [1]})
        return [k.bin("arith.addi", a[0], k.const(1, i32))]
    build_while(k, [k.const(0, i32)], before, after)
    res = k.ret().compile()
    run(res, 2, 3)
    out = capsys.readouterr().out.splitlines()
    assert out == [f"pid ({p}, 0, 0) i={i}" for p in range(2) for i in range(3)]


def test_print_2d_f16_tile(capsys):
    k = K("p2", [("x", ptr(f16))])
    xp, = k.args
    off = k.bin("arith.addi",
                k.broadcast(k.expand(k.bin("arith.muli", k.arange(0, 2),
                                           k.const(3, TensorType((2,), i32))), 1), (2, 3)),
                k.broadcast(k.expand(k.arange(0, 3), 0), (2, 3)))
    v = k.load(k.addptr(xp, off))
    k.b.create("tt.print", [v], [], {"prefix": "", "hex": False, "isSigned": [1]})
    res = k.ret().compile()
    x = rng.standard_normal(6).astype(np.float16)
    run(res, 1, x)
    assert capsys.readouterr().out == f"pid (0, 0, 0) {np.array2string(x.reshape(2, 3))}\n"


def _assert_kernel():
    k = K("as", [("x", ptr(i32))])
    xp, = k.args
    v = k.load(k.addptr(xp, k.bin("arith.addi", k.arange(0, 4), k.splat(k.bin(
        "arith.muli", k.pid(), k.const(4, i32)), (4,)))))
    k.at(12, 9)
    ok = k.cmp("arith.cmpi", "sge", v, k.const(0, TensorType((4,), i32)))
    k.b.create("tt.assert", [ok], [], {"message": "x must be non-negative"})
    k.at(13)
    k.b.create("gpu.barrier", [], [])
    k.b.create("tt.store", [k.addptr(xp, k.pid()), k.const(7, i32)], [])
    return k.ret().compile()


def test_assert_names_program_line_and_message():
    res = _assert_kernel()
    res.launcher.workers = 3
    x = np.arange(64, dtype=np.int32)
    x[37] = -1
    x[61] = -5
    with pytest.raises(DeviceAssertionError) as ei:
        run(res, 16, x)
    e = ei.value
    assert isinstance(e, WorkbenchError)
    assert e.program_id == (9, 0, 0) and e.loc.line == 12
    assert f"{FILE}:12:9" in str(e) and "x must be non-negative" in str(e)
    assert "(9, 0, 0)" in str(e)


def test_passing_assert_runs_on():
    res = _assert_kernel()
    x = np.arange(100, 164, dtype=np.int32)
    run(res, 16, x)
    assert (x[:16] == 7).all() and (x[16:] == np.arange(116, 164)).all()


def test_scalar_assert():
    k = K("sa", [("n", i32)])
    n, = k.args
    ok = k.cmp("arith.cmpi", "slt", k.pid(), n)
    k.b.create("tt.assert", [ok], [], {"message": "pid < n"})
    res = k.ret().compile()
    run(res, 5, 5)
    with pytest.raises(DeviceAssertionError) as ei:
        run(res, 5, 3)
    assert ei.value.program_id == (3, 0, 0) and "pid < n" in str(ei.value)


def _gather_kernel(M, N, axis):
    k = K("g", [("x", ptr(f32)), ("i", ptr(i32)), ("o", ptr(f32))])
    xp, ip, op_ = k.args
    off = k.bin("arith.addi",
                k.broadcast(k.expand(k.bin("arith.muli", k.arange(0, M),
                                           k.const(N, TensorType((M,), i32))), 1), (M, N)),
                k.broadcast(k.expand(k.arange(0, N), 0), (M, N)))
    x = k.load(k.addptr(xp, off))
    # a lazy source: x * 2 + 1
    t = x.type
    src = k.bin("arith.addf", k.bin("arith.mulf", x, k.const(2.0, t)), k.const(1.0, t))
    idx = k.load(k.addptr(ip, off))
    g = k.op("tt.gather", [src, idx], t, axis=axis)
    k.store(k.addptr(op_, off), g)
    return k.ret().compile()


@pytest.mark.parametrize("axis", [0, 1])
def test_gather_along_axis(axis):
    M, N = 8, 16
    res = _gather_kernel(M, N, axis)
    x = rng.standard_normal((M, N)).astype(np.float32)
    idx = rng.integers(0, (M, N)[axis], (M, N)).astype(np.int32)
    out = np.full((M, N), np.nan, np.float32)
    run(res, 1, x, idx, out)
    np.testing.assert_array_equal(out, np.take_along_axis(x * 2 + 1, idx, axis))


def test_gather_index_out_of_range_is_an_error():
    M, N = 8, 16
    res = _gather_kernel(M, N, 1)
    x = np.zeros((M, N), np.float32)
    idx = np.zeros((M, N), np.int32)
    idx[3, 5] = N
    with pytest.raises(InterpreterError) as ei:
        run(res, 1, x, idx, np.zeros((M, N), np.float32))
    assert "out of range [0, 16)" in str(ei.value) and "element 53" in str(ei.value)
    idx[3, 5] = -1
    with pytest.raises(InterpreterError):
        run(res, 1, x, idx, np.zeros((M, N), np.float32))
