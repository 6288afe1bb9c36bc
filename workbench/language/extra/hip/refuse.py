"""The builtin that stands for an AMD-only name of ``tl.extra.hip``: calling it in a kernel
raises LanguageError (a CompilationError at the user's line) naming the compile's target."""
from __future__ import annotations

from ...core import LanguageError, builtin
from ...target_info import current_target


def amd_only(name: str, instead: str):
    """A ``tl`` builtin named ``name`` that refuses to compile; ``instead`` says what to
    call (words shown as the error's hint)."""
    def refused(*args, _semantic=None, **kwargs):
        t = current_target()
        where = f"target {t.backend}:{t.arch}" if t is not None else \
            "the host targets (interpreter, cpu)"
        raise LanguageError(
            f"tl.extra.hip.{name} is AMD-only (Triton's HIP backend); the workbench has no "
            f"AMD target, and {where} cannot run it", f"use {instead}")
    refused.__name__ = refused.__qualname__ = name
    refused.__doc__ = (f"AMD-only (``tl.extra.hip``): refused on every workbench target; "
                       f"use {instead}.")
    return builtin(refused)
