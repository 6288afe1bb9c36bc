"""Every end-to-end kernel that runs on the CPU here also compiles to PTX for sm_80 and
sm_90, and ptxas assembles it when installed. The check reuses exactly the specialisations the
test launched (skipping an fp8 format or a ``num_ctas`` the target refuses, as Triton
does)."""
from __future__ import annotations

import pytest

from workbench.errors import CompilationError, TargetOptionError
from workbench.runtime.jit import JITFunction


def _launched_cpu_specs(module):
    for obj in vars(module).values():
        if isinstance(obj, JITFunction):
            for (_, options, target), compiled in list(obj.cache.items()):
                if target == "cpu":
                    yield obj, compiled.spec, options


@pytest.fixture(autouse=True)
def ptx_for_every_cpu_kernel(request):
    """After a CPU-backend kernel test, compile what it launched for cuda:80 and cuda:90."""
    yield
    if request.node.callspec.params.get("backend") != "cpu" if hasattr(request.node, "callspec") \
            else True:
        return
    from workbench.backends.nvidia_tools import find_tool
    have_ptxas = find_tool("ptxas") is not None
    for jf, spec, options in _launched_cpu_specs(request.module):
        for target in ("cuda:80", "cuda:90"):
            try:
                compiled = jf.compile_for(spec, options, target)
            except CompilationError as e:  # a dtype the target refuses, as Triton does
                if "not supported in this architecture" in str(e):
                    continue
                raise
            except TargetOptionError as e:  # num_ctas > 1 before sm_90, refused as by Triton
                if "requires NVIDIA SM90+" in str(e):
                    continue
                raise
            assert ".entry" in compiled.asm["ptx"], (jf.fn.__name__, target)
            if have_ptxas:
                assert "cubin" in compiled.asm, (jf.fn.__name__, target, compiled.extra)
