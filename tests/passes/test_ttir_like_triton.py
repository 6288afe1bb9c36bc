"""Our ttir (after triton-combine and triton-reorder-broadcast) beside Triton 3.6's: the same
ops in the same order (value names and locations aside) for the kernels the two passes
change and for fidelity-suite and example kernels; the kernels the passes rewrite still
compute the right values on the CPU and the interpreter (no Triton needed for those)."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.passes.combine_kernels import (
    KERNELS,
    addptr_chain_k,
    batched_descriptor_k,
    dot_accumulate_k,
    flat_sum_k,
    mul_broadcast_sum_k,
    splat_broadcast_math_k,
    where_masked_load_k,
)
from workbench.runtime.aot import compile as wb_compile
from workbench.testing import examples as ex

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fidelity"))
from fidelity_kernels import CASES  # noqa: E402

_OP = re.compile(r'^\s*(?:%[\w#:, %]+ = )?"?([a-z_]+\.[a-z_.]+)')
#: fidelity-suite kernels whose ttir is Triton's op for op: all of them (the two descriptor
#: kernels on sm_90 only: before sm_90 Triton rewrites descriptors to pointers in make_ttir,
#: with its own expansion of a descriptor argument into ten scalars)
FIDELITY_SAME = tuple(c.name for c in CASES)
SM90_ONLY = ("batched_descriptor", "tma_persistent_matmul", "tma_scale")
F16, F32, I32 = "*fp16:16", "*fp32:16", "i32"
EXAMPLES = [
    ("softmax", ex.softmax_kernel, (F32, F32, I32, I32, I32), {"BLOCK_SIZE": 1024}),
    ("attention_fwd", ex.attention_fwd_kernel, (F16, F16, F16, F16, "fp32", I32),
     {"D": 64, "BM": 64, "BN": 32}),
    ("attention_causal", ex.attention_causal_fwd_kernel, (F16, F16, F16, F16, "fp32", I32),
     {"D": 64, "BM": 64, "BN": 32}),
]


def op_names(text: str) -> list:
    """The op names of an MLIR text in order (``tt.func``, ``arith.addi``, ...)."""
    return [m.group(1) for line in text.splitlines() if not line.startswith("#")
            for m in [_OP.match(line)] if m]


def _both_ttir(kernel, signature, target, constexprs):
    from workbench.runtime.triton_oracle import triton_compile
    ours = wb_compile(kernel, *signature, target=target, **constexprs).asm["ttir"]
    theirs = triton_compile(kernel, signature, target, 4, 3, dict(constexprs))["asm"]["ttir"]
    return ours, theirs


CASES_BY_NAME = {c.name: c for c in CASES}
COMPARED = [(n, k, s, c) for n, k, s, c in KERNELS] + \
    [(n, CASES_BY_NAME[n].kernel, CASES_BY_NAME[n].signature, CASES_BY_NAME[n].constexprs)
     for n in FIDELITY_SAME] + [("example_" + n, k, s, c) for n, k, s, c in EXAMPLES]


@pytest.mark.parametrize("target", ["cuda:90", "cuda:80"])
@pytest.mark.parametrize("name,kernel,signature,constexprs", COMPARED,
                         ids=[c[0] for c in COMPARED])
def test_ttir_ops_are_tritons(name, kernel, signature, constexprs, target):
    pytest.importorskip("triton", reason="comparing with Triton needs Triton 3.6")
    if name in SM90_ONLY and target == "cuda:80":
        pytest.skip("before sm_90 Triton rewrites descriptors to pointers inside make_ttir")
    ours, theirs = _both_ttir(kernel, signature, target, constexprs)
    assert op_names(ours) == op_names(theirs)


def test_the_passes_make_tritons_rewrites():
    """The patterns fired: the ttir has the dots, loads and addptrs Triton's has."""
    pytest.importorskip("triton", reason="comparing with Triton needs Triton 3.6")
    for name, kernel, signature, constexprs in KERNELS:
        ours, theirs = _both_ttir(kernel, signature, "cuda:90", constexprs)
        for text in (ours, theirs):
            if name == "mul_broadcast_sum":
                assert "tt.reduce" not in text and "arith.addf" not in text
                assert re.search(r"tt\.dot %\S+, %\S+, %acc\S*, inputPrecision = tf32", text)
            if name == "dot_accumulate":
                assert "arith.addf" not in text
            if name == "addptr_chain":
                assert "= arith.constant 7 : i32" in text  # 3 + 4, one scalar addptr
                assert text.count(": !tt.ptr<f32>, i32") == 1
            if name == "flat_sum":
                assert "allow_reorder" in text
            if name == "batched_descriptor":
                assert "-> tensor<16x32xf32>" in text and "tt.reshape" not in text


def test_mul_broadcast_sum_ttgir_is_pipelined_as_tritons_test_asserts():
    """Triton's ``test_dot_mulbroadcasted`` on CUDA: a dot in the ttir and a pipelined loop
    waiting with ``ttg.async_wait ... {num = 2 : i32}`` in the ttgir (sm_80 and sm_90)."""
    c = KERNELS[0]
    for target in ("cuda:80", "cuda:90"):
        k = wb_compile(c[1], *c[2], target=target, **c[3])
        assert "tt.dot" in k.asm["ttir"]
        assert re.search(r"ttg\.async_wait .*\{num = 2 : i32\}", k.asm["ttgir"])
        if target == "cuda:90":  # a tf32 wgmma kept in flight, as Triton's
            assert re.search(r"ttng\.warp_group_dot .*isAsync = true", k.asm["ttgir"])


def test_accumulating_dot_is_an_async_wgmma_on_sm90():
    """``acc += tl.dot(a, b)`` with both operands pipelined: the wgmma stays in flight."""
    case = CASES_BY_NAME["matmul_f16"]
    ttgir = wb_compile(case.kernel, *case.signature, target="cuda:90",
                       **case.constexprs).asm["ttgir"]
    assert re.search(r"ttng\.warp_group_dot %\S+, %\S+, %\S+ \{[^}]*isAsync = true", ttgir)
    assert "ttng.warp_group_dot_wait" in ttgir


def _tf32(a):
    return (a.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def test_rewritten_kernels_compute_the_right_values(backend):
    """On every runnable backend (the ``backend`` parameter of tests/conftest.py)."""
    assert (os.environ.get("WORKBENCH_INTERPRET") == "1") == (backend == "interpreter")
    rng = np.random.default_rng()
    m, n, k, bm, bn, bk = 256, 192, 160, 128, 32, 32
    x = (rng.standard_normal((m, k)) * 0.1).astype(np.float32)
    y = (rng.standard_normal((k, n)) * 0.1).astype(np.float32)
    z = np.full((m, n), np.nan, np.float32)
    mul_broadcast_sum_k[(m // bm, n // bn)](z, x, y, m, n, k, bm, bn, bk)
    # the dot multiplies TF32-rounded inputs (inputPrecision = tf32), as Triton's does
    ref = _tf32(x).astype(np.float64) @ _tf32(y).astype(np.float64)
    np.testing.assert_allclose(z, ref, rtol=0, atol=2e-5)

    a = rng.standard_normal((64, 96)).astype(np.float16)
    b = rng.standard_normal((96, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    dot_accumulate_k[(1,)](a, b, c, 96, BM=64, BN=64, BK=32)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=0,
                               atol=1e-3)

    src = rng.standard_normal(256).astype(np.float32)
    out = np.full(256, np.nan, np.float32)
    where_masked_load_k[(2,)](src, out, 1, BLOCK=128)
    np.testing.assert_array_equal(out[:128], src[:128])
    np.testing.assert_array_equal(out[128:], np.float32(7.0))

    src = rng.standard_normal(1024).astype(np.float32)
    out = np.full(200, np.nan, np.float32)
    addptr_chain_k[(1,)](src, out, BLOCK=128)
    np.testing.assert_array_equal(out[7:135], src[np.arange(128) * 3 + 1])

    s = rng.standard_normal(1).astype(np.float32)
    row = rng.standard_normal(64).astype(np.float32)
    out = np.full((32, 64), np.nan, np.float32)
    splat_broadcast_math_k[(1,)](s, row, out, BM=32, BN=64)
    s64, row64 = s.astype(np.float64), row.astype(np.float64)
    ref = np.exp(s64[0]) + (s64[0] + np.exp(row64)[None, :] * 2)
    np.testing.assert_allclose(out, np.broadcast_to(ref, (32, 64)), rtol=1e-5, atol=1e-5)

    tile = rng.standard_normal((16, 64)).astype(np.float32)
    out = np.full(1, np.nan, np.float32)
    flat_sum_k[(1,)](tile, out, BM=16, BN=64)
    bound = 4 * np.finfo(np.float32).eps * np.abs(tile).sum()  # fp32 summation error
    np.testing.assert_allclose(out[0], tile.astype(np.float64).sum(), rtol=0, atol=bound)

    batches = rng.standard_normal((3, 16, 32)).astype(np.float32)
    out = np.full((3, 16, 32), np.nan, np.float32)
    batched_descriptor_k[(3,)](batches, out, 3, 16, 32, BM=16, BN=32)
    np.testing.assert_array_equal(out, batches * 2)
