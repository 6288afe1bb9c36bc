"""``tl.math``: the math functions under their ``triton.language.math`` names (aliases of the
tl builtins; fp32/fp64 only where Triton says so)."""
from .builtins import (
    abs,
    cdiv,
    ceil,
    cos,
    erf,
    exp,
    exp2,
    floor,
    fma,
    log,
    log2,
    rsqrt,
    sigmoid,
    sin,  # noqa: F401
    sqrt,
)
from .builtins import maximum as max  # noqa: F401
from .builtins import minimum as min
from .mathops import clamp, div_rn, fdiv, sqrt_rn, umulhi  # noqa: F401

__all__ = ["abs", "ceil", "cos", "erf", "exp", "exp2", "fma", "floor", "log", "log2", "rsqrt",
           "sigmoid", "sin", "sqrt", "cdiv", "max", "min", "clamp", "div_rn", "fdiv",
           "sqrt_rn", "umulhi"]
