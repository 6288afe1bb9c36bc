"""``tl.inline_asm_elementwise``: ttir as Triton prints it, PTX for cuda:90 (assembled by
ptxas where installed), the other backends' refusal, and the kernels on a GPU against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import UnsupportedError


@wb.jit
def shift_through_pointers_k(X, Y, BLOCK: tl.constexpr):
    xp = X + tl.arange(0, BLOCK)
    yp = Y + tl.arange(0, BLOCK)
    tl.inline_asm_elementwise("ld.global.b8 $0, [$1];\n\tshl.b32 $0, $0, 3;\n\t"
                              "st.global.b8 [$2], $0;", "=r,l,l", [xp, yp], dtype=tl.int8,
                              is_pure=False, pack=1)


@wb.jit
def funnel_shift_k(X, Y, Z, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    z = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $2, $3;", "=r,r,r,r",
                                  [tl.load(X + offs), tl.load(Y + offs), n], dtype=tl.int32,
                                  is_pure=True, pack=1)
    tl.store(Z + offs, z)


@wb.jit
def packed_bytes_k(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F;\n\tshl.b32 $0, $0, 3;", "=r,r",
                                  [tl.load(X + offs)], dtype=tl.int8, is_pure=True, pack=4)
    tl.store(Y + offs, y)


@wb.jit
def two_outputs_k(A, B, C, D, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c, d = tl.inline_asm_elementwise("sub.u32 $0, $2, $3;\n\tsub.u32 $1, $3, $2;",
                                     "=r,=r,r,r", [tl.load(A + offs), tl.load(B + offs)],
                                     dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(C + offs, c)
    tl.store(D + offs, d)


def test_ttir_and_ptx_of_inline_asm():
    c = wb.compile(two_outputs_k, "*i32", "*i32", "*i32", "*i32", target="cuda:90", BLOCK=256)
    line = next(ln for ln in c.asm["ttir"].splitlines() if "elementwise_inline_asm" in ln)
    assert line.strip().split(" = ", 1)[0].endswith(":2")   # MLIR names no multi-result
    assert line.strip().split(" = ", 1)[1].startswith(
        "tt.elementwise_inline_asm \"sub.u32 $0, $2, $3;\\0A\\09"
                                   "sub.u32 $1, $3, $2;\" {constraints = \"=r,=r,r,r\", "
                                   "packed_element = 1 : i32, pure = true}"), line
    assert ": tensor<256xi32>, tensor<256xi32> -> tensor<256xi32>, tensor<256xi32>" in line
    ptx = c.asm["ptx"]
    assert ptx.count("sub.u32") == 2 * 2  # 256 elements, 128 threads: two registers each


def test_impure_asm_is_kept_and_packs_bytes():
    c = wb.compile(shift_through_pointers_k, "*u8", "*u8", target="cuda:90", BLOCK=512)
    assert c.asm["ptx"].count("st.global.b8") == 4  # four elements per thread, result unused
    c = wb.compile(packed_bytes_k, "*u8", "*i8", target="cuda:90", BLOCK=512)
    assert c.asm["ptx"].count("0x1F1F1F1F") == 1  # four int8 of a thread in one .b32


def test_inline_asm_matches_triton_ttir():
    triton = pytest.importorskip("triton", reason="real Triton 3.6 is the oracle for the text")
    import triton.language as ttl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def k(X, Y, BLOCK: ttl.constexpr):
        offs = ttl.arange(0, BLOCK)
        y = ttl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F;\n\tshl.b32 $0, $0, 3;",
                                       "=r,r", [ttl.load(X + offs)], dtype=ttl.int8,
                                       is_pure=True, pack=4)
        ttl.store(Y + offs, y)

    theirs = triton.compile(ASTSource(k, signature={"X": "*u8", "Y": "*i8", "BLOCK": "constexpr"},
                                      constexprs={"BLOCK": 512}),
                            target=GPUTarget("cuda", 90, 32)).asm["ttir"]
    ours = wb.compile(packed_bytes_k, "*u8", "*i8", target="cuda:90", BLOCK=512).asm["ttir"]

    def op_text(ttir):
        ln = next(x for x in ttir.splitlines() if "elementwise_inline_asm" in x)
        return ln.split("=", 1)[1].split("%")[0].strip()
    assert op_text(ours) == op_text(theirs)


def test_cpu_backend_refuses_inline_ptx_at_the_line():
    x = np.zeros(64, np.int32)
    with pytest.raises(UnsupportedError, match="only the CUDA backend can run it") as info:
        wb.compile(funnel_shift_k, x, x, x, 3, target="cpu", BLOCK=64)
    assert "test_cuda_inline_asm.py" in str(info.value)


@pytest.mark.gpu
def test_inline_asm_kernels_on_gpu():
    import workbench.cuda as wcuda
    rng = np.random.default_rng()
    x = rng.integers(0, 256, 512).astype(np.uint8)
    y = wcuda.to_device(rng.integers(0, 256, 512).astype(np.uint8))
    shift_through_pointers_k[(1,)](wcuda.to_device(x), y, BLOCK=512)
    np.testing.assert_array_equal(y.to_numpy(), (x << 3).astype(np.uint8))

    a = rng.integers(-2**31, 2**31, 256).astype(np.int32)
    b = rng.integers(-2**31, 2**31, 256).astype(np.int32)
    n = int(rng.integers(0, 32))
    z = wcuda.to_device(np.zeros(256, np.int32))
    funnel_shift_k[(1,)](wcuda.to_device(a), wcuda.to_device(b), z, n, BLOCK=256)
    wide = (b.astype(np.uint32).astype(np.uint64) << 32) | a.astype(np.uint32)
    ref = ((wide << np.uint64(n)) >> np.uint64(32)).astype(np.uint32).view(np.int32)
    np.testing.assert_array_equal(z.to_numpy(), ref)

    out = wcuda.to_device(np.zeros(512, np.int8))
    packed_bytes_k[(1,)](wcuda.to_device(x), out, BLOCK=512)
    np.testing.assert_array_equal(out.to_numpy(), ((x & 0x1F) << 3).astype(np.uint8).view(np.int8))

    c, d = (wcuda.to_device(np.zeros(256, np.int32)) for _ in range(2))
    two_outputs_k[(1,)](wcuda.to_device(a), wcuda.to_device(b), c, d, BLOCK=256)
    np.testing.assert_array_equal(c.to_numpy(), (a.astype(np.int64) - b).astype(np.int32))
    np.testing.assert_array_equal(d.to_numpy(), (b.astype(np.int64) - a).astype(np.int32))


@wb.jit
def packed_two_outputs_k(A, B, C, D, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c, d = tl.inline_asm_elementwise(
        "{\n\t.reg .b8 t<4>;\n\tmov.b32 {t0, t1, t2, t3}, $8;\n\tcvt.u32.u8 $0, t0;\n\t"
        "cvt.u32.u8 $1, t1;\n\tcvt.u32.u8 $2, t2;\n\tcvt.u32.u8 $3, t3;\n\t}\n\t"
        "cvt.rn.f32.s32 $4, $0;\n\tcvt.rn.f32.s32 $5, $1;\n\tcvt.rn.f32.s32 $6, $2;\n\t"
        "cvt.rn.f32.s32 $7, $3;\n\tmax.f32 $4, $4, $9;\n\tmax.f32 $5, $5, $10;\n\t"
        "max.f32 $6, $6, $11;\n\tmax.f32 $7, $7, $12;",
        "=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r", [tl.load(A + offs), tl.load(B + offs)],
        dtype=(tl.int32, tl.float32), is_pure=True, pack=4)
    tl.store(C + offs, c)
    tl.store(D + offs, d)


def test_packed_outputs_of_32_bits_take_a_register_each():
    """pack=4: four uint8 inputs share one register, four fp32 ones take four, and each
    output takes four (Triton's numbering $0..$7 outputs, $8 and $9..$12 inputs)."""
    c = wb.compile(packed_two_outputs_k, "*u8", "*fp32", "*i32", "*fp32", target="cuda:90",
                   BLOCK=512)
    assert c.asm["ptx"].count("mov.b32 {t0, t1, t2, t3}") == 1


@pytest.mark.gpu
def test_packed_two_outputs_on_gpu():
    import workbench.cuda as wcuda
    rng = np.random.default_rng()
    a = rng.integers(0, 256, 512).astype(np.uint8)
    b = (rng.standard_normal(512) * 200).astype(np.float32)
    c, d = wcuda.to_device(np.zeros(512, np.int32)), wcuda.to_device(np.zeros(512, np.float32))
    packed_two_outputs_k[(1,)](wcuda.to_device(a), wcuda.to_device(b), c, d, BLOCK=512)
    np.testing.assert_array_equal(c.to_numpy(), a.astype(np.int32))
    np.testing.assert_array_equal(d.to_numpy(), np.maximum(a.astype(np.float32), b))
