"""Layouts of trans/join/split/reshape inferred from the operand's (passes/shape_layouts.py):
every element stays with the lane and warp that held it (checked with the owner arrays of
``workbench.layouts.ownership`` against numpy's transpose/stack/reshape, on random blocked
layouts), and the compiled ttgir of the shape-op kernels carries Triton 3.6's layouts with no
conversion before the op."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.layouts import BlockedLayout
from workbench.layouts.ownership import ownership
from workbench.passes import shape_layouts as sl


def random_blocked(rng, rank: int, num_warps: int) -> tuple[BlockedLayout, tuple]:
    """A random blocked layout of ``rank`` dims and a power-of-two shape it covers exactly
    once or more (no replicated elements)."""
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


def owners(enc, shape):
    o = ownership(enc, shape)
    assert (o.copies == 1).all()
    return o.warp, o.lane


@pytest.mark.parametrize("rank", [2, 3])
def test_trans_keeps_every_element_in_its_thread(rank):
    rng = np.random.default_rng()
    for _ in range(20):
        enc, shape = random_blocked(rng, rank, 4)
        perm = [int(p) for p in rng.permutation(rank)]
        dst = sl.permute(enc, perm)
        assert dst is not None and sl.permute(dst, list(np.argsort(perm))) == enc
        w, lane = owners(enc, shape)
        dw, dlane = owners(dst, tuple(shape[p] for p in perm))
        assert (np.transpose(w, perm) == dw).all() and (np.transpose(lane, perm) == dlane).all()


def test_join_and_split_keep_every_element_in_its_thread():
    rng = np.random.default_rng()
    for _ in range(20):
        enc, shape = random_blocked(rng, int(rng.integers(1, 3)), 8)
        joined = sl.join_layout(enc)
        w, lane = owners(enc, shape)
        jw, jlane = owners(joined, shape + (2,))
        assert (np.stack([w, w], -1) == jw).all() and (np.stack([lane, lane], -1) == jlane).all()
        assert sl.split_layout(joined) == enc


def test_split_needs_the_pair_in_one_thread():
    assert sl.split_layout(BlockedLayout((1, 1), (16, 2), (4, 1), (1, 0))) is None
    fix = sl.split_operand_layout((256,), 4)
    assert fix == BlockedLayout((1, 2), (32, 1), (4, 1), (1, 0))
    assert sl.split_layout(fix) == BlockedLayout((1,), (32,), (4,), (0,))


def test_reshape_keeps_every_element_in_its_thread_or_says_none():
    rng = np.random.default_rng()
    found = 0
    for _ in range(60):
        enc, shape = random_blocked(rng, int(rng.integers(1, 3)), 4)
        enc = BlockedLayout(enc.size_per_thread, enc.threads_per_warp, enc.warps_per_cta,
                            tuple(range(len(shape) - 1, -1, -1)))
        n = int(np.prod(shape))
        k = int(rng.integers(0, int(np.log2(n)) + 1))
        dst_shape = (1 << k, n >> k) if rng.integers(0, 2) else (n,)
        dst = sl.reshape_layout(enc, shape, dst_shape)
        if dst is None:
            continue
        found += 1
        w, lane = owners(enc, shape)
        dw, dlane = owners(dst, dst_shape)
        assert (w.reshape(dst_shape) == dw).all() and (lane.reshape(dst_shape) == dlane).all()
    assert found > 10


def test_reshape_of_the_1d_load_is_triton_s_2d_layout():
    # Triton 3.6 prints these two for reshape_sum_k in tests/fidelity (4 warps)
    src = BlockedLayout((4,), (32,), (4,), (0,))
    assert sl.reshape_layout(src, (1024,), (16, 64)) == \
        BlockedLayout((1, 4), (2, 16), (4, 1), (1, 0))
    # a repeat between lane bits has no blocked form
    assert sl.reshape_layout(BlockedLayout((1, 1), (4, 8), (4, 1), (1, 0)), (16, 16),
                             (256,)) is None


@wb.jit
def _trans_k(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(out_ptr + rn[:, None] * BM + rm[None, :], tl.trans(x))


@wb.jit
def _join_k(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    j = tl.join(tl.load(a_ptr + offs), tl.load(b_ptr + offs))
    tl.store(out_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :], j)


def _ttgir_lines(ck, op):
    return [x for x in ck.asm["ttgir"].splitlines() if op in x]


def test_no_conversion_before_trans_or_join():
    ck = wb.compile(_trans_k, "*fp32:16", "*fp32:16", target="cuda:80", BM=64, BN=64)
    (trans,) = _ttgir_lines(ck, "tt.trans")
    operand = trans.split("tt.trans ")[1].split()[0]
    assert "ttg.convert_layout" not in "".join(
        x for x in ck.asm["ttgir"].splitlines() if x.strip().startswith(operand + " ="))
    assert len(_ttgir_lines(ck, "ttg.convert_layout")) == 1  # after the trans, as Triton
    ck = wb.compile(_join_k, "*fp32:16", "*fp32:16", "*fp32:16", target="cuda:90", BLOCK=256)
    assert len(_ttgir_lines(ck, "ttg.convert_layout")) == 1


@pytest.mark.parametrize("interpret", ["1", "0"])
def test_shape_kernels_still_compute_numpy_results(interpret, monkeypatch):
    monkeypatch.setenv("WORKBENCH_INTERPRET", interpret)  # the interpreter, else the CPU backend
    rng = np.random.default_rng()
    x = rng.standard_normal((64, 64)).astype(np.float32)
    out = np.full((64, 64), np.nan, np.float32)
    _trans_k[(1,)](x, out, BM=64, BN=64)
    np.testing.assert_array_equal(out, x.T)
    a, b = (rng.standard_normal(256).astype(np.float32) for _ in range(2))
    j = np.full((256, 2), np.nan, np.float32)
    _join_k[(1,)](a, b, j, BLOCK=256)
    np.testing.assert_array_equal(j, np.stack([a, b], -1))
