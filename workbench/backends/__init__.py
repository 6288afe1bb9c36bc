"""Backends: the interpreter (numpy reference), the CPU (llvmlite) and CUDA (NVPTX) targets.

Each implements :class:`workbench.backends.base.Backend`; :func:`get_backend` picks one by
target and imports it only then.
"""
from .base import Backend, BackendResult, KernelMetadata, Loaded, PointerArg, Stage
from .registry import available_targets, get_backend

__all__ = ["Backend", "BackendResult", "KernelMetadata", "Loaded", "PointerArg", "Stage",
           "available_targets", "get_backend"]
