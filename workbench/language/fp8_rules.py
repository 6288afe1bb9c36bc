"""Which 8-bit float formats the target being compiled for takes, and which it only tolerates
as ``tl.dot`` operands: Triton's ``supported_fp8_dtypes`` and
``deprecated_fp8_dot_operand_dtypes`` options.

Sources (Triton 3.6): the NVIDIA backend's options (``third_party/nvidia/backend/compiler.py``,
``CUDAOptions`` and ``parse_options``) take ``fp8e5`` and ``fp8e4b15`` on every target and
``fp8e4nv`` from compute capability 8.9 (sm_89, sm_90); ``fp8e5b16`` and ``fp8e4b8`` (the
"FNUZ" formats) are AMD's and no CUDA target takes them. From sm_90 a ``tl.dot`` with an
``fp8e4b15`` operand still compiles (both operands are upcast to fp16) but warns that the
format is deprecated there. Triton's interpreter (``InterpreterOptions`` in
``runtime/interpreter.py``) takes all five formats and deprecates none; the workbench's host
targets (``cpu``, ``interpreter``), which compute every format in software, do the same.

Triton refuses an unsupported format wherever its IR type is made (``dtype.to_ir`` in
``language/core.py``): a ``tl.full``, a cast, a load through a pointer to it, a parameter.
:func:`check_supported` is that check; :meth:`workbench.language.dtypes.dtype.to_ir` calls
it for the fp8 dtypes while a kernel is compiled
(:func:`workbench.language.target_info.compiling_for`).
"""
from __future__ import annotations

import warnings

from ..errors import CompilationError
from .target_info import GPUTarget, current_target

#: every 8-bit float format, by Triton's short name
ALL_FP8 = ("fp8e4b15", "fp8e4b8", "fp8e4nv", "fp8e5", "fp8e5b16")
#: Triton's warning for an fp8e4b15 ``tl.dot`` operand on sm_90 and later
E4B15_DEPRECATED = ("the use of fp8e4b15 is deprecated on Hopper and later architectures and can "
                    "cause significant slow down. It will be removed in a future triton release")


def supported_fp8_dtypes(target: GPUTarget | None) -> tuple[str, ...]:
    """The fp8 formats (short names, sorted) that ``target`` takes: on CUDA ``fp8e4b15`` and
    ``fp8e5``, with ``fp8e4nv`` from arch 89; on the host targets (``target`` None) all five."""
    if target is None or target.backend != "cuda":
        return ALL_FP8
    return ("fp8e4b15", "fp8e4nv", "fp8e5") if target.arch >= 89 else ("fp8e4b15", "fp8e5")


def deprecated_fp8_dot_operand_dtypes(target: GPUTarget | None) -> tuple[str, ...]:
    """The fp8 formats that compile as ``tl.dot`` operands on ``target`` only with a
    deprecation warning: ``fp8e4b15`` on CUDA from arch 90; none elsewhere."""
    if target is not None and target.backend == "cuda" and target.arch >= 90:
        return ("fp8e4b15",)
    return ()


def check_supported(name: str) -> None:
    """Refuse fp8 format ``name`` (a short name, ``"fp8e4nv"``) if the target being compiled
    for does not take it. Raises :class:`CompilationError` without a location (the frontend
    gives it the line being compiled) whose ``__cause__`` is Triton's ValueError, "type NAME
    not supported in this architecture. The supported fp8 dtypes are (...)"."""
    target = current_target()
    supported = supported_fp8_dtypes(target)
    if name in supported or target is None:
        return
    if name in ("fp8e4b8", "fp8e5b16"):
        hint = (f"{name} is an AMD format that no CUDA target takes; use float8e4nv (sm_89 "
                "and later) or float8e5")
    else:
        hint = f"{name} needs sm_89 or later (target cuda:90); on sm_{target.arch} use float8e5"
    err = CompilationError(f"type {name} not supported in this architecture (sm_{target.arch})",
                           None, hint)
    err.__cause__ = ValueError(f"type {name} not supported in this architecture. The "
                               f"supported fp8 dtypes are {supported}")
    raise err


def warn_deprecated_dot_operands(lhs_name: str, rhs_name: str) -> None:
    """Warn (UserWarning, Triton's words) when an operand of a ``tl.dot`` (short names
    ``lhs_name``, ``rhs_name``) is fp8e4b15 and the target being compiled for deprecates it."""
    if "fp8e4b15" in (lhs_name, rhs_name) and \
            "fp8e4b15" in deprecated_fp8_dot_operand_dtypes(current_target()):
        warnings.warn(E4B15_DEPRECATED, UserWarning, stacklevel=2)


__all__ = ["ALL_FP8", "E4B15_DEPRECATED", "check_supported", "deprecated_fp8_dot_operand_dtypes",
           "supported_fp8_dtypes", "warn_deprecated_dot_operands"]
