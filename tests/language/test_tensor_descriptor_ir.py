"""Tensor descriptors as Triton 3.6 prints them (the expected lines below are Triton's ttir for
the same kernels, value names aside), the rewritten signature of a host descriptor (Triton's
sm_80 parameter list), the compile-time checks with the user's line, PTX for sm_80/sm_90
that ptxas assembles, and a run on the GPU."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends import nvidia_tools
from workbench.errors import CompilationError
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.tools.tensor_descriptor import TensorDescriptor

PTXAS = nvidia_tools.find_tool("ptxas")


def op_lines(ttir: str) -> list:
    """The op lines of ``ttir`` with value names replaced by ``%v`` and locations dropped."""
    out = []
    for line in ttir.splitlines():
        line = re.sub(r"\s*loc\(.*\)$", "", line.strip())
        out.append(re.sub(r"%[\w#]+", "%v", line))
    return out


@wb.jit
def dev_desc(in_ptr, out_ptr, M, N, MB: tl.constexpr, NB: tl.constexpr):
    d = tl.make_tensor_descriptor(in_ptr, shape=[M, N], strides=[N, 1], block_shape=[MB, NB])
    o = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[MB, NB],
                                  padding_option="nan")
    m = tl.program_id(0) * MB
    n = tl.program_id(1) * NB
    v = d.load([m, n])
    o.store([m, n], v)
    o.atomic_add([m, 4], v)


# Triton 3.6.0's ttir of dev_desc (signature *fp32, *fp32, i32, i32; MB=32, NB=64)
TRITON_DEV = """\
%v = tt.make_tensor_descriptor %v, [%v, %v], [%v, %v] : <f32>, <tensor<32x64xf32>>
%v = tt.make_tensor_descriptor %v, [%v, %v], [%v, %v] {padding = 2 : i32} : <f32>, <tensor<32x64xf32>>
%v = tt.descriptor_load %v[%v, %v] : !tt.tensordesc<tensor<32x64xf32>> -> tensor<32x64xf32>
tt.descriptor_store %v[%v, %v], %v : !tt.tensordesc<tensor<32x64xf32>>, tensor<32x64xf32>
tt.descriptor_reduce add, %v[%v, %v], %v : !tt.tensordesc<tensor<32x64xf32>>, tensor<32x64xf32>
"""  # noqa: E501


def test_device_descriptor_ttir_is_tritons():
    k = wb.compile(dev_desc, "*fp32", "*fp32", "i32", "i32", MB=32, NB=64,
                   target="interpreter")
    lines = op_lines(k.asm["ttir"])
    for want in TRITON_DEV.splitlines():
        assert want in lines, want
    # the text parses back and prints the same
    assert print_module(parse_module(k.asm["ttir"])) == print_module(
        parse_module(print_module(parse_module(k.asm["ttir"]))))


@wb.jit
def host_desc(in_desc, out_desc, MB: tl.constexpr, NB: tl.constexpr):
    m = tl.program_id(0) * MB
    v = in_desc.load([m, 0])
    out_desc.store([m, 0], v + 1)


@wb.jit
def int_desc(p, n, B: tl.constexpr):
    d = tl.make_tensor_descriptor(p, shape=[n], strides=[1], block_shape=[B])
    v = tl.load_tensor_descriptor(d, [tl.program_id(0) * B])
    d.atomic_max([0], v)
    d.atomic_xor([0], v)


def test_host_signature_and_signedness_are_tritons():
    x = np.zeros((64, 64), np.float16)
    a = TensorDescriptor.from_tensor(x, [32, 64])
    k = wb.compile(host_desc, a, a, MB=32, NB=64, target="interpreter")
    sig = k.asm["ttir"].splitlines()[1]
    types = re.findall(r"%\w+: ([^ ,)]+(?:<[^>]*>>?)?)", sig)
    # Triton 3.6: the descriptor, then its i32 shape and i64 strides
    assert types == ["!tt.tensordesc<tensor<32x64xf16>>", "i32", "i32", "i64", "i64"] * 2
    lines = op_lines(wb.compile(int_desc, "*u32", "i32", B=64,
                                target="interpreter").asm["ttir"])
    assert "%v = tt.make_tensor_descriptor %v, [%v], [%v] : <i32>, <tensor<64xui32>>" in lines
    assert ("tt.descriptor_reduce max, %v[%v], %v : !tt.tensordesc<tensor<64xui32>>, "
            "tensor<64xi32>") in lines


def test_rewritten_host_parameters_match_triton_sm80():
    from workbench.ir.clone import clone_module
    from workbench.passes.rewrite_descriptors import rewritten
    x = np.zeros((64, 64), np.float16)
    a = TensorDescriptor.from_tensor(x, [32, 64])
    k = wb.compile(host_desc, a, a, MB=32, NB=64, target="interpreter")
    mod = rewritten(parse_module(k.asm["ttir"]), clone_module)
    sig = print_module(mod).splitlines()[1]
    types = [t for t in re.findall(r"%\w+: (!tt\.ptr<\w+>|i\d+)", sig)]
    # Triton's rewrite for sm_80: ptr, shape i64 x2, strides i64 x2, padding i1, then the
    # descriptor's own i32 shape and i64 strides
    one = ["!tt.ptr<f16>", "i64", "i64", "i64", "i64", "i1", "i32", "i32", "i64", "i64"]
    assert types == one * 2
    assert "tt.descriptor" not in print_module(mod)


@wb.jit
def narrow_block(p, n):
    d = tl.make_tensor_descriptor(p, shape=[n], strides=[1], block_shape=[2])
    d.store([0], d.load([0]))


@wb.jit
def nan_int(p, n):
    d = tl.make_tensor_descriptor(p, shape=[n], strides=[1], block_shape=[16],
                                  padding_option="nan")
    d.store([0], d.load([0]))


@wb.jit
def strided_last(p, n, s):
    d = tl.make_tensor_descriptor(p, shape=[n, n], strides=[n, s], block_shape=[16, 16])
    d.store([0, 0], d.load([0, 0]))


@wb.jit
def wrong_offsets(p, n):
    d = tl.make_tensor_descriptor(p, shape=[n, n], strides=[n, 1], block_shape=[16, 16])
    d.store([0, 0], d.load([0]))


@wb.jit
def float_max(p, n):
    d = tl.make_tensor_descriptor(p, shape=[n], strides=[1], block_shape=[16])
    d.atomic_max([0], d.load([0]))


@pytest.mark.parametrize("kernel, sig, words", [
    (float_max, ("*fp16", "i32"), "16-bit float types require native tma support"),
    (narrow_block, ("*fp32", "i32"), "at least 16 bytes in the last dimension"),
    (nan_int, ("*i32", "i32"), "Padding option `nan` is not supported for integer"),
    (strided_last, ("*fp32", "i32", "i32"), "last dim must be 1"),
    (wrong_offsets, ("*fp32", "i32"), "expected 2 offsets, but got 1"),
])
def test_compile_time_checks_point_at_the_line(kernel, sig, words):
    with pytest.raises(CompilationError) as e:
        wb.compile(kernel, *sig, target="interpreter")
    msg = str(e.value)
    assert words in msg
    assert "test_tensor_descriptor_ir.py:" in msg.splitlines()[0]
    assert "^" in msg


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed (the sass extra)")
@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_ptx_assembles(target):
    x = np.zeros((64, 64), np.float16)
    a = TensorDescriptor.from_tensor(x, [32, 64])
    k = wb.compile(host_desc, a, a, MB=32, NB=64, target=target)
    assert "cubin" in k.asm
    k2 = wb.compile(dev_desc, "*fp32:16", "*fp32:16", "i32", "i32", MB=32, NB=64,
                    target=target)
    assert "cubin" in k2.asm
    params = re.findall(r"\.param [^\n]*", k.asm["ptx"].split("{")[0])
    if target == "cuda:80":  # one .param per rewritten argument: 10 per host descriptor
        assert len(params) == 20
    else:  # TMA: the 128-byte CUtensorMap, then the i32 shape and the i64 strides
        assert len(params) == 10
        assert sum(".align 64 .b8" in p and p.endswith("[128],") for p in params) == 2


@pytest.mark.gpu
def test_descriptors_on_the_gpu():
    from workbench.backends import cuda_driver
    from workbench.backends.cuda_driver import DeviceArray
    rng = np.random.default_rng()
    m, n = 45, 72
    x = rng.standard_normal((m, n)).astype(np.float32)
    dx = DeviceArray.from_numpy(x)
    dy = DeviceArray.from_numpy(np.full((m, n), np.nan, np.float32))
    a = TensorDescriptor(dx, [m, n], [n, 1], [16, 32])
    b = TensorDescriptor(dy, [m, n], [n, 1], [16, 32])
    host_desc_2d[(3, 3)](a, b, MB=16, NB=32)
    cuda_driver.synchronize()
    np.testing.assert_array_equal(dy.to_numpy(), x + 1)
    out = DeviceArray.from_numpy(np.full((16, 32), 7.0, np.float32))
    # the innermost offset a multiple of 16 bytes, as Triton requires (TMA faults otherwise)
    dev_copy[(1,)](dx, out, m, n, m - 5, n - 8, MB=16, NB=32)
    cuda_driver.synchronize()
    want = np.zeros((16, 32), np.float32)
    want[:5, :8] = x[m - 5:, n - 8:]
    np.testing.assert_array_equal(out.to_numpy(), want)
    # atomics through a device-side descriptor, clipped at the edges
    acc0 = rng.integers(-100, 100, (20, 40)).astype(np.int32)
    v = rng.integers(-100, 100, (16, 32)).astype(np.int32)
    acc = DeviceArray.from_numpy(acc0)
    dev_atomic_add[(1,)](acc, DeviceArray.from_numpy(v), 20, 40, 10, 20, MB=16, NB=32)
    cuda_driver.synchronize()
    want_acc = acc0.copy()
    want_acc[10:20, 20:40] += v[:10, :20]
    np.testing.assert_array_equal(acc.to_numpy(), want_acc)


@wb.jit
def dev_atomic_add(x_ptr, v_ptr, M, N, o0, o1, MB: tl.constexpr, NB: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[MB, NB])
    v = tl.load(v_ptr + tl.arange(0, MB)[:, None] * NB + tl.arange(0, NB)[None, :])
    d.atomic_add([o0, o1], v)


@wb.jit
def host_desc_2d(in_desc, out_desc, MB: tl.constexpr, NB: tl.constexpr):
    m = tl.program_id(0) * MB
    n = tl.program_id(1) * NB
    out_desc.store([m, n], in_desc.load([m, n]) + 1)


@wb.jit
def dev_copy(x_ptr, out_ptr, M, N, o0, o1, MB: tl.constexpr, NB: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[MB, NB])
    o = tl.make_tensor_descriptor(out_ptr, shape=[MB, NB], strides=[NB, 1],
                                  block_shape=[MB, NB])
    o.store([0, 0], d.load([o0, o1]))
