"""Descriptor atomics (``desc.atomic_add`` ... ``atomic_xor``, ``tt.descriptor_reduce``) on
cuda:90 become TMA reductions as in Triton 3.6: ``ttg.local_alloc``, ``ttng.fence_async_shared``,
``ttng.async_tma_reduce <kind>`` and ``ttng.async_tma_store_wait``, then
``cp.reduce.async.bulk.tensor.2d.global.shared::cta.<kind>.bulk_group`` in PTX, which ptxas
accepts for every kind and dtype Triton's test sweeps, host and device descriptors. The ttgir,
run by the interpreter, reduces like numpy (signed and unsigned integers, float16/bfloat16
min/max, tiles clipped at the tensor's edge). float16/bfloat16 ``atomic_min``/``max`` exist only
with TMA: cuda:80, the CPU and the interpreter refuse them at the user's line, as Triton does,
and so does cuda:90 when the kernel cannot use TMA."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends import nvidia_tools
from workbench.backends.interp.compiler import compile_function
from workbench.backends.interp.launch import Launcher
from workbench.errors import CompilationError
from workbench.ir.core import functions
from workbench.ir.parser import parse_module
from workbench.tools.tensor_descriptor import TensorDescriptor

from .pipeline_kernels import parg
from .tma_reduce_kernels import reduce_k

PTXAS = nvidia_tools.find_tool("ptxas")
ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16

_SHORT = {np.float16: "fp16", BF16: "bf16", np.float32: "fp32", np.int32: "i32",
          np.uint32: "u32", np.int64: "i64", np.uint64: "u64"}
#: the kinds and dtypes Triton 3.6 accepts with native TMA (its test's
#: NATIVE_SUPPORTED_REDUCE_DTYPES, the dtypes of tma_dtypes)
NATIVE = [(k, d) for k, ds in {
    "add": (np.uint32, np.int32, np.float32, np.float16, BF16),
    "min": (np.uint32, np.int32, np.float16, BF16),
    "max": (np.uint32, np.int32, np.float16, BF16),
    "and": (np.uint32, np.int32), "or": (np.uint32, np.int32), "xor": (np.uint32, np.int32),
}.items() for d in ds]


def _compile(kind, dtype, host, mb=8, nb=32, target="cuda:90", **opts):
    s = _SHORT[dtype]
    desc = TensorDescriptor.from_tensor(np.zeros((2 * mb, 2 * nb), dtype), [mb, nb]) \
        if host else None
    return wb.compile(reduce_k, desc, f"*{s}:16", f"*{s}:16", "i32", "i32", "i32",
                      MB=mb, NB=nb, KIND=kind, target=target, **opts)


# Triton 3.6.0's ttgir of the reduction of Triton's test_tensor_descriptor_reduce kernel
# (min, float16, host descriptor, [8, 32] block, sm_90), value names and locations dropped
TRITON_MIN_F16 = """\
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>
%v = ttg.local_alloc %v : (tensor<8x32xf16, #blocked>) -> !ttg.memdesc<8x32xf16, #shared, #smem>
ttng.fence_async_shared {bCluster = false}
ttng.async_tma_reduce min, %v[%v, %v] %v : !tt.tensordesc<tensor<8x32xf16, #shared>>, !ttg.memdesc<8x32xf16, #shared, #smem>
ttng.async_tma_store_wait {pendings = 0 : i32}"""  # noqa: E501


def _op_lines(ir: str) -> list:
    out = []
    for line in ir.splitlines():
        line = re.sub(r"\s*loc\(.*\)$", "", line.strip())
        line = re.sub(r" ?\{allocation\.offset = \d+ : i32\}", "", line)
        line = re.sub(r"allocation\.offset = \d+ : i32, ", "", line)
        out.append(re.sub(r"%[\w#]+", "%v", line))
    return out


def test_reduce_ttgir_is_tritons():
    k = _compile("min", np.float16, True)
    lines = _op_lines(k.asm["ttgir"])
    want = TRITON_MIN_F16.splitlines()
    assert want[0] in lines
    i = lines.index(want[1])
    assert [ln for ln in lines[i:i + 5] if not ln.startswith("gpu.barrier")] == want[1:]
    assert "tt.atomic_rmw" not in k.asm["ttgir"] and not k.extra["notes"]
    # the tensor map Triton encodes for this descriptor: 64-byte swizzle, F16, one box
    assert k.extra["tensordesc_meta"] == [{"swizzle": 2, "elem_size": 2, "elem_type": 6,
                                           "block_size": [8, 32]}]


def _skeleton(ptx: str) -> list:
    pat = r"(cp\.[a-z.:0-9_]+|bar\.sync|fence\.proxy[a-z.:]*|elect\.sync|atom\.[a-z.0-9]+)"
    return re.findall(pat, ptx)


#: the block shapes of Triton's test_tensor_descriptor_reduce
BLOCKS = [(2, 16), (8, 16), (8, 32), (8, 128), (512, 32), (1, 1024)]


# every kind and dtype at one block; four of them (16-bit float min/max, both integer
# signednesses) at every block of Triton's test (the whole sweep, 228 compiles, passes too)
CASES = [(k, d, (8, 32)) for k, d in NATIVE] + \
    [(k, d, b) for b in BLOCKS if b != (8, 32)
     for k, d in (("min", np.float16), ("max", BF16), ("add", np.float32), ("min", np.uint32))]


@pytest.mark.parametrize("host", [True, False], ids=["host", "device"])
@pytest.mark.parametrize("kind, dtype, block", CASES,
                         ids=[f"{k}-{_SHORT[d]}-{b[0]}x{b[1]}" for k, d, b in CASES])
def test_ptx_reduces_with_tma_and_assembles(kind, dtype, host, block):
    k = _compile(kind, dtype, host, *block)
    ptx = k.asm["ptx"]
    tail = _skeleton(ptx)
    tail = tail[tail.index("fence.proxy.async.shared::cta"):]
    # Triton's sequence (it adds a bar.sync at the kernel's end)
    assert tail == ["fence.proxy.async.shared::cta", "bar.sync", "elect.sync",
                    f"cp.reduce.async.bulk.tensor.2d.global.shared::cta.{kind}.bulk_group",
                    "cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read"]
    assert f"ttng.async_tma_reduce {kind}," in k.asm["ttgir"]
    if host:  # the reduction's element type is the tensor map's: signed S32 for int32
        code = {np.uint32: 2, np.int32: 3, np.float32: 7, np.float16: 6, BF16: 9}[dtype]
        assert k.extra["tensordesc_meta"][0]["elem_type"] == code
    else:
        assert "tensormap.replace.tile.global_address" in ptx
        assert k.extra["global_scratch_size"] == 128
    assert ("cubin" in k.asm) == (PTXAS is not None)  # ptxas ran and accepted the PTX


@pytest.mark.slow
def test_every_case_of_tritons_sweep_reduces_with_tma_and_assembles():
    """All 228: NATIVE x host/device x Triton's 6 blocks (``-m slow``; about a minute)."""
    for kind, dtype in NATIVE:
        for host in (True, False):
            for block in BLOCKS:
                k = _compile(kind, dtype, host, *block)
                assert f"cp.reduce.async.bulk.tensor.2d.global.shared::cta.{kind}." in \
                    k.asm["ptx"] and not k.extra["notes"]
                assert ("cubin" in k.asm) == (PTXAS is not None)


@pytest.mark.parametrize("mb, nb, box, swizzle, shared", [
    # Triton 3.6.0's tensor map box, swizzle mode and shared bytes for these fp32 blocks
    (512, 32, [256, 32], 3, 65536),  # 128-byte swizzle, two boxes of 256 rows
    (1, 1024, [1, 256], 0, 4096),    # one unswizzled row: four boxes end to end
    (2, 16, [2, 16], 0, 128),
])
def test_box_split_is_tritons(mb, nb, box, swizzle, shared):
    k = _compile("add", np.float32, True, mb, nb, num_warps=4)
    meta = k.extra["tensordesc_meta"][0]
    assert meta["swizzle"] == swizzle and meta["block_size"] == box
    assert not k.extra["notes"]  # TMA, no fallback
    assert k.metadata.shared == shared
    # the boxes are issued by warps 0, 1, ... in one round of up to 4: one instruction
    assert k.asm["ptx"].count("cp.reduce.async.bulk.tensor.2d") == 1


def _random(rng, shape, dtype):
    if dtype in (np.float16, np.float32, BF16):
        return rng.standard_normal(shape).astype(np.float32).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("kind, dtype", [
    ("min", np.float16), ("max", BF16), ("min", np.int32), ("max", np.uint32),
    ("min", np.uint32), ("add", np.float32), ("add", np.int32), ("xor", np.int32),
    ("or", np.uint32), ("and", np.int32)])
def test_interpreted_ttgir_reduces_like_numpy(kind, dtype):
    """The cuda:90 ttgir (TMA ops) run by the interpreter; the tensor is smaller than the grid
    of tiles, so the last tiles are clipped at its edge."""
    rng = np.random.default_rng()
    mb, nb = 8, 32
    m, n = mb + int(rng.integers(1, mb)), nb + int(rng.integers(1, nb))
    a = _random(rng, (2 * mb, 2 * nb), dtype)
    out = _random(rng, (m, n), dtype)
    module = parse_module(_compile(kind, dtype, True, mb, nb).asm["ttgir"])
    got = out.copy()
    # a host descriptor is the array, its sizes and its strides (elements)
    args = [parg(got), m, n, n, 1, parg(got), parg(a), m, n, 2 * nb]
    Launcher(compile_function(functions(module)[0], module))((2, 2, 1), args)
    f = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
         "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    if dtype == BF16:
        want = f(out.astype(np.float32), a[:m, :n].astype(np.float32)).astype(BF16)
    else:
        want = f(out, a[:m, :n])
    np.testing.assert_array_equal(got, want)


_TMA_DTYPES = ["bfloat16", "float16", "float32", "int16", "int32", "int8", "uint16", "uint32",
               "uint8"]  # Triton's tma_dtypes
_SUPPORTED = {(k, np.dtype(d).name) for k, d in NATIVE}
REFUSED = [(k, d) for k in ("add", "min", "max", "and", "or", "xor") for d in _TMA_DTYPES
           if (k, d) not in _SUPPORTED]


@pytest.mark.parametrize("kind, dtype", REFUSED, ids=[f"{k}-{d}" for k, d in REFUSED])
def test_other_kinds_and_dtypes_are_refused_on_sm90(kind, dtype):
    s = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype) or \
        dtype.replace("uint", "u").replace("int", "i")
    with pytest.raises(CompilationError, match=f"atomic_{kind} does not support"):
        wb.compile(reduce_k, None, f"*{s}:16", f"*{s}:16", "i32", "i32", "i32", MB=8, NB=32,
                   KIND=kind, target="cuda:90")


@pytest.mark.parametrize("target", ["cuda:80", "cpu", "interpreter"])
@pytest.mark.parametrize("kind, dtype", [("min", np.float16), ("max", BF16)])
def test_16_bit_float_min_max_are_refused_without_tma(target, kind, dtype):
    with pytest.raises(CompilationError) as e:
        _compile(kind, dtype, False, target=target)
    msg = str(e.value)
    assert "16-bit float types require native tma support" in msg  # Triton's words
    first = msg.splitlines()[0]
    assert "tma_reduce_kernels.py:" in first and "^" in msg
    assert f"desc.atomic_{kind}([moff, noff], val)" in msg  # the user's line


def test_integer_min_without_tma_uses_atomics():
    k = _compile("min", np.int32, False, target="cuda:80")
    assert "cp.reduce" not in k.asm["ptx"] and "atom.global" in k.asm["ptx"]


def test_16_bit_float_min_refused_on_sm90_when_tma_cannot_serve(monkeypatch):
    with pytest.raises(CompilationError) as e:
        _compile("max", np.float16, True, cuda_tma=False)
    msg = str(e.value)
    assert "needs the TMA unit" in msg and "TMA is off" in msg
    assert "desc.atomic_max([moff, noff], val)" in msg
    with pytest.raises(CompilationError, match="16-byte aligned"):
        wb.compile(reduce_k, None, "*fp16", "*fp16:16", "i32", "i32", "i32", MB=8, NB=32,
                   KIND="min", target="cuda:90")  # a base not known 16-byte aligned
    # integers and float adds fall back to atomics there
    k = _compile("add", np.float16, True, cuda_tma=False)
    assert "cp.reduce" not in k.asm["ptx"] and "atom.global" in k.asm["ptx"]


def _tma_lines(ttgir: str) -> list:
    keep = ("ttng.", "ttg.global_scratch_alloc", "ttg.local_alloc", "#shared")
    return sorted(ln for ln in _op_lines(ttgir) if ln.startswith(keep))


@pytest.mark.parametrize("kind, dtype, host, mb, nb", [
    ("min", np.float16, True, 8, 32), ("max", BF16, False, 8, 128),
    ("add", np.float32, True, 1, 1024), ("min", np.int32, False, 512, 32),
    ("xor", np.uint32, True, 2, 16)])
def test_tma_reduce_matches_real_tritons(monkeypatch, kind, dtype, host, mb, nb):
    """The TMA ops of the ttgir, the tensor maps and (host descriptors) the shared bytes are
    real Triton 3.6's for the same kernel. Triton's semantic asks the active GPU whether it
    has TMA; with no GPU here it is told it has (as on an H200)."""
    pytest.importorskip("triton", reason="real Triton 3.6 (the oracle) is not installed")
    import triton
    import triton.language as ttl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.language.semantic import TritonSemantic

    from workbench.runtime.triton_oracle import _Translator
    monkeypatch.setattr(TritonSemantic, "_has_native_tma", lambda self: True)
    s = _SHORT[dtype]
    sig = {"out_desc": f"tensordesc<{s}[{mb}, {nb}]>" if host else "constexpr",
           "out_ptr": f"*{s}", "a_ptr": f"*{s}", "M": "i32", "N": "i32", "A_N": "i32",
           "MB": "constexpr", "NB": "constexpr", "KIND": "constexpr"}
    consts = {"MB": mb, "NB": nb, "KIND": kind, **({} if host else {"out_desc": None})}
    attrs = {(1,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]}
    src = ASTSource(_Translator(triton, ttl).function(reduce_k), signature=sig,
                    constexprs=consts, attrs=attrs)
    theirs = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    ours = _compile(kind, dtype, host, mb, nb)
    assert _tma_lines(ours.asm["ttgir"]) == _tma_lines(theirs.asm["ttgir"])
    assert [dict(m, fp4_padded=False) for m in ours.extra["tensordesc_meta"]] == \
        (theirs.metadata.tensordesc_meta or [])
    if host:  # a device descriptor's 128-byte tensor-map staging area: Triton keeps it
        # apart from the tile, which it allocates first; here the tile comes after it
        assert ours.metadata.shared == theirs.metadata.shared
    ptx = re.findall(r"cp\.reduce\.async\.bulk\.tensor[\w.:]+", theirs.asm["ptx"])
    assert re.findall(r"cp\.reduce\.async\.bulk\.tensor[\w.:]+", ours.asm["ptx"]) == ptx


@pytest.mark.parametrize("host", [True, False], ids=["host", "device"])
def test_ttgir_round_trips_and_tritons_parser_reads_it(host, tmp_path):
    from workbench.ir.printer import print_module
    text = _compile("max", BF16, host).asm["ttgir"]
    once = print_module(parse_module(text))
    assert print_module(parse_module(once)) == once
    assert "ttng.async_tma_reduce max, " in once
    triton_ir = pytest.importorskip("triton._C.libtriton").ir
    path = tmp_path / "kernel.mlir"
    path.write_text(text)
    ctx = triton_ir.context()
    triton_ir.load_dialects(ctx)
    triton_ir.parse_mlir_module(str(path), ctx)


def test_the_isa_help_explains_the_reduction():
    from workbench.viz.isa_help import describe
    ptx = describe("ptx", "cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.bulk_group")
    assert ptx is not None and ptx.base == "cp.reduce" and "atomically" in ptx.summary
    assert dict(ptx.modifiers)[".min"]
    sass = describe("sass", "UTMAREDG.2D.MIN")
    assert sass is not None and "cp.reduce.async.bulk.tensor" in sass.summary


@wb.jit
def triple(desc, BM: tl.constexpr, BN: tl.constexpr):
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    desc.atomic_add([m, n], desc.load([m, n]) * 2)


def test_a_tile_loaded_and_reduced_through_one_descriptor():
    """A TMA load and a TMA reduction of the same descriptor (the load's mbarrier, then the
    reduction's buffer): the interpreted ttgir triples each element, ragged edges included."""
    rng = np.random.default_rng()
    m, n = 40, 72
    x = rng.integers(-1000, 1000, (m, n)).astype(np.int32)
    k = wb.compile(triple, TensorDescriptor.from_tensor(x, [16, 32]), BM=16, BN=32,
                   target="cuda:90")
    text = k.asm["ttgir"]
    assert "ttng.async_tma_copy_global_to_local" in text and "ttng.async_tma_reduce add" in text
    assert ("cubin" in k.asm) == (PTXAS is not None)
    module = parse_module(text)
    got = x.copy()
    Launcher(compile_function(functions(module)[0], module))((3, 3, 1), [parg(got), m, n, n, 1])
    np.testing.assert_array_equal(got, x * 3)
