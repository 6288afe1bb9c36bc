"""``tl.extra.hip.libdevice``: the names of ROCm's device library as Triton 3.6 offers them
(``triton.language.extra.hip.libdevice``), each refused in a kernel (see :mod:`.refuse`):
the same functions of NVIDIA's libdevice, ``tl.extra.libdevice``, run on every target."""
from .refuse import amd_only

NAMES = (
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "copysign",
    "cos", "cosh", "cyl_bessel_i0", "cyl_bessel_i1", "erf", "erfc", "erfcx", "erfinv", "exp",
    "exp2", "expm1", "fast_dividef", "fast_expf", "fast_tanhf", "floor", "fma", "fmod", "hypot",
    "ilogb", "isinf", "isnan", "j0", "j1", "ldexp", "lgamma", "llrint", "log", "log10", "log1p",
    "log2", "nearbyint", "nextafter", "pow", "round", "rsqrt", "signbit", "sin", "sinh", "sqrt",
    "tan", "tanh", "trunc", "y0", "y1",
)

for _name in NAMES:
    _same = "tanh" if _name == "fast_tanhf" else _name  # NVIDIA's libdevice has no fast_tanhf
    globals()[_name] = amd_only(f"libdevice.{_name}", f"tl.extra.libdevice.{_same}")
del _name, _same

__all__ = list(NAMES)
