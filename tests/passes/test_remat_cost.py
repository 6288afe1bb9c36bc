"""Triton's cost model of backward rematerialisation (workbench/passes/remat.py): a conversion
of a 64-element fp32 value costs 32 x 256 bytes; computing the value again costs 8 x 256 bytes
per load and per slow math op (math.exp) whose result is also used outside the slice. A load
and three exps (8192) are rematerialised, a load and four (10240) keep the conversion."""
from __future__ import annotations

import numpy as np
import pytest

from workbench.backends.base import PointerArg
from workbench.backends.interpreter import interpret
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.passes.remove_layout_conversions import remove_layout_conversions

_A = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
_B = "#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"


def _kernel(n_exp: int) -> str:
    """out[0:64] = x, out[64k:64k+64] = exp^k(x) for k = 1..n, out[64(n+1):] = 2 exp^n(x); the
    last one read through a conversion to another layout."""
    t, tp = "tensor<64xf32, #A>", "tensor<64x!tt.ptr<f32>, #A>"
    lines = [f"#A = {_A}", f"#B = {_B}",
             'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, '
             '"ttg.threads-per-warp" = 32 : i32} {',
             "  tt.func public @k(%x_ptr: !tt.ptr<f32>, %o_ptr: !tt.ptr<f32>) {",
             "    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #A>",
             f"    %s = tt.splat %x_ptr : !tt.ptr<f32> -> {tp}",
             f"    %p = tt.addptr %s, %r : {tp}, tensor<64xi32, #A>",
             f"    %v0 = tt.load %p : {tp}",
             f"    %os = tt.splat %o_ptr : !tt.ptr<f32> -> {tp}",
             f"    %q0 = tt.addptr %os, %r : {tp}, tensor<64xi32, #A>",
             f"    tt.store %q0, %v0 : {tp}",
             "    %c64 = arith.constant dense<64> : tensor<64xi32, #A>"]
    for i in range(1, n_exp + 1):
        lines += [f"    %v{i} = math.exp %v{i - 1} : {t}",
                  f"    %q{i} = tt.addptr %q{i - 1}, %c64 : {tp}, tensor<64xi32, #A>",
                  f"    tt.store %q{i}, %v{i} : {tp}"]
    off = 64 * (n_exp + 1)
    lines += [f"    %c = ttg.convert_layout %v{n_exp} : {t} -> tensor<64xf32, #B>",
              "    %rb = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #B>",
              f"    %ob = arith.constant dense<{off}> : tensor<64xi32, #B>",
              "    %ib = arith.addi %rb, %ob : tensor<64xi32, #B>",
              "    %sb = tt.splat %o_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #B>",
              "    %pb = tt.addptr %sb, %ib : tensor<64x!tt.ptr<f32>, #B>, tensor<64xi32, #B>",
              "    %w = arith.addf %c, %c : tensor<64xf32, #B>",
              "    tt.store %pb, %w : tensor<64x!tt.ptr<f32>, #B>",
              "    tt.return", "  }", "}"]
    return "\n".join(lines)


def _parg(a: np.ndarray) -> PointerArg:
    addr = a.ctypes.data
    return PointerArg(addr, addr, addr + a.nbytes, a.itemsize, a)


@pytest.mark.parametrize("n_exp,kept", [(2, 0), (3, 0), (4, 1)])
def test_cost_decides_and_values_stay(n_exp, kept):
    m = parse_module(_kernel(n_exp))
    remove_layout_conversions(m)
    text = print_module(m, locations=False)
    assert text.count("ttg.convert_layout") == kept
    # rematerialised: the load and the exps are computed again in #B
    assert text.count("math.exp") == (2 * n_exp if not kept else n_exp)
    x = np.random.default_rng().standard_normal(64).astype(np.float32) * 0.1
    out = np.full(64 * (n_exp + 2), np.nan, np.float32)
    interpret(m, (1,), [_parg(x), _parg(out)])
    want = [x]
    for _ in range(n_exp):
        want.append(np.exp(want[-1]))
    want.append(2 * want[-1])
    np.testing.assert_allclose(out, np.concatenate(want), rtol=1e-6)
