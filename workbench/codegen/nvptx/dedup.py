"""Registers an elementwise op need not compute: equal by the axis analysis' constancy.

The axis analysis (:mod:`workbench.passes.axis_info`, Triton's AxisInfo) states, per dim
``d``, a constancy ``c_d``: the tensor's values are equal within aligned blocks of ``c_d``
elements along ``d``. A thread's register ``r`` holds coordinate ``regs[r] XOR part`` (the
thread part from the lane and warp ids, :mod:`.threads`), so two registers whose register
coordinates differ only in the bits below ``c_d`` (a power of two dividing it) hold
coordinates in the same aligned block of every dim, in every thread: the second can reuse
the first's value. LLVM cannot see this (the two compares read different row registers), so
without it the tutorial matmul's K-tail mask ``offs_k[:, None] < K - k * BLOCK_K`` costs one
compare per row a thread copies instead of one per 16 rows.

This is Triton 3.6's ``ElementwiseOpConversionBase::maybeDeduplicate``
(``include/triton/Conversion/TritonGPUToLLVM/ElementwiseOpToLLVMBase.h``): registers are
mapped through the layout with the low constancy bits cleared.
"""
from __future__ import annotations

from ...ir.types import TensorType


def representatives(regs: tuple, constancy: tuple) -> list:
    """For each register (its coordinate tuple from the register bits, ``regs``), the index
    of the first register whose coordinate equals it once the bits below each dim's
    constancy (the largest power of two dividing it) are cleared. ``constancy``: one int per
    dim (1: nothing shared along that dim)."""
    masks = [~((c & -c) - 1) if c > 0 else -1 for c in constancy]
    first: dict = {}
    out = []
    for i, coord in enumerate(regs):
        key = tuple(x & m for x, m in zip(coord, masks, strict=True))
        out.append(first.setdefault(key, i))
    return out


def deduplicate(kl, op) -> None:
    """Replace the registers of ``op``'s (elementwise, side-effect-free) tensor result that
    equal an earlier register by constancy with that register's value; the computations
    left unused are dropped by LLVM. No-op for scalars, unknown constancy or a register
    count that does not match the layout."""
    t = op.result.type
    if not isinstance(t, TensorType) or t.encoding is None:
        return
    ai = kl.axis.get(id(op.result))
    if ai is None or len(ai.constancy) != len(t.shape) or all(c <= 1 for c in ai.constancy):
        return
    vals = kl.get(op.result)
    tl = kl.layout(t)
    if len(vals) != tl.num_regs:
        return
    reps = representatives(tl.regs, tuple(ai.constancy))
    if any(r != i for i, r in enumerate(reps)):
        kl.set(op.result, [vals[r] for r in reps])


__all__ = ["deduplicate", "representatives"]
