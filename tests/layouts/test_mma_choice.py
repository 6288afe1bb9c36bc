"""MMA layout choices against the layouts Triton 3.6 printed (reference IR files)."""
from workbench.layouts import MmaLayout, NVMMASharedLayout, SwizzledSharedLayout
from workbench.layouts.mma import (
    mma_layout_for,
    mma_operand_shared,
    nvmma_shared_for,
    warps_per_tile_v2,
)


def test_sm80_matmul_layouts():
    # ir_matmul_sm80.txt: 128x128 result, 4 warps; A 128x32, B 32x128 fp16, kWidth 2
    assert mma_layout_for((128, 128), 4, 2) == MmaLayout(2, (2, 2), (16, 8))
    assert mma_operand_shared(0, (128, 32), (1, 0), 2, 16) == SwizzledSharedLayout(8, 2, 4, (1, 0))
    assert mma_operand_shared(1, (32, 128), (1, 0), 2, 16) == SwizzledSharedLayout(8, 1, 8, (1, 0))


def test_sm90_matmul_layouts():
    # ir_matmul_sm90.txt: 128x128, 8 warps -> [8, 1], instrShape [16, 128, 16]; 128B swizzle
    assert mma_layout_for((128, 128), 8, 3) == MmaLayout(3, (8, 1), (16, 128, 16))
    assert nvmma_shared_for((128, 64), 16) == NVMMASharedLayout(128, False, 16)
    assert nvmma_shared_for((64, 128), 16) == NVMMASharedLayout(128, False, 16)


def test_warps_v2_variants():
    assert warps_per_tile_v2((16, 8), 4) == (4, 1)      # too many warps: extra ones go to M
    # reps (4, 32) -> N doubles three times: (1, 8) with reps (4, 4)
    assert warps_per_tile_v2((64, 256), 8) == (1, 8)
    assert warps_per_tile_v2((128, 128), 8) == (2, 4)  # (1,2) (2,2) (2,4)
    assert warps_per_tile_v2((128, 64), 4, chained=True) == (4, 1)
