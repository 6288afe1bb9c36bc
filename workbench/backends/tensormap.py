"""Host-side TMA descriptors: the 128-byte ``CUtensorMap`` of a ``TensorDescriptor`` argument,
encoded at launch with the driver's ``cuTensorMapEncodeTiled`` through cuda-bindings, as
Triton's launcher does (``third_party/nvidia/backend/driver.c``, ``fillTMADescriptor``).

Arguments (CUDA Driver API, ``cuTensorMapEncodeTiled``): every array is innermost dimension
first, so the descriptor's ``shape`` and ``block`` are reversed; ``globalStrides`` holds the
``rank - 1`` outer strides in bytes; element strides are 1; no interleave; the swizzle of the
kernel's shared layout; L2 promotion 128 B; out-of-bounds elements read as zero, or as NaN
with ``padding="nan"`` (``CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA``).
"""
from __future__ import annotations

import struct

from ..errors import LaunchError

#: bytes and alignment of a ``CUtensorMap`` (CUDA Driver API)
TENSORMAP_BYTES = 128
TENSORMAP_ALIGN = 64


def encode_args(meta: dict, address: int, shape, strides, padding_nan: bool) -> dict:
    """The arguments of ``cuTensorMapEncodeTiled`` as plain ints (innermost first), for a
    tensor at device ``address`` of ``shape`` with element ``strides`` (last one 1) and the
    kernel's ``meta`` (:func:`workbench.passes.tma_lowering.tensormap_meta`). Raises
    LaunchError when the tensor breaks a TMA rule the driver would reject with a bare error
    code (a 16-byte aligned base; outer strides multiples of 16 bytes, below 2**40)."""
    es = int(meta["elem_size"])
    if address % 16:
        raise LaunchError(f"a TMA descriptor's base must be 16-byte aligned, got {address:#x}")
    byte_strides = [int(s) * es for s in reversed(list(strides)[:-1])]
    for s in byte_strides:
        if s % 16 or not 0 < s < 1 << 40:
            raise LaunchError(f"a TMA descriptor's strides must be multiples of 16 bytes "
                              f"below 2**40, got {s} bytes")
    return {"elem_type": int(meta["elem_type"]), "rank": len(shape), "address": int(address),
            "dims": [int(s) for s in reversed(list(shape))], "strides": byte_strides,
            "box": [int(b) for b in reversed(list(meta["block_size"]))],
            "swizzle": int(meta["swizzle"]), "nan": bool(padding_nan)}


def encode(meta: dict, address: int, shape, strides, padding_nan: bool) -> bytes:
    """The 128 bytes of the ``CUtensorMap`` (see :func:`encode_args`). Raises
    ToolMissingError without cuda-bindings and LaunchError when the driver refuses."""
    from . import cuda_driver
    drv = cuda_driver.import_driver()
    a = encode_args(meta, address, shape, strides, padding_nan)
    u64, u32 = drv.cuuint64_t, drv.cuuint32_t
    fill = drv.CUtensorMapFloatOOBfill(1 if a["nan"] else 0)
    err, tmap = drv.cuTensorMapEncodeTiled(
        drv.CUtensorMapDataType(a["elem_type"]), a["rank"], a["address"],
        [u64(d) for d in a["dims"]], [u64(s) for s in a["strides"]],
        [u32(b) for b in a["box"]], [u32(1)] * a["rank"],
        drv.CUtensorMapInterleave(0), drv.CUtensorMapSwizzle(a["swizzle"]),
        drv.CUtensorMapL2promotion(2), fill)
    if int(err) != 0:
        raise LaunchError(f"cuTensorMapEncodeTiled failed with CUDA error {int(err)} "
                          f"({getattr(err, 'name', err)}) for {a}")
    return struct.pack("<16Q", *(int(x) for x in tmap.opaque))


__all__ = ["TENSORMAP_ALIGN", "TENSORMAP_BYTES", "encode", "encode_args"]
