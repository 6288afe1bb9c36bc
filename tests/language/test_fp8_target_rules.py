"""Which 8-bit float formats each target takes, as Triton's backends decide
(``workbench.language.fp8_rules``): a CUDA target refuses AMD's fp8e5b16 and fp8e4b8 always
and fp8e4nv below sm_89, at the line that first makes a value of that type, with Triton's
ValueError ("not supported in this architecture") as the cause; from sm_90 a ``tl.dot`` of
fp8e4b15 compiles with Triton's deprecation warning; the host targets (CPU backend,
interpreter) take all five formats, as Triton's interpreter does. The kernel is the one of
Triton's ``test_fp8_support`` (a ``tl.full`` tile of the format, then ``tl.dot``); the
expected outcome per target is written out below from Triton's ``CUDAOptions`` rules."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.compiler import ASTSource, GPUTarget
from workbench.errors import CompilationError
from workbench.language import fp8_rules

FORMATS = ["float8e5", "float8e5b16", "float8e4nv", "float8e4b8", "float8e4b15"]
#: what Triton's NVIDIA backend does with each format, per compute capability
REFUSED = {80: {"float8e5b16", "float8e4b8", "float8e4nv"}, 90: {"float8e5b16", "float8e4b8"}}
WARNED = {80: set(), 90: {"float8e4b15"}}
SHORT = {"float8e5": "fp8e5", "float8e5b16": "fp8e5b16", "float8e4nv": "fp8e4nv",
         "float8e4b8": "fp8e4b8", "float8e4b15": "fp8e4b15"}


def _dtype_kernel(dtype: tl.constexpr):
    a = tl.full((64, 64), 0.0, dtype)
    tl.dot(a, a)


def _compile(target, dtype_name):
    """Triton's form, a fresh @jit object (its in-memory cache empty) and no disk cache
    reads (WORKBENCH_ALWAYS_COMPILE, set by the callers), so each compile runs the frontend."""
    src = ASTSource(fn=wb.jit(_dtype_kernel), signature={"dtype": "constexpr"},
                    constexprs={"dtype": getattr(tl, dtype_name)})
    return wb.compile(src, target=target)


@pytest.fixture(autouse=True)
def _always_compile(monkeypatch):
    monkeypatch.setenv("WORKBENCH_ALWAYS_COMPILE", "1")


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("name", FORMATS)
def test_cuda_targets_refuse_warn_or_take_each_fp8_format(arch, name):
    target = GPUTarget("cuda", arch, 32)
    if name in REFUSED[arch]:
        with pytest.raises(CompilationError) as info:
            _compile(target, name)
        text = str(info.value)
        assert f"type {SHORT[name]} not supported in this architecture (sm_{arch})" in text
        assert "a = tl.full((64, 64), 0.0, dtype)" in text  # the line that makes the type
        assert "at 2:8:" in text  # Triton's position: line 2 of the def, the call's column
        cause = str(info.value.__cause__)
        assert "not supported in this architecture" in cause
        supported = sorted(SHORT[f] for f in FORMATS if f not in REFUSED[arch])
        assert f"The supported fp8 dtypes are {tuple(supported)}" in cause
        return
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        compiled = _compile(target, name)
    deprecations = [w for w in seen if "deprecated on Hopper" in str(w.message)]
    if name in WARNED[arch]:
        assert len(deprecations) == 1 and deprecations[0].category is UserWarning
        assert str(deprecations[0].message) == fp8_rules.E4B15_DEPRECATED
    else:
        assert deprecations == []
    assert ".entry _dtype_kernel" in compiled.asm["ptx"]


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
@pytest.mark.parametrize("name", FORMATS)
def test_host_targets_take_every_fp8_format_without_a_warning(target, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation on the host, as Triton's interpreter
        compiled = _compile(target, name)
    assert "tt.func public @_dtype_kernel" in compiled.asm["ttir"]


def _mixed_kernel(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 32 + r[None, :])
    tl.store(c_ptr + r[:, None] * 32 + r[None, :], tl.dot(a, b))


@pytest.mark.parametrize("target, warned", [("cuda:90", True), ("cuda:80", False),
                                            ("cpu", False)])
def test_one_fp8e4b15_operand_is_enough_to_warn_on_sm90(target, warned):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        wb.compile(wb.jit(_mixed_kernel), "*fp8e4b15", "*fp8e5", "*fp32", target=target)
    got = [w for w in seen if "fp8e4b15 is deprecated" in str(w.message)]
    assert len(got) == (1 if warned else 0)


def test_refused_formats_still_compute_on_the_cpu():
    # the host takes fp8e4b8 and fp8e5b16, and computes with them: a dot of random codes
    # against numpy on the decoded values (every product of two fp8 values is exact in fp32)
    rng = np.random.default_rng()
    ml = pytest.importorskip("ml_dtypes")
    a = rng.uniform(-4, 4, (32, 32)).astype(np.float32).astype(ml.float8_e4m3fnuz)
    b = rng.uniform(-4, 4, (32, 32)).astype(np.float32).astype(ml.float8_e5m2fnuz)
    c = np.full((32, 32), np.nan, np.float32)
    wb.jit(_mixed_kernel)[(1,)](a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-6, atol=1e-6)


def test_a_refused_pointer_parameter_is_reported_at_the_def():
    with pytest.raises(CompilationError) as info:
        wb.compile(wb.jit(_mixed_kernel), "*fp8e4nv", "*fp8e4nv", "*fp32", target="cuda:80")
    assert "parameter 'a_ptr': type fp8e4nv not supported in this architecture (sm_80)" \
        in str(info.value)
    assert "def _mixed_kernel(a_ptr, b_ptr, c_ptr):" in str(info.value)
    assert "at 1:0:" in str(info.value)  # Triton's position: the def
    assert "The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')" in str(info.value.__cause__)
