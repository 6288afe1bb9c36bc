"""Which 8-bit float formats a CUDA target takes, checked on the ttir before any other pass.

Triton's NVIDIA backend (``supported_fp8_dtypes`` in ``third_party/nvidia/backend/compiler.py``)
takes ``fp8e5`` and ``fp8e4b15`` on every target and ``fp8e4nv`` from sm_89; the ``FNUZ``
formats (``fp8e5b16``, ``fp8e4b8``) are AMD's, and no CUDA target takes them. Triton refuses
such a type wherever it appears (``dtype.to_ir``: a pointer parameter, a load, a conversion, a
dot), and so does :func:`check_fp8_types`. The CPU backend and the interpreter take every format.
"""
from __future__ import annotations

from ..errors import CompilationError
from ..ir.core import Operation

_NAMES = {"f8E5M2FNUZ": "fp8e5b16", "f8E4M3FNUZ": "fp8e4b8", "f8E4M3FN": "fp8e4nv"}


def _unsupported(t, arch: int) -> str | None:
    """Triton's name of the fp8 format in type ``t`` (a scalar, tensor or pointer type) that
    sm_``arch`` does not take, or None."""
    while True:
        inner = getattr(t, "element", None) or getattr(t, "pointee", None)
        if inner is None:
            break
        t = inner
    name = getattr(t, "name", None)
    if name not in _NAMES or (name == "f8E4M3FN" and arch >= 89):
        return None
    return _NAMES[name]


def check_fp8_types(module: Operation, arch: int) -> None:
    """Raise CompilationError for the first use, in ``module`` (ttir), of an fp8 format
    sm_``arch`` does not take (module docstring): a kernel parameter (at the ``def``) or an
    op's result (at its line), as Triton refuses such a type wherever it appears
    (``dtype.to_ir``); the error's cause is Triton's ValueError, "type ... not supported in
    this architecture. The supported fp8 dtypes are ..."."""
    found = None
    for op in module.walk():
        if op.name == "tt.func":
            args = op.regions[0].blocks[0].args if op.regions and op.regions[0].blocks else []
            found = next(((n, op) for n in (_unsupported(a.type, arch) for a in args) if n),
                         None)
        else:
            found = next(((n, op) for n in (_unsupported(r.type, arch) for r in op.results)
                          if n), None)
        if found is not None:
            break
    if found is None:
        return
    name, op = found
    supported = ("fp8e4b15", "fp8e4nv", "fp8e5") if arch >= 89 else ("fp8e4b15", "fp8e5")
    what = f"type {name} not supported in this architecture (sm_{arch})"
    err = CompilationError(what, op.loc, "CUDA targets take fp8e5 and fp8e4b15, and fp8e4nv "
                                         "from sm_89 (cuda:90); fp8e5b16 and fp8e4b8 are AMD's "
                                         "formats")
    err.__cause__ = ValueError(f"type {name} not supported in this architecture. The "
                                  f"supported fp8 dtypes are {supported}")
    raise err


__all__ = ["check_fp8_types"]
