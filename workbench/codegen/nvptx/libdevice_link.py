"""NVIDIA's libdevice bitcode, linked into a kernel that calls a ``__nv_*`` function the CUDA
backend does not compute itself (the rounding-mode arithmetic and conversions, Bessel and
gamma functions, ``erfcinv``, ``fmod``, ...), as Triton links it.

``libdevice.10.bc`` ships with CUDA's NVVM: the ``sass`` extra's ``nvidia-cuda-nvcc`` wheel
(``nvidia/cu13/nvvm/libdevice``), Triton's wheel (``triton/backends/nvidia/lib``) or a CUDA
toolkit (``$CUDA_HOME/nvvm/libdevice``); :func:`path` finds the first. Linking: the bitcode is
parsed (LLVM reads bitcode of older versions), given our triple and data layout, linked into
the kernel's module, and its functions made internal, so LLVM's ``-O3`` pipeline inlines the
ones called and drops the rest (its NVVMReflect pass answers libdevice's ``__nvvm_reflect``
queries for the target). Source: the libdevice user's guide (NVIDIA, "libdevice User's Guide",
"Linking with libdevice").
"""
from __future__ import annotations

import glob
import os
import re
import sysconfig
from functools import lru_cache

import llvmlite.binding as llvm

from ...config import cuda_home

#: where libdevice is looked for, relative to site-packages, then to $CUDA_HOME
_WHEEL_GLOBS = ("nvidia/cu*/nvvm/libdevice/libdevice.*.bc", "nvidia/cuda_nvcc/nvvm/libdevice/"
                "libdevice.*.bc", "triton/backends/nvidia/lib/libdevice.*.bc")


_DECLARED = re.compile(r'^declare [^\n]*@"?__nv_', re.MULTILINE)


@lru_cache(maxsize=1)
def path() -> str | None:
    """The path of ``libdevice.10.bc`` on this machine, or None when none is installed."""
    roots = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    for root in dict.fromkeys(roots):
        for pattern in _WHEEL_GLOBS:
            found = sorted(glob.glob(os.path.join(root, pattern)))
            if found:
                return found[-1]
    found = sorted(glob.glob(os.path.join(cuda_home(), "nvvm", "libdevice", "libdevice.*.bc")))
    return found[-1] if found else None


@lru_cache(maxsize=1)
def _bitcode() -> bytes:
    p = path()
    if p is None:
        raise FileNotFoundError("no libdevice bitcode is installed (see path())")
    with open(p, "rb") as f:
        return f.read()


@lru_cache(maxsize=1)
def _defined() -> dict:
    """name -> LLVM function type text (``"float (float, float)"``) of libdevice's functions."""
    return {f.name: str(f.global_value_type) for f in llvm.parse_bitcode(_bitcode()).functions
            if not f.is_declaration}


def defines(symbol: str, signature: str | None = None) -> bool:
    """Whether the installed libdevice defines the function ``symbol`` (False without one),
    with the LLVM function type ``signature`` (``"double (double)"``) when one is given."""
    if path() is None:
        return False
    have = _defined().get(symbol)
    return have is not None and (signature is None or have == signature)


def needed(llir_text: str) -> bool:
    """Whether the LLVM IR text declares a ``__nv_*`` function (one libdevice must define)."""
    return _DECLARED.search(llir_text) is not None


def link_into(module, triple: str, data_layout: str) -> None:
    """Link libdevice into the llvmlite binding ``module`` and make its functions internal.

    Raises FileNotFoundError when libdevice is not installed."""
    lib = llvm.parse_bitcode(_bitcode())
    lib.triple = triple
    lib.data_layout = data_layout
    module.link_in(lib)
    for fn in module.functions:
        if fn.name.startswith("__nv_") and not fn.is_declaration:
            fn.linkage = "internal"
