"""triton-nvidia-tma-lowering on cuda:90: the ttgir of host-descriptor kernels is Triton
3.6's (the expected op lines below are Triton's ttgir for the same kernels, value names
aside), the descriptor encodings and tensor-map metadata are Triton's, the TMA boxes land
where the ``#ttg.nvmma_shared`` layout puts their elements (a model of the TMA unit's
swizzle), and kernels TMA cannot serve, or ``cuda_tma=False``, keep the pointer lowering."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.codegen.nvptx.smem_access import nvmma_offset_py
from workbench.ir.types import MemDescType
from workbench.layouts.encodings import NVMMASharedLayout
from workbench.passes.tma_lowering import box_origin, descriptor_encoding, tma_block_shape
from workbench.tools.tensor_descriptor import TensorDescriptor


def op_lines(ir: str) -> list:
    """Op lines with value names as ``%v``, locations, barriers and offsets dropped."""
    out = []
    for line in ir.splitlines():
        line = re.sub(r"\s*loc\(.*\)$", "", line.strip())
        line = re.sub(r" ?\{allocation\.offset = \d+ : i32\}", "", line)
        line = re.sub(r"allocation\.offset = \d+ : i32, ", "", line)
        if line.startswith("gpu.barrier"):
            continue
        out.append(re.sub(r"%[\w#]+", "%v", line))
    return out


@wb.jit
def copy_plus_one(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    t = in_desc.load([pid_m * BM, pid_n * BN])
    out_desc.store([pid_m * BM, pid_n * BN], t + 1)


@wb.jit
def tma_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


# Triton 3.6.0's ttgir of copy_plus_one (fp32 [32, 64] blocks, sm_90, 4 warps)
TRITON_COPY = """\
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
%v = ttg.local_alloc : () -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
%v = ttg.local_alloc : () -> !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.init_barrier %v, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.barrier_expect %v, 8192, %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<32x64xf32, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
ttng.wait_barrier %v, %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.inval_barrier %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
%v = ttg.local_load %v : !ttg.memdesc<32x64xf32, #shared, #smem, mutable> -> tensor<32x64xf32, #blocked>
%v = arith.addf %v, %v : tensor<32x64xf32, #blocked>
%v = ttg.local_alloc %v : (tensor<32x64xf32, #blocked>) -> !ttg.memdesc<32x64xf32, #shared, #smem>
ttng.fence_async_shared {bCluster = false}
ttng.async_tma_copy_local_to_global %v[%v, %v] %v : !tt.tensordesc<tensor<32x64xf32, #shared>>, !ttg.memdesc<32x64xf32, #shared, #smem>
ttng.async_tma_store_wait {pendings = 0 : i32}
"""  # noqa: E501

# Triton 3.6.0's ttgir of tma_matmul (fp16, 128x128x64 tiles; the loads and the store)
TRITON_MATMUL = """\
%v = ttg.local_alloc : () -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
ttng.barrier_expect %v, 16384, %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<128x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<64x128xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
%v = ttg.local_alloc %v : (tensor<128x128xf16, #mma>) -> !ttg.memdesc<128x128xf16, #shared, #smem>
ttng.async_tma_copy_local_to_global %v[%v, %v] %v : !tt.tensordesc<tensor<128x128xf16, #shared>>, !ttg.memdesc<128x128xf16, #shared, #smem>
"""  # noqa: E501

# Triton 3.6.0's tensordesc_meta of the two kernels (its launcher's tensor-map parameters)
TRITON_COPY_META = [{"swizzle": 3, "elem_size": 4, "elem_type": 7, "block_size": [32, 32]}] * 2
TRITON_MATMUL_META = [{"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [128, 64]},
                      {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [64, 64]},
                      {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [128, 64]}]


def _copy_kernel(**opts):
    x = np.zeros((64, 128), np.float32)
    d = TensorDescriptor.from_tensor(x, [32, 64])
    return wb.compile(copy_plus_one, d, d, BM=32, BN=64, target="cuda:90", **opts)


def test_copy_ttgir_is_tritons():
    k = _copy_kernel()
    lines = op_lines(k.asm["ttgir"])
    for want in TRITON_COPY.splitlines():
        assert want in lines, want
    assert not any("tt.descriptor" in ln for ln in lines)
    assert "@copy_plus_one(%in_desc: !tt.tensordesc<tensor<32x64xf32, #shared>>" in \
        k.asm["ttgir"]
    assert k.extra["tensordesc_meta"] == TRITON_COPY_META
    assert k.extra["param_kinds"] == ["tma", "i32", "i32", "i64", "i64"] * 2


def test_matmul_ttgir_reads_the_tma_buffers_in_wgmma():
    a = TensorDescriptor.from_tensor(np.zeros((256, 256), np.float16), [128, 64])
    b = TensorDescriptor.from_tensor(np.zeros((256, 256), np.float16), [64, 128])
    c = TensorDescriptor.from_tensor(np.zeros((256, 256), np.float16), [128, 128])
    # one stage: the loads stay in the loop (tests/passes/test_pipeline_tma.py: pipelined)
    k = wb.compile(tma_matmul, a, b, c, 256, BM=128, BN=128, BK=64, target="cuda:90",
                   num_stages=1)
    text = k.asm["ttgir"]
    lines = op_lines(text)
    for want in TRITON_MATMUL.splitlines():
        assert want in lines, want
    assert k.extra["tensordesc_meta"] == TRITON_MATMUL_META
    # wgmma reads the mutable buffers the TMA copies filled: no local_load/local_alloc pair
    dot = next(ln for ln in lines if ln.startswith("%v = ttng.warp_group_dot "))
    assert "!ttg.memdesc<128x64xf16, #shared, #smem, mutable> * " \
           "!ttg.memdesc<64x128xf16, #shared, #smem, mutable>" in dot
    assert "ttg.local_load" not in text


@pytest.mark.parametrize("shape, dtype, swizzle", [
    ((32, 64), "f32", 128), ((128, 64), "f16", 128), ((64, 32), "f16", 64),
    ((16, 16), "f16", 32), ((4, 64), "f16", 0), ((1, 8), "f32", 0), ((64, 8), "f32", 32),
    ((256, 32), "i8", 32), ((16, 128), "f64", 128),
])
def test_descriptor_encoding_is_tritons_rule(shape, dtype, swizzle):
    from workbench.ir import types as irt
    elem = {"f32": irt.f32, "f16": irt.f16, "i8": irt.i8, "f64": irt.f64}[dtype]
    enc = descriptor_encoding(irt.TensorType(shape, elem))
    assert enc == NVMMASharedLayout(swizzle, False, elem.width)


def _tma_swizzle(byte_addr: int, swizzle: int) -> int:
    """The TMA unit's shared-memory swizzle (CUDA driver API, CUtensorMapSwizzle): the 16-byte
    chunk index (address bits 4..) is XORed with the 128-byte row index (bits 7..), over
    swizzle / 16 chunks."""
    if not swizzle:
        return byte_addr
    mask = swizzle // 16 - 1
    return byte_addr ^ (((byte_addr >> 7) & mask) << 4)


@pytest.mark.parametrize("shape, bits, swizzle", [
    ((32, 64), 32, 128), ((64, 128), 16, 128), ((512, 64), 16, 128), ((64, 64), 16, 64),
    ((32, 32), 16, 32), ((8, 256), 8, 128), ((256, 16), 32, 64), ((512, 16), 16, 0),
    ((16, 32), 64, 128),
])
def test_tma_boxes_land_where_the_nvmma_layout_puts_their_elements(shape, bits, swizzle):
    rng = np.random.default_rng()
    enc = NVMMASharedLayout(swizzle, False, bits)
    box = tma_block_shape(enc, shape)
    counts = [shape[0] // box[0], shape[1] // box[1]]
    eb = bits // 8
    seen = set()
    for m in range(counts[0] * counts[1]):
        r0, c0 = box_origin(m, counts, box)
        start = nvmma_offset_py(enc, shape, (r0, c0)) * eb
        assert start % 128 == 0  # TMA destinations are 128-byte aligned
        for _ in range(64):  # random elements of the box, as the TMA unit writes them
            r, c = int(rng.integers(box[0])), int(rng.integers(box[1]))
            lin = r * box[1] * eb + c * eb
            got = start + _tma_swizzle(lin, swizzle)
            assert got == nvmma_offset_py(enc, shape, (r0 + r, c0 + c)) * eb
        seen.add((r0, c0))
    assert len(seen) == counts[0] * counts[1]


@wb.jit
def device_gather(p, idx_ptr, n, B: tl.constexpr):
    d = tl.make_tensor_descriptor(p, shape=[n, n], strides=[n, 1], block_shape=[1, B])
    rows = tl.load(idx_ptr + tl.arange(0, 8))
    d.scatter(d.gather(rows, 0) * 2, rows, 0)


@wb.jit
def dev_copy(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    o = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    o.store([m, n], d.load([m, n]) + 1)


# Triton 3.6.0's ttgir of dev_copy (*fp32, *fp32, i32, i32; BM=32, BN=64): the tensor map
# of the first descriptor, built in global scratch
TRITON_DEV = """\
%v = ttg.global_scratch_alloc {alignment = 128 : i32, nbytes = 128 : i32} : !tt.ptr<i8>
ttng.tensormap_create %v, %v, [%v, %v], [%v, %v], [%v], [%v, %v] {elem_type = 7 : i32, fill_mode = 0 : i32, interleave_layout = 0 : i32, swizzle_mode = 3 : i32} : (!tt.ptr<i8>, !tt.ptr<f32>, i32, i32, i32, i32, i64, i32, i32) -> ()
ttng.tensormap_fenceproxy_acquire %v : !tt.ptr<i8>
%v = ttng.reinterpret_tensor_descriptor %v : !tt.ptr<i8> to !tt.tensordesc<tensor<32x64xf32, #shared>>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<32x64xf32, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
ttng.async_tma_copy_local_to_global %v[%v, %v] %v : !tt.tensordesc<tensor<32x64xf32, #shared>>, !ttg.memdesc<32x64xf32, #shared, #smem>
"""  # noqa: E501

# Triton 3.6.0's PTX of dev_copy, the first tensor map: what each field is set to
TRITON_DEV_PTX = """\
tensormap.replace.tile.global_address.shared::cta.b1024.b64 %r
tensormap.replace.tile.rank.shared::cta.b1024.b32 1
tensormap.replace.tile.box_dim.shared::cta.b1024.b32 0 %r
tensormap.replace.tile.box_dim.shared::cta.b1024.b32 1 %r
tensormap.replace.tile.global_dim.shared::cta.b1024.b32 0 %r
tensormap.replace.tile.global_dim.shared::cta.b1024.b32 1 %r
tensormap.replace.tile.global_stride.shared::cta.b1024.b64 0 %r
tensormap.replace.tile.element_stride.shared::cta.b1024.b32 0 %r
tensormap.replace.tile.element_stride.shared::cta.b1024.b32 1 %r
tensormap.replace.tile.elemtype.shared::cta.b1024.b32 7
tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 0
tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 3
tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 0
tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned 128
fence.proxy.tensormap::generic.acquire.gpu 128"""


def _fields(ptx: str) -> list:
    out = []
    for m in re.finditer(r"(tensormap\.[\w.:]+|fence\.proxy\.tensormap[\w.:]+)\s+([^;]*);", ptx):
        args = re.sub(r"\[[^\]]*\],?\s*", "", m.group(2))
        args = re.sub(r"%[a-z]+\d+", "%r", args).replace(",", "")
        args = re.sub(r"0x([0-9a-fA-F]+)", lambda h: str(int(h.group(1), 16)), args)
        out.append(f"{m.group(1)} {args}".strip())
    return out


def test_device_descriptors_build_tensor_maps_in_global_scratch():
    k = wb.compile(dev_copy, "*fp32:16", "*fp32:16", "i32", "i32", BM=32, BN=64,
                   target="cuda:90")
    lines = op_lines(k.asm["ttgir"])
    for want in TRITON_DEV.splitlines():
        assert want in lines, want
    assert k.extra["global_scratch_size"] == 256  # Triton's global_scratch_size
    assert k.extra["param_kinds"] == ["ptr", "ptr", "i32", "i32", "ptr"]
    ptx = k.asm["ptx"]
    fields = _fields(ptx)
    # the %rd register of the 64-bit fields is printed as %r by _fields
    assert fields[:15] == TRITON_DEV_PTX.splitlines()
    assert len(fields) == 30  # two tensor maps
    assert ".version 8.7" in ptx  # tensormap.replace needs PTX ISA 8.3 (Triton emits 8.7)
    assert ptx.count("cp.async.bulk.tensor.2d") == 2


def test_the_switch_keeps_the_pointer_lowering(monkeypatch):
    off = _copy_kernel(cuda_tma=False)
    assert "ttng.async_tma" not in off.asm["ttgir"] and "tt.load" in off.asm["ttgir"]
    assert "cp.async.bulk.tensor" not in off.asm["ptx"]
    assert any("TMA is off" in n for n in off.extra["notes"])
    monkeypatch.setenv("WORKBENCH_CUDA_TMA", "0")
    assert "cp.async.bulk.tensor" not in _copy_kernel().asm["ptx"]


def test_kernels_tma_cannot_serve_keep_the_pointer_lowering():
    k = wb.compile(dev_copy, "*fp32", "*fp32:16", "i32", "i32", BM=32, BN=64,
                   target="cuda:90")  # a base not known 16-byte aligned
    assert "tensormap" not in k.asm["ttgir"] and any("16-byte" in n for n in k.extra["notes"])
    k = wb.compile(device_gather, "*fp32:16", "*i32", "i32", B=32, target="cuda:90")
    assert "ttng.async_tma" not in k.asm["ttgir"] and "tt.load" in k.asm["ttgir"]
    assert any("tt.descriptor_gather" in n for n in k.extra["notes"])
    # a rank-1 host descriptor
    x = np.zeros(256, np.float32)

    @wb.jit
    def one_d(d, B: tl.constexpr):
        d.store([0], d.load([0]) + 1)

    k1 = wb.compile(one_d, TensorDescriptor.from_tensor(x, [64]), B=64, target="cuda:90")
    assert any("rank 1" in n for n in k1.extra["notes"])
    assert k1.extra["tensordesc_meta"] == []


def test_the_ttgir_parses_back_and_prints_the_same():
    from workbench.ir.parser import parse_module
    from workbench.ir.printer import print_module
    text = _copy_kernel().asm["ttgir"]
    once = print_module(parse_module(text))
    assert print_module(parse_module(once)) == once
    mems = [v.type for op in parse_module(once).walk() for v in op.results
            if isinstance(v.type, MemDescType)]
    assert any(t.shape == (1,) for t in mems)  # the mbarrier


# Triton 3.6.0's PTX of copy_plus_one: its TMA, mbarrier, fence and barrier instructions in
# order (registers as %r). The workbench leaves out the bar.sync Triton puts after the last
# bulk wait, at the kernel's end.
TRITON_COPY_PTX = """\
mbarrier.init.shared::cta.b64 [%r], 1
bar.sync
mbarrier.arrive.expect_tx.shared.b64 _, [%r], 8192
bar.sync
elect.sync
cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
bar.sync
mbarrier.try_wait.parity.shared.b64 complete, [%r], %r
bar.sync
mbarrier.inval.shared::cta.b64 [%r]
bar.sync
fence.proxy.async.shared::cta
bar.sync
elect.sync
cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
cp.async.bulk.commit_group
cp.async.bulk.wait_group.read
bar.sync"""


def _skeleton(ptx: str) -> list:
    pat = (r"(mbarrier\.[a-z_.:0-9]+[^;]*|cp\.async\.bulk[a-z0-9_.:]*|bar\.sync|"
           r"fence\.proxy[a-z.:]*|elect\.sync)")
    return [re.sub(r"%[a-z]+[0-9]+", "%r", m) for m in re.findall(pat, ptx)]


def test_copy_ptx_follows_tritons_instruction_sequence():
    ptx = _copy_kernel().asm["ptx"]
    want = TRITON_COPY_PTX.splitlines()[:-1]
    # Triton's membar puts a bar.sync between each two mbarrier ops; the workbench keeps the
    # ones needed (tritongpu-insert-barriers): after the init (before the copies of other
    # warps use the mbarrier) and before the inval, not between init and expect (one
    # thread), nor between the copy and the wait, nor after the wait (every thread waits)
    for drop in (1, 6):
        assert want[drop] == "bar.sync"
    want = [w for j, w in enumerate(want) if j not in (1, 6)]
    assert _skeleton(ptx) == want
    head = ptx.split("{")[0]
    assert head.count(".param .align 64 .b8 copy_plus_one_param_") == 2
    assert "cvta.param.u64" in ptx  # the tensor map is read in place, in param space
    # box 1 of 2 (32 fp32 columns) goes 32 columns right and 4096 bytes further in shared
    # memory: one instruction per warp 0/1, the predicate tid < 64
    assert "setp.lt.u32" in ptx and ", 64;" in ptx


@pytest.mark.parametrize("dtype, block, meta, shared", [
    # Triton 3.6.0's tensordesc_meta and shared bytes of copy_plus_one for these blocks
    (np.float16, (512, 16), {"swizzle": 1, "elem_size": 2, "elem_type": 6,
                             "block_size": [256, 16]}, 16392),
    (np.int8, (16, 256), {"swizzle": 3, "elem_size": 1, "elem_type": 0,
                          "block_size": [16, 128]}, 4104),
    (np.float32, (4, 64), {"swizzle": 0, "elem_size": 4, "elem_type": 7,
                           "block_size": [4, 64]}, 1032),
])
def test_box_split_and_shared_bytes_are_tritons(dtype, block, meta, shared):
    x = np.zeros((block[0] * 2, block[1] * 2), dtype)
    d = TensorDescriptor.from_tensor(x, list(block))
    k = wb.compile(copy_plus_one, d, d, BM=block[0], BN=block[1], target="cuda:90")
    assert k.extra["tensordesc_meta"] == [meta, meta]
    assert k.metadata.shared == shared
    assert k.asm["ptx"].count("cp.async.bulk.tensor.2d") == 2  # 2 boxes: one instruction each


def _tma_lines(ttgir: str) -> list:
    keep = ("ttng.", "ttg.global_scratch_alloc", "%v = ttng.")
    return sorted(ln for ln in op_lines(ttgir) if ln.startswith(keep))


@pytest.mark.parametrize("which", ["host", "device"])
def test_tma_ops_match_real_tritons(which):
    pytest.importorskip("triton", reason="real Triton 3.6 (the oracle) is not installed")
    from workbench.runtime.triton_oracle import triton_compile
    if which == "host":
        x = np.zeros((64, 128), np.float32)
        d = TensorDescriptor.from_tensor(x, [32, 64])
        ours = wb.compile(copy_plus_one, d, d, BM=32, BN=64, target="cuda:90")
        entries, consts, fn = ["tensordesc<fp32[32, 64]>"] * 2, {"BM": 32, "BN": 64}, \
            copy_plus_one
    else:
        ours = wb.compile(dev_copy, "*fp32:16", "*fp32:16", "i32", "i32", BM=32, BN=64,
                          target="cuda:90")
        entries, consts, fn = ["*fp32:16", "*fp32:16", "i32", "i32"], {"BM": 32, "BN": 64}, \
            dev_copy
    if which == "device":
        theirs = triton_compile(fn, entries, "cuda:90", 4, 3, consts)
        text, shared = theirs["asm"]["ttgir"], theirs["shared"]
    else:  # the oracle's signature entries have no descriptors: compile the same way here
        import triton
        import triton.language as ttl
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        from workbench.runtime.triton_oracle import _Translator
        src = ASTSource(_Translator(triton, ttl).function(fn),
                        signature={"in_desc": entries[0], "out_desc": entries[1],
                                   "BM": "constexpr", "BN": "constexpr"}, constexprs=consts)
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32))
        text, shared = k.asm["ttgir"], int(k.metadata.shared)
        assert [dict(m, fp4_padded=False) for m in ours.extra["tensordesc_meta"]] == \
            k.metadata.tensordesc_meta
    assert _tma_lines(ours.asm["ttgir"]) == _tma_lines(text)
    assert ours.metadata.shared == shared
