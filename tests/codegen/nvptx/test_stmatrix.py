"""stmatrix (PTX ISA 9.7.9.17, sm_90) where Triton 3.6 uses it: the source side of a planned
conversion and a ttg.local_alloc whose register layout fits. The instruction's rule is
simulated from the ISA (lane t gives row t % 8 of matrix t // 8; thread T puts word T % 4 of
row T // 4, or with .trans column T // 4 of rows 2 (T % 4) + e) against the buffer each
element must land in; then the PTX of small kernels (forms, counts, ptxas), beside Triton."""
import re
import sys
from pathlib import Path

import pytest

import workbench as wb
import workbench.language as tl
from workbench.codegen.nvptx.cvt_lower import address_map, side
from workbench.codegen.nvptx.cvt_stmatrix import matrix_store
from workbench.codegen.nvptx.cvt_swizzle import deposit, flat_of, plan_conversion
from workbench.codegen.nvptx.local_stmatrix import offsets_of
from workbench.codegen.nvptx.smem_access import swizzle_offset_py
from workbench.codegen.nvptx.stmatrix import lane_offset, plan_store
from workbench.layouts import parse

sys.path.insert(0, str(Path(__file__).parent))
from test_cvt_swizzle import BLK, MMA2, MMA3, _tl  # noqa: E402

MMA3_41 = MMA3.format(w="4, 1")
MMA2_22 = MMA2.format(w="2, 2")
STM_PAIRS = [  # (source, destination, shape, bits, warps, (form, x) Triton's plan gives)
    (MMA3_41, BLK.format(s="8, 1", t="8, 4", w="1, 4", o="0, 1"), (64, 64), 16, 4, (2, 4)),
    (MMA3_41, BLK.format(s="8, 1", t="8, 4", w="4, 1", o="0, 1"), (64, 64), 16, 4, (2, 2)),
    (MMA3_41, BLK.format(s="8, 1", t="32, 1", w="4, 1", o="0, 1"), (64, 64), 16, 4, (1, 2)),
    (MMA3_41, BLK.format(s="4, 1", t="4, 8", w="1, 4", o="0, 1"), (64, 64), 16, 4, (1, 4)),
    (MMA3_41, BLK.format(s="8, 1", t="32, 1", w="2, 2", o="0, 1"), (64, 64), 32, 4, (1, 4)),
    (MMA2_22, BLK.format(s="8, 1", t="1, 32", w="1, 4", o="0, 1"), (16, 16), 16, 4, (2, 1)),
    (MMA2_22, BLK.format(s="1, 8", t="8, 4", w="1, 4", o="0, 1"), (16, 16), 32, 4, (1, 1)),
]


def _hardware_rows(m, warp: int, off: int) -> list:
    """Row address (element offset) each lane gives for an instruction at offset ``off``."""
    return [lane_offset(m, t, warp) ^ off for t in range(32)]


def _stored(m, warp: int):
    """{(thread, register position): element offset} as the instructions place them."""
    out = {}
    for off, words in m.instrs:
        rows = _hardware_rows(m, warp, off)
        for j, elems in enumerate(words):
            for T in range(32):
                for e, p in enumerate(elems):
                    if m.trans:
                        o = rows[8 * j + 2 * (T % 4) + e] + T // 4
                    else:
                        o = rows[8 * j + T // 4] + (T % 4) * len(elems) + e
                    out[(T, p)] = o
    return out


@pytest.mark.parametrize("src,dst,shape,bits,nw,form", STM_PAIRS)
def test_stmatrix_puts_every_register_in_its_slot(src, dst, shape, bits, nw, form):
    ts, td = _tl(src, shape), _tl(dst, shape)
    plan = plan_conversion(flat_of(ts)[0], flat_of(td)[0], bits, 90)
    assert plan.instr[0] == form[0]
    cs = matrix_store(side(ts, plan, bits // 8), plan, bits)
    assert cs is not None and cs.m.x == form[1]
    offs, rnds = address_map(ts, plan, bits // 8, nw)  # where st.shared would put each
    tile = (1 << plan.tile_bits) - 1
    for w in range(nw):
        got = _stored(cs.m, w)
        for rnd, sel in cs.rounds.items():
            for T in range(32):
                for p in {p for (t, p) in got if t == T}:
                    bits_r = deposit(p, cs.tile_pos) | sel
                    r = sum(1 << k for i, k in enumerate(cs.kept) if bits_r >> i & 1)
                    assert rnds[w, T, r] == rnd
                    assert got[(T, p)] == offs[w, T, r] & tile, (w, T, r)


def test_every_form_is_exercised():
    forms = set()
    for src, dst, shape, bits, _nw, _f in STM_PAIRS:
        ts, td = _tl(src, shape), _tl(dst, shape)
        plan = plan_conversion(flat_of(ts)[0], flat_of(td)[0], bits, 90)
        forms.add((plan.instr[0], matrix_store(side(ts, plan, bits // 8), plan, bits).m.x))
    assert forms == {(1, 1), (1, 2), (1, 4), (2, 1), (2, 2), (2, 4)}


NVMMA128 = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, " \
    "elementBitWidth = 16}>"
SWZ = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"


@pytest.mark.parametrize("reg,shared,shape,want", [
    (MMA3_41, NVMMA128, (64, 64), (False, 4)),      # the wgmma accumulator, TMA-store buffer
    (MMA3_41, SWZ, (64, 64), (False, 4)),
    (BLK.format(s="1, 8", t="4, 8", w="4, 1", o="1, 0"), NVMMA128, (64, 64), None),
])
def test_local_alloc_rows(reg, shared, shape, want):
    rl, enc = _tl(reg, shape), parse(shared)
    kept, imgs, lanes, warps = offsets_of(rl, enc, shape)
    m = next((m for tr in (False, True) if (m := plan_store(imgs, lanes, warps, 16, tr))), None)
    if want is None:
        assert m is None
        return
    assert (m.trans, m.x) == want
    for w in range(4):
        got = _stored(m, w)
        coords = rl.coords(w, 0)
        for (T, p), o in got.items():
            c = rl.coords(w, T)[deposit(p, kept)]
            assert o == swizzle_offset_py(enc, shape, c), (w, T, p, coords[0])


# --- PTX of small kernels -------------------------------------------------------------------
@wb.jit
def dot_store_t_k(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a, b).to(tl.float16)
    tl.store(c_ptr + rm[:, None] + rn[None, :] * BM, c)   # c stored column-major


@wb.jit
def dot_tma_store_k(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr,
                    BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c_d = tl.make_tensor_descriptor(c_ptr, [BM, BN], [BN, 1], [BM, BN])
    c_d.store([0, 0], tl.dot(a, b).to(tl.float16))


@wb.jit
def dot_chain_b_k(a_ptr, b_ptr, x_ptr, c_ptr, BM: tl.constexpr, BK: tl.constexpr):
    # the first result is the second dot's B operand: a local_alloc of the accumulator
    r = tl.arange(0, BM)
    k = tl.arange(0, BK)
    a = tl.load(a_ptr + r[:, None] * BK + k[None, :])
    b = tl.load(b_ptr + k[:, None] * BM + r[None, :])
    x = tl.load(x_ptr + r[:, None] * BM + r[None, :])
    c = tl.dot(a, b).to(tl.float16)
    tl.store(c_ptr + r[:, None] * BM + r[None, :], tl.dot(x, c))


@wb.jit
def transpose_k(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(out_ptr + rn[:, None] * BM + rm[None, :], tl.trans(x))


SIG = ("*fp16:16", "*fp16:16", "*fp16:16")
MM = {"BM": 64, "BN": 64, "BK": 32}
STM = r"\b(stmatrix\.sync\.aligned\.[\w.]+)"


def _forms(ptx: str, pattern: str = STM) -> dict:
    names = re.findall(pattern, ptx)
    return {n: names.count(n) for n in set(names)}


@pytest.mark.parametrize("kernel,warps,want", [
    (dot_store_t_k, 8, {"stmatrix.sync.aligned.m8n8.x4.trans.shared.b16": 2}),
    (dot_tma_store_k, 4, {"stmatrix.sync.aligned.m8n8.x4.shared.b16": 4}),
])
def test_ptx_forms(kernel, warps, want):
    ptx = wb.compile(kernel, *SIG, target="cuda:90", num_warps=warps, **MM).asm["ptx"]
    assert _forms(ptx) == want


def test_fp32_transpose_uses_32_bit_stmatrix():
    # a 128 x 16 fp32 tile with 4 warps: Triton 3.6 plans stmatrix (plain, one element a word)
    ptx = wb.compile(transpose_k, "*fp32:16", "*fp32:16", target="cuda:90", num_warps=4,
                     BM=128, BN=16).asm["ptx"]
    assert _forms(ptx) == {"stmatrix.sync.aligned.m8n8.x4.shared.b16": 4}


def test_no_stmatrix_before_sm90():
    ptx80 = wb.compile(dot_store_t_k, *SIG, target="cuda:80", **MM).asm["ptx"]
    assert not _forms(ptx80)   # PTX ISA: stmatrix requires sm_90


def test_ptxas_assembles_stmatrix():
    from workbench.backends.nvidia_tools import assemble, find_tool
    ptxas = find_tool("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed (the sass extra)")
    for kernel in (dot_store_t_k, dot_tma_store_k):
        ptx = wb.compile(kernel, *SIG, target="cuda:90", **MM).asm["ptx"]
        cubin, _ = assemble(ptx, 90, ptxas)
        assert cubin


CHAIN = (("*fp16:16",) * 3 + ("*fp32:16",), {"BM": 64, "BK": 32})


@pytest.mark.parametrize("kernel,warps,sig,cx", [(dot_store_t_k, 4, SIG, MM),
                                                 (dot_tma_store_k, 8, SIG, MM),
                                                 (dot_chain_b_k, 4, *CHAIN)])
def test_stmatrix_as_triton(kernel, warps, sig, cx):
    pytest.importorskip("triton", reason="comparing with Triton needs Triton 3.6 (the extra)")
    from workbench.runtime.compare import compare
    c = compare(kernel, *sig, target="cuda:90", num_warps=warps, **cx)
    matrix = r"\b((?:ld|st)matrix\.sync\.aligned\.[\w.]+)"
    assert _forms(c.ours["ptx"], matrix) == _forms(c.theirs["ptx"], matrix)
    assert _forms(c.theirs["ptx"])   # Triton does use stmatrix here
