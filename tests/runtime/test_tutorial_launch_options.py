"""Launch-side details Triton's tutorials rely on: the torch device the active driver names
(tutorial 01 asserts ``x.device == DEVICE``), arrays whose ``__cuda_array_interface__`` raises
(torch's, for fp8 tensors: tutorial 03's fp8 matmul under the autotuner), and the
``extern_libs`` launch option (tutorial 07)."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import LaunchError
from workbench.language.extra import libdevice
from workbench.runtime.autotuner import _device_of
from workbench.runtime.devices import is_cuda_array

driver_mod = importlib.import_module("workbench.runtime.driver")


@wb.jit
def asin_k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, libdevice.asin(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def test_active_torch_device_has_the_index(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(driver_mod, "_cuda_index_capability", lambda: (9, 0))
    dev = driver_mod.driver.active.get_active_torch_device()
    assert dev == torch.device("cuda", 0)  # what torch.rand(..., device=dev).device is
    assert dev != torch.device("cuda")
    monkeypatch.setattr(driver_mod, "_cuda_index_capability", lambda: None)
    assert driver_mod.driver.active.get_active_torch_device() == torch.device("cpu")


class _FakeCudaFp8:
    """Like a CUDA torch fp8 tensor: reading ``__cuda_array_interface__`` raises KeyError."""

    @property
    def __cuda_array_interface__(self):
        raise KeyError("float8_e5m2")


class _NoDeviceCai(_FakeCudaFp8):
    device = None


def test_cuda_array_whose_interface_raises():
    fake = _FakeCudaFp8()
    assert is_cuda_array(fake) is False
    assert _device_of([np.zeros(3), fake]) == "cpu"
    fake.device = type("D", (), {"type": "cuda"})()  # torch tensors say so first
    assert is_cuda_array(fake) is True
    assert _device_of([1, fake]) == "cuda"
    assert is_cuda_array(np.zeros(3)) is False


def test_extern_libs_libdevice_is_accepted(monkeypatch):
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    x = np.random.default_rng().uniform(-1, 1, 1000).astype(np.float32)
    y = np.full_like(x, np.nan)
    asin_k[(4,)](x, y, x.size, BLOCK=256,
                 extern_libs={"libdevice": "/nowhere/third_party/nvidia/lib/libdevice.10.bc"})
    np.testing.assert_allclose(y, np.arcsin(x), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("libs,words", [({"ocml": "ocml.bc"}, "only 'libdevice'"),
                                        (["libdevice"], "must be a dict")])
def test_extern_libs_other_libraries_are_refused(monkeypatch, libs, words):
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    x = np.zeros(8, np.float32)
    with pytest.raises(LaunchError) as e:
        asin_k[(1,)](x, x, 8, BLOCK=8, extern_libs=libs)
    assert words in str(e.value) and "asin_k" in str(e.value)
