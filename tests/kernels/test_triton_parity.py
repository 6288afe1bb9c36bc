"""The same kernel source run by Triton (on the GPU) and by the workbench (CPU backend and
interpreter) gives the same answers: Philox random numbers bit for bit, C-style integer
division, promotions, reductions with ties, scans. Needs a GPU with triton and torch (the
reference machine); skipped elsewhere."""
from __future__ import annotations

import importlib.util
import inspect
import sys
import textwrap

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl

pytestmark = pytest.mark.gpu
N = 1024


@wb.jit
def random_k(out_int, out_uni, out_nrm, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_int + offs, tl.randint(seed, offs))
    tl.store(out_uni + offs, tl.rand(seed, offs))
    tl.store(out_nrm + offs, tl.randn(seed, offs + 7))


@wb.jit
def intops_k(a_ptr, b_ptr, q_ptr, r_ptr, s_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(q_ptr + offs, a // b)
    tl.store(r_ptr + offs, a % b)
    tl.store(s_ptr + offs, (a >> 3) ^ (b << 2))


@wb.jit
def reduce_k(x_ptr, h_ptr, amax_ptr, cs_ptr, mx_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    h = tl.load(h_ptr + offs)
    tl.store(amax_ptr, tl.argmax(x, axis=0))
    tl.store(cs_ptr + offs, tl.cumsum(x, axis=0))
    tl.store(mx_ptr, tl.max(h * 2.0, axis=0).to(tl.float32))


def _triton_twin(kernel):
    import triton  # noqa: F401
    src = textwrap.dedent(inspect.getsource(kernel.fn)).replace("@wb.jit", "@triton.jit")
    path = f"/tmp/triton_twin_{kernel.fn.__name__}.py"
    with open(path, "w") as f:
        f.write("import triton\nimport triton.language as tl\n\n" + src)
    spec = importlib.util.spec_from_file_location(f"twin_{kernel.fn.__name__}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, kernel.fn.__name__)


def _both(kernel, arrays, *scalars, **constexprs):
    """Run ``kernel`` under Triton on the GPU and under the workbench on the CPU backend and
    the interpreter; returns (triton outputs, [cpu outputs, interpreter outputs])."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    twin = _triton_twin(kernel)
    dev = [torch.from_numpy(a.copy()).cuda() for a in arrays]
    twin[(1,)](*dev, *scalars, **constexprs)
    torch.cuda.synchronize()
    ref = [d.cpu().numpy() for d in dev]
    ours = []
    for target in ("cpu", "interpreter"):
        host = [a.copy() for a in arrays]
        ck = wb.compile(kernel, *host, *scalars, target=target, **constexprs)
        ck[(1,)](*host, *scalars)
        ours.append(host)
    return ref, ours


def test_philox_random_numbers_match_triton_bit_for_bit():
    arrays = [np.zeros(N, np.uint32), np.zeros(N, np.float32), np.zeros(N, np.float32)]
    ref, ours = _both(random_k, arrays, 1234567, BLOCK=N)
    for got in ours:
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_allclose(got[2], ref[2], rtol=2e-6, atol=2e-6)


def test_integer_division_shifts_match_triton():
    rng = np.random.default_rng()
    a = rng.integers(-1000, 1000, N).astype(np.int32)
    b = rng.integers(1, 50, N).astype(np.int32) * rng.choice([-1, 1], N).astype(np.int32)
    arrays = [a, b, np.zeros(N, np.int32), np.zeros(N, np.int32), np.zeros(N, np.int32)]
    ref, ours = _both(intops_k, arrays, BLOCK=N)
    for got in ours:
        for g, r in zip(got[2:], ref[2:], strict=True):
            np.testing.assert_array_equal(g, r)


def test_argmax_ties_cumsum_and_fp16_max_match_triton():
    rng = np.random.default_rng()
    x = rng.integers(-20, 20, N).astype(np.int32)
    x[[5, 700]] = 99  # a tie: the lowest index wins
    h = rng.standard_normal(N).astype(np.float16)
    arrays = [x, h, np.zeros(1, np.int32), np.zeros(N, np.int32), np.zeros(1, np.float32)]
    ref, ours = _both(reduce_k, arrays, BLOCK=N)
    for got in ours:
        assert got[2][0] == ref[2][0] == 5
        np.testing.assert_array_equal(got[3], ref[3])
        np.testing.assert_array_equal(got[4], ref[4])
