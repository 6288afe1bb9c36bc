"""The conversion buffer of ttg.convert_layout (Triton 3.6's optimalSwizzling): every element
goes through one shared slot, the store and the load agree on it, and rounds stay inside the
scratch; simulated per warp, lane and register from the layouts, without a GPU."""
from types import SimpleNamespace

import numpy as np
import pytest

from workbench.codegen.nvptx.cvt_ldmatrix import issues, lane_address, matrix_load
from workbench.codegen.nvptx.cvt_lower import address_map, side, warp_sync
from workbench.codegen.nvptx.cvt_swizzle import (
    complement,
    flat_of,
    intersection,
    nullspace,
    plan_conversion,
    rref,
)
from workbench.codegen.nvptx.threads import thread_layout
from workbench.layouts import parse

MMA2 = "#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = [{w}], " \
    "instrShape = [16, 8]}}>"
MMA3 = "#ttg.nvidia_mma<{{versionMajor = 3, versionMinor = 0, warpsPerCTA = [{w}], " \
    "instrShape = [16, 64, 16]}}>"
BLK = "#ttg.blocked<{{sizePerThread = [{s}], threadsPerWarp = [{t}], warpsPerCTA = [{w}], " \
    "order = [{o}]}}>"

PAIRS = [  # (source, destination, shape, element bits, warps)
    (MMA2.format(w="2, 2"), BLK.format(s="1, 8", t="4, 8", w="4, 1", o="1, 0"), (64, 64), 16, 4),
    (MMA2.format(w="2, 2"), BLK.format(s="1, 4", t="2, 16", w="4, 1", o="1, 0"), (64, 64), 32, 4),
    (MMA3.format(w="4, 1"), BLK.format(s="1, 8", t="4, 8", w="4, 1", o="1, 0"), (64, 64), 16, 4),
    (MMA3.format(w="4, 2"), BLK.format(s="1, 8", t="2, 16", w="8, 1", o="1, 0"), (128, 128), 16,
     8),
    (BLK.format(s="1, 4", t="4, 8", w="4, 1", o="1, 0"),
     BLK.format(s="4, 1", t="8, 4", w="1, 4", o="0, 1"), (64, 64), 32, 4),
    (BLK.format(s="1, 1", t="1, 32", w="4, 1", o="1, 0"),
     BLK.format(s="1, 1", t="32, 1", w="1, 4", o="0, 1"), (32, 128), 8, 4),
    (BLK.format(s="1, 2", t="8, 4", w="2, 2", o="1, 0"),
     BLK.format(s="2, 1", t="4, 8", w="2, 2", o="0, 1"), (16, 16), 64, 4),
]


def _tl(enc, shape):
    return thread_layout(SimpleNamespace(encoding=parse(enc), shape=shape))


def _slots(tl, plan, eb, nw):
    """{tensor coordinate: (round, offset)} from the simulated addresses of every thread."""
    offs, rnds = address_map(tl, plan, eb, nw)
    got = {}
    for w in range(nw):
        for ln in range(32):
            for r, c in enumerate(tl.coords(w, ln)):
                slot = (int(rnds[w, ln, r]), int(offs[w, ln, r]))
                assert got.setdefault(c, slot) == slot, "one element, two slots"
    return got


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("src,dst,shape,bits,nw", PAIRS)
def test_store_and_load_meet_in_one_slot(src, dst, shape, bits, nw, arch):
    ts, td = _tl(src, shape), _tl(dst, shape)
    fs, _ = flat_of(ts)
    fd, _ = flat_of(td)
    plan = plan_conversion(fs, fd, bits, arch)
    eb = bits // 8
    put, get = _slots(ts, plan, eb, nw), _slots(td, plan, eb, nw)
    numel = shape[0] * shape[1]
    assert len(put) == numel and put == get
    tile = 1 << plan.tile_bits
    slots = list(put.values())
    assert len(set(slots)) == numel  # a bijection: no two elements share a slot in a round
    assert all(0 <= o < tile and 0 <= r < (1 << len(plan.reps)) for r, o in slots)
    # the vectors: each access moves s.vec consecutive slots, aligned to its size
    for tl in (ts, td):
        s = side(tl, plan, eb)
        assert s.vec * eb <= 16
        offs, _ = address_map(tl, plan, eb, nw)
        firsts = offs[..., [_first_of_vector(s, r) for r in range(tl.num_regs)]]
        assert np.all(firsts % s.vec == 0)


def _first_of_vector(s, reg):
    # the register of the same vector holding element 0: clear the vector's register bits
    for i in s.vec_regs:
        reg &= ~(1 << s.kept[i])
    return reg


def test_epilogue_vectors_as_triton():
    """An mma.sync fp16 accumulator stored for a 64x64 epilogue (Triton 3.6 on sm_80: 8-byte
    st.shared.v2.b32 and ld.shared.v2.b32, 4 halves each), moved in one round."""
    ts = _tl(MMA2.format(w="2, 2"), (64, 64))
    td = _tl(BLK.format(s="1, 8", t="4, 8", w="4, 1", o="1, 0"), (64, 64))
    plan = plan_conversion(flat_of(ts)[0], flat_of(td)[0], 16, 80)
    assert side(ts, plan, 2).vec == 4 and side(td, plan, 2).vec == 4
    assert plan.reps == () and plan.tile_bits == 12


def test_gf2_helpers():
    rng = np.random.default_rng()
    dim = 8
    vecs = [int(x) for x in rng.integers(1, 1 << dim, size=4)]
    red = rref(vecs, dim)
    for n in nullspace(vecs, dim):  # orthogonal to every vector
        assert all(bin(n & v).count("1") % 2 == 0 for v in vecs)
    assert len(red) + len(nullspace(vecs, dim)) == dim
    assert len(complement(red, dim)) == dim - len(red)
    assert intersection([1, 4, 16], [16, 2, 4], dim) == [4, 16]


def test_warp_barrier_only_when_no_data_crosses_warps():
    a = flat_of(_tl(BLK.format(s="1, 4", t="4, 8", w="4, 1", o="1, 0"), (64, 64)))[0]
    b = flat_of(_tl(BLK.format(s="4, 1", t="8, 4", w="1, 4", o="0, 1"), (64, 64)))[0]
    c = flat_of(_tl(BLK.format(s="1, 1", t="4, 8", w="4, 1", o="1, 0"), (64, 64)))[0]
    assert not warp_sync(a, b)
    assert warp_sync(a, c)


# ldmatrix: the hardware's rule (PTX ISA 9.7.9.16) against the layouts -----------------------
LDM_PAIRS = PAIRS + [  # destinations whose registers ldmatrix can fill
    (MMA3.format(w="4, 1"), BLK.format(s="1, 2", t="8, 4", w="4, 1", o="1, 0"), (64, 64), 16, 4),
    (BLK.format(s="1, 8", t="4, 8", w="4, 1", o="1, 0"),
     BLK.format(s="2, 1", t="4, 8", w="1, 4", o="0, 1"), (64, 64), 16, 4),
    (BLK.format(s="1, 8", t="4, 8", w="4, 1", o="1, 0"),
     BLK.format(s="2, 1", t="4, 8", w="2, 2", o="0, 1"), (64, 32), 16, 4),
    (BLK.format(s="1, 8", t="4, 8", w="4, 1", o="1, 0"),
     BLK.format(s="1, 1", t="4, 8", w="1, 4", o="1, 0"), (32, 64), 32, 4),
]


def _hardware_ldmatrix(m, plan, nw):
    """{(warp, lane, register): (round, offset)} as ldmatrix delivers it: lane t gives row
    t % 8 of matrix t // 8; thread T gets word T % 4 of row T // 4 (plain) or column T // 4 of
    rows 2 (T % 4) + e (.trans)."""
    mask = 0
    for v in m.row_imgs + m.mat_imgs + m.warp_img:
        mask |= v
    out = {}
    for w in range(nw):
        for off, words in issues(m):
            rnd, off = off >> plan.tile_bits, off & ((1 << plan.tile_bits) - 1)
            rows = [(lane_address(m, t, w) ^ (off & mask)) + (off & ~mask) for t in range(32)]
            for j, elems in enumerate(words):
                for T in range(32):
                    for e, r in enumerate(elems):
                        if m.trans:
                            o = rows[8 * j + 2 * (T % 4) + e] + T // 4
                        else:
                            o = rows[8 * j + T // 4] + (T % 4) * m.per_word + e
                        out[(w, T, r)] = (rnd, o)
    return out


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("src,dst,shape,bits,nw", LDM_PAIRS)
def test_ldmatrix_rows_deliver_the_destination_registers(src, dst, shape, bits, nw, arch):
    ts, td = _tl(src, shape), _tl(dst, shape)
    plan = plan_conversion(flat_of(ts)[0], flat_of(td)[0], bits, arch)
    m = matrix_load(side(td, plan, bits // 8), plan.instr[1] == 2, bits, plan.tile_bits) \
        if plan.instr[1] else None
    if m is None:
        pytest.skip("Triton's plan loads this destination with ld.shared")
    put = _slots(ts, plan, bits // 8, nw)
    got = _hardware_ldmatrix(m, plan, nw)
    kept = 0
    for i in range(td.num_regs.bit_length() - 1):
        if any(td.regs[1 << i]):
            kept |= 1 << i
    for w in range(nw):
        for T in range(32):
            for r, c in enumerate(td.coords(w, T)):
                assert got[(w, T, r & kept)] == put[c], (w, T, r, c)


def test_ldmatrix_forms_are_planned():
    """Both forms occur among the cases above (so the simulation is exercised)."""
    forms = set()
    for src, dst, shape, bits, _nw in LDM_PAIRS:
        ts, td = _tl(src, shape), _tl(dst, shape)
        plan = plan_conversion(flat_of(ts)[0], flat_of(td)[0], bits, 90)
        if plan.instr[1] and matrix_load(side(td, plan, bits // 8), plan.instr[1] == 2,
                                         bits, plan.tile_bits) is not None:
            forms.add(plan.instr[1])
    assert forms == {1, 2}
