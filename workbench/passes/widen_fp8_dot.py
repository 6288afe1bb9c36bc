"""fp8 dots on the CUDA backend: both operands widened to fp16 before ``tt.dot``.

Every value of the 8-bit float formats a ``tl.dot`` takes (``f8E5M2``, ``f8E4M3FN`` and their
``FNUZ`` variants) is exactly an fp16 value (fp16 has 5 exponent bits, 10 mantissa bits and
subnormals down to 2**-24; the fp8 formats' smallest subnormals are 2**-16, 2**-9, 2**-17 and
2**-10), so ``tt.fp_to_fp`` to fp16 loses nothing, and the dot then takes the fp16 tensor-core
path (mma.sync m16n8k16, or wgmma on ``cuda:90``) instead of FMA. Triton does the same
widening for MMA v2 on GPUs without fp8 tensor cores (sm_80; its
``TritonGPUAccelerateMatmul`` decomposition); on sm_90 it keeps fp8 operands for wgmma's
``e5m2``/``e4m3`` forms, which this backend does not emit (PTX ISA 9.7.15.5.2 lists them).
Sums are the same up to the order of the fp32 accumulation.

Which fp8 formats a CUDA dot takes follows Triton's NVIDIA backend (``supported_fp8_dtypes``
in ``third_party/nvidia/backend/compiler.py``): ``fp8e5`` everywhere, ``fp8e4nv`` from sm_89;
the ``FNUZ`` formats (``fp8e5b16``, ``fp8e4b8``) are AMD's and no CUDA target takes them.
:func:`check_fp8_dots` refuses the others at the dot's line, with Triton's words.
"""
from __future__ import annotations

from ..errors import CompilationError
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


_NAMES = {"f8E5M2FNUZ": "fp8e5b16", "f8E4M3FNUZ": "fp8e4b8", "f8E4M3FN": "fp8e4nv"}


def check_fp8_dots(module: Operation, arch: int) -> None:
    """Raise CompilationError (at the dot's line, the cause saying "not supported in this
    architecture" as Triton's does) for a ``tt.dot`` in ``module`` whose operand is an fp8
    format sm_``arch`` does not take (module docstring)."""
    from ..language.core import LanguageError
    for dot in (o for o in module.walk() if o.name == "tt.dot"):
        for v in dot.operands[:2]:
            name = getattr(getattr(v.type, "element", None), "name", None)
            if name not in _NAMES or (name == "f8E4M3FN" and arch >= 89):
                continue
            what = f"type {_NAMES[name]} not supported in this architecture (sm_{arch})"
            err = CompilationError(f"tl.dot: {what}", dot.loc,
                                   "fp8e5 works on every CUDA target, fp8e4nv from sm_89 "
                                   "(cuda:90); fp8e5b16 and fp8e4b8 are AMD's formats")
            err.__cause__ = LanguageError(f"{what}. The supported fp8 dtypes are "
                                          f"{'fp8e4nv, ' if arch >= 89 else ''}fp8e5")
            raise err


__all__ = ["check_fp8_dots", "widen_fp8_dots"]
