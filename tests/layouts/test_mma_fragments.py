"""MMA fragments against the PTX ISA figures, written from the PTX formulas (not our code).

PTX ISA 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point type" and
9.7.14.5.10 (m16n8k32, 8-bit integer); 9.7.15.5.1 wgmma D fragments. groupID = lane >> 2,
threadID_in_group = lane % 4.
"""
import numpy as np
import pytest

from workbench.layouts import DotOperandLayout, MmaLayout, ownership, to_linear


def ptx_c_m16n8k16():
    # c0..c3 (fp32 accumulator): row = groupID (+8 for c2, c3); col = tig*2 + (i & 1)
    out = {}
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(4):
            out[(lane, i)] = (g + (8 if i >= 2 else 0), t * 2 + (i & 1))
    return out


def ptx_a_m16n8k16():
    # a0..a7 (f16): row = groupID for a0,a1,a4,a5 else groupID+8; col = tig*2 + (i&1) (+8 for i>=4)
    out = {}
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(8):
            row = g if i in (0, 1, 4, 5) else g + 8
            col = t * 2 + (i & 1) + (8 if i >= 4 else 0)
            out[(lane, i)] = (row, col)
    return out


def ptx_b_m16n8k16():
    # b0..b3 (f16): row(k) = tig*2 + (i&1) (+8 for i>=2); col(n) = groupID
    out = {}
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(4):
            out[(lane, i)] = (t * 2 + (i & 1) + (8 if i >= 2 else 0), g)
    return out


def ptx_a_m16n8k32_s8():
    # a0..a15 (s8): row = groupID for a0..a3, a8..a11 else +8; col = tig*4 + (i&3) (+16 for i>=8)
    out = {}
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(16):
            row = g + (8 if (i // 4) % 2 else 0)
            col = t * 4 + (i & 3) + (16 if i >= 8 else 0)
            out[(lane, i)] = (row, col)
    return out


def layout_table(layout, shape):
    ll = to_linear(layout, shape)
    return {(lane, r): ll.apply(register=r, lane=lane)
            for lane in range(32) for r in range(ll.in_dim_size("register"))}


MMA1 = MmaLayout(2, (1, 1), (16, 8))


def test_accumulator_m16n8k16_one_warp():
    assert layout_table(MMA1, (16, 8)) == ptx_c_m16n8k16()


def test_accumulator_ownership_arrays_match_ptx_figure():
    own = ownership(MMA1, (16, 8))
    for (lane, i), (row, col) in ptx_c_m16n8k16().items():
        assert own.lane[row, col] == lane and own.register[row, col] == i
    assert (own.copies == 1).all() and (own.warp == 0).all()


def test_a_fragment_m16n8k16():
    assert layout_table(DotOperandLayout(0, MMA1, 2), (16, 16)) == ptx_a_m16n8k16()


def test_b_fragment_m16n8k16():
    assert layout_table(DotOperandLayout(1, MMA1, 2), (16, 8)) == ptx_b_m16n8k16()


def test_a_fragment_m16n8k32_int8_kwidth4():
    assert layout_table(DotOperandLayout(0, MMA1, 4), (16, 32)) == ptx_a_m16n8k32_s8()


def test_accumulator_warps_tile_row_major_and_repeat_n_first():
    # warpsPerCTA [2, 2]: warp 1 is to the right (N), warp 2 below (M); the 32x32 tile then
    # repeats the 32x16 CTA tile along N in registers 4..7.
    mma = MmaLayout(2, (2, 2), (16, 8))
    own = ownership(mma, (32, 32))
    c = ptx_c_m16n8k16()
    for w in range(4):
        wm, wn = w // 2, w % 2
        for rep in range(2):
            for (lane, i), (row, col) in c.items():
                r, cc = row + 16 * wm, col + 8 * wn + 16 * rep
                got = (own.warp[r, cc], own.lane[r, cc], own.register[r, cc])
                assert got == (w, lane, i + 4 * rep)


def test_operand_a_broadcast_over_n_warps():
    mma = MmaLayout(2, (2, 2), (16, 8))
    ll = to_linear(DotOperandLayout(0, mma, 2), (32, 16))
    coords = ll.coords()
    # warps 0 and 1 (same M, different N) hold the same A elements
    assert np.array_equal(coords[0], coords[1])
    assert np.array_equal(coords[2][..., 0], coords[0][..., 0] + 16)
    assert (ownership(DotOperandLayout(0, mma, 2), (32, 16)).copies == 2).all()


def test_operand_b_broadcast_over_m_warps():
    mma = MmaLayout(2, (2, 2), (16, 8))
    ll = to_linear(DotOperandLayout(1, mma, 2), (16, 16))
    coords = ll.coords()
    assert np.array_equal(coords[0], coords[2])
    assert np.array_equal(coords[1][..., 1], coords[0][..., 1] + 8)


@pytest.mark.parametrize("n", [16, 64, 128])
def test_wgmma_accumulator_v3(n):
    # PTX 9.7.15.5.1: D fragment of m64nNk16, warp w of the warp group owns rows 16w..16w+15;
    # d_i: row = 16w + groupID + 8*((i >> 1) & 1), col = 8*(i >> 2) + 2*tig + (i & 1).
    mma = MmaLayout(3, (4, 1), (16, n, 16))
    ll = to_linear(mma, (64, n))
    assert ll.in_dim_size("register") == n // 2
    for w in range(4):
        for lane in range(32):
            g, t = lane >> 2, lane % 4
            for i in range(n // 2):
                exp = (16 * w + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1))
                assert ll.apply(register=i, lane=lane, warp=w) == exp


def test_wgmma_8_warps_stack_along_m():
    # the sm_90 matmul of the reference IR: warpsPerCTA [8, 1], instrShape [16, 128, 16]
    mma = MmaLayout(3, (8, 1), (16, 128, 16))
    own = ownership(mma, (128, 128))
    assert np.array_equal(own.warp[:, 0], np.arange(128) // 16)
    assert (own.copies == 1).all()


def test_v3_register_a_operand():
    mma = MmaLayout(3, (4, 1), (16, 64, 16))
    ll = to_linear(DotOperandLayout(0, mma, 2), (64, 16))
    tab = {(lane, r): ll.apply(register=r, lane=lane) for lane in range(32) for r in range(8)}
    assert tab == ptx_a_m16n8k16()
    assert ll.apply(warp=1) == (16, 0)
