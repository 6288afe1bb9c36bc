"""What makes a cold compile cheaper without changing its output: Python's cyclic garbage
collector paused during the compile (and restored after it, also on errors and when
compiles overlap), and ptxas running in the background (its result, its failures and its
cancellation)."""
from __future__ import annotations

import gc
import threading

import pytest

import workbench as wb
from workbench.backends import nvidia_tools
from workbench.runtime.gc_pause import gc_paused
from workbench.testing.examples import add_kernel

needs_ptxas = pytest.mark.skipif(nvidia_tools.find_tool("ptxas") is None,
                                 reason="ptxas is not installed")


@pytest.fixture
def gc_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_gc_is_paused_inside_and_restored_after(gc_on):
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: still paused when the inner block ends
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError):
        with gc_paused():
            1 / 0  # noqa: B018
    assert gc.isenabled()


def test_gc_left_off_when_the_program_turned_it_off(gc_on):
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_overlapping_pauses_from_threads(gc_on):
    """The collector comes back on only when the last of overlapping pauses ends."""
    inside, release = threading.Event(), threading.Event()

    def other():
        with gc_paused():
            inside.set()
            release.wait(10)
    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    with gc_paused():
        pass
    assert not gc.isenabled()  # the thread's pause is still open
    release.set()
    t.join(10)
    assert gc.isenabled()


def test_a_compile_restores_the_collector(gc_on, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")
    seen = []
    real = gc.disable

    def disable():
        seen.append(gc.isenabled())
        real()
    monkeypatch.setattr(gc, "disable", disable)
    k = wb.compile(wb.jit(add_kernel.fn), "*fp32", "*fp32", "*fp32", "i32", target="cpu",
                   BLOCK_SIZE=64)
    assert k.asm["llir"] and seen == [True] and gc.isenabled()


PTX = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


@needs_ptxas
def test_background_ptxas_gives_what_assemble_gives():
    ptxas = nvidia_tools.find_tool("ptxas")
    job = nvidia_tools.start_assemble(PTX, 90, ptxas)
    cubin, report = job.wait()
    cubin2, report2 = nvidia_tools.assemble(PTX, 90, ptxas)
    assert cubin[:4] == b"\x7fELF" and len(cubin) == len(cubin2)
    assert report.n_regs == report2.n_regs and report.n_regs is not None
    with pytest.raises(nvidia_tools.PtxasError, match="already taken"):
        job.wait()


@needs_ptxas
def test_background_ptxas_failure_and_cancel():
    ptxas = nvidia_tools.find_tool("ptxas")
    bad = nvidia_tools.start_assemble(PTX.replace("st.global.u32", "st.global.nonsense"), 90,
                                      ptxas)
    with pytest.raises(nvidia_tools.PtxasError, match="rejected the PTX"):
        bad.wait()
    job = nvidia_tools.start_assemble(PTX, 90, ptxas)
    job.cancel()
    job.cancel()  # idempotent
    with pytest.raises(nvidia_tools.PtxasError, match="cancelled"):
        job.wait()


@needs_ptxas
def test_cuda_compile_reports_ptxas_figures(monkeypatch):
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")
    k = wb.compile(wb.jit(add_kernel.fn), "*fp32:16", "*fp32:16", "*fp32:16", "i32:16",
                   target="cuda:90", BLOCK_SIZE=256)
    assert k.metadata.n_regs and k.extra["cubin"][:4] == b"\x7fELF"
    assert "ptxas -v" in k.asm["cubin"] and k.timings["cubin"] > 0


@needs_ptxas
def test_background_ptxas_past_its_timeout_is_killed():
    ptxas = nvidia_tools.find_tool("ptxas")
    job = nvidia_tools.start_assemble(PTX, 90, ptxas, timeout=1e-6)
    with pytest.raises(nvidia_tools.PtxasError, match="could not run ptxas"):
        job.wait()
