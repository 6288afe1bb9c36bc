"""``tl.dot_scaled``: the matrix product of microscaled tiles (OCP MX formats), with Triton
3.6's signature and checks (``language/core.py`` and ``language/semantic.py``, ``dot_scaled``).

It emits one ``tt.dot_scaled`` op, printed as Triton prints it. Every workbench backend then
computes it as Triton does on sm_90, which has no block-scaled MMA
(``DecomposeScaledBlocked.cpp``, :mod:`workbench.passes.decompose_scaled_dot`): each operand is
widened to bf16 (e2m1 unpacked, low nibble first), multiplied by ``2**(scale - 127)`` (the e8m0
scale of its group of 32 elements along K; a scale of 255 makes the group NaN), and an ordinary
bf16 ``tt.dot`` accumulates in fp32.
"""
from __future__ import annotations

from . import dtypes as dt
from .core import LanguageError, builtin, tensor
from .semantic import unwrap

FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")
_ELEM = {"e4m3": dt.float8e4nv, "e5m2": dt.float8e5, "bf16": dt.bfloat16, "fp16": dt.float16}
_BITS = {"e4m3": dt.uint8, "e5m2": dt.uint8, "bf16": dt.uint16, "fp16": dt.uint16}
GROUP = 32  # elements of K per e8m0 scale


def _operand(sem, x, fmt: str, side: str):
    """``x`` as the element type of ``fmt`` (bitcast from its unsigned bits if needed)."""
    x = unwrap(x)
    if not isinstance(x, tensor) or len(x.shape) != 2:
        raise LanguageError(f"tl.dot_scaled: {side} must be a 2-D tile, got {x!r}")
    if fmt == "e2m1":
        if x.dtype != dt.uint8:
            raise LanguageError(f"tl.dot_scaled: e2m1 {side} must be packed as uint8 (two "
                                f"values per byte), got {x.dtype}")
        return x
    if x.dtype == _ELEM[fmt]:
        return x
    if x.dtype != _BITS[fmt] and not (x.dtype.is_int() and x.dtype.primitive_bitwidth ==
                                      _BITS[fmt].primitive_bitwidth):
        raise LanguageError(f"tl.dot_scaled: {side} in format {fmt} must be {_ELEM[fmt]} or "
                            f"{_BITS[fmt]}, got {x.dtype}")
    return sem.bitcast(x, _ELEM[fmt])


#: fp8 scales are NVIDIA's nvfp4 block scaling (e4m3 scales, one per 16 values), which only
#: Blackwell's tensor cores do (the PTX ISA's ``tcgen05.mma`` with ``.block_scale``, sm_100a);
#: Triton 3.6 compiles it only there too (for sm_90 its TritonGPUAccelerateMatmul fails).
_NVFP4 = ("tl.dot_scaled: {side}_scale is a tile of {dtype}: fp8 scales (nvfp4 block scaling, "
          "one e4m3 scale per 16 values) need the tcgen05.mma block_scale instruction of "
          "NVIDIA Blackwell GPUs (sm_100), which the workbench does not target (cuda:80 and "
          "cuda:90; its interpreter and CPU backend follow them). Use uint8 e8m0 scales, one "
          "per 32 values (mxfp4/mxfp8), which every backend decomposes")


def _scale(sem, s, rows: int, k: int, side: str):
    s = unwrap(s)
    if s is None:
        return None
    if isinstance(s, tensor) and s.dtype.is_fp8():
        raise LanguageError(_NVFP4.format(side=side, dtype=s.dtype))
    if not isinstance(s, tensor) or s.dtype.primitive_bitwidth != 8 or not s.dtype.is_int():
        raise LanguageError(f"tl.dot_scaled: {side}_scale must be a uint8 tile of e8m0 "
                            f"exponents, got {s!r}")
    if list(s.shape) != [rows, k // GROUP]:
        raise LanguageError(f"{side}_scale must be a tensor of shape [{rows}, {k // GROUP}]. "
                            f"Got {[str(d) for d in s.shape]}")  # Triton's words
    return s


def _format(f, side: str) -> str:
    f = unwrap(f)
    if f not in FORMATS:
        raise LanguageError(f"tl.dot_scaled: unknown {side}_format {f!r}",
                            f"use one of {', '.join(FORMATS)}")
    return f


@builtin
def dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None,
               fast_math=False, lhs_k_pack=True, rhs_k_pack=True, out_dtype=dt.float32,
               _semantic=None):
    """``acc + (lhs * 2**(lhs_scale-127)) @ (rhs * 2**(rhs_scale-127))`` for microscaled
    tiles: ``lhs`` [M, K] (e2m1: uint8 [M, K/2], two values per byte, low nibble first;
    ``lhs_k_pack=False``: packed along M instead, [M/2, K]), ``rhs`` [K, N] likewise
    (``rhs_k_pack=False``: [K, N/2]); formats "e2m1", "e4m3", "e5m2", "bf16", "fp16"; scales
    uint8 e8m0 exponents of shape [M, K/32] and [N, K/32] (not transposed) or None (no
    scaling); result [M, N] of ``out_dtype`` (fp32). Raises LanguageError for other
    shapes, dtypes or formats (Triton's checks, ``language/semantic.py``)."""
    sem = _semantic
    fa, fb = _format(lhs_format, "lhs"), _format(rhs_format, "rhs")
    a, b = _operand(sem, lhs, fa, "lhs"), _operand(sem, rhs, fb, "rhs")
    ka, kb = bool(unwrap(lhs_k_pack)), bool(unwrap(rhs_k_pack))
    if (not ka and fa != "e2m1") or (not kb and fb != "e2m1"):
        raise LanguageError("tl.dot_scaled: only e2m1 operands can be packed along a "
                            "dimension other than K")
    m, k_a = a.shape
    k_b, n = b.shape
    pa, pb = (2 if fa == "e2m1" else 1), (2 if fb == "e2m1" else 1)
    k = k_a * pa if ka else k_a
    if (k_b * pb if kb else k_b) != k:
        raise LanguageError(f"tl.dot_scaled: the operands pack different K: "
                            f"{list(a.shape)} ({fa}) and {list(b.shape)} ({fb})")
    m = m if ka else m * pa
    n = n if kb else n * pb
    sa = _scale(sem, lhs_scale, m, k, "lhs")
    sb = _scale(sem, rhs_scale, n, k, "rhs")
    out_dtype = unwrap(out_dtype)
    if out_dtype != dt.float32:
        raise LanguageError(f"tl.dot_scaled: out_dtype {out_dtype} is not supported by the "
                            "workbench", "use out_dtype=tl.float32 and convert the result")
    acc = unwrap(acc)
    c = sem.constant(0.0, out_dtype, (m, n)) if acc is None else sem.to_tensor(acc)
    if list(c.shape) != [m, n] or c.dtype != out_dtype:
        raise LanguageError(f"tl.dot_scaled: acc must be {out_dtype} of shape [{m}, {n}]")
    ops = [a, b, c] + [s for s in (sa, sb) if s is not None]
    attrs = {"a_elem_type": fa, "b_elem_type": fb, "fastMath": bool(unwrap(fast_math)),
             "lhs_k_pack": ka, "rhs_k_pack": kb,
             "operandSegmentSizes": [1, 1, 1, int(sa is not None), int(sb is not None)]}
    return sem._op("tt.dot_scaled", ops, out_dtype, (m, n), attrs)
