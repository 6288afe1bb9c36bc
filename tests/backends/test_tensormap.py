"""Host TMA descriptors without a GPU: the arguments of cuTensorMapEncodeTiled (innermost
dimension first, byte strides, the kernel's box and swizzle), the launcher's expansion of a
TensorDescriptor into tensor map, shape and strides, and the 128-byte, 64-byte aligned
parameter slot a launch passes it in."""
from __future__ import annotations

import ctypes
import random
import struct

import numpy as np
import pytest

from tests.backends.test_cuda_launch import FakeDriver
from workbench.backends import cuda_launch, tensormap
from workbench.backends.base import PointerArg
from workbench.backends.descriptors import DescriptorArg, TmaLauncher
from workbench.errors import LaunchError

META = {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [128, 64]}


def test_encode_args_are_innermost_first_in_bytes():
    rng = random.Random()
    m, n, ld = rng.randrange(1, 5000), rng.randrange(1, 300), rng.randrange(1, 40) * 8 + 512
    addr = rng.randrange(1, 2 ** 40) * 16
    a = tensormap.encode_args(META, addr, [m, n], [ld, 1], padding_nan=True)
    assert a == {"elem_type": 6, "rank": 2, "address": addr, "dims": [n, m],
                 "strides": [ld * 2], "box": [64, 128], "swizzle": 3, "nan": True}


@pytest.mark.parametrize("addr, strides, words", [
    (0x1008, [64, 1], "16-byte aligned"), (0x1000, [12, 1], "multiples of 16 bytes")])
def test_encode_args_reject_what_tma_cannot_address(addr, strides, words):
    with pytest.raises(LaunchError, match=words):
        tensormap.encode_args(META, addr, [8, 8], strides, False)


def test_tma_launcher_passes_tensor_map_then_shape_and_strides(monkeypatch):
    got = []

    def fake_encode(meta, address, shape, strides, nan):
        got.append((meta, address, list(shape), list(strides), nan))
        return bytes(range(128))
    monkeypatch.setattr(tensormap, "encode", fake_encode)
    calls = []
    launcher = TmaLauncher(lambda grid, args: calls.append((grid, args)), [META, dict(META)])
    p = PointerArg(0x10000, 0x10000, 0x20000, 2, None)
    d1 = DescriptorArg(p, (100, 64), (64, 1), False)
    d2 = DescriptorArg(p, (7, 32), (32, 1), True)
    launcher((2, 1, 1), [d1, 5, d2])
    assert got == [(META, 0x10000, [100, 64], [64, 1], False),
                   (META, 0x10000, [7, 32], [32, 1], True)]
    assert calls == [((2, 1, 1), [bytes(range(128)), 100, 64, 64, 1, 5,
                                  bytes(range(128)), 7, 32, 32, 1])]


def test_a_tensor_map_travels_in_an_aligned_128_byte_slot():
    kinds = ["i32", "tma", "i32", "i64", "tma", "ptr"]
    sizes = {"tma": 128, "i32": 4, "i64": 8, "ptr": 8}
    seen = []

    class Driver(FakeDriver):
        def __init__(self):
            super().__init__(0x1234, [])

            def launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
                seen.append([(params[i], ctypes.string_at(params[i], sizes[k]))
                             for i, k in enumerate(kinds)])
                return 0
            self._cbs = self._cbs[:2] + (type(self._cbs[2])(launch),)
            self.entry_points["launch"] = ctypes.cast(self._cbs[2], ctypes.c_void_p).value

    drv = Driver()
    packed = cuda_launch.PackedLaunch(cuda_launch.Trampoline(drv.entry_points), 1, 0x1234,
                                      kinds, 128, 0)
    rng = np.random.default_rng()
    t1, t2 = rng.bytes(128), rng.bytes(128)
    for args in ([7, t1, -3, 2 ** 40, t2, 0x5000], [8, t2, 4, -1, t1, 0x6000]):
        assert packed.launch(1, 1, 1, 0, args) == 0
        (params,) = seen[-1:]
        assert [v for _, v in params] == [
            struct.pack("<i", args[0]), args[1], struct.pack("<i", args[2]),
            struct.pack("<q", args[3]), args[4], struct.pack("<Q", args[5])]
        assert params[1][0] % 64 == 0 and params[4][0] % 64 == 0
    with pytest.raises(ValueError, match="argument 1"):
        packed.launch(1, 1, 1, 0, [1, 12345, 2, 3, t1, 4])


def test_scratch_launcher_asks_the_allocator_for_every_program():
    from workbench.backends.descriptors import ScratchLauncher

    class Buf:
        def __init__(self, addr):
            self.addr = addr

        def data_ptr(self):
            return self.addr

    rng = random.Random()
    asked, calls = [], []
    addr = rng.randrange(1, 2 ** 40) * 128

    def allocator(size, align, stream):
        asked.append((size, align, stream))
        return Buf(addr)
    launcher = ScratchLauncher(lambda grid, args: calls.append((grid, args)), 256, 128)
    launcher.get_allocator = lambda: allocator
    grid = (rng.randrange(1, 50), rng.randrange(1, 5), 2)
    launcher(grid, [1, 2.5])
    assert asked == [(256 * grid[0] * grid[1] * grid[2], 128, 0)]
    assert calls == [(grid, [1, 2.5, addr])]
    launcher.get_allocator = lambda: (lambda size, align, stream: "not a buffer")
    with pytest.raises(LaunchError, match="not a device buffer"):
        launcher((1, 1, 1), [])


def test_the_runtime_hands_the_allocator_to_kernels_that_need_scratch(monkeypatch):
    import contextvars

    import workbench as wb
    from tests.passes.test_tma_lowering import dev_copy
    from workbench.backends import cuda_driver
    from workbench.backends.descriptors import ScratchLauncher
    monkeypatch.setattr(cuda_driver, "driver_status", lambda: None)  # launchers load lazily
    bn = random.choice([32, 64])
    k = wb.compile(dev_copy, "*fp32:16", "*fp32:16", "i32", "i32", BM=16, BN=bn,
                   target="cuda:90")
    launcher = k.launcher
    assert isinstance(launcher, ScratchLauncher)
    assert isinstance(launcher.inner, cuda_driver.CudaLauncher)
    assert launcher.size == k.extra["global_scratch_size"] == 256
    assert launcher.inner.param_kinds == ["ptr", "ptr", "i32", "i32", "ptr"]

    def alloc(size, align, stream):
        return None

    def inside():
        wb.set_allocator(alloc)
        return launcher.get_allocator()
    assert contextvars.Context().run(inside) is alloc
    assert contextvars.Context().run(launcher.get_allocator) is None


def test_scratch_from_host_memory_is_refused_before_launch():
    torch = pytest.importorskip("torch", reason="torch tensors as allocator buffers")
    from workbench.backends.descriptors import _address
    from workbench.errors import LaunchError
    with pytest.raises(LaunchError, match="torch tensor on cpu.*device='cuda'"):
        _address(torch.empty(128, dtype=torch.int8))
    assert _address(12345) == 12345


def test_tma_launcher_encodes_a_descriptor_once_per_address_shape_and_strides(monkeypatch):
    count = []

    def fake_encode(meta, address, shape, strides, nan):
        count.append(address)
        return address.to_bytes(8, "little") * 16
    monkeypatch.setattr(tensormap, "encode", fake_encode)
    calls = []
    launcher = TmaLauncher(lambda grid, args: calls.append(args), [META])
    rng = random.Random()
    addrs = [rng.randrange(1, 2 ** 30) * 16 for _ in range(3)]
    descs = [DescriptorArg(PointerArg(a, a, a + 4096, 2, None), (32, 64), (64, 1)) for a in addrs]
    for d in descs + descs + [descs[0]]:
        launcher((1, 1, 1), [d])
    assert count == addrs  # each address encoded once, then reused
    assert [c[0] for c in calls] == [a.to_bytes(8, "little") * 16
                                     for a in addrs + addrs + addrs[:1]]
    # a different shape at a known address is a different tensor map
    launcher((1, 1, 1), [DescriptorArg(descs[0].pointer, (16, 64), (64, 1))])
    assert count == addrs + addrs[:1]
    # the cache is bounded: the oldest entries go first
    TmaLauncher.MAX_MAPS, old = 2, TmaLauncher.MAX_MAPS
    try:
        small = TmaLauncher(lambda grid, args: None, [META])
        for d in descs + descs[:1]:
            small((1, 1, 1), [d])
        assert len(small._maps) == 2 and count[-4:] == addrs + addrs[:1]
    finally:
        TmaLauncher.MAX_MAPS = old
