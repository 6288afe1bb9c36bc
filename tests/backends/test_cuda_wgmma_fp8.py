"""fp8 ``tl.dot`` (float8e4nv = e4m3, float8e5 = e5m2) on cuda:90 as Triton 3.6 compiles it:
MMA v3 with ``instrShape = [16, N, 32]``, both operands K-major in ``#ttg.nvmma_shared``
buffers of 8-bit elements, ``wgmma.mma_async...k32.f32.e4m3.e4m3`` (PTX ISA 9.7.15.5.2), and
``max_num_imprecise_acc`` splitting the accumulation (a fresh partial sum every that many K
elements, added into the fp32 accumulator with ``add.f32``; 2**30 by default on sm_90, so no
adds). Below 32 the dot leaves wgmma (fp16-widened mma.sync), as on sm_80. Compile-only tests
run here (ptxas assembles where installed); the ``gpu``-marked ones run the kernels on an
H100/H200 against numpy."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends import nvidia_tools

PTXAS = nvidia_tools.find_tool("ptxas")
ML = {"fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2"}
PTX_NAME = {"fp8e4nv": "e4m3", "fp8e5": "e5m2"}


@wb.jit
def fp8_mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr,
           BN: tl.constexpr, BK: tl.constexpr, IMPRECISE: tl.constexpr):
    """C (fp32, M x N) = A (fp8, M x K) @ B (fp8, K x N); M, N, K multiples of the block."""
    pid = tl.program_id(0)
    blocks_m = tl.cdiv(M, BM)
    rm = (pid % blocks_m) * BM + tl.arange(0, BM)
    rn = (pid // blocks_m) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    pb = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in tl.range(0, tl.cdiv(K, BK), num_stages=3):
        acc = tl.dot(tl.load(pa), tl.load(pb), acc=acc, max_num_imprecise_acc=IMPRECISE)
        pa += BK * sak
        pb += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc)


@wb.jit
def fp8_dot_reg_a(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  IMPRECISE: tl.constexpr):
    """One dot whose A is computed in registers (A * 2, exact in fp8): wgmma's register A."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    a = (a.to(tl.float32) * 2.0).to(a.dtype)
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a, b, max_num_imprecise_acc=IMPRECISE)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)


@wb.jit
def fp8_chain(q_ptr, k_ptr, v_ptr, s_ptr, o_ptr, BM: tl.constexpr, BN: tl.constexpr,
              D: tl.constexpr):
    """S = Q @ K^T (fp32, stored), P = S in fp8 (rounded in the accumulator's registers),
    O = P @ V: attention's chained dots without the softmax; K stored N x D, V N x D."""
    rm, rn, rd = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    kt = tl.load(k_ptr + rn[None, :] * D + rd[:, None])
    s = tl.dot(q, kt)
    tl.store(s_ptr + rm[:, None] * BN + rn[None, :], s)
    v = tl.load(v_ptr + rn[:, None] * D + rd[None, :])
    o = tl.dot(s.to(v.dtype), v)
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], o)


@wb.jit
def fp8_dot16(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """C (fp16) = A @ B with ``out_dtype = tl.float16`` (an fp16 accumulator)."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=tl.float16))


@wb.jit
def fp8_mm16(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
             BK: tl.constexpr):
    """C (fp16) = A (M x K) @ B, B stored N x K: a K loop accumulating in fp16."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = a_ptr + rm[:, None] * K + rk[None, :]
    pb = b_ptr + rn[None, :] * K + rk[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(pa), tl.load(pb), acc, out_dtype=tl.float16)
        pa += BK
        pb += BK
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _sig(fa, fb=None, contiguous=False):
    """fp8_mm's signature: run-time strides (as Triton's test), or unit inner strides with
    16-divisible pointers (``contiguous``: A row-major, B row-major)."""
    fb = fb or fa
    if not contiguous:
        return [f"*{fa}", f"*{fb}", "*fp32"] + ["i32"] * 9
    return [f"*{fa}:16", f"*{fb}:16", "*fp32:16", "i32", "i32", "i32:16", "i32:16", 1,
            "i32:16", 1, "i32:16", 1]


def _compile(fmt, bm, bn, bk, imprecise, nw=8, **kw):
    return wb.compile(fp8_mm, *kw.pop("sig", _sig(fmt)), target="cuda:90", num_warps=nw,
                      BM=bm, BN=bn, BK=bk, IMPRECISE=imprecise, **kw)


def _wgmmas(ptx, fmt, fmt_b=None):
    e, f = PTX_NAME[fmt], PTX_NAME[fmt_b or fmt]
    return re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k32\.f32\.{e}\.{f} "
                      rf"\{{[^}}]*\}}, (%rd\d+|\{{[^}}]*\}}), %rd\d+, (0|1), 1, 1;", ptx)


# layouts and PTX ----------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp8e4nv", "fp8e5"])
def test_fp8_dot_takes_fp8_wgmma(fmt):
    c = _compile(fmt, 128, 256, 128, None)
    elem = {"fp8e4nv": "f8E4M3FN", "fp8e5": "f8E5M2"}[fmt]
    dot = next(x for x in c.asm["ttir"].splitlines() if "tt.dot" in x)
    assert "maxNumImpreciseAcc = 1073741824" in dot  # Triton's sm_90 default, 2**30
    ttgir = c.asm["ttgir"]
    assert "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], " \
           "instrShape = [16, 256, 32]}>" in ttgir
    a_sh = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 8}>"
    b_sh = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 8}>"
    assert a_sh in ttgir and b_sh in ttgir  # both K-major whatever the registers' order
    wg = next(x for x in ttgir.splitlines() if "ttng.warp_group_dot " in x)
    assert f"!ttg.memdesc<128x128x{elem}" in wg and f"!ttg.memdesc<128x256x{elem}" in wg
    assert "tt.fp_to_fp" not in ttgir
    ptx = c.asm["ptx"]
    found = _wgmmas(ptx, fmt)
    assert len(found) == 4 and {n for n, _, _ in found} == {"256"}  # K = 128: four k32 steps
    assert ptx.count("add.f32") == 0  # 2**30 > K: the wgmmas accumulate in place
    assert "cvt.rn.f16x2" not in ptx  # no widening to fp16
    if PTXAS:
        assert "cubin" in c.asm, c.extra["notes"]


# Triton's test_dot_max_num_imprecise_acc: num_warps 8, its blocks and low_precision_acc values
@pytest.mark.parametrize("fmt", ["fp8e4nv", "fp8e5"])
@pytest.mark.parametrize("bm,bn,bk", [(128, 256, 128), (64, 64, 64)])
@pytest.mark.parametrize("low", [32, 64, 128])
def test_max_num_imprecise_acc_adds_partial_sums(fmt, bm, bn, bk, low):
    imprecise = low if low <= bk else None
    c = _compile(fmt, bm, bn, bk, imprecise)
    ptx = c.asm["ptx"]
    # one add per accumulator register (bm * bn / 256 threads) per run of `low` K elements
    assert ptx.count("add.f32") == (bm * bn) // (32 * 8) * (bk // low)
    found = _wgmmas(ptx, fmt)
    fresh = [x for x in found if x[2] == "0"]  # scale-d 0: a run's first wgmma
    assert found and len(found) % (bk // 32) == 0
    if imprecise is None:
        assert not fresh
    else:
        assert len(fresh) * low == len(found) * 32
    wg = next(x for x in c.asm["ttgir"].splitlines() if "ttng.warp_group_dot " in x)
    assert f"maxNumImpreciseAcc = {imprecise or 2 ** 30} : i32" in wg
    if PTXAS:
        assert "cubin" in c.asm, c.extra["notes"]


@pytest.mark.parametrize("imprecise", [0, 16])
def test_imprecise_below_32_leaves_wgmma_with_a_note(imprecise):
    c = _compile("fp8e4nv", 64, 64, 64, imprecise)
    assert "versionMajor = 2" in c.asm["ttgir"] and "tt.fp_to_fp" in c.asm["ttgir"]
    ptx = c.asm["ptx"]
    assert "wgmma.mma_async" not in ptx and "mma.sync.aligned.m16n8k16" in ptx
    assert any("not wgmma" in n and f"max_num_imprecise_acc = {imprecise} is below 32" in n
               for n in c.extra["notes"]), c.extra["notes"]


def test_forced_mma_v2_widens_fp8():
    c = _compile("fp8e5", 128, 128, 64, 32, cuda_mma="v2")
    assert "versionMajor = 2" in c.asm["ttgir"] and "tt.fp_to_fp" in c.asm["ttgir"]
    assert "wgmma.mma_async" not in c.asm["ptx"] and "add.f32" not in c.asm["ptx"]
    assert any("WORKBENCH_CUDA_MMA=v2" in n for n in c.extra["notes"]), c.extra["notes"]


@pytest.mark.parametrize("arch", [80, 90])
def test_fp16_accumulator(arch):
    """fp8 with ``out_dtype = tl.float16``: on sm_90 wgmma's f16-accumulator form (two fp16 per
    accumulator register), on sm_80 widened to fp16 for mma.sync accumulating in fp16 (as
    Triton's MMA v2 after its promotion)."""
    c = wb.compile(fp8_dot16, "*fp8e5:16", "*fp8e5:16", "*fp16:16", target=f"cuda:{arch}",
                   num_warps=4, M=64, N=64, K=64)
    ptx = c.asm["ptx"]
    if arch == 80:
        assert "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16" in ptx
    else:
        assert "tt.fp_to_fp" not in c.asm["ttgir"]
        found = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k32\.f16\.e5m2\.e5m2 "
                           r"\{((?:%r\d+,){15}%r\d+)\}, %rd\d+, %rd\d+, (0|1), 1, 1;", ptx)
        assert [x[1] for x in found] == ["0", "1"]  # zero accumulator: the first starts fresh
    if PTXAS:
        assert "cubin" in c.asm, c.extra["notes"]


def test_fp16_accumulator_in_a_pipelined_loop():
    c = wb.compile(fp8_mm16, "*fp8e4nv:16", "*fp8e4nv:16", "*fp16:16", "i32", "i32", "i32:16",
                   target="cuda:90", num_warps=4, BM=128, BN=128, BK=64)
    ttgir, ptx = c.asm["ttgir"], c.asm["ptx"]
    assert "isAsync = true" in ttgir and "ttng.warp_group_dot_wait" in ttgir
    assert re.search(r"tensor<128x128xf16, #mma>", ttgir)
    assert "wgmma.mma_async.sync.aligned.m64n128k32.f16.e4m3.e4m3" in ptx
    # an fp16 accumulator is not left in flight (Triton's asyncLaunchDots keeps only fp32
    # ones): the dot is waited for at once, in the loop, and nothing is pending after it
    assert re.search(r"ttng\.warp_group_dot_wait %\w+, %\w+, %\w+ \{pendings = 0 : i32\}",
                     ttgir)
    assert re.findall(r"wgmma\.wait_group\.sync\.aligned \d+", ptx) == \
        ["wgmma.wait_group.sync.aligned 0"]
    if PTXAS:
        assert "cubin" in c.asm and c.metadata.n_spills == 0, c.extra["notes"]


def test_mixed_formats_and_cuda80():
    c = _compile("fp8e4nv", 128, 128, 64, None, nw=4, sig=_sig("fp8e4nv", "fp8e5", True))
    found = _wgmmas(c.asm["ptx"], "fp8e4nv", "fp8e5")
    assert len(found) == 4 and {n for n, _, _ in found} == {"128"}  # 2 M reps x 2 k32 steps
    # sm_80 has no fp8 tensor-core dot: e5m2 is widened to fp16 for mma.sync, as before
    c80 = wb.compile(fp8_mm, *_sig("fp8e5", contiguous=True), target="cuda:80", num_warps=4,
                     BM=128, BN=128, BK=64, IMPRECISE=None)
    assert "tt.fp_to_fp" in c80.asm["ttgir"] and "wgmma.mma_async" not in c80.asm["ptx"]
    assert "maxNumImpreciseAcc" not in c80.asm["ttir"]  # the default is 0 off sm_90


def test_n_major_b_is_stored_k_major_without_cp_async():
    """B row-major (N contiguous in registers) is stored transposed into its K-major buffer;
    no thread holds 4 bytes consecutive in both, so (as Triton) only A is pipelined."""
    c = _compile("fp8e4nv", 128, 128, 64, 32, nw=4, sig=_sig("fp8e4nv", contiguous=True))
    ttgir = c.asm["ttgir"]
    copies = re.findall(r"ttg.async_copy_global_to_local .* -> <(\d+x\d+)xf8E4M3FN", ttgir)
    assert copies and set(copies) == {"128x64"}  # A's copies only
    assert re.search(r"tt.load .*tensor<64x128x!tt.ptr<f8E4M3FN>", ttgir)
    assert any("K-major" in n for n in c.extra["notes"]), c.extra["notes"]
    assert c.asm["ptx"].count("add.f32") == 128 * 128 // 128 * 2


def test_register_a_operand():
    def build(imprecise):
        return wb.compile(fp8_dot_reg_a, "*fp8e4nv:16", "*fp8e4nv:16", "*fp32:16",
                          target="cuda:90", num_warps=4, BM=64, BN=64, BK=64,
                          IMPRECISE=imprecise)
    c, whole = build(32), build(None)
    ttgir = c.asm["ttgir"]
    assert re.search(r"ttng.warp_group_dot %\w+, %\w+, %\w+ .*: tensor<64x64xf8E4M3FN, "
                     r"#ttg.dot_op<\{opIdx = 0, parent = #mma, kWidth = 4\}>>", ttgir)
    found = _wgmmas(c.asm["ptx"], "fp8e4nv")
    assert len(found) == 2 and all(a.startswith("{") and a.count("%r") == 4
                                   for _, a, _ in found)
    # a zero accumulator: the first run's sum is the result, the second one is added (A * 2
    # has adds of its own: LLVM makes x * 2.0 into x + x)
    assert c.asm["ptx"].count("add.f32") - whole.asm["ptx"].count("add.f32") == 64 * 64 // 128
    assert [x[2] for x in _wgmmas(whole.asm["ptx"], "fp8e4nv")] == ["0", "1"]
    if PTXAS:
        assert "cubin" in c.asm, c.extra["notes"]


@pytest.mark.parametrize("nw", [4, 8])
def test_chained_fp8_dots_convert_p_in_registers(nw):
    """fp8 attention's P: rounded to fp8 in the accumulator layout, then one
    ``ttg.convert_layout`` to ``#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>`` (as
    Triton's ttgir), the second wgmma's register A."""
    c = wb.compile(fp8_chain, *(["*fp8e5:16"] * 3 + ["*fp32:16"] * 2), target="cuda:90",
                   num_warps=nw, BM=16 * nw, BN=64, D=64)
    ttgir = c.asm["ttgir"]
    assert re.search(r"ttg.convert_layout %\S+ .*: tensor<\d+x64xf8E5M2, #mma> -> "
                     r"tensor<\d+x64xf8E5M2, #ttg.dot_op<\{opIdx = 0, parent = #mma, "
                     r"kWidth = 4\}>>", ttgir), ttgir
    assert "ttg.local_load" not in ttgir
    assert f"warpsPerCTA = [{nw}, 1], instrShape = [16, 64, 32]" in ttgir  # all along M
    found = _wgmmas(c.asm["ptx"], "fp8e5")
    assert sum(a.startswith("{") for _, a, _ in found) == 2  # P @ V: two k32 steps
    if PTXAS:
        assert "cubin" in c.asm, c.extra["notes"]


@pytest.mark.parametrize("fmt,bm,bn,bk,low", [("fp8e4nv", 128, 256, 128, 32),
                                             ("fp8e5", 64, 64, 64, None)])
def test_layouts_agree_with_triton(fmt, bm, bn, bk, low, tmp_path):
    pytest.importorskip("triton", reason="the comparison needs Triton 3.6 (the triton extra)")
    from workbench.runtime.compare import compare
    cmp = compare(fp8_mm, *_sig(fmt), target="cuda:90", num_warps=8, BM=bm, BN=bn, BK=bk,
                  IMPRECISE=low)
    assert cmp.agree["layouts"] and cmp.agree["op_layouts"] and cmp.agree["shared"], \
        cmp.summary()
    ours, theirs = cmp.ours["ptx"], cmp.theirs["ptx"]
    assert ours.count("add.f32") == theirs.count("add.f32")
    from tests.ir.test_triton_parses import _triton_parses
    _triton_parses(cmp.ours["ttgir"], tmp_path)  # Triton's parser reads our fp8 ttgir
    assert sorted(set(re.findall(r"wgmma\.mma_async\S+", ours))) == \
        sorted(set(re.findall(r"wgmma\.mma_async\S+", theirs)))


def test_triton_compiles_our_fp8_ttgir(tmp_path):
    """Triton 3.6 takes our ttgir (written to a ``.ttgir`` file) on to PTX with the same fp8
    wgmma forms and the same ``add.f32`` count as our PTX."""
    triton = pytest.importorskip("triton", reason="needs Triton 3.6 (the triton extra)")
    from triton.backends.compiler import GPUTarget
    c = _compile("fp8e4nv", 128, 256, 128, 32)
    path = tmp_path / "kernel.ttgir"
    path.write_text(c.asm["ttgir"])
    theirs = triton.compile(str(path), target=GPUTarget("cuda", 90, 32)).asm["ptx"]
    ours = c.asm["ptx"]
    assert theirs.count("add.f32") == ours.count("add.f32") == 128 * 256 // 256 * 4
    assert len(_wgmmas(theirs, "fp8e4nv")) == len(_wgmmas(ours, "fp8e4nv")) == 4


# the reference backends ---------------------------------------------------------------------
def _fp8_tiles(rng, fmt, shape):
    """Random finite fp8 values of both signs over several binades (ml_dtypes arrays)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = rng.standard_normal(shape) * 2.0 ** rng.integers(-3, 3, shape)
    return x.astype(np.float32).astype(getattr(ml_dtypes, ML[fmt]))


def _bound(a, b):
    """What fp32 accumulation of exact fp8 products may lose against float64: K rounding
    steps of 2**-24 of the running sums, bounded by the sum of |products|."""
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    return a.shape[1] * 2.0 ** -24 * mag + 1e-30


@pytest.mark.parametrize("fmt", ["fp8e4nv", "fp8e5"])
@pytest.mark.parametrize("imprecise", [None, 32])
def test_reference_backends_accumulate_in_fp32(backend, fmt, imprecise):
    rng = np.random.default_rng()
    M, N, K = 64, 64, 128
    a, b = _fp8_tiles(rng, fmt, (M, K)), _fp8_tiles(rng, fmt, (K, N))
    c = np.full((M, N), np.nan, np.float32)
    fp8_mm[(1,)](a, b, c, M, N, K, K, 1, N, 1, N, 1, BM=64, BN=64, BK=64,
                 IMPRECISE=imprecise)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert (np.abs(c - ref) <= _bound(a, b)).all()


# on the GPU ---------------------------------------------------------------------------------
# Hopper's fp8 wgmma adds each k32 step into its accumulator with fewer mantissa bits than
# fp32 (around 14 kept), so random real-valued data would need tolerances too loose to catch
# a misplaced element. Small integers (|a|, |b| <= 2, K <= 512: every partial sum is an
# integer below 2**11) are summed exactly by any accumulator of 12 bits or more, so these
# tests compare exactly; Triton's own case, below, keeps its values and tolerances.
def _int_tiles(rng, fmt, shape):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    return rng.integers(-2, 3, shape).astype(np.float32).astype(getattr(ml_dtypes, ML[fmt]))


def _device(torch, x, fmt):
    return torch.from_numpy(np.ascontiguousarray(x).view(np.uint8)).cuda().view(
        getattr(torch, ML[fmt]))


def _hopper():
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("fp8 wgmma needs sm_90")
    return torch


def _gpu_run(fmt, m, n, k, bm, bn, bk, nw, imprecise, b_n_major=True):
    torch = _hopper()
    rng = np.random.default_rng()
    a, b = _int_tiles(rng, fmt, (m, k)), _int_tiles(rng, fmt, (k, n))
    ad = _device(torch, a, fmt)
    if b_n_major:
        bd, sbk, sbn = _device(torch, b, fmt), n, 1
    else:  # stored N x K (K contiguous), read as K x N
        bd, sbk, sbn = _device(torch, b.T, fmt), 1, k
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    grid = ((m // bm) * (n // bn),)
    kern = fp8_mm[grid](ad, bd, c, m, n, k, k, 1, sbk, sbn, n, 1, BM=bm, BN=bn, BK=bk,
                        IMPRECISE=imprecise, num_warps=nw)
    torch.cuda.synchronize()
    return a, b, c.cpu().numpy(), kern


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["fp8e4nv", "fp8e5"])
@pytest.mark.parametrize("imprecise", [None, 32, 64])
@pytest.mark.parametrize("bm,bn,bk,nw,b_n_major", [(128, 128, 64, 4, True),
                                                   (128, 256, 128, 8, False),
                                                   (64, 64, 64, 4, False),
                                                   (64, 32, 32, 4, True)])
def test_fp8_wgmma_matmul_gpu(fmt, imprecise, bm, bn, bk, nw, b_n_major):
    if imprecise is not None and imprecise > bk:
        pytest.skip("max_num_imprecise_acc must not exceed the block's K")
    a, b, got, kern = _gpu_run(fmt, 256, 256, 512, bm, bn, bk, nw, imprecise, b_n_major)
    assert _wgmmas(kern.asm["ptx"], fmt)
    np.testing.assert_array_equal(got, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["fp8e4nv", "fp8e5"])
@pytest.mark.parametrize("imprecise", [0, 16])
def test_fp8_dot_below_32_gpu(fmt, imprecise):
    """mma.sync on fp16-widened operands: exact products, fp32 accumulation."""
    a, b, got, kern = _gpu_run(fmt, 128, 128, 256, 64, 64, 64, 4, imprecise)
    assert "wgmma.mma_async" not in kern.asm["ptx"]
    np.testing.assert_array_equal(got, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["fp8e4nv", "fp8e5"])
@pytest.mark.parametrize("nw", [4, 8])
def test_chained_fp8_dots_gpu(fmt, nw):
    """S = Q @ K^T exact (|q|, |k| <= 1: |S| <= 64), P = S rounded to fp8 by the kernel (to
    nearest even: ml_dtypes' rounding), O = P @ V exact (|O| <= 64 * 64 * 2 = 2**13, integer
    products)."""
    torch = _hopper()
    ml_dtypes = pytest.importorskip("ml_dtypes")
    mlt = getattr(ml_dtypes, ML[fmt])
    rng = np.random.default_rng()
    bm, bn, d = 16 * nw, 64, 64
    q, k = (rng.integers(-1, 2, shape).astype(np.float32).astype(mlt)
            for shape in ((bm, d), (bn, d)))
    v = _int_tiles(rng, fmt, (bn, d))
    s = torch.full((bm, bn), float("nan"), device="cuda", dtype=torch.float32)
    o = torch.full((bm, d), float("nan"), device="cuda", dtype=torch.float32)
    fp8_chain[(1,)](_device(torch, q, fmt), _device(torch, k, fmt), _device(torch, v, fmt), s,
                    o, BM=bm, BN=bn, D=d, num_warps=nw)
    torch.cuda.synchronize()
    got_s = s.cpu().numpy()
    np.testing.assert_array_equal(got_s, q.astype(np.float64) @ k.astype(np.float64).T)
    p = got_s.astype(mlt).astype(np.float64)
    np.testing.assert_array_equal(o.cpu().numpy(), p @ v.astype(np.float64))


@pytest.mark.gpu
@pytest.mark.parametrize("fmt,low", [("fp8e4nv", 32), ("fp8e4nv", 128), ("fp8e5", 64)])
def test_triton_imprecise_acc_case_gpu(fmt, low):
    """Triton's test_dot_max_num_imprecise_acc on Hopper: fp8 codes 20..39 (small positive
    values), M, N, K = 128, 256, 256, blocks 128 x 256 x 128, 8 warps, its tolerances and
    its add.f32 count."""
    torch = _hopper()
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng()
    m, n, k, bm, bn, bk = 128, 256, 256, 128, 256, 128
    codes_a = rng.integers(20, 40, (m, k)).astype(np.uint8)
    codes_b = rng.integers(20, 40, (k, n)).astype(np.uint8)
    mlt = getattr(ml_dtypes, ML[fmt])
    a, b = codes_a.view(mlt), codes_b.view(mlt)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    imprecise = low if low <= bk else None
    kern = fp8_mm[(1,)](_device(torch, a, fmt), _device(torch, b, fmt), c, m, n, k, k, 1, n,
                        1, n, 1, BM=bm, BN=bn, BK=bk, IMPRECISE=imprecise, num_warps=8)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    tol = 0.01 if fmt == "fp8e4nv" else 1e-3
    np.testing.assert_allclose(c.cpu().numpy(), ref, rtol=tol, atol=tol)
    assert kern.asm["ptx"].count("add.f32") == bm * bn // (32 * 8) * (bk // low)


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["fp8e4nv", "fp8e5"])
def test_fp16_accumulator_gpu(fmt):
    """Small integers: every fp16 partial sum (|sum| <= 64 * 4, then 256 * 4) is exact."""
    torch = pytest.importorskip("torch")
    if fmt == "fp8e4nv" and torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("float8e4nv needs sm_89 or later")
    rng = np.random.default_rng()
    a, b = _int_tiles(rng, fmt, (64, 64)), _int_tiles(rng, fmt, (64, 64))
    c = torch.full((64, 64), float("nan"), device="cuda", dtype=torch.float16)
    fp8_dot16[(1,)](_device(torch, a, fmt), _device(torch, b, fmt), c, M=64, N=64, K=64)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(c.cpu().numpy().astype(np.float64),
                                  a.astype(np.float64) @ b.astype(np.float64))
    m, n, k = 256, 256, 256
    a, b = _int_tiles(rng, fmt, (m, k)), _int_tiles(rng, fmt, (k, n))
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    fp8_mm16[(2, 2)](_device(torch, a, fmt), _device(torch, b.T, fmt), c, m, n, k, BM=128,
                     BN=128, BK=64, num_warps=4)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(c.cpu().numpy().astype(np.float64),
                                  a.astype(np.float64) @ b.astype(np.float64))
