"""Cast rules (Triton's ``language/semantic.py``, ``cast``), a mixin of
:class:`~workbench.language.semantic.Semantic`: ``cast`` (float/int/bool/pointer conversions,
``fp_downcast_rounding``) and ``bitcast``."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import dtypes as dt
from .core import LanguageError, PyScalar, constexpr
from .fp8casts import Fp8CastRules

if TYPE_CHECKING:  # annotations only
    from .core import tensor


_ROUNDING_ONLY_WHEN_TRUNCATING = ("fp_downcast_rounding should be set only for truncating "
                                  "floating point conversions")


def _unwrap(v):
    return v.value if isinstance(v, constexpr) else v


class CastRules(Fp8CastRules):
    """``cast``/``bitcast``; needs ``to_tensor``, ``_op``, ``wrap``, ``compare``."""

    if TYPE_CHECKING:  # provided by Semantic, the class this is mixed into
        def to_tensor(self, x) -> tensor: ...
        def _op(self, name, operands, d, shape, attrs=None) -> tensor: ...
        def wrap(self, handle, d: dt.dtype, shape=()) -> tensor: ...
        def compare(self, name: str, a, b) -> tensor: ...

    def cast(self, x, d: dt.dtype, rounding: str | None = None) -> tensor:
        """Convert ``x`` to dtype ``d`` (Triton's ``language/semantic.py``, ``cast``)."""
        x = self.to_tensor(x)
        d = _unwrap(d)
        if not isinstance(d, dt.dtype):
            raise LanguageError(f"cast target must be a dtype, got {d!r}")
        s = x.dtype
        if s == d:
            return x
        if rounding is not None and rounding not in ("rtne", "rtz"):
            raise LanguageError(f"unknown rounding mode {rounding!r}", "use 'rtne' or 'rtz'")
        if s.is_fp8() or d.is_fp8():
            narrowing = s.is_floating() and d.is_floating() and \
                d.primitive_bitwidth < s.primitive_bitwidth
            if rounding is not None and not narrowing:
                raise LanguageError(_ROUNDING_ONLY_WHEN_TRUNCATING)
            return self._cast_fp8(x, d, rounding)
        if (s.is_fp16() or s.is_bf16()) and not d.is_fp32():
            return self.cast(self.cast(x, dt.float32), d, rounding)
        if s.is_floating() and d.is_floating():
            return self._cast_float_to_float(x, d, rounding)
        if rounding is not None:
            raise LanguageError(_ROUNDING_ONLY_WHEN_TRUNCATING)
        if s.is_int() and d.is_int():
            return self._cast_int_to_int(x, d)
        return self._cast_across_kinds(x, d)

    def _cast_float_to_float(self, x, d: dt.dtype, rounding: str | None) -> tensor:
        """``arith.truncf`` (or ``tt.fp_to_fp`` with a rounding mode) or ``arith.extf``."""
        if x.dtype.primitive_bitwidth > d.primitive_bitwidth:
            if rounding in (None, "rtne"):
                return self._op("arith.truncf", [x], d, x.shape)
            return self._op("tt.fp_to_fp", [x], d, x.shape, {"rounding": rounding})
        if rounding is not None:
            raise LanguageError(_ROUNDING_ONLY_WHEN_TRUNCATING)
        return self._op("arith.extf", [x], d, x.shape)

    def _cast_int_to_int(self, x, d: dt.dtype) -> tensor:
        """``!= 0`` for bool, the same bits for equal widths, else ``arith.trunci``,
        ``arith.extsi`` or ``arith.extui``."""
        s, shp = x.dtype, x.shape
        if d.is_bool():
            return self.compare("ne", x, PyScalar(0, s))
        if s.int_bitwidth == d.int_bitwidth:
            return self.wrap(x.handle, d, shp)
        if s.int_bitwidth > d.int_bitwidth:
            return self._op("arith.trunci", [x], d, shp)
        ext = "extsi" if s.is_int_signed() else "extui"
        return self._op("arith." + ext, [x], d, shp)

    def _cast_across_kinds(self, x, d: dt.dtype) -> tensor:
        """Float <-> int, pointer <-> int64 and pointer <-> pointer casts."""
        s, shp = x.dtype, x.shape
        if s.is_floating() and d.is_int():
            if d.is_bool():
                return self.compare("ne", x, PyScalar(0.0, s))
            return self._op("arith.fptosi" if d.is_int_signed() else "arith.fptoui", [x], d, shp)
        if s.is_int() and d.is_floating():
            return self._op("arith.sitofp" if s.is_int_signed() else "arith.uitofp", [x], d, shp)
        if s.is_ptr() and d.is_int():
            if d.is_bool():
                return self.compare("ne", self.cast(x, dt.int64), PyScalar(0, dt.int64))
            if d != dt.int64:
                raise LanguageError(f"a pointer can only be cast to int64, not {d}")
            return self._op("tt.ptr_to_int", [x], d, shp)
        if s.is_int() and d.is_ptr():
            if s != dt.int64:
                raise LanguageError(f"only int64 can be cast to a pointer, not {s}")
            return self._op("tt.int_to_ptr", [x], d, shp)
        if s.is_ptr() and d.is_ptr():
            if s.to_ir() == d.to_ir():
                return self.wrap(x.handle, d, shp)
            return self._op("tt.bitcast", [x], d, shp)
        raise LanguageError(f"cannot cast {s!r} to {d!r}")

    def bitcast(self, x, d: dt.dtype) -> tensor:
        """Reinterpret the bits of ``x`` as ``d`` (equal bit widths required)."""
        x = self.to_tensor(x)
        d = _unwrap(d)
        if x.dtype.to_ir() == d.to_ir():  # e.g. int32 <-> uint32: the same signless bits
            return self.wrap(x.handle, d, x.shape)
        if x.dtype.is_ptr() or d.is_ptr():
            return self.cast(x, d)
        if x.dtype.primitive_bitwidth != d.primitive_bitwidth:
            raise LanguageError(f"cannot bitcast {x.dtype} ({x.dtype.primitive_bitwidth} bits) "
                                f"to {d} ({d.primitive_bitwidth} bits)",
                                "bitcast needs types of equal bit width")
        return self._op("tt.bitcast", [x], d, x.shape)
