"""Shared-memory bank conflicts (CUDA C++ Programming Guide, Shared Memory)."""
import numpy as np
import pytest

from workbench.layouts import (
    BlockedLayout,
    LayoutError,
    NVMMASharedLayout,
    PaddedRowMajor,
    SwizzledSharedLayout,
    bank_conflicts,
    dtype_bytes,
)

ROW_MAJOR = PaddedRowMajor(0)
# one warp; lane i holds row i; its 32 registers walk along the row
COLUMN_READER = BlockedLayout((1, 1), (32, 1), (1, 1), (0, 1))
# one warp; lane i holds column i; registers walk down the rows
ROW_READER = BlockedLayout((1, 1), (1, 32), (1, 1), (1, 0))


def test_column_read_of_row_major_fp32_is_32_way():
    rep = bank_conflicts(ROW_MAJOR, COLUMN_READER, (32, 32), "fp32", vector_bytes=4)
    assert len(rep.requests) == 32
    assert rep.wavefronts == [32] * 32 and rep.ideal_wavefronts == [1] * 32
    assert rep.conflict_degree == 32
    # request k: every lane hits bank k
    assert (rep.lane_banks[5] == 5).all() and rep.lane_banks[5].shape == (32, 1)
    assert "32-way" in rep.summary()


def test_default_is_scalar_access_so_the_textbook_transpose_is_32_way():
    # vector_bytes=None means one element per lane per request (the textbook transpose case)
    rep = bank_conflicts(ROW_MAJOR, COLUMN_READER, (32, 32), "fp32")
    assert rep.vector_bytes == 4 and len(rep.requests) == 32
    assert rep.conflict_degree == 32
    # fp16: 2 bytes per lane by default, lanes of one column still 64 B apart -> 16 words/bank
    rep16 = bank_conflicts(ROW_MAJOR, COLUMN_READER, (32, 32), "fp16")
    assert rep16.vector_bytes == 2 and rep16.conflict_degree == 16


@pytest.mark.parametrize("shared", [SwizzledSharedLayout(1, 1, 32, (1, 0)), PaddedRowMajor(1)],
                         ids=["xor-swizzle", "pad-one-word"])
def test_swizzle_or_padding_makes_column_read_conflict_free(shared):
    rep = bank_conflicts(shared, COLUMN_READER, (32, 32), "fp32", vector_bytes=4)
    assert rep.wavefronts == [1] * 32 and rep.conflict_degree == 1
    assert sorted(rep.lane_banks[0][:, 0]) == list(range(32))
    assert "conflict-free" in rep.summary()


@pytest.mark.parametrize("shared", [ROW_MAJOR, SwizzledSharedLayout(1, 1, 32, (1, 0))])
def test_row_read_is_conflict_free(shared):
    rep = bank_conflicts(shared, ROW_READER, (32, 32), "fp32")
    assert rep.vector_bytes == 4
    assert rep.wavefronts == [1] * 32 and rep.conflict_degree == 1


def test_16_byte_vectors_are_served_in_quarter_warps():
    # spt [1,4] fp32 = 16 B per lane; lanes 0-7 cover one 128-byte row: 4 phases x 1 wavefront
    lay = BlockedLayout((1, 4), (4, 8), (1, 1), (1, 0))
    rep = bank_conflicts(ROW_MAJOR, lay, (4, 32), "fp32", vector_bytes=16)
    assert rep.vector_bytes == 16
    assert rep.wavefronts == [4] and rep.ideal_wavefronts == [4] and rep.conflict_degree == 1
    assert rep.requests[0].banks.shape == (32, 4)
    assert list(rep.requests[0].phase_of_lane) == [i // 8 for i in range(32)]


def test_quarter_warp_conflicts_counted_per_phase():
    # lanes 0-7 (one phase) read rows 0-7 at columns 0-3: every bank 0-3 holds 8 words -> 8
    # wavefronts per phase; the other phases hit columns 4-7, 8-11, 12-15 the same way.
    # A whole-warp count would give 8; per quarter-warp phases it is 4 x 8 = 32.
    lay = BlockedLayout((1, 4), (8, 4), (1, 1), (0, 1))
    rep = bank_conflicts(ROW_MAJOR, lay, (8, 32), "fp32", vector_bytes=16)
    assert rep.wavefronts == [32, 32] and rep.ideal_wavefronts == [4, 4]
    assert rep.conflict_degree == 8


def test_8_byte_accesses_in_half_warps():
    lay = BlockedLayout((1, 2), (2, 16), (1, 1), (1, 0))
    rep = bank_conflicts(ROW_MAJOR, lay, (2, 32), "fp32", vector_bytes=8)
    assert rep.vector_bytes == 8
    assert list(rep.requests[0].phase_of_lane) == [i // 16 for i in range(32)]
    assert rep.wavefronts == [2] and rep.conflict_degree == 1


def test_auto_vectorisation_of_column_reader():
    # the column reader's registers are contiguous in a row-major tile: 16-byte vectors,
    # each quarter-warp reads 8 rows x 16 B at the same columns -> 8-way
    rep = bank_conflicts(ROW_MAJOR, COLUMN_READER, (32, 32), "fp32", vector_bytes="auto")
    assert rep.vector_bytes == 16 and len(rep.requests) == 8
    assert rep.conflict_degree == 8
    # the same as asking for 16-byte vectors explicitly
    explicit = bank_conflicts(ROW_MAJOR, COLUMN_READER, (32, 32), "fp32", vector_bytes=16)
    assert explicit.wavefronts == rep.wavefronts


def test_fp16_same_word_is_broadcast_not_conflict():
    # two neighbouring fp16 lanes share one 4-byte word: 64 B per request, one wavefront
    rep = bank_conflicts(ROW_MAJOR, ROW_READER, (32, 32), "fp16", vector_bytes=2)
    assert rep.wavefronts[0] == 1
    assert rep.lane_banks[0][0, 0] == rep.lane_banks[0][1, 0]


def test_multiple_warps_and_mma_operand_swizzle():
    # the sm_80 matmul A tile: 128x32 fp16 in #shared (vec 8, perPhase 2, maxPhase 4),
    # written by #blocked1 (spt [1,8], tpw [8,4], wpc [4,1]): conflict-free 16-byte stores
    lay = BlockedLayout((1, 8), (8, 4), (4, 1), (1, 0))
    rep = bank_conflicts(SwizzledSharedLayout(8, 2, 4, (1, 0)), lay, (128, 32), "fp16",
                         vector_bytes=16)
    assert rep.vector_bytes == 16
    assert {r.warp for r in rep.requests} == {0, 1, 2, 3}
    assert rep.conflict_degree == 1
    # the coalesced stores are contiguous, so plain row-major is conflict-free for them too
    assert bank_conflicts(ROW_MAJOR, lay, (128, 32), "fp16", vector_bytes=16).conflict_degree == 1


def test_mma_a_fragment_reads_need_the_swizzle():
    # reading the A fragment (dot_op opIdx 0, kWidth 2: 4 bytes per lane) from a row-major
    # 128x32 fp16 tile: rows are 64 B apart, so rows 0, 2, 4, 6 of groupIDs share banks: 4-way.
    # Triton's choice for this operand (vec 8, perPhase 2, maxPhase 4) spreads them: no conflict.
    from workbench.layouts import DotOperandLayout, MmaLayout
    a = DotOperandLayout(0, MmaLayout(2, (2, 2), (16, 8)), 2)
    plain = bank_conflicts(ROW_MAJOR, a, (128, 32), "fp16", vector_bytes=4)
    assert plain.vector_bytes == 4 and plain.conflict_degree == 4
    assert bank_conflicts(ROW_MAJOR, a, (128, 32), "fp16", vector_bytes="auto").vector_bytes == 4
    assert bank_conflicts(SwizzledSharedLayout(8, 2, 4, (1, 0)), a, (128, 32),
                          "fp16", vector_bytes=4).conflict_degree == 1


def test_nvmma_128b_swizzle_column_reads():
    rep = bank_conflicts(NVMMASharedLayout(128, False, 16), COLUMN_READER, (32, 64), np.float16,
                         vector_bytes=16)
    assert rep.conflict_degree == 1


def test_dtypes_and_errors():
    assert [dtype_bytes(d) for d in ("fp32", "bf16", "i8", "i32", np.float64)] == [4, 2, 1, 4, 8]
    with pytest.raises(LayoutError, match="dtype"):
        dtype_bytes("float7")
    with pytest.raises(LayoutError, match="vector_bytes"):
        bank_conflicts(ROW_MAJOR, ROW_READER, (32, 32), "fp32", vector_bytes=6)
    with pytest.raises(LayoutError, match="shared"):
        bank_conflicts(ROW_READER, ROW_READER, (32, 32), "fp32")


def _random_blocked(rng, shape, warps):
    """A random valid 2-d blocked layout for ``shape`` with ``warps`` warps."""
    def split(total, parts=2):
        out = [1] * parts
        for _ in range(int(total).bit_length() - 1):
            out[int(rng.integers(parts))] *= 2
        return tuple(out)
    spt = tuple(int(2 ** rng.integers(0, 3)) for _ in shape)
    order = (1, 0) if rng.integers(2) else (0, 1)
    return BlockedLayout(spt, split(32), split(warps), order)


def test_conflict_summary_matches_the_full_report():
    """The vectorised, cached summary the code generator records equals the degree and the
    total wavefronts of the per-request report, over random blocked readers of row-major,
    swizzled and NVMMA shared tiles, scalar, vector and "auto" accesses."""
    from workbench.layouts.banks import conflict_summary
    rng = np.random.default_rng()
    shares = [ROW_MAJOR, PaddedRowMajor(1), PaddedRowMajor(4),
              SwizzledSharedLayout(4, 2, 4, (1, 0)), SwizzledSharedLayout(8, 1, 8, (1, 0)),
              NVMMASharedLayout(128, False, 16), NVMMASharedLayout(64, False, 32),
              NVMMASharedLayout(32, True, 16)]
    checked = 0
    for _ in range(25):
        shape = (int(2 ** rng.integers(4, 7)), int(2 ** rng.integers(4, 7)))
        reader = _random_blocked(rng, shape, int(2 ** rng.integers(0, 3)))
        shared = shares[int(rng.integers(len(shares)))]
        dtype = ["fp16", "fp32", "i8", "fp64"][int(rng.integers(4))]
        vb = [None, "auto", 4, 8, 16][int(rng.integers(5))]
        try:
            full = bank_conflicts(shared, reader, shape, dtype, vb)
        except LayoutError:
            with pytest.raises(LayoutError):
                conflict_summary(shared, reader, shape, dtype, vb)
            continue
        got = conflict_summary(shared, reader, shape, dtype, vb)
        assert got == (float(full.conflict_degree), int(full.total_wavefronts)), \
            (shared, reader, shape, dtype, vb)
        assert conflict_summary(shared, reader, list(shape), dtype, vb) == got  # cached
        checked += 1
    assert checked >= 5
