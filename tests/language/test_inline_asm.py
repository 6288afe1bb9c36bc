"""``tl.inline_asm_elementwise``: the ttir Triton prints for it (one and several results),
the register packing the CUDA lowering gives each operand and result (``pack`` elements per
call, narrower-than-32-bit elements sharing a 32-bit register), the located errors of the
interpreter and the CPU backend (which cannot run PTX) and of constraint strings that do not
match the registers, and on a GPU the values against numpy with fresh random inputs."""
import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError, UnsupportedError


@wb.jit
def shift_left(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    z = tl.inline_asm_elementwise("shl.b32 $0, $1, $2;", "=r,r,r", [x, y], dtype=tl.int32,
                                  is_pure=True, pack=1)
    tl.store(out_ptr + offs, z)


@wb.jit
def widen_bytes(x_ptr, f_ptr, wide_ptr, best_ptr, BLOCK: tl.constexpr):
    # four uint8 in one register ($8), four fp32 in four ($9-$12); eight 32-bit results
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    f = tl.load(f_ptr + offs)
    wide, best = tl.inline_asm_elementwise(
        """
        {
        .reg .b8 b<4>;
        mov.b32 {b0, b1, b2, b3}, $8;
        cvt.u32.u8 $0, b0;
        cvt.u32.u8 $1, b1;
        cvt.u32.u8 $2, b2;
        cvt.u32.u8 $3, b3;
        }
        cvt.rn.f32.s32 $4, $0;
        cvt.rn.f32.s32 $5, $1;
        cvt.rn.f32.s32 $6, $2;
        cvt.rn.f32.s32 $7, $3;
        max.f32 $4, $4, $9;
        max.f32 $5, $5, $10;
        max.f32 $6, $6, $11;
        max.f32 $7, $7, $12;
        """,
        "=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r", [x, f], dtype=(tl.int32, tl.float32),
        is_pure=True, pack=4)
    tl.store(wide_ptr + offs, wide)
    tl.store(best_ptr + offs, best)


@wb.jit
def bad_constraints(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    z = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r", [x], dtype=tl.int32,
                                  is_pure=True, pack=1)
    tl.store(out_ptr + offs, z)


def test_ttir_is_the_op_triton_prints():
    k = wb.compile(shift_left, "*i32", "*i32", "*i32", target="cuda:90", BLOCK=128)
    (line,) = [ln.strip() for ln in k.asm["ttir"].splitlines()
               if "= tt.elementwise_inline_asm" in ln]
    assert line.split(" loc(")[0] == (
        '%z = tt.elementwise_inline_asm "shl.b32 $0, $1, $2;" {constraints = "=r,r,r", '
        "packed_element = 1 : i32, pure = true} %x_1, %y_3 : tensor<128xi32>, "
        "tensor<128xi32> -> tensor<128xi32>")


def test_several_results_print_as_one_op_with_a_result_group():
    k = wb.compile(widen_bytes, "*u8", "*fp32", "*i32", "*fp32", target="cuda:90", BLOCK=512)
    (line,) = [ln for ln in k.asm["ttgir"].splitlines() if "= tt.elementwise_inline_asm" in ln]
    assert re.search(r"%\w+:2 = tt\.elementwise_inline_asm", line)
    assert "packed_element = 4 : i32, pure = true}" in line
    assert line.split(" -> ")[1].startswith(
        "tensor<512xi32, #blocked>, tensor<512xf32, #blocked>")


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:90"])
def test_packing_gives_triton_register_lists(arch):
    k = wb.compile(widen_bytes, "*u8", "*fp32", "*i32", "*fp32", target=arch, BLOCK=512)
    calls = [ln for ln in k.asm["llir"].splitlines() if "cvt.u32.u8" in ln]
    # 512 elements over 128 threads: 4 per thread, one call of pack 4
    assert len(calls) == 1
    sig = calls[0].split(" asm ")[0].split("call ")[1]
    assert sig == "{ i32, i32, i32, i32, float, float, float, float }"
    args = calls[0].split('"(')[1]
    assert re.findall(r"(i32|float) %", args) == ["i32"] + ["float"] * 4
    assert "cvt.u32.u8" in k.asm["ptx"]


def test_impure_asm_is_a_side_effect_and_stays():
    @wb.jit
    def unused(x_ptr, BLOCK: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32,
                                  is_pure=False, pack=1)
    k = wb.compile(unused, "*i32", target="cuda:90", BLOCK=128)
    assert "asm sideeffect" in k.asm["llir"]
    k = wb.compile(unused, "*i32", target="cuda:80", BLOCK=128)
    assert "tt.elementwise_inline_asm" in k.asm["ttir"]


@pytest.mark.parametrize("target, who", [("interpreter", "the interpreter"),
                                         ("cpu", "the CPU backend")])
def test_host_backends_refuse_it_at_the_users_line(target, who):
    with pytest.raises(UnsupportedError) as e:
        wb.compile(shift_left, "*i32", "*i32", "*i32", target=target, BLOCK=128)
    msg = str(e.value)
    assert f"only the CUDA backend can run it; {who} cannot" in msg
    assert "test_inline_asm.py:21:" in msg and "tl.inline_asm_elementwise(" in msg


def test_constraints_that_do_not_match_the_registers_are_located():
    with pytest.raises(CompilationError) as e:
        wb.compile(bad_constraints, "*i32", "*i32", target="cuda:90", BLOCK=128)
    msg = str(e.value)
    assert "name 1 output and 2 input registers" in msg and "need 1 and the arguments 1" in msg
    assert "test_inline_asm.py:61:" in msg


def test_pack_must_divide_the_elements_per_thread():
    with pytest.raises(CompilationError, match="packs 4 elements per call but each thread "
                                               "holds 1"):
        wb.compile(widen_bytes, "*u8", "*fp32", "*i32", "*fp32", target="cuda:90", BLOCK=128)


@pytest.mark.gpu
def test_values_on_the_gpu(rng):
    torch = pytest.importorskip("torch")
    n = 512
    x = rng.integers(-2**20, 2**20, n).astype(np.int32)
    s = rng.integers(0, 12, n).astype(np.int32)
    out = torch.zeros(n, dtype=torch.int32, device="cuda")
    shift_left[(1,)](torch.from_numpy(x).cuda(), torch.from_numpy(s).cuda(), out, BLOCK=n)
    np.testing.assert_array_equal(out.cpu().numpy(), x << s)
    b = rng.integers(0, 256, n).astype(np.uint8)
    f = (rng.standard_normal(n) * 200).astype(np.float32)
    wide = torch.zeros(n, dtype=torch.int32, device="cuda")
    best = torch.zeros(n, dtype=torch.float32, device="cuda")
    widen_bytes[(1,)](torch.from_numpy(b).cuda(), torch.from_numpy(f).cuda(), wide, best,
                      BLOCK=n)
    np.testing.assert_array_equal(wide.cpu().numpy(), b.astype(np.int32))
    np.testing.assert_array_equal(best.cpu().numpy(), np.maximum(b.astype(np.float32), f))
