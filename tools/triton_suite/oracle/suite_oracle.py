"""The runner's pytest plugin for ``--backend triton`` (real Triton, no shim).

It loads ``suite_plugin``'s hooks from the folder above by file path (that folder also
holds the ``triton`` shim, which must stay off ``sys.path`` here), and gives the installed
Triton 3.6.0 wheel's ``triton._internal_testing`` the two hardware predicates that the
test files of commit 6cc4505 import and the wheel lacks (``is_hip_rdna3``,
``is_hip_rdna4``): on a CPU both answer False, as every other ``is_<gpu>`` does. With
``SUITE_COMPILE_TARGET=cuda:90``, ``triton.compile`` without a target compiles for that GPU.
"""
from __future__ import annotations

import importlib.util
import os

_TARGET = os.environ.get("SUITE_COMPILE_TARGET", "")
if _TARGET:  # the helpers ask the (absent) GPU driver at import unless Triton interprets
    os.environ["TRITON_INTERPRET"] = "1"
import triton._internal_testing as _it  # noqa: E402

if _TARGET:  # gluon, imported by triton.compile, decorates its helpers once: also now
    import triton.experimental.gluon  # noqa: E402,F401

_spec = importlib.util.spec_from_file_location(
    "suite_plugin", os.path.join(os.path.dirname(os.path.dirname(__file__)), "suite_plugin.py"))
assert _spec is not None and _spec.loader is not None
_plugin = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_plugin)

pytest_collection_modifyitems = _plugin.pytest_collection_modifyitems
pytest_runtest_logreport = _plugin.pytest_runtest_logreport
pytest_collectreport = _plugin.pytest_collectreport

for _name in ("is_hip_rdna3", "is_hip_rdna4"):
    if not hasattr(_it, _name):
        setattr(_it, _name, lambda: False)


def _compile_for(arch: int):
    """``triton.compile`` whose missing ``target`` is ``GPUTarget("cuda", arch, 32)``, and
    the test helpers' current target that GPU (so ``is_cuda()`` agrees with what compiles),
    as is ``torch.cuda.get_device_capability()``, which the tests read beside it; Triton's
    interpreter off again."""
    import torch
    import triton
    import triton.compiler.compiler as cc
    from triton.backends.compiler import GPUTarget

    real = cc.compile
    _it.get_current_target = lambda: GPUTarget("cuda", arch, 32)
    torch.cuda.get_device_capability = lambda *a, **k: (arch // 10, arch % 10)
    os.environ["TRITON_INTERPRET"] = "0"

    def compile(src, target=None, options=None, *args, **kwargs):
        return real(src, target or GPUTarget("cuda", arch, 32), options, *args, **kwargs)

    triton.compile = triton.compiler.compile = cc.compile = compile


if _TARGET:
    _compile_for(int(_TARGET.split(":")[-1]))
