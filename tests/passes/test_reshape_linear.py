"""``tt.reshape`` of a layout with no blocked form gets a ``#ttg.linear`` layout that keeps
every element in its thread (Triton 3.6's ``inferReshapeOpEncoding`` fallback), so the
layout pass can carry a permuted load's layout back through a reshape instead of converting
the whole tensor through shared memory. Checked on random layouts (owner arrays against
numpy's reshape), on Triton's chained-reductions kernel (its shared memory, compared with
Triton's where installed) and by running that kernel's ttgir in the interpreter and on a GPU
against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.layouts import BlockedLayout
from workbench.layouts.ownership import ownership
from workbench.passes import shape_layouts as sl


def _random_blocked(rng, rank: int, num_warps: int):
    def split(total_log2):
        cuts = np.sort(rng.integers(0, total_log2 + 1, rank - 1))
        parts = np.diff(np.concatenate([[0], cuts, [total_log2]]))
        return tuple(int(1 << p) for p in parts)
    spt = tuple(int(1 << rng.integers(0, 3)) for _ in range(rank))
    tpw, wpc = split(5), split(int(np.log2(num_warps)))
    order = tuple(int(o) for o in rng.permutation(rank))
    shape = tuple(s * t * w * int(1 << rng.integers(0, 2))
                  for s, t, w in zip(spt, tpw, wpc, strict=True))
    return BlockedLayout(spt, tpw, wpc, order), shape


def _random_shape(rng, n: int) -> tuple:
    bits = int(np.log2(n))
    rank = int(rng.integers(1, 5))
    cuts = np.sort(rng.integers(0, bits + 1, rank - 1))
    return tuple(int(1 << p) for p in np.diff(np.concatenate([[0], cuts, [bits]])))


def test_reshape_linear_keeps_every_element_in_its_thread():
    rng = np.random.default_rng()
    for _ in range(60):
        enc, shape = _random_blocked(rng, int(rng.integers(1, 6)), 4)
        dst_shape = _random_shape(rng, int(np.prod(shape)))
        dst = sl.reshape_linear(enc, shape, dst_shape)
        assert dst is not None
        src_o, dst_o = ownership(enc, shape), ownership(dst, dst_shape)
        for field in ("warp", "lane", "copies"):
            assert (getattr(src_o, field).reshape(dst_shape) == getattr(dst_o, field)).all()
        # and back: the linear layout of the original shape again
        back = sl.reshape_linear(dst, dst_shape, shape)
        assert (ownership(back, shape).lane == src_o.lane).all()


def test_blocked_is_kept_where_one_exists():
    src = BlockedLayout((4,), (32,), (4,), (0,))
    op_shapes = ((1024,), (16, 64))
    assert sl._reshape(src, *op_shapes) == sl.reshape_layout(src, *op_shapes)
    odd = BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0))   # a repeat between lane bits
    assert sl.reshape_layout(odd, (16, 16), (256,)) is None
    assert sl._reshape(odd, (16, 16), (256,)) is not None


@wb.jit
def chained_sums(In, Out, D0: tl.constexpr, D1: tl.constexpr, D2: tl.constexpr,
                 D3: tl.constexpr, D4: tl.constexpr, P0: tl.constexpr, P1: tl.constexpr,
                 P2: tl.constexpr, P3: tl.constexpr, P4: tl.constexpr, R0: tl.constexpr,
                 R1: tl.constexpr, R2: tl.constexpr):
    """A 5-D int32 tile loaded through a reshaped arange, permuted, then summed over three
    dims one after the other (Triton's test_chained_reductions)."""
    idx = tl.arange(0, D0 * D1 * D2 * D3 * D4).reshape(D0, D1, D2, D3, D4)
    vals = tl.permute(tl.load(In + idx), [P0, P1, P2, P3, P4])
    r = tl.sum(tl.sum(tl.sum(vals, R0), R1), R2)
    tl.store(Out + tl.arange(0, r.shape[0] * r.shape[1]).reshape(r.shape), r)


CASES = [((4, 32, 32, 4, 2), (2, 1, 0, 3, 4), (3, 1, 0)),
         ((8, 2, 32, 4, 16), (4, 0, 1, 3, 2), (0, 2, 0))]


def _cx(shape, perm, red) -> dict:
    cx = {f"D{i}": d for i, d in enumerate(shape)}
    cx.update({f"P{i}": p for i, p in enumerate(perm)})
    cx.update({f"R{i}": r for i, r in enumerate(red)})
    return cx


def _want(x, perm, red):
    r = np.transpose(x, perm)
    for d in red:
        r = r.sum(axis=d)
    return r


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
@pytest.mark.parametrize("shape,perm,red", CASES)
def test_chained_reductions_need_no_big_conversion(shape, perm, red, target):
    c = wb.compile(chained_sums, "*i32", "*i32", target=target, num_warps=4,
                   **_cx(shape, perm, red))
    ttgir = c.asm["ttgir"]
    five_d = "x".join(map(str, shape))
    assert not [x for x in ttgir.splitlines() if "ttg.convert_layout" in x and five_d in x]
    assert "#ttg.linear" in ttgir
    # the reductions' scratch only: far below the 32768 x 8-byte pointer tile (256 KiB)
    assert c.metadata.shared <= 4096


@pytest.mark.parametrize("shape,perm,red", CASES)
def test_chained_reductions_as_triton(shape, perm, red):
    pytest.importorskip("triton", reason="comparing with Triton needs Triton 3.6 (the extra)")
    from workbench.runtime.compare import compare
    c = compare(chained_sums, "*i32", "*i32", target="cuda:90", num_warps=4,
                **_cx(shape, perm, red))
    assert c.ours_shared <= c.theirs_shared, c.summary()
    assert c.agree["layouts"] and c.agree["op_layouts"] and c.agree["converts"], c.summary()


@pytest.mark.parametrize("shape,perm,red", CASES)
def test_chained_reductions_ttgir_in_the_interpreter(shape, perm, red):
    from tests.passes.pipeline_kernels import pipelined_ttgir, run_ttgir
    module = pipelined_ttgir(chained_sums, ("*i32", "*i32"), stages=1, num_warps=4,
                             target="cuda:90", **_cx(shape, perm, red))
    x = np.random.default_rng().integers(0, 1000, shape).astype(np.int32)
    want = _want(x, perm, red)
    out = np.full(want.shape, -1, np.int32)
    run_ttgir(module, (1, 1, 1), [x, out])
    np.testing.assert_array_equal(out, want)


@pytest.mark.gpu
@pytest.mark.parametrize("shape,perm,red", CASES)
def test_chained_reductions_gpu(shape, perm, red):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng().integers(0, 1000, shape).astype(np.int32)
    want = _want(x, perm, red)
    out = torch.full(want.shape, -1, dtype=torch.int32, device="cuda")
    chained_sums[(1,)](torch.from_numpy(x).cuda(), out, num_warps=4, **_cx(shape, perm, red))
    np.testing.assert_array_equal(out.cpu().numpy(), want)
