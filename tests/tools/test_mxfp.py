"""``workbench.tools.mxfp`` (Triton's ``triton.tools.mxfp``) against values worked out by hand
from the OCP MX specification's E2M1 and E8M0 tables."""
from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch", reason="the MX helper tensors are torch tensors")
from workbench.tools.mxfp import MXFP4Tensor, MXScaleTensor  # noqa: E402


def test_every_e2m1_code_decodes_to_its_value():
    codes = torch.arange(16, dtype=torch.uint8)
    t = MXFP4Tensor(size=16)
    t.data = codes
    got = t.to(torch.float32)
    # sign bit 3; exponent bits 2..1 with bias 1; code 1 is the subnormal 0.5
    want = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    assert got[:8].tolist() == want
    assert got[8:].tolist() == [-w for w in want]
    assert math.copysign(1.0, got[8].item()) == -1.0  # code 8 is -0.0


@pytest.mark.parametrize("value,code", [
    (0.0, 0), (-0.0, 8), (0.2, 0), (-0.2, 8),  # below 0.25: a zero of the value's sign
    (0.25, 0),  # halfway 0 / 0.5: the even code (0)
    (0.3, 1), (0.75, 2),  # halfway 0.5 / 1.0: code 2 (1.0) is even
    (1.25, 2),  # halfway 1.0 / 1.5: stays on 1.0
    (1.75, 4), (2.5, 4),  # halfway 1.5 / 2 -> 2.0 (code 4); 2 / 3 -> 2.0
    (3.5, 6), (5.0, 6),  # 3 / 4 -> 4.0 (code 6); 4 / 6 -> 4.0
    (5.1, 7), (6.0, 7), (100.0, 7), (-100.0, 15),  # saturates at 6
    (math.inf, 7), (-math.inf, 15), (math.nan, 7), (-2.9, 13),
])
def test_encoding_rounds_to_nearest_even_and_saturates(value, code):
    t = MXFP4Tensor(data=torch.tensor([value], dtype=torch.float32))
    assert t.data.dtype == torch.uint8
    assert t.data.tolist() == [code]


def test_random_codes_round_trip_through_floats():
    torch.manual_seed(1234)
    t = MXFP4Tensor(size=(7, 9)).random()
    assert t.data.shape == (7, 9) and int(t.data.max()) <= 15
    again = MXFP4Tensor(data=t.to(torch.float32))
    # every code but -0 comes back exactly; -0 (8) and +0 (0) are both zeros
    assert torch.equal(again.data, t.data)


def test_packing_two_codes_per_byte_along_either_dim():
    t = MXFP4Tensor(size=(2, 3))
    t.data = torch.tensor([[1, 2, 3], [4, 5, 15]], dtype=torch.uint8)
    p1 = t.to_packed_tensor(dim=1)  # odd length: a zero code appended
    assert p1.tolist() == [[0x21, 0x03], [0x54, 0x0F]]
    p0 = t.to_packed_tensor(dim=0)
    assert p0.tolist() == [[0x41, 0x52, 0xF3]]
    assert torch.equal(t.unpack_packed_tensor(p1, 1, (2, 3)), t.data)
    assert torch.equal(t.unpack_packed_tensor(p0, 0, (2, 3)), t.data)
    with pytest.raises(ValueError):
        t.to_packed_tensor(dim=2)


def test_scale_codes_decode_and_encode():
    s = MXScaleTensor(size=4)
    s.data = torch.tensor([0, 127, 130, 255], dtype=torch.uint8)
    got = s.to(torch.float32)
    assert got[:3].tolist() == [2.0 ** -127, 1.0, 8.0] and math.isnan(got[3].item())
    enc = MXScaleTensor(data=torch.tensor([1.0, 8.0, 9.9, 0.5, 0.0, -2.0, math.inf, math.nan,
                                           1e-40, 1e38]))
    # floor(log2 v) + 127 clamped to 0..254; 255 for v <= 0, inf, nan
    # 1e38 lies in [2**126, 2**127): 126 + 127; 1e-40 is below 2**-127: clamped to 0
    assert enc.data.tolist() == [127, 130, 130, 126, 255, 255, 255, 255, 0, 253]


def test_scale_random_stays_in_range():
    torch.manual_seed(7)
    s = MXScaleTensor(size=(64, 8)).random(high=32.0)
    assert int(s.data.min()) >= 0 and int(s.data.max()) <= 127 + 5
    s = MXScaleTensor(size=(256,)).random(low=0.5, high=4.0)
    # int(log2 0.5) = -1, int(log2 4) = 2
    assert set(s.data.tolist()) <= set(range(126, 130)) and len(set(s.data.tolist())) == 4
    with pytest.raises(ValueError):
        MXScaleTensor(size=3).random(low=8.0, high=2.0)


def test_bad_arguments():
    with pytest.raises(ValueError):
        MXFP4Tensor()
    with pytest.raises(TypeError):
        MXScaleTensor(data=[1.0, 2.0])
    with pytest.raises(ValueError):
        MXFP4Tensor(size=2).random().to(torch.float16)
