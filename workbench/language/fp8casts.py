"""Casts to and from the 8-bit float dtypes (Triton 3.6's ``language/semantic.py``, ``cast``),
a mixin of :class:`~workbench.language.casts.CastRules`.

- float8e4nv, float8e5, float8e4b8, float8e5b16 <-> float16, bfloat16, float32, float64 and
  between two fp8 dtypes: one ``tt.fp_to_fp``; a narrowing one carries its rounding mode
  (``rounding = rtne`` by default, ``rtz`` on request), as Triton prints it. Every backend gives
  the semantics of :mod:`workbench.ir.fp8` (round, saturate to the largest finite value, NaN
  stays NaN).
- float8e4b15 has no MLIR type (``i8`` in the IR); Triton converts it with inline PTX on
  NVIDIA targets (``language/extra/cuda/utils.py``). The workbench emits the same arithmetic as
  integer ops, so every backend runs it: widening is exact (``fp16 bits = sign << 8 | magnitude
  << 7``); narrowing goes through float16 (from float32 rounding toward zero), clamps the
  magnitude to 1.75 (NaN and infinities included) and rounds half away from zero, as the PTX
  does on sm_80 and later.
- fp8 <-> integer casts are refused, as in Triton: go through a float dtype.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import dtypes as dt
from .core import LanguageError
from .fp8_rules import warn_deprecated_dot_operands
from .target_info import current_target

if TYPE_CHECKING:  # annotations only
    from .core import tensor

_E4B15_MAX_F16_BITS = 0x3F00  # 1.75: the clamp of Triton's fp16 -> fp8e4b15 PTX


class Fp8CastRules:
    """``_cast_fp8``; needs ``cast``, ``_op``, ``constant``, ``wrap``."""

    if TYPE_CHECKING:  # provided by Semantic, the class this is mixed into
        def cast(self, x, d: dt.dtype, rounding: str | None = None) -> tensor: ...
        def _op(self, name, operands, d, shape, attrs=None) -> tensor: ...
        def constant(self, value, d: dt.dtype, shape=()) -> tensor: ...
        def wrap(self, handle, d: dt.dtype, shape=()) -> tensor: ...

    def _cast_fp8(self, x, d: dt.dtype, rounding: str | None) -> tensor:
        """Cast where the source or the destination is an fp8 dtype (module doc). ``rounding``
        is None, "rtne" or "rtz"; None means rtne for narrowing conversions.

        Raises LanguageError for fp8 <-> integer or pointer casts."""
        s = x.dtype
        if not (s.is_floating() and d.is_floating()):
            raise LanguageError(f"cannot cast {s} to {d}: 8-bit floats convert only to and "
                                "from other float types",
                                f"go through a float type, e.g. x.to(tl.float32).to({_tl(d)})")
        if s.is_fp8e4b15():
            return self._e4b15_to_float(x, d)
        if d.is_fp8e4b15():
            return self._float_to_e4b15(x)
        attrs = None
        if d.primitive_bitwidth < s.primitive_bitwidth:
            attrs = {"rounding": rounding or "rtne"}
        return self._op("tt.fp_to_fp", [x], d, x.shape, attrs)

    def fp8_abs(self, x) -> tensor:
        """|x| of an fp8 tile by its bits: ``bits & 0x7F`` (0x80 kept for the fnuz formats,
        where it is NaN)."""
        bits = self.wrap(x.handle, dt.uint8, x.shape) if x.dtype.is_fp8e4b15() else \
            self._op("tt.bitcast", [x], dt.uint8, x.shape)
        mag = self._int_op("andi", bits, 0x7F, dt.uint8)
        if x.dtype.is_fp8e4b8() or x.dtype.is_fp8e5b16():
            nan = self._op("arith.cmpi", [bits, self.constant(0x80, dt.uint8, x.shape)],
                           dt.int1, x.shape, {"predicate": "eq"})
            mag = self._op("arith.select", [nan, bits, mag], dt.uint8, x.shape)
        return self._op("tt.bitcast", [mag], x.dtype, x.shape) if x.dtype.to_ir() != \
            mag.dtype.to_ir() else self.wrap(mag.handle, x.dtype, x.shape)

    # float8e4b15 ---------------------------------------------------------------------------
    def _int_op(self, name: str, a, value, d: dt.dtype) -> tensor:
        c = self.constant(value, d, a.shape)
        return self._op("arith." + name, [a, c], d, a.shape)

    def _e4b15_to_float(self, x, d: dt.dtype) -> tensor:
        """fp8e4b15 bits -> float16 (exact), then to ``d``."""
        b = self._op("arith.extui", [self.wrap(x.handle, dt.uint8, x.shape)], dt.uint16, x.shape)
        sign = self._int_op("shli", self._int_op("andi", b, 0x80, dt.uint16), 8, dt.uint16)
        mag = self._int_op("shli", self._int_op("andi", b, 0x7F, dt.uint16), 7, dt.uint16)
        bits = self._op("arith.ori", [sign, mag], dt.uint16, x.shape)
        h = self._op("tt.bitcast", [bits], dt.float16, x.shape)
        return h if d == dt.float16 else self.cast(h, d)

    def _float_to_e4b15(self, x) -> tensor:
        """float -> fp8e4b15 (module doc): through float16, clamp to 1.75, round half away."""
        if x.dtype.is_fp8():
            x = self.cast(x, dt.float32)
        if x.dtype != dt.float16:
            if x.dtype != dt.float32:
                x = self.cast(x, dt.float32)
            x = self.cast(x, dt.float16, "rtz")
        bits = self._op("tt.bitcast", [x], dt.uint16, x.shape)
        mag = self._int_op("andi", bits, 0x7FFF, dt.uint16)
        mag = self._int_op("minui", mag, _E4B15_MAX_F16_BITS, dt.uint16)
        mag = self._int_op("shrui", self._int_op("addi", mag, 0x40, dt.uint16), 7, dt.uint16)
        sign = self._int_op("andi", self._int_op("shrui", bits, 8, dt.uint16), 0x80, dt.uint16)
        out = self._op("arith.ori", [sign, mag], dt.uint16, x.shape)
        out = self._op("arith.trunci", [out], dt.uint8, x.shape)
        return self.wrap(out.handle, dt.float8e4b15, x.shape)


def imprecise_default() -> int:
    """``max_num_imprecise_acc`` of an fp8 ``tl.dot`` that does not give it: 2**30 on
    ``cuda:90``, 0 elsewhere (Triton 3.6 ``CUDABackend.parse_options``: ``2**30 if capability
    == 90 else 0``; the AMD and interpreter backends say 0)."""
    t = current_target()
    return 2 ** 30 if t is not None and t.backend == "cuda" and t.arch == 90 else 0


def _tl(d: dt.dtype) -> str:
    return "tl." + d.name


def fp8_dot_operands(sem, a, b, k: int, max_num_imprecise_acc):
    """The operands and ``maxNumImpreciseAcc`` of a ``tl.dot`` with an fp8 operand (Triton's
    ``language/semantic.py``, ``dot``): both must be fp8 (any two fp8 dtypes); float8e4b15,
    which has no MLIR type, upcasts both to float16; ``max_num_imprecise_acc`` must not exceed
    K. Its default is Triton's backend option ``max_num_imprecise_acc_default``
    (``third_party/nvidia/backend/compiler.py``): 2**30 when compiling for ``cuda:90`` (wgmma
    accumulates every K step in the fp32 accumulator; see :func:`imprecise_default`), 0 on
    every other target. The CPU backend and the interpreter accumulate in fp32 whatever the
    value; on ``cuda:90`` a value from 32 up to K makes wgmma add its partial sums into the
    accumulator every that many K elements, and below 32 the dot leaves wgmma
    (:mod:`workbench.passes.widen_fp8_dot`). On a target that deprecates float8e4b15
    operands (sm_90 and later) such a dot warns (UserWarning, Triton's words:
    :func:`workbench.language.fp8_rules.warn_deprecated_dot_operands`).

    Raises LanguageError for an fp8 operand with a non-fp8 one."""
    if not (a.dtype.is_fp8() and b.dtype.is_fp8()):
        raise LanguageError(f"tl.dot of {a.dtype} and {b.dtype}: an 8-bit float operand needs "
                            "an 8-bit float partner",
                            "convert both to one type, e.g. .to(tl.float16)")
    if a.dtype.is_fp8e4b15() or b.dtype.is_fp8e4b15():
        warn_deprecated_dot_operands(a.dtype.short_name, b.dtype.short_name)
        a, b = sem.cast(a, dt.float16), sem.cast(b, dt.float16)
    imprecise = max_num_imprecise_acc.value if hasattr(max_num_imprecise_acc, "value") \
        else max_num_imprecise_acc
    if imprecise is None:
        imprecise = imprecise_default()
    elif imprecise > k:
        raise LanguageError(f"max_num_imprecise_acc ({imprecise}) must be <= K ({k})")
    return a, b, int(imprecise)
