"""``workbench.cuda``: device arrays for users with neither torch nor CuPy. Without a GPU the
functions say what is missing; the gpu-marked tests copy, launch and copy back."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
from workbench.errors import ToolMissingError
from workbench.testing.examples import add_kernel


def test_without_a_gpu_everything_says_what_is_missing(monkeypatch):
    import workbench.cuda as wcuda
    from workbench.backends import cuda_driver

    def no_bindings():
        raise ToolMissingError("cannot use the GPU: the cuda-bindings package is not "
                               "installed (pip install 'tile-workbench[cuda]')")
    monkeypatch.setattr(cuda_driver, "import_driver", no_bindings)
    assert wcuda.is_available() is False
    for call in (lambda: wcuda.to_device(np.ones(4)), lambda: wcuda.empty(4),
                 lambda: wcuda.zeros((2, 2)), wcuda.device_name, wcuda.synchronize):
        with pytest.raises(ToolMissingError, match="cuda-bindings package is not installed"):
            call()


@pytest.mark.gpu
def test_round_trip_and_launches_through_the_fast_path():
    import workbench.cuda as wcuda
    rng = np.random.default_rng()
    n = 5000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    dx, dy = wcuda.to_device(x), wcuda.to_device(y)
    np.testing.assert_array_equal(dx.to_numpy(), x)
    assert wcuda.zeros((3, 7), np.int32).to_numpy().tolist() == [[0] * 7] * 3
    out = wcuda.empty(n, np.float32)
    for scale in (1.0, -2.0):  # the second launch is a fast-path hit
        dxs = wcuda.to_device(x * scale)
        add_kernel[(wb.cdiv(n, 1024),)](dxs, dy, out, n, BLOCK_SIZE=1024)
        np.testing.assert_array_equal(out.to_numpy(), x * scale + y)
    assert len(add_kernel.cache.fast) >= 1
    assert isinstance(wcuda.device_name(), str) and wcuda.device_name()


def test_synchronize_without_a_driver_library_is_a_tool_error(monkeypatch):
    """cuda-bindings installed on a machine without NVIDIA's driver: its calls raise (a
    DynamicLibNotFoundError from cuda.pathfinder); synchronize says no GPU was found."""
    import types

    import workbench.cuda as wcuda
    from workbench.backends import cuda_driver

    class NoDriverLibrary(RuntimeError):
        pass

    def fail():
        raise NoDriverLibrary('"cuda" is an NVIDIA driver library and can only be found via '
                              "system search")
    fake = types.SimpleNamespace(cuCtxSynchronize=fail)
    monkeypatch.setattr(cuda_driver, "import_driver", lambda: fake)
    with pytest.raises(ToolMissingError, match="no NVIDIA GPU found .NoDriverLibrary"):
        wcuda.synchronize()
