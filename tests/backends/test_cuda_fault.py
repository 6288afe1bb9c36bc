"""A kernel faulting on the GPU: reported with the kernel's name and last launch, and every
later launch or allocation refuses the broken context. Without a GPU, the driver's answers are
faked (CUDA_ERROR_ILLEGAL_ADDRESS = 700); the ``gpu`` test faults a real kernel in a
subprocess."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from workbench.backends import cuda_driver, cuda_fault
from workbench.backends.base import PointerArg
from workbench.backends.cuda import _Unavailable
from workbench.errors import DeviceFaultError, LaunchError

ILLEGAL_ADDRESS = 700


@pytest.fixture
def clean_fault_state():
    """The process-wide record, emptied for the test and put back after it."""
    saved = (list(cuda_fault.LAST), list(cuda_fault.FAULT))
    cuda_fault.LAST[:] = [None]
    cuda_fault.FAULT.clear()
    yield
    cuda_fault.LAST[:], cuda_fault.FAULT[:] = saved


def _pointer(a: np.ndarray) -> PointerArg:
    return PointerArg(0x7F0000001000, 0x7F0000001000, 0x7F0000001000 + a.nbytes, a.itemsize, a)


def test_a_sticky_error_names_the_last_launch_and_poisons_the_process(clean_fault_state):
    x = np.zeros(1024, np.float32)
    cuda_fault.record_launch("scale", (4, 1, 1), [_pointer(x), 1024], ["ptr", "i32"])
    with pytest.raises(DeviceFaultError) as info:
        cuda_driver.check((ILLEGAL_ADDRESS,), "cuCtxSynchronize")
    err = info.value
    msg = str(err)
    assert (err.code, err.code_name, err.kernel) == (700, "CUDA_ERROR_ILLEGAL_ADDRESS", "scale")
    for part in ("CUDA_ERROR_ILLEGAL_ADDRESS (CUDA error 700), reported by cuCtxSynchronize",
                 "kernel 'scale' over grid (4, 1, 1)", "arg 0 (ptr): shape (1024,) dtype "
                 "float32 at 0x7f0000001000", "arg 1 (i32): 1024", "context of this process "
                 "is now unusable", "Restart the notebook's kernel"):
        assert part in msg
    # from now on, nothing uses the broken context
    for use in (cuda_driver.open_device, lambda: cuda_driver.DeviceArray.empty((4,), np.int32),
                lambda: _Unavailable("no GPU")((1, 1, 1), [])):
        with pytest.raises(DeviceFaultError, match="an earlier kernel faulted") as later:
            use()
        assert "kernel 'scale' over grid (4, 1, 1)" in str(later.value)
    assert "context is unusable" in (cuda_driver.driver_status() or "")


def test_an_illegal_instruction_names_the_tma_offset_rule(clean_fault_state):
    err = cuda_fault.fault_from(715, "cuCtxSynchronize")
    assert err is not None and err.code_name == "CUDA_ERROR_ILLEGAL_INSTRUCTION"
    assert "multiple of 16 bytes" in str(err) and "WORKBENCH_CUDA_TMA=0" in str(err)
    cuda_fault.FAULT.clear()
    other = cuda_fault.fault_from(700, "cuCtxSynchronize")
    assert other is not None and "TMA" not in str(other)


def test_other_errors_do_not_poison_the_context(clean_fault_state):
    with pytest.raises(LaunchError, match="CUDA error 1"):
        cuda_driver.check((1,), "cuMemAlloc")  # CUDA_ERROR_INVALID_VALUE
    assert cuda_fault.faulted() is None
    assert cuda_fault.fault_from(701, "cuLaunchKernel") is None  # out of resources: not sticky


class _FakePacked:
    """Stands in for PackedLaunch: returns the CUresults it is given, one per launch."""

    direct = True

    def __init__(self, results):
        self.results = list(results)
        self.calls = 0

    def launch(self, gx, gy, gz, stream, args):
        self.calls += 1
        return self.results.pop(0)


class _FakeDriver:
    def CUresult(self, code):  # noqa: N802 - the bindings' name
        raise ValueError(code)  # a code the (fake) bindings do not know


def _fake_launcher(name, results):
    launcher = cuda_driver.CudaLauncher(b"", name, ["ptr", "i64"], 4, 0)
    launcher._func = object()
    launcher._dev = cuda_driver.Device(_FakeDriver(), 0, 0, "fake")
    launcher._packed = _FakePacked(results)  # type: ignore[assignment]
    return launcher


def test_the_launch_after_a_fault_reports_the_kernel_launched_before(clean_fault_state):
    """Kernels run asynchronously: the launch that returns the error is the one after the
    faulting kernel, so the message names the previous launch."""
    rng = np.random.default_rng()
    x = rng.standard_normal((8, 16)).astype(np.float16)
    bad = _fake_launcher("store_far", [0])
    nxt = _fake_launcher("next_kernel", [ILLEGAL_ADDRESS])
    bad((3, 2, 1), [_pointer(x), 1 << 40], stream=0)
    with pytest.raises(DeviceFaultError) as info:
        nxt((1, 1, 1), [_pointer(x), 5], stream=0)
    msg = str(info.value)
    assert "reported by cuLaunchKernel(next_kernel)" in msg
    assert "kernel 'store_far' over grid (3, 2, 1)" in msg
    assert "arg 0 (ptr): shape (8, 16) dtype float16" in msg and f"arg 1 (i64): {1 << 40}" in msg
    with pytest.raises(DeviceFaultError, match="an earlier kernel faulted"):
        bad((1, 1, 1), [_pointer(x), 0], stream=0)
    assert bad._packed.calls == 1  # refused before reaching the driver


FAULT_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import workbench as wb
    import workbench.cuda as wcuda
    import workbench.language as tl
    from workbench.errors import DeviceFaultError

    @wb.jit
    def store_far(out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + offs + (1 << 40), offs.to(tl.float32))  # far outside, no mask

    out = wcuda.zeros(256, np.float32)
    try:
        store_far[(2,)](out, 256, BLOCK=128)
        wcuda.synchronize()
    except DeviceFaultError as e:
        print("FAULT1", e)
    else:
        sys.exit("no fault")
    try:
        wcuda.empty(16, np.float32)
    except DeviceFaultError as e:
        print("FAULT2", e)
    try:
        store_far[(1,)](out, 256, BLOCK=128)
    except DeviceFaultError as e:
        print("FAULT3", e)
""")


@pytest.mark.gpu
def test_a_real_illegal_address_in_a_subprocess(tmp_path):
    script = tmp_path / "fault.py"
    script.write_text(FAULT_SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr + out
    first = out.split("FAULT1", 1)[1].split("FAULT2", 1)[0]
    assert "kernel 'store_far' over grid (2, 1, 1)" in first
    assert "arg 0 (ptr): shape (256,) dtype float32" in first
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in first or "CUDA_ERROR_LAUNCH_FAILED" in first
    assert "Restart the notebook's kernel" in first
    assert "FAULT2 cannot use the GPU: an earlier kernel faulted" in out
    assert "FAULT3 cannot use the GPU: an earlier kernel faulted" in out
