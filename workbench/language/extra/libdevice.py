"""``tl.extra.libdevice``: NVIDIA's libdevice math functions under Triton 3.6's names
(``triton.language.extra.libdevice``, which forwards to ``extra/cuda/libdevice.py``).

Each function becomes one ``tt.extern_elementwise`` whose ``symbol`` is the libdevice entry
point picked by the argument dtypes, as Triton's ``core.extern_elementwise`` dispatches:
arguments become tensors (Python floats fp32, ints int32), are broadcast to one shape, and
when their dtype tuple is not one the function takes they are first promoted to a common
dtype with the arithmetic rules; a tuple still not taken raises LanguageError listing the
ones that are (fp16 and bf16 are taken by none: cast to fp32 first).

The symbols follow libdevice's naming (the CUDA Math API / libdevice user's guide):
``__nv_<name>f`` for fp32 and ``__nv_<name>`` for fp64 float functions, ``__nv_{f,d}<op>_<r>``
for arithmetic in rounding mode ``r`` (rn, rz, rd, ru), ``__nv_<src>2<dst>_<r>`` for
conversions, ``ll``/``u`` variants of the integer functions. Predicates (``isnan``,
``isinf``, ``finitef``, ``isfinited``) return int1 as Triton's do (libdevice gives int32).

What each target computes (all 313 symbols of TABLE are known to every target):

* interpreter (``backends/interp/extern*.py``) and CPU backend (``codegen/cpu/extern*.py``):
  math functions in float64 (numpy, the C library, or our own code for ``cyl_bessel_i0/i1``
  and the error-function family ``erfinv``/``erfcinv``/``erfcx``/``normcdf``/``normcdfinv``,
  written once for both in ``codegen/cpu/extern_special.py``), rounded once to the result
  type; ``fast_*`` give the accurate function. The rounding-mode arithmetic
  (``__nv_{f,d}{add,sub,mul,div,rcp,sqrt}_<r>``, ``__nv_fma{f,}_<r>``, ``__nv_frsqrt_rn``)
  and conversions (``__nv_<src>2<dst>_<r>``) are exact: the interpreter rounds the exact
  rational result, the CPU backend moves the host's round-to-nearest result by one ulp when
  error-free transformations (TwoSum, fma residuals) show the exact value lies beyond it.
  Float-to-integer conversions saturate, NaN -> 0 (PTX ``cvt``). Integer intrinsics
  (``byte_perm``, ``[u]mulhi``, ``[u]mul64hi``, ``[u]mul24``, ``[u][r]hadd``, ``[u]sad``,
  ``ffs``, ``clz``, ``popc``, ``brev``) and bit reinterpretations work on the bits.
* CUDA backend: its own implementations of a subset, NVIDIA's ``libdevice.10.bc`` for the
  rest (``codegen/nvptx/libdevice_link.py``).

A symbol a target does not know raises an error at compile time naming it.
"""
from __future__ import annotations

from ...language import dtypes as dt
from ..core import LanguageError, builtin, tensor
from ..semantic import unwrap

F32, F64, I32, I64, U32, U64 = (dt.float32, dt.float64, dt.int32, dt.int64, dt.uint32,
                                dt.uint64)
_ROUNDINGS = ("rn", "rz", "rd", "ru")

#: name -> list of (argument dtypes, symbol, result dtype); filled below
TABLE: dict[str, list[tuple[tuple, str, dt.dtype]]] = {}
#: functions whose int32 result Triton turns into int1
_TO_BOOL = {"isnan", "isinf", "finitef", "isfinited"}


def _add(name, args, symbol, ret):
    TABLE.setdefault(name, []).append((tuple(args), symbol, ret))


def _float_family(names: str, nargs: int) -> None:
    for n in names.split():
        _add(n, (F32,) * nargs, f"__nv_{n}f", F32)
        _add(n, (F64,) * nargs, f"__nv_{n}", F64)


_float_family("floor rsqrt ceil trunc exp2 sqrt rint nearbyint sin cos sinpi cospi tan log2 "
              "exp exp10 cosh sinh tanh atan asin acos log log10 log1p acosh asinh atanh "
              "expm1 cbrt rcbrt j0 j1 y0 y1 cyl_bessel_i0 cyl_bessel_i1 erf erfinv erfc "
              "erfcx erfcinv normcdfinv normcdf lgamma tgamma round logb", 1)
_float_family("copysign nextafter atan2 hypot rhypot fmod remainder fdim", 2)
_float_family("norm3d rnorm3d fma", 3)
_float_family("norm4d rnorm4d", 4)

for _r in _ROUNDINGS:  # arithmetic in a fixed rounding mode
    for _op, _arity in (("add", 2), ("sub", 2), ("mul", 2), ("div", 2), ("rcp", 1),
                        ("sqrt", 1)):
        _add(f"{_op}_{_r}", (F32,) * _arity, f"__nv_f{_op}_{_r}", F32)
        _add(f"{_op}_{_r}", (F64,) * _arity, f"__nv_d{_op}_{_r}", F64)
    _add(f"fma_{_r}", (F32,) * 3, f"__nv_fmaf_{_r}", F32)
    _add(f"fma_{_r}", (F64,) * 3, f"__nv_fma_{_r}", F64)
_add("rsqrt_rn", (F32,), "__nv_frsqrt_rn", F32)

# conversions <src>2<dst>_<r>: argument and result dtypes from the names (libdevice returns
# its unsigned results in signed registers, and Triton types them so)
_SRC = {"double": F64, "float": F32, "int": I32, "uint": U32, "ll": I64, "ull": U64}
_DST = {"double": F64, "float": F32, "int": I32, "uint": I32, "ll": I64, "ull": I64}
for _conv in ("double2float double2int double2uint float2int float2uint int2float uint2float "
              "float2ll float2ull double2ll double2ull ll2float ull2float ll2double "
              "ull2double").split():
    _s, _d = _conv.split("2")
    for _r in _ROUNDINGS:
        _add(f"{_conv}_{_r}", (_SRC[_s],), f"__nv_{_conv}_{_r}", _DST[_d])
_add("int2double_rn", (I32,), "__nv_int2double_rn", F64)
_add("uint2double_rn", (U32,), "__nv_uint2double_rn", F64)
for _name, _a, _ret in (("int_as_float", I32, F32), ("float_as_int", F32, I32),
                        ("uint_as_float", U32, F32), ("float_as_uint", F32, I32),
                        ("longlong_as_double", I64, F64), ("double_as_longlong", F64, I64),
                        ("double2loint", F64, I32), ("double2hiint", F64, I32)):
    _add(_name, (_a,), f"__nv_{_name}", _ret)
_add("hiloint2double", (I32, I32), "__nv_hiloint2double", F64)

# integer functions
for _n in ("clz", "popc", "ffs"):
    _add(_n, (I32,), f"__nv_{_n}", I32)
    _add(_n, (I64,), f"__nv_{_n}ll", I32)
_add("brev", (I32,), "__nv_brev", I32)
_add("brev", (I64,), "__nv_brevll", I64)
_add("byte_perm", (I32,) * 3, "__nv_byte_perm", I32)
for _n, _hi in (("mulhi", "mul64hi"),):
    _add(_n, (I32, I32), "__nv_mulhi", I32)
    _add(_n, (U32, U32), "__nv_umulhi", U32)
    _add(_n, (I64, I64), f"__nv_{_hi}", I64)
    _add(_n, (U64, U64), f"__nv_u{_hi}", U64)
for _n in ("mul24", "hadd", "rhadd"):
    _add(_n, (I32, I32), f"__nv_{_n}", I32)
    _add(_n, (U32, U32), f"__nv_u{_n}", U32)
_add("sad", (I32, I32, U32), "__nv_sad", I32)
_add("sad", (U32, U32, U32), "__nv_usad", U32)
_add("abs", (I32,), "__nv_abs", I32)
_add("abs", (I64,), "__nv_llabs", I64)
_add("abs", (F32,), "__nv_fabsf", F32)
_add("abs", (F64,), "__nv_fabs", F64)

# fp32-only fast approximations
for _n in "sinf cosf log2f logf expf tanf exp10f log10f".split():
    _add(f"fast_{_n}", (F32,), f"__nv_fast_{_n}", F32)
_add("fast_powf", (F32, F32), "__nv_fast_powf", F32)
_add("fast_dividef", (F32, F32), "__nv_fast_fdividef", F32)

# predicates and the rest
_add("isnan", (F32,), "__nv_isnanf", I32)
_add("isnan", (F64,), "__nv_isnand", I32)
_add("isinf", (F32,), "__nv_isinff", I32)
_add("isinf", (F64,), "__nv_isinfd", I32)
_add("finitef", (F32,), "__nv_finitef", I32)
_add("isfinited", (F64,), "__nv_isfinited", I32)
_add("signbit", (F32,), "__nv_signbitf", I32)
_add("signbit", (F64,), "__nv_signbitd", I32)
_add("saturatef", (F32,), "__nv_saturatef", F32)
_add("rcp64h", (F64,), "__nv_rcp64h", F64)
for _n, _ret in (("llrint", I64), ("llround", I64), ("ilogb", I32)):
    _add(_n, (F32,), f"__nv_{_n}f", _ret)
    _add(_n, (F64,), f"__nv_{_n}", _ret)
for _n in ("jn", "yn"):
    _add(_n, (I32, F32), f"__nv_{_n}f", F32)
    _add(_n, (I32, F64), f"__nv_{_n}", F64)
for _n in ("ldexp", "scalbn"):
    _add(_n, (F32, I32), f"__nv_{_n}f", F32)
    _add(_n, (F64, I32), f"__nv_{_n}", F64)
_add("pow", (F32, I32), "__nv_powif", F32)
_add("pow", (F64, I32), "__nv_powi", F64)
_add("pow", (F32, F32), "__nv_powf", F32)
_add("pow", (F64, F64), "__nv_pow", F64)


def _dispatch(name: str, args, sem) -> tensor:
    """Build the ``tt.extern_elementwise`` of libdevice function ``name`` on ``args``."""
    entries = TABLE[name]
    xs = [sem.to_tensor(a) for a in args]
    types = tuple(x.dtype for x in xs)
    if types not in [e[0] for e in entries] and len(xs) > 1:
        ref = xs[0]
        for x in xs[1:]:
            ref, _ = sem.binary_checked(ref, x)
        xs = [sem.binary_checked(x, ref)[0] for x in xs]
    shape: tuple = ()
    for x in xs:
        shape = sem.broadcast_shapes(shape, tuple(x.shape))
    xs = [sem.broadcast_to_shape(x, shape) if shape else x for x in xs]
    types = tuple(x.dtype for x in xs)
    for arg_types, symbol, ret in entries:
        if arg_types == types:
            out = sem._op("tt.extern_elementwise", xs, ret, shape,
                          {"symbol": symbol, "libname": "", "libpath": "", "pure": True})
            return sem.cast(out, dt.int1) if name in _TO_BOOL else out
    want = "; ".join("(" + ", ".join(str(t) for t in e[0]) + ")" for e in entries)
    raise LanguageError(
        f"libdevice.{name} does not take arguments of type "
        f"({', '.join(str(t) for t in types)}); it takes {want}",
        "cast the arguments first, e.g. x.to(tl.float32)")


def _make(name: str):
    @builtin
    def fn(*args, _semantic=None):
        return _dispatch(name, [unwrap(a) for a in args], _semantic)
    fn.__name__ = fn.__qualname__ = name
    sig = "; ".join("(" + ", ".join(str(t) for t in e[0]) + f") -> {e[2]}: {e[1]}"
                    for e in TABLE[name])
    fn.__doc__ = f"libdevice ``{name}`` (``tt.extern_elementwise``): {sig}."
    return fn


for _name in TABLE:
    globals()[_name] = _make(_name)


@builtin
def fast_tanhf(arg0, _semantic=None):
    """Named in Triton's ``extra.libdevice`` but implemented only for AMD GPUs (HIP); raises
    LanguageError here, as Triton's dispatch fails on NVIDIA targets."""
    raise LanguageError("libdevice.fast_tanhf exists only for AMD GPUs in Triton 3.6",
                        "use libdevice.tanh (or tl.math functions) instead")


__all__ = sorted(TABLE) + ["fast_tanhf"]
