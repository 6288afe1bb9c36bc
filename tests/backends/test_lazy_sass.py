"""SASS is made only when read: a cuda:90 compile never runs nvdisasm for a launch or for
the other stages; reading ``asm["sass"]`` or its line map runs it once; a kernel from the
disk cache whose SASS was never read makes it from the stored cubin."""
from __future__ import annotations

import pytest

import workbench as wb
from workbench.backends import nvidia_tools
from workbench.backends.lazy import LazyText, StageMap
from workbench.backends.registry import get_backend
from workbench.runtime.kernel_entry import kernel_from_bytes, kernel_to_bytes
from workbench.testing.examples import add_kernel

SIG = ("*fp32:16", "*fp32:16", "*fp32:16", "i32:16")
needs_tools = pytest.mark.skipif(
    nvidia_tools.find_tool("ptxas") is None or nvidia_tools.find_tool("nvdisasm") is None,
    reason="ptxas/nvdisasm not installed")


def test_stage_map_makes_a_lazy_stage_once():
    calls = []

    def make():
        calls.append(1)
        return "A\nB\n", ["loc-a"]
    lazy = LazyText(make)
    asm = StageMap({"ptx": "x", "sass": lazy})
    maps = StageMap({"ptx": [None], "sass": lazy}, 1, lambda locs, text: locs + [None])
    assert list(asm) == ["ptx", "sass"] and "sass" in asm and len(asm) == 2
    assert asm.pending() == ["sass"] and asm.resolved() == {"ptx": "x"} and not calls
    assert asm["sass"] == "A\nB\n" and maps["sass"] == ["loc-a", None]
    assert calls == [1] and asm.pending() == [] and asm.resolved()["sass"] == "A\nB\n"


@needs_tools
def test_compile_leaves_sass_for_when_it_is_read(monkeypatch):
    runs = []
    real = nvidia_tools.disassemble

    def counting(cubin, tool):
        runs.append(len(cubin))
        return real(cubin, tool)
    monkeypatch.setattr(nvidia_tools, "disassemble", counting)
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")  # a real compile, not an old entry
    fresh = wb.jit(add_kernel.fn)  # nothing in its in-memory cache
    ck = wb.compile(fresh, *SIG, target="cuda:90", BLOCK_SIZE=256)
    assert "sass" in ck.stages and "sass" not in ck.timings and not runs
    assert ck.asm["ptx"] and ck.metadata.n_regs is not None  # the rest is all there
    sass = ck.asm["sass"]
    assert "LDG.E" in sass and len(runs) == 1 and "sass" in ck.timings
    assert len(ck.line_maps["sass"]) == len(sass.splitlines()) and len(runs) == 1


@needs_tools
def test_cached_entry_without_sass_makes_it_from_the_cubin():
    ck = wb.compile(add_kernel, *SIG, target="cuda:90", BLOCK_SIZE=512)
    backend = get_backend(ck.target)
    data = kernel_to_bytes(ck, backend)
    assert data is not None and isinstance(ck.asm, StageMap) and "sass" in ck.asm.pending()

    class _Jit:
        fn, params, src = ck.fn, ck.params, ck.src
    back, _ = kernel_from_bytes(_Jit, ck.spec, ck.options, ck.target, data, backend)
    assert back.stages == ck.stages
    assert back.asm.pending() == ["sass"]
    assert back.asm["sass"] == ck.asm["sass"]
    assert back.line_maps["sass"] == ck.line_maps["sass"]
