"""Attention over tensor descriptors on sm_90 (tutorial 06's form, tma_attention_kernels.py):
the pipelined loop gives K and V an mbarrier array each, waited for where each load was, as
Triton 3.6 groups TMA loads (``createTMABarrierAndWait``); both wgmma asynchronous, the first
waited for at once, the copies of the next tiles after both dots. The interpreter (which
models mbarrier phases and raises on a wait that could never complete) runs the pipelined
ttgir against numpy, causal and not, for 2-4 stages; so does it for a TMA K loop whose
offset is carried and advanced by a constant."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from tests.passes.pipeline_kernels import parg
from tests.passes.tma_attention_kernels import attention_ref, tma_attention_k
from workbench.backends.interp.compiler import compile_function
from workbench.backends.interp.launch import Launcher
from workbench.ir.core import functions
from workbench.ir.parser import parse_module
from workbench.tools.tensor_descriptor import TensorDescriptor


def _compile(d, bm, bn, n, causal, warps=4, stages=3):
    descs = [TensorDescriptor.from_tensor(np.zeros((2 * n, d), np.float16), [b, d])
             for b in (bm, bn, bn, bm)]
    return wb.compile(tma_attention_k, *descs, 0.5, n, D=d, BM=bm, BN=bn, CAUSAL=causal,
                      target="cuda:90", num_warps=warps, num_stages=stages)


def _loops(ttgir: str) -> list:
    """The ttng op names of each scf.for body (wgmma waits with their pendings)."""
    out, cur = [], None
    for ln in ttgir.splitlines():
        s = ln.strip()
        if "scf.for" in s:
            cur = []
        elif s.startswith("scf.yield") and cur is not None:
            out.append(cur)
            cur = None
        elif cur is not None:
            m = re.match(r"^(?:%[\w#]+(?::\d+)? = )?(ttng\.\w+)", s)
            if m:
                p = re.search(r"pendings = (\d+)", s)
                cur.append(m.group(1) + (f"{{{p.group(1)}}}" if p else ""))
    return out


@pytest.mark.parametrize("warps", [4, 8])
@pytest.mark.parametrize("causal", [False, True])
def test_k_and_v_get_a_barrier_each(warps, causal):
    text = _compile(64, 128, 64, 256, causal, warps).asm["ttgir"]
    loops = _loops(text)
    assert len(loops) == (2 if causal else 1)
    for body in loops:
        assert body == ["ttng.wait_barrier", "ttng.warp_group_dot",
                        "ttng.warp_group_dot_wait{0}", "ttng.wait_barrier",
                        "ttng.warp_group_dot", "ttng.barrier_expect",
                        "ttng.async_tma_copy_global_to_local", "ttng.barrier_expect",
                        "ttng.async_tma_copy_global_to_local"], body
    # Q's barrier and, per loop, K's and V's arrays of 3 (one per slot)
    assert text.count("ttng.init_barrier") == 1 + 6 * len(loops)
    assert text.count("ttng.inval_barrier") == 1 + 6 * len(loops)
    # each expect covers one 64x64 fp16 tile (8 KB), not the K and V tiles together
    assert set(re.findall(r"ttng\.barrier_expect %\w+, (\d+)", text)) == {"16384", "8192"}


def _run(module, q, k, v, o, scale, n, bm):
    z, _, d = q.shape
    args = []
    for a in (q, k, v, o):
        flat = a.reshape(z * n, d)
        args += [parg(flat), z * n, d, d, 1]
    Launcher(compile_function(functions(module)[0], module))((n // bm, z, 1),
                                                             args + [scale, n])


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("warps,stages,d,bm,bn,n", [
    (4, 3, 64, 64, 32, 128), (8, 2, 64, 64, 32, 128), (4, 4, 64, 64, 16, 128),
    (8, 3, 128, 64, 64, 64)])
def test_interpreter_runs_the_pipelined_ttgir(causal, warps, stages, d, bm, bn, n):
    module = parse_module(_compile(d, bm, bn, n, causal, warps, stages).asm["ttgir"])
    rng = np.random.default_rng()
    z = 2
    q, k, v = (rng.standard_normal((z, n, d)).astype(np.float16) for _ in range(3))
    o = np.full((z, n, d), np.nan, np.float16)
    scale = d ** -0.5
    _run(module, q, k, v, o, scale, n, bm)
    want = attention_ref(q, k, v, scale, causal)
    np.testing.assert_allclose(o.astype(np.float64), want, atol=2e-2, rtol=2e-2)


@wb.jit
def carried_offset_mm(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
    """A TMA K loop whose offset is carried and advanced by a constant (tutorial 06's
    ``offsetk_y += BLOCK_N``): the prefetch offset ``+ (S - 1) * BK`` is one constant."""
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    off = 0
    for _ in range(0, K, BK):
        acc = tl.dot(a_desc.load([0, off]), b_desc.load([off, 0]), acc)
        off += BK
    c_desc.store([0, 0], acc.to(tl.float16))


@pytest.mark.parametrize("stages", [2, 3])
def test_carried_offset_with_a_constant_step_is_pipelined(stages):
    m, n, k = 64, 64, 160
    a_np = np.random.default_rng().standard_normal((m, k)).astype(np.float16)
    b_np = np.random.default_rng().standard_normal((k, n)).astype(np.float16)
    descs = [TensorDescriptor.from_tensor(np.zeros(s, np.float16), blk) for s, blk in
             (((m, k), [m, 32]), ((k, n), [32, n]), ((m, n), [m, n]))]
    c = wb.compile(carried_offset_mm, *descs, k, BM=m, BN=n, BK=32, target="cuda:90",
                   num_warps=4, num_stages=stages)
    text = c.asm["ttgir"]
    body = text[text.index("scf.for"):text.index("scf.yield")]
    assert "ttng.async_tma_copy_global_to_local" in body and "ttng.wait_barrier" in body
    module = parse_module(text)
    out = np.full((m, n), np.nan, np.float16)
    args = [parg(a_np), m, k, k, 1, parg(b_np), k, n, n, 1, parg(out), m, n, n, 1, k]
    Launcher(compile_function(functions(module)[0], module))((1, 1, 1), args)
    want = a_np.astype(np.float64) @ b_np.astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), want, atol=5e-2, rtol=1e-2)
