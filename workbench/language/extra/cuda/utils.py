"""CUDA helpers of Triton 3.6's ``triton.language.extra.cuda``: the global timer and the SM id
(read with PTX inline assembly, so only the CUDA backend runs them), the kernel's thread and
warp counts (compile-time constants), and the software fp8e4b15 conversions that Triton writes
in inline assembly for GPUs older than sm_89 (here the workbench's own fp8 casts, which every
backend runs, with Triton's conversion rules).

Sources: PTX ISA, "Special Registers" (``%globaltimer``: a 64-bit nanosecond timer;
``%smid``: the id of the SM the thread runs on).
"""
from __future__ import annotations

from ... import dtypes as dt
from ...core import LanguageError, builtin, constexpr
from ...inline_asm import inline_asm_elementwise
from ...semantic import unwrap


@builtin
def globaltimer(_semantic=None):
    """The GPU's global nanosecond timer (``%globaltimer``, int64 scalar; not pure: two reads
    are two values). CUDA backend only."""
    return inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=dt.int64,
                                  is_pure=False, pack=1, _semantic=_semantic)


@builtin
def smid(_semantic=None):
    """The id of the streaming multiprocessor running this program (``%smid``, int32
    scalar). CUDA backend only."""
    return inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=dt.int32,
                                  is_pure=True, pack=1, _semantic=_semantic)


@builtin
def num_warps(_semantic=None):
    """The kernel's ``num_warps`` launch option, a compile-time constant."""
    return constexpr(_semantic.num_warps)


@builtin
def num_threads(_semantic=None):
    """Threads per program: ``num_warps * 32``, a compile-time constant."""
    return constexpr(_semantic.num_warps * 32)


def _custom_float8(arg, dst_ty, rounding, sem):
    x = sem.to_tensor(unwrap(arg))
    dst = unwrap(dst_ty)
    dst = getattr(dst, "element_ty", dst)
    if x.dtype == dt.float8e4b15:
        if dst not in (dt.float16, dt.float32):
            raise LanguageError(f"convert_custom_float8 widens fp8e4b15 to fp16 or fp32, not "
                                f"{dst}")
        return sem.cast(x, dst, None)
    if x.dtype not in (dt.float16, dt.float32) or dst != dt.float8e4b15:
        raise LanguageError(f"convert_custom_float8 converts between fp8e4b15 and fp16/fp32, "
                            f"not {x.dtype} to {dst}")
    if x.dtype == dt.float32:
        x = sem.cast(x, dt.float16, "rtz")
    return sem.cast(x, dst, unwrap(rounding))


@builtin
def convert_custom_float8_sm80(arg, dst_ty, fp_downcast_rounding=None, _semantic=None):
    """fp8e4b15 <-> fp16/fp32 (fp32 first truncated to fp16, as Triton's sm_80 routine)."""
    return _custom_float8(arg, dst_ty, fp_downcast_rounding, _semantic)


@builtin
def convert_custom_float8_sm70(arg, dst_ty, fp_downcast_rounding=None, _semantic=None):
    """The same conversion as :func:`convert_custom_float8_sm80` (Triton's sm_70 routine
    differs only in the instructions it may use)."""
    return _custom_float8(arg, dst_ty, fp_downcast_rounding, _semantic)
