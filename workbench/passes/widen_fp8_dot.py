"""fp8 dots on the CUDA backend: both operands widened to fp16 before ``tt.dot``.

Every value of the 8-bit float formats a ``tl.dot`` takes (``f8E5M2``, ``f8E4M3FN`` and their
``FNUZ`` variants) is exactly an fp16 value (fp16 has 5 exponent bits, 10 mantissa bits and
subnormals down to 2**-24; the fp8 formats' smallest subnormals are 2**-16, 2**-9, 2**-17 and
2**-10), so ``tt.fp_to_fp`` to fp16 loses nothing, and the dot then takes the fp16 tensor-core
path (mma.sync m16n8k16, or wgmma on ``cuda:90``) instead of FMA. Triton does the same
widening for MMA v2 on GPUs without fp8 tensor cores (sm_80; its
``TritonGPUAccelerateMatmul`` decomposition); on sm_90 it keeps fp8 operands for wgmma's
``e5m2``/``e4m3`` forms, which this backend does not emit (PTX ISA 9.7.15.5.2 lists them).
Sums are the same up to the order of the fp32 accumulation. (Which formats a CUDA target
takes at all: :mod:`.fp8_support`.)
"""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.types import FloatType, TensorType
from .values import block_of

_F16 = FloatType("f16")
_F32 = FloatType("f32")
_WIDENED = ("f8E5M2", "f8E4M3FN", "f8E5M2FNUZ", "f8E4M3FNUZ")


def _fp8_operand(v) -> bool:
    t = v.type
    return isinstance(t, TensorType) and isinstance(t.element, FloatType) and \
        t.element.name in _WIDENED


def widen_fp8_dots(module: Operation) -> Operation:
    """Widen the operands of every ``tt.dot`` in ``module`` (ttir: no encodings yet) whose A
    and B are both 8-bit floats of the formats above and whose accumulator is fp32 to fp16
    by ``tt.fp_to_fp``, in place; returns ``module``. Other dots are left as they are."""
    for dot in [o for o in module.walk() if o.name == "tt.dot"]:
        a, b = dot.operands[0], dot.operands[1]
        if not (_fp8_operand(a) and _fp8_operand(b)) or \
                getattr(dot.result.type, "element", None) != _F32:
            continue
        for i in (0, 1):
            v = dot.operands[i]
            t = v.type
            assert isinstance(t, TensorType)
            wide = Operation("tt.fp_to_fp", [v], [TensorType(t.shape, _F16, t.encoding)],
                             loc=dot.loc)
            block_of(dot).insert_before(dot, wide)
            dot.set_operand(i, wide.result)
    return module


__all__ = ["widen_fp8_dots"]
