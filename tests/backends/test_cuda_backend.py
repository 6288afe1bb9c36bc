"""The CUDA backend without a GPU: stages, line maps, metadata, missing tools, launch errors."""
from __future__ import annotations

import pytest

from workbench.backends import cuda_driver, nvidia_tools
from workbench.backends.cuda import CudaBackend, clone_module, ptx_line_locs
from workbench.backends.lazy import LazyText
from workbench.backends.registry import get_backend
from workbench.codegen.nvptx import samples
from workbench.config import CompileContext, Options, Target
from workbench.errors import ToolMissingError
from workbench.ir.printer import print_module

HAVE_PTXAS = nvidia_tools.find_tool("ptxas") is not None
HAVE_NVDISASM = nvidia_tools.find_tool("nvdisasm") is not None


def _compile(module, target="cuda:90", **opts):
    be = get_backend(target)
    ctx = CompileContext()
    return be, be.compile(module, None, Options(**opts), ctx), ctx


def test_stages_and_line_maps():
    be, res, ctx = _compile(samples.softmax())
    names = [s.name for s in res.stages]
    assert names == list(be.stage_names)
    assert names[:3] == ["ttgir", "llir", "ptx"]
    for st in res.stages:
        text, locs = st.text.get() if isinstance(st.text, LazyText) else (st.text, st.line_locs)
        assert len(locs) == len(text.splitlines()), st.name
    by = {s.name: s for s in res.stages}
    src_lines = {loc.line for loc in by["ptx"].line_locs if loc is not None}
    assert src_lines and all(loc.file == samples.FILE for loc in by["ptx"].line_locs if loc)
    # the exp op's line appears in llir and ptx maps
    exp_line = next(i for i, ln in enumerate(by["ptx"].text.splitlines()) if "ex2.approx" in ln)
    assert by["ptx"].line_locs[exp_line] is not None
    assert res.metadata.shared == 16 and res.metadata.num_warps == 4
    assert "ttgir" in ctx.timings and "llir+ptx" in ctx.timings


@pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas not installed")
def test_cubin_and_ptxas_report():
    _, res, _ = _compile(samples.vector_add(vec=4, n_div16=True), "cuda:80")
    assert res.metadata.n_regs is not None and 8 <= res.metadata.n_regs <= 64
    assert res.metadata.n_spills == 0
    assert res.extra["cubin"][:4] == b"\x7fELF"
    cubin = next(s for s in res.stages if s.name == "cubin")
    assert cubin.text.startswith(f"cubin: {len(res.extra['cubin'])} bytes")
    assert ".text.add_kernel" in cubin.text


@pytest.mark.skipif(not (HAVE_PTXAS and HAVE_NVDISASM), reason="ptxas/nvdisasm not installed")
def test_sass_with_source_lines():
    _, res, _ = _compile(samples.vector_add(vec=4, n_div16=True))
    sass = next(s for s in res.stages if s.name == "sass")
    assert isinstance(sass.text, LazyText) and not sass.text.done  # made when read
    text, locs = sass.text.get()
    assert "LDG.E.128" in text and "STG.E.128" in text
    mapped = [loc for loc in locs if loc is not None]
    assert mapped and {loc.file for loc in mapped} == {samples.FILE}


def test_missing_tools_omit_stages_with_a_note(monkeypatch):
    monkeypatch.setattr(nvidia_tools, "find_tool", lambda name: None)
    be = CudaBackend(Target.parse("cuda:90"))
    assert be.stage_names == ("ttgir", "llir", "ptx")
    res = be.compile(samples.vector_add(), None, Options(), CompileContext())
    assert [s.name for s in res.stages] == ["ttgir", "llir", "ptx"]
    assert any("ptxas is not installed" in n for n in res.extra["notes"])
    assert res.metadata.n_regs is None


def test_launch_without_cuda_bindings_is_a_clear_error(monkeypatch):
    def missing():
        raise ToolMissingError("cannot use the GPU: the cuda-bindings package is not "
                               "installed (pip install 'tile-workbench[cuda]')")
    monkeypatch.setattr(cuda_driver, "import_driver", missing)
    _, res, _ = _compile(samples.vector_add())
    assert res.launch_error.startswith("cannot use the GPU: the cuda-bindings package")
    with pytest.raises(ToolMissingError, match="tile-workbench\\[cuda\\]"):
        res.launcher((1, 1, 1), [0, 0, 0, 16])


def test_compile_does_not_change_the_callers_module():
    m = samples.vector_add()
    before = print_module(m)
    c = clone_module(m)
    assert print_module(c) == before
    _compile(m)
    assert print_module(m) == before


def test_parse_ptxas_v():
    text = ("ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
            "ptxas info    : Function properties for k\n"
            "    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
            "ptxas info    : Used 42 registers, used 1 barriers, 1024 bytes smem\n")
    r = nvidia_tools.parse_ptxas_v(text)
    assert (r.n_regs, r.n_spills, r.shared, r.stack) == (42, 20, 1024, 16)


def test_ptx_line_locs_reads_file_table_after_the_function():
    ptx = ".entry k()\n{\n\t.loc\t1 7 3\n\tadd.s32 \t%r1, %r2, %r3;\n}\n\t.file\t1 \"/a/k.py\"\n"
    locs = ptx_line_locs(ptx)
    assert len(locs) == len(ptx.splitlines())
    assert locs[3] is not None and (locs[3].file, locs[3].line, locs[3].col) == ("/a/k.py", 7, 3)


def test_frontend_kernels_compile_for_both_archs():
    wb = pytest.importorskip("workbench")
    tl = pytest.importorskip("workbench.language")

    @wb.jit
    def rowmax(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
        r = tl.arange(0, M)
        c = tl.arange(0, N)
        x = tl.load(x_ptr + r[:, None] * N + c[None, :])
        tl.store(o_ptr + r, tl.max(x, axis=1))

    for target in ("cuda:80", "cuda:90"):
        ck = wb.compile(rowmax, "*fp32:16", "*fp32:16", target=target, M=16, N=64)
        assert {"ttgir", "llir", "ptx"} <= set(ck.asm)
        assert "shfl.sync.bfly" in ck.asm["ptx"]
        if HAVE_PTXAS:
            assert ck.metadata.n_regs is not None


def test_a_bad_tool_path_in_the_environment_is_reported(monkeypatch, tmp_path):
    bogus = str(tmp_path / "no-such-ptxas")
    monkeypatch.setenv("WORKBENCH_PTXAS", bogus)
    with pytest.warns(UserWarning, match="WORKBENCH_PTXAS=.*no-such-ptxas.* is not an "
                                         "executable file"):
        found = nvidia_tools.find_tool("ptxas")
    assert found != bogus
    monkeypatch.delenv("WORKBENCH_PTXAS")
    assert nvidia_tools.find_tool("ptxas") == found  # the same fallback search
