"""How Triton 3.6 chooses MMA layouts and the shared layouts of their operands.

Used by the accelerate-matmul pass. Formulas from Triton 3.6
``lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp`` (``warpsPerTileV2``,
``warpsPerTileV3``, ``mmaVersionToInstrShape``) and ``SwizzledSharedEncodingAttr::get`` for
MMA operands (``TritonGPUAttrDefs.td``).
"""
from __future__ import annotations

from collections.abc import Sequence

from .encodings import MmaLayout, NVMMASharedLayout, SwizzledSharedLayout
from .errors import LayoutError
from .linear import is_pow2

_V3_N_16BIT = tuple(range(256, 7, -8))
_V3_N_INT8 = (224, 208, 192, 176, 160, 144, 128, 112, 96, 80, 64, 48, 32, 24, 16, 8)


def warps_per_tile_v2(shape: Sequence[int], num_warps: int,
                      chained: bool = False) -> tuple[int, int]:
    """``warpsPerCTA`` of an MMA v2 result of ``shape`` = (M, N).

    Chained dots (the result feeds another dot): all warps along the larger dim (M on ties).
    Otherwise start at (1, 1) with reps (ceil(M/16), ceil(N/8)) and double the dim with more reps
    (ties -> M), halving its reps, until the product is ``num_warps``.
    Example: (128, 128), 4 warps -> (2, 2).
    """
    m, n = int(shape[0]), int(shape[1])
    if not is_pow2(num_warps):
        raise LayoutError(f"num_warps = {num_warps} must be a power of two")
    if chained:
        return (num_warps, 1) if m >= n else (1, num_warps)
    warps = [1, 1]
    reps = [-(-m // 16), -(-n // 8)]
    while warps[0] * warps[1] < num_warps:
        if reps[0] >= reps[1]:
            warps[0] *= 2
            if reps[0] != 1:
                reps[0] //= 2
        else:
            warps[1] *= 2
            reps[1] //= 2
    return warps[0], warps[1]


def mma_v3_instr_shape(shape: Sequence[int], num_warps: int, element_bit_width: int,
                       is_int8: bool = False) -> tuple[int, int, int]:
    """``instrShape = (16, N, K)`` of a Hopper wgmma result of ``shape`` = (M, N).

    K = 256 / bit width; N is the largest valid wgmma N (multiples of 8 up to 256; for int8 a
    sparser list up to 224) dividing the tile's N with N <= max(N_tile / nWarps, 8), where
    mWarps = max(M / 16, 1) and nWarps = max(num_warps / mWarps, 1).
    Example: (128, 128), 8 warps, fp16 -> (16, 128, 16).
    """
    m_tile, n_tile = int(shape[0]), int(shape[1])
    k = 256 // int(element_bit_width)
    m_warps = max(m_tile // 16, 1)
    n_warps = max(num_warps // m_warps, 1)
    max_n = max(n_tile // n_warps, 8)
    for n in (_V3_N_INT8 if is_int8 else _V3_N_16BIT):
        if n_tile % n == 0 and n <= max_n:
            return (16, n, k)
    raise LayoutError(f"no wgmma N fits a tile of N = {n_tile}")


def warps_per_tile_v3(shape: Sequence[int], num_warps: int, instr_n: int,
                      chained: bool = False) -> tuple[int, int]:
    """``warpsPerCTA`` of an MMA v3 result: chained -> (num_warps, 1); otherwise start at (4, 1)
    and double M while M > 16 * warpsM, else N. Example: (128, 128), 8 warps -> (8, 1)."""
    if num_warps % 4:
        raise LayoutError(f"num_warps = {num_warps}: wgmma needs a multiple of 4 warps")
    if chained:
        return num_warps, 1
    ret = [4, 1]
    while ret[0] * ret[1] < num_warps:
        if int(shape[0]) > 16 * ret[0]:
            ret[0] *= 2
        else:
            ret[1] *= 2
    return ret[0], ret[1]


def mma_layout_for(shape: Sequence[int], num_warps: int, version: int, element_bit_width: int = 16,
                   chained: bool = False) -> MmaLayout:
    """The ``#ttg.nvidia_mma`` Triton 3.6 gives a dot result of ``shape`` (rank 2; rank 3, a
    batched dot, takes MMA v2 with every warp along the batch: ``warpsPerCTA = [W, 1, 1]``,
    ``instrShape = [1, 16, 8]``)."""
    if version == 2 and len(shape) == 3:
        return MmaLayout(2, (num_warps, 1, 1), (1, 16, 8))
    if version == 2:
        return MmaLayout(2, warps_per_tile_v2(shape, num_warps, chained), (16, 8))
    instr = mma_v3_instr_shape(shape, num_warps, element_bit_width)
    return MmaLayout(3, warps_per_tile_v3(shape, num_warps, instr[1], chained), instr)


def mma_operand_shared(op_idx: int, shape: Sequence[int], order: Sequence[int], k_width: int,
                       element_bit_width: int, need_trans: bool = False) -> SwizzledSharedLayout:
    """The swizzled shared layout Triton picks to stage an MMA operand (Ampere path).

    ::

        K = shape[order[0]]
        perPhase = max(1024 // (bits * K), 1)
        mmaStride = 4 if bits == 64 else 8
        vec = 4 * kWidth; swap(vec, mmaStride) if needTrans; swap again if order[0] != kDim
        maxPhase = max(min(mmaStride, 1024 // (vec * bits)), 1)
        maxPhase = max(maxPhase // perPhase, 1)

    kDim is the last dim for A (op_idx 0) and the second-to-last for B. Examples (fp16, kWidth
    2): A 128x32 order (1, 0) -> vec 8, perPhase 2, maxPhase 4; B 32x128 -> 8, 1, 8.
    """
    rank = len(shape)
    bits = int(element_bit_width)
    k_extent = int(shape[order[0]])
    per_phase = max(1024 // (bits * k_extent), 1)
    mma_stride = 4 if bits == 64 else 8
    vec = 4 * int(k_width)
    if need_trans:
        vec, mma_stride = mma_stride, vec
    k_dim = rank - 1 if op_idx == 0 else rank - 2
    if order[0] != k_dim:
        vec, mma_stride = mma_stride, vec
    max_phase = max(min(mma_stride, 1024 // (vec * bits)), 1)
    max_phase = max(max_phase // per_phase, 1)
    return SwizzledSharedLayout(vec, per_phase, max_phase, tuple(order))


def nvmma_shared_for(shape: Sequence[int], element_bit_width: int,
                     transposed: bool = False) -> NVMMASharedLayout:
    """The default ``#ttg.nvmma_shared`` for a tile: the largest of 128/64/32-byte swizzle that
    divides the contiguous dim's byte size (0 if none). E.g. 128x64 fp16 -> 128-byte swizzle."""
    contig = int(shape[0] if transposed else shape[-1])
    nbytes = contig * int(element_bit_width) // 8
    swz = next((s for s in (128, 64, 32) if nbytes % s == 0), 0)
    return NVMMASharedLayout(swz, transposed, element_bit_width)


def wgmma_operand_shared(shape: Sequence[int], order: Sequence[int],
                         element_bit_width: int) -> NVMMASharedLayout | None:
    """The ``#ttg.nvmma_shared`` a wgmma operand (A: M x K or B: K x N) is staged in, or None
    when no swizzled layout fits (the caller keeps mma.sync).

    ``order[0]`` is the contiguous dim of the registers the tile comes from and stays the
    contiguous dim in shared memory (``transposed = order[0] == 0``). The swizzle is the
    largest of 128/64/32 bytes that the contiguous extent's byte size is a multiple of (64
    fp16 = 128 bytes: 128-byte swizzle), and none when the other dim has fewer than 8 rows
    (Triton 3.6 ``NVMMASharedEncodingAttr`` builder from a shape and an order,
    ``TritonGPUAttrDefs.td``). A wgmma whose M/N origin falls inside a swizzle atom's row
    reads from there (the hardware swizzles absolute address bits, PTX ISA 9.7.15.5.1)."""
    bits = int(element_bit_width)
    contig = int(order[0])
    ext_bytes = int(shape[contig]) * bits // 8
    swz = next((s for s in (128, 64, 32) if ext_bytes >= s and ext_bytes % s == 0), 0)
    if int(shape[1 - contig]) < 8:
        swz = 0
    if not swz:
        return None
    return NVMMASharedLayout(swz, contig == 0, bits)
