"""fp16 and bf16 scalar kernel arguments on the CUDA backend: the parameter slot's bits (bf16
rounded to nearest even, as ml_dtypes rounds) and, on a GPU, a kernel adding them."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.cuda_launch import SLOT_CODES, _bf16_bits


@wb.jit
def add_scalars(x_ptr, out_ptr, h: tl.float16, b: tl.bfloat16, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x + h.to(tl.float32) + b.to(tl.float32))


def test_annotated_half_parameters_compile_to_16_bit_params():
    k = wb.compile(add_scalars, "*fp32", "*fp32", "fp16", "bf16", target="cuda:90", BLOCK=128)
    loads = [ln.split()[0] for ln in k.asm["ptx"].splitlines()
             if "ld.param" in ln and ("param_2]" in ln or "param_3]" in ln)]
    assert loads == ["ld.param.b16", "ld.param.b16"], loads


def test_half_kinds_have_slots_and_bf16_rounds_to_nearest_even():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert SLOT_CODES["f16"] == "e6x" and SLOT_CODES["bf16"] == "H6x"
    xs = np.random.default_rng().standard_normal(200).astype(np.float32) * 1e3
    xs = np.concatenate([xs, np.float32([0.0, -0.0, np.inf, -np.inf, 1.00390625, 3e-39])])
    want = xs.astype(ml_dtypes.bfloat16).view(np.uint16)
    assert [_bf16_bits(float(x)) for x in xs] == want.tolist()
    assert _bf16_bits(float("nan")) & 0x7FC0 == 0x7FC0


@pytest.mark.gpu
def test_half_scalars_reach_the_kernel():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    x = torch.from_numpy(rng.standard_normal(128).astype(np.float32)).cuda()
    out = torch.zeros_like(x)
    add_scalars[(1,)](x, out, 1.5, -2.25, BLOCK=128)   # annotated: passed as fp16 and bf16
    want = (x.cpu().numpy() + np.float32(1.5)) + np.float32(-2.25)   # the kernel's order
    np.testing.assert_array_equal(out.cpu().numpy(), want)
