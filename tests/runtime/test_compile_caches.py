"""The compiler's in-process caches of layout facts (linear layouts, thread layouts, scratch
sizes, bank-conflict summaries) change how fast a kernel compiles, never what it compiles to:
the same kernel gives the same text with the caches empty, warm from itself, and warm from
other kernels."""
from __future__ import annotations

import functools
import os
import sys

import pytest

import workbench as wb
from workbench.codegen.nvptx import async_copy, convert_layout, threads
from workbench.layouts import banks, convert

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "fidelity"))
import fidelity_kernels as fk  # noqa: E402

CASES = {c.name: c for c in fk.CASES}
STAGES = ("ttgir", "llir", "ptx")


def _clear_caches() -> None:
    convert._CACHE.clear()
    threads._LAYOUTS.clear()
    async_copy._STRIDES.clear()
    convert_layout._scratch_for.cache_clear()
    banks._cached_summary.cache_clear()


@pytest.fixture
def no_ptxas(monkeypatch):
    """Compile to PTX only (the text compared; ptxas would only add time)."""
    from workbench.backends import cuda, nvidia_tools
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")
    monkeypatch.setattr(nvidia_tools, "find_tool", lambda name: None)
    monkeypatch.setattr(cuda.nvidia_tools, "find_tool", lambda name: None)


@functools.lru_cache(maxsize=None)
def _texts_cold(name: str, target: str) -> tuple:
    _clear_caches()
    return _texts(name, target)


def _texts(name: str, target: str) -> tuple:
    c = CASES[name]
    k = wb.compile(wb.jit(c.kernel.fn), *c.signature, target=target, num_warps=4,
                   **c.constexprs)
    return tuple(str(k.asm[s]) for s in STAGES) + (repr(k.extra["shared_accesses"]),)


@pytest.mark.parametrize("name,target,marker", [("attention", "cuda:90", "wgmma.mma_async"),
                                                ("matmul_f16", "cuda:80", "mma.sync"),
                                                ("transpose", "cuda:90", "st.shared")])
def test_caches_leave_the_compiled_text_unchanged(no_ptxas, name, target, marker):
    cold = _texts_cold(name, target)
    assert marker in cold[2]  # the PTX uses shared memory / tensor cores: the cached facts
    assert _texts(name, target) == cold  # caches warm from the same kernel
    for other in ("softmax", "cumsum_cols", "tril"):  # ... and from other kernels
        _texts(other, target)
    assert _texts(name, target) == cold
    assert convert._CACHE and threads._LAYOUTS  # the caches were used
