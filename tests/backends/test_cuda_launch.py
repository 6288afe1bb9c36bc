"""The CUDA launch trampoline and packed parameter blocks, checked without a GPU.

The trampoline is built against stand-in driver entry points (ctypes callbacks) that record
what they receive, so the test reads back exactly what ``cuLaunchKernel`` would get: the
function handle, grid, block, shared bytes, stream and every kernel parameter's bytes.
"""
from __future__ import annotations

import ctypes
import random
import struct
import threading

import pytest

from workbench.backends import cuda_launch
from workbench.backends.base import PointerArg

CUresult = ctypes.c_int
GET = ctypes.CFUNCTYPE(CUresult, ctypes.POINTER(ctypes.c_void_p))
SET = ctypes.CFUNCTYPE(CUresult, ctypes.c_void_p)
LAUNCH = ctypes.CFUNCTYPE(CUresult, ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                          ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)
SIZES = {"ptr": 8, "i64": 8, "u64": 8, "f64": 8, "i32": 4, "u32": 4, "f32": 4, "i16": 2,
         "i8": 1, "i1": 1}


class FakeDriver:
    """Stand-ins for cuCtxGetCurrent/cuCtxSetCurrent/cuLaunchKernel recording their calls."""

    def __init__(self, current: int, kinds, rc: int = 0):
        self.current, self.kinds, self.rc = current, kinds, rc
        self.set_calls, self.launches = [], []

        def get(pctx):
            pctx[0] = self.current
            return 0

        def set_(ctx):
            self.set_calls.append(ctx)
            self.current = ctx
            return 0

        def launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
            vals = [ctypes.string_at(params[i], SIZES[k]) for i, k in enumerate(self.kinds)]
            self.launches.append(dict(f=f, grid=(gx, gy, gz), block=(bx, by, bz),
                                      shared=shared, stream=stream or 0, params=vals,
                                      extra=extra))
            return self.rc

        self._cbs = (GET(get), SET(set_), LAUNCH(launch))  # keep the callbacks alive
        self.entry_points = {k: ctypes.cast(cb, ctypes.c_void_p).value
                             for k, cb in zip(("get", "set", "launch"), self._cbs, strict=True)}


def _packed(kinds, current=0x1234, rc=0):
    drv = FakeDriver(current, kinds, rc)
    tramp = cuda_launch.Trampoline(drv.entry_points)
    packed = cuda_launch.PackedLaunch(tramp, function=0xF00D, context=0x1234, kinds=kinds,
                                      block_x=128, shared=50_000)
    return drv, packed


def test_trampoline_passes_every_field_and_parameter():
    rng = random.Random()
    kinds = ["ptr", "ptr", "i32", "i64", "f32", "f64", "i1", "i8", "i16"]
    drv, packed = _packed(kinds)
    args = [rng.randrange(1, 2 ** 48) * 16, rng.randrange(2 ** 64),
            rng.randrange(-2 ** 31, 2 ** 31),
            rng.randrange(-2 ** 63, 2 ** 63), rng.uniform(-1e3, 1e3), rng.uniform(-1e9, 1e9),
            True, rng.randrange(-128, 128), rng.randrange(-2 ** 15, 2 ** 15)]
    grid = (rng.randrange(1, 2 ** 31), rng.randrange(1, 65536), rng.randrange(1, 65536))
    stream = rng.randrange(1, 2 ** 48)
    assert packed.launch(*grid, stream, args) == 0
    (call,) = drv.launches
    assert call["f"] == 0xF00D and call["grid"] == grid and call["block"] == (128, 1, 1)
    assert call["shared"] == 50_000 and call["stream"] == stream and call["extra"] is None
    want = [struct.pack("<Q", args[0]), struct.pack("<Q", args[1]), struct.pack("<i", args[2]),
            struct.pack("<q", args[3]), struct.pack("<f", args[4]), struct.pack("<d", args[5]),
            b"\x01", struct.pack("<b", args[7]), struct.pack("<h", args[8])]
    assert call["params"] == want
    assert drv.set_calls == []  # the context was already current


def test_context_is_made_current_when_another_one_is():
    drv, packed = _packed(["i32"], current=0x9999)
    packed.launch(1, 1, 1, 0, [7])
    packed.launch(2, 1, 1, 0, [8])
    assert drv.set_calls == [0x1234]  # once: after that it is current
    assert [c["params"][0] for c in drv.launches] == [struct.pack("<i", 7), struct.pack("<i", 8)]


def test_pointer_args_and_out_of_range_ints_take_the_converting_path():
    drv, packed = _packed(["ptr", "i32", "i64"])
    addr = random.randrange(1, 2 ** 40) * 16
    packed.launch(3, 1, 1, 0, [PointerArg(addr, addr, addr + 64, 4, None), 2 ** 32 - 5, -1])
    params = drv.launches[0]["params"]
    assert params == [struct.pack("<Q", addr), struct.pack("<I", 2 ** 32 - 5),
                      struct.pack("<q", -1)]


def test_bad_arguments_raise_value_error_naming_them():
    _, packed = _packed(["ptr", "f32"])
    with pytest.raises(ValueError, match="argument 1 .str. cannot be passed as f32"):
        packed.launch(1, 1, 1, 0, [16, "x"])
    with pytest.raises(ValueError, match="takes 2 arguments, got 1"):
        packed.launch(1, 1, 1, 0, [16])


def test_driver_error_code_is_returned():
    _, packed = _packed(["i32"], rc=700)
    assert packed.launch(1, 1, 1, 0, [1]) == 700


def test_threads_get_their_own_parameter_blocks():
    drv, packed = _packed(["i32"])
    seen = []
    together = threading.Barrier(3)  # all alive at once, so their idents differ

    def work(v):
        together.wait()
        for _ in range(200):
            packed.launch(1, 1, 1, 0, [v])
        seen.append(v)

    threads = [threading.Thread(target=work, args=(v,)) for v in (11, 22, 33)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == [11, 22, 33]
    got = {struct.unpack("<i", c["params"][0])[0] for c in drv.launches}
    assert got == {11, 22, 33} and len(drv.launches) == 600
    assert len(packed._blocks) >= 3


def test_current_stream_without_gpu_libraries_is_the_default_stream(monkeypatch):
    import sys
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    assert cuda_launch.current_stream() == 0


def _launcher_with(packed, driver):
    """A CudaLauncher whose module is "loaded" (no GPU): its function, device and packed
    parameter blocks are the given stand-ins."""
    from types import SimpleNamespace

    from workbench.backends.cuda_driver import CudaLauncher
    launcher = CudaLauncher(b"", "k", packed.kinds, num_warps=4, shared=50_000)
    launcher._func = "CUfunction"
    launcher._dev = SimpleNamespace(driver=driver, make_current=lambda: None)
    launcher._packed = packed
    return launcher


def test_without_the_trampoline_the_same_block_goes_through_cuda_bindings():
    from types import SimpleNamespace
    kinds = ["ptr", "i32", "f32"]
    calls = []

    def cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        p = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        calls.append((f, (gx, gy, gz), (bx, by, bz), shared, stream, extra,
                      [ctypes.string_at(p[i], SIZES[k]) for i, k in enumerate(kinds)]))
        return (0,)
    packed = cuda_launch.PackedLaunch(None, function=0xF00D, context=0x1234, kinds=kinds,
                                      block_x=128, shared=50_000)
    assert not packed.direct
    launcher = _launcher_with(packed, SimpleNamespace(cuLaunchKernel=cuLaunchKernel))
    addr = random.randrange(1, 2 ** 40) * 16
    launcher((3, 2, 1), [PointerArg(addr, addr, addr + 64, 4, None), -7, 1.5], stream=9)
    assert calls == [("CUfunction", (3, 2, 1), (128, 1, 1), 50_000, 9, 0,
                      [struct.pack("<Q", addr), struct.pack("<i", -7), struct.pack("<f", 1.5)])]


def test_launcher_turns_driver_errors_and_bad_arguments_into_launch_errors():
    from types import SimpleNamespace

    from workbench.errors import LaunchError
    drv, packed = _packed(["ptr", "f32"], rc=1)
    launcher = _launcher_with(packed, SimpleNamespace())
    with pytest.raises(LaunchError, match=r"cuLaunchKernel\(k\) failed with CUDA error 1 "):
        launcher((1, 1, 1), [16, 2.0], stream=0)
    with pytest.raises(LaunchError, match="kernel k: argument 1 .str. cannot be passed as f32"):
        launcher((1, 1, 1), [16, "x"], stream=0)
    launcher((0, 1, 1), [16, 2.0], stream=0)  # an empty grid launches nothing
    assert len(drv.launches) == 1
