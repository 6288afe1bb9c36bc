"""triton-licm: loop-invariant ops leave their loop (speculatable ones as they are, loads of
read-only for loops with the loop's entry condition in their mask), and the kernels still
compute what numpy does, including loops that run zero times."""
from __future__ import annotations

import numpy as np

import workbench as wb
import workbench.language as tl
from tests.passes.pipeline_kernels import run_ttgir
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.passes import PassManager
from workbench.passes.licm import LoopInvariantCodeMotion
from workbench.passes.pipelines import get_pass


@wb.jit
def invariant_k(x_ptr, y_ptr, out_ptr, n, m, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, n):
        scale = tl.load(y_ptr + offs)  # invariant, the loop only reads: hoisted, guarded
        q = m // 3  # constant non-zero divisor: hoisted
        r = n // m  # m may be 0: stays in the loop
        acc += tl.load(x_ptr + i * BLOCK + offs) * scale + q + r
    tl.store(out_ptr + offs, acc)


@wb.jit
def writing_loop_k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for i in range(0, n):
        v = tl.load(x_ptr + offs)  # invariant, but the loop stores: stays
        tl.store(out_ptr + i * BLOCK + offs, v * (i + 1))


@wb.jit
def nested_k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for _i in range(0, n):
        for j in range(0, 3):
            acc += tl.load(x_ptr + offs * 2 + 1) + j  # leaves both loops
    tl.store(out_ptr + offs, acc)


def _licm(kernel, sig, **constexprs):
    c = wb.compile(kernel, *sig, target="interpreter", **constexprs)
    m = parse_module(c.asm["ttir"])
    PassManager([LoopInvariantCodeMotion()], verify=True).run(m, None, "ttgir")
    return m


def _loop_body(text: str) -> str:
    """The text of the first loop's body (up to its closing brace at the loop's indent)."""
    start = text.index("scf.for")
    line = text[text.rindex("\n", 0, start) + 1:start]
    indent = len(line) - len(line.lstrip())
    return text[start:text.index("\n" + " " * indent + "}", start)]


def _outside(text: str) -> str:
    return text[:text.index("scf.for")]


def test_invariant_ops_leave_the_loop():
    text = print_module(_licm(invariant_k, ["*fp32", "*fp32", "*fp32", "i32", "i32"],
                              BLOCK=16), locations=False)
    body, before = _loop_body(text), _outside(text)
    assert "arith.divsi %m, %c3_i32" in before and "divsi %n, %m" in body
    assert body.count("tt.load") == 1 and before.count("tt.load") == 1
    assert "arith.cmpi slt, %c0_i32, %n" in before  # the loop's entry condition
    assert "arith.sitofp %q" in before  # a user of a hoisted op follows it out
    assert get_pass("triton-licm").name == "triton-licm"


def test_hoisted_kernel_matches_numpy_even_when_the_loop_is_empty():
    m = _licm(invariant_k, ["*fp32", "*fp32", "*fp32", "i32", "i32"], BLOCK=16)
    rng = np.random.default_rng()
    for n, mm in [(5, 4), (3, -7), (0, 0)]:
        x = rng.standard_normal(max(n, 1) * 16).astype(np.float32)
        y = rng.standard_normal(16).astype(np.float32) if n else np.zeros(0, np.float32)
        out = np.full(16, np.nan, np.float32)
        run_ttgir(m, (1, 1, 1), [x, y, out, n, mm])
        want = np.zeros(16, np.float32)
        for i in range(n):
            q, r = int(mm / 3), int(n / mm)  # C division, as arith.divsi
            want += x[i * 16:(i + 1) * 16] * y + np.float32(q) + np.float32(r)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_loads_stay_in_loops_that_write():
    m = _licm(writing_loop_k, ["*fp32", "*fp32", "i32"], BLOCK=8)
    text = print_module(m, locations=False)
    assert "tt.load" in _loop_body(text) and "cmpi slt" not in text
    x = np.random.default_rng().standard_normal(8).astype(np.float32)
    out = np.zeros(4 * 8, np.float32)
    run_ttgir(m, (1, 1, 1), [x, out, 4])
    np.testing.assert_array_equal(out, np.concatenate([x * k for k in (1, 2, 3, 4)]))


def test_inner_loop_invariants_leave_both_loops():
    m = _licm(nested_k, ["*fp32", "*fp32", "i32"], BLOCK=8)
    text = print_module(m, locations=False)
    assert "tt.load" in _outside(text) and text.count("tt.load") == 1
    x = np.random.default_rng().standard_normal(16).astype(np.float32)
    for n in (2, 0):
        out = np.full(8, np.nan, np.float32)
        run_ttgir(m, (1, 1, 1), [x, out, n])
        # n additions of 3x + 3 in fp32: bounded by the terms' magnitudes, not the result's
        # (3x + 3 may cancel to near zero)
        np.testing.assert_allclose(out, n * (3 * x[1::2] + 3), rtol=1e-5,
                                   atol=1e-6 * n * (3 * np.abs(x[1::2]).max() + 3))
