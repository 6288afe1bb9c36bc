"""What a CompilationError chains as its cause, the same on every target (the errors are the
frontend's, before any backend runs), as Triton's ``test_compile_errors`` reads them:

- an error inside a ``tl`` builtin chains the language rule's exception with a traceback cut
  to the language library's frames (the ``@builtin`` wrapper in ``language/core.py`` first,
  as Triton's shows its ``core.py``), no frontend frame;
- a ``@jit`` helper whose runtime ``if`` returns two different types is reported at the
  call (Triton's ``at 2:4:``), caused by an error at the helper's ``def`` (``at 1:0:``:
  Triton decides the return type after the body), whose message names the ``if``.

``triton.compile(ASTSource(...))`` without a target compiles for the active driver's target
(cuda:NN on a GPU, the CPU here); a gpu-marked test checks it on the GPU."""
from __future__ import annotations

import os
import traceback

import pytest

import workbench as wb
import workbench.language as tl
from workbench.compiler import ASTSource, GPUTarget
from workbench.errors import CompilationError
from workbench.language.core import LanguageError

TARGETS = ["cpu", "interpreter", GPUTarget("cuda", 80, 32), GPUTarget("cuda", 90, 32)]
LANGUAGE_DIR = os.sep + os.path.join("workbench", "language") + os.sep


@wb.jit
def expand_none():
    tl.expand_dims(None, -1)


@wb.jit
def branched_return(N: int):
    if N == 0:
        return tl.arange(0, 4)
    else:
        return tl.arange(0, 8)


@wb.jit
def calls_branched(N: int):
    branched_return(N)


@wb.jit
def store_one(x_ptr):
    tl.store(x_ptr, 1.0)


def _formatted(err) -> str:
    return "".join(traceback.format_exception(type(err), err, err.__traceback__, chain=False))


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_builtin_error_cause_shows_the_language_frames(target):
    with pytest.raises(CompilationError) as info:
        wb.compile(ASTSource(fn=expand_none, signature={}, constexprs={}), target=target)
    outer = _formatted(info.value)
    assert "at 2:4:" in outer and "tl.expand_dims(None, -1)" in outer
    cause = info.value.__cause__
    assert isinstance(cause, LanguageError) and "None" in str(cause)
    frames = traceback.extract_tb(cause.__traceback__)
    assert frames, "the cause keeps the frames of the builtin that raised"
    first = frames[0].filename
    assert first.endswith(os.path.join("language", "core.py")), first
    assert all(LANGUAGE_DIR in f.filename for f in frames), [f.filename for f in frames]
    inner = _formatted(cause)
    assert f"{os.sep}core.py" in inner and f"{os.sep}frontend{os.sep}" not in inner


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_mismatched_returns_point_at_the_call_then_the_helper_def(target):
    with pytest.raises(CompilationError) as info:
        wb.compile(ASTSource(fn=calls_branched, signature={"N": "i32"}, constexprs={}),
                   target=target)
    err, cause = info.value, info.value.__cause__
    def_line = branched_return.fn.__code__.co_firstlineno + 1  # after the decorator
    assert "at 2:4:" in str(err) and "branched_return(N)" in str(err)
    assert err.loc.root().line == calls_branched.fn.__code__.co_firstlineno + 2
    assert isinstance(cause, CompilationError)
    assert "at 1:0:" in str(cause)
    assert cause.loc.line == def_line and cause.loc.col == 1
    assert cause.reason.startswith("Return type mismatch: the then block (tensor<[4], int32>) "
                                   "and the else block (tensor<[8], int32>)")
    assert cause.reason.endswith(f":{def_line + 1}")  # the if's line
    assert cause.__traceback__ is None  # the compiler's own frames are not shown


def test_the_same_causes_through_a_launch():
    # a launch (kernel[grid]) chains the same cause as triton.compile does
    with pytest.raises(CompilationError) as info:
        expand_none[(1,)]()
    frames = traceback.extract_tb(info.value.__cause__.__traceback__)
    assert frames and all(LANGUAGE_DIR in f.filename for f in frames)


def test_no_target_means_the_active_driver_s_target(monkeypatch):
    import importlib
    aot = importlib.import_module("workbench.runtime.aot")
    driver = importlib.import_module("workbench.runtime.driver")  # the module, not the object
    here = driver.driver.active.get_current_target()
    src = ASTSource(fn=store_one, signature={"x_ptr": "*fp32"}, constexprs={})
    compiled = wb.compile(src)
    assert str(compiled.target) == (f"cuda:{here.arch}" if here.backend == "cuda" else "cpu")
    # a GPU driver that reports sm_90 makes the same call compile PTX for cuda:90
    monkeypatch.setattr(type(driver.driver.active), "get_current_target",
                        lambda self: driver.GPUTarget("cuda", 90, 32))
    assert aot.active_target() == "cuda:90"
    compiled = wb.compile(src)
    assert str(compiled.target) == "cuda:90" and ".target sm_90" in compiled.asm["ptx"]
    # Triton's positional target wins over the driver's
    assert str(wb.compile(src, GPUTarget("cuda", 80, 32)).target) == "cuda:80"
    with pytest.raises(CompilationError) as info:
        wb.compile(ASTSource(fn=calls_branched, signature={"N": "i32"}, constexprs={}))
    assert "at 1:0:" in str(info.value.__cause__)


@pytest.mark.gpu
def test_no_target_compiles_for_the_gpu_on_a_gpu():
    from workbench import cuda
    from workbench.runtime.jit import interpret_enabled
    if not cuda.is_available() or interpret_enabled():
        pytest.skip("needs an NVIDIA GPU (and no WORKBENCH_INTERPRET)")
    from workbench.runtime.driver import driver
    arch = driver.active.get_current_target().arch
    compiled = wb.compile(ASTSource(fn=store_one, signature={"x_ptr": "*fp32"}, constexprs={}))
    assert str(compiled.target) == f"cuda:{arch}" and ".entry store_one" in compiled.asm["ptx"]
