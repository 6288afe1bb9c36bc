"""Each backend's part of a cache entry: ``pack(kernel) -> bytes``, ``load(bytes)``."""
import numpy as np
import pytest

import workbench as wb
from workbench.backends import cuda_driver
from workbench.backends.entry import LocationTable, locations_from_rows, pack_parts, unpack_parts
from workbench.backends.registry import get_backend
from workbench.errors import ToolMissingError
from workbench.ir.core import Location
from workbench.testing.examples import add_kernel

SIG = ("*fp32", "*fp32", "*fp32", "i32")


def test_parts_round_trip_and_reject_damage():
    data = pack_parts({"a": [1, "x"]}, {"one": b"\x00\x01", "two": b"", "three": b"xyz"})
    assert unpack_parts(data) == ({"a": [1, "x"]}, {"one": b"\x00\x01", "two": b"",
                                                      "three": b"xyz"})
    assert unpack_parts(pack_parts(None)) == (None, {})
    for bad in (data[:-1], data + b"!", data[:12], b""):
        with pytest.raises(ValueError):
            unpack_parts(bad)


def test_location_table_keeps_callers_and_shares_rows():
    outer = Location("k.py", 3, 5, "kern")
    inner = Location("h.py", 10, 1, "helper", outer)
    table = LocationTable()
    idx = [table.index(inner), table.index(outer), table.index(None), table.index(inner)]
    assert idx == [1, 0, None, 1] and len(table.rows) == 2
    back = locations_from_rows(table.rows)
    assert back[1] == inner and back[1].caller == outer


def _run(kernel):
    n = 100
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.full(n, np.nan, np.float32)
    kernel.run((2,), x, y, out, n)
    np.testing.assert_array_equal(out, x + 1)


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
def test_a_loaded_kernel_launches(target, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")
    k = wb.compile(add_kernel, *SIG, target=target, BLOCK_SIZE=64)
    backend = get_backend(target)
    loaded = backend.load(backend.pack(k))
    assert loaded.launch_error is None and loaded.launcher is not k.launcher
    k._launcher = loaded.launcher
    _run(k)
    if target == "cpu":  # the first load generates machine code and offers it for the entry
        again = backend.load(loaded.repacked)
        assert again.repacked is None
        k._launcher = again.launcher
        _run(k)


def test_cuda_entry_keeps_the_image_and_says_why_it_cannot_launch(monkeypatch):
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")
    k = wb.compile(add_kernel, *SIG, target="cuda:90", BLOCK_SIZE=64)
    backend = get_backend("cuda:90")
    meta, parts = unpack_parts(backend.pack(k))
    assert meta["kinds"] == ["ptr", "ptr", "ptr", "i32"] and meta["name"] == k.name
    image = k.extra.get("cubin") or k.asm["ptx"]
    assert parts["image"] == (image.encode() if isinstance(image, str) else image)
    reason = cuda_driver.driver_status()
    if reason is None:
        pytest.skip("a CUDA driver is present: the launch path is tested on the GPU")
    loaded = backend.load(backend.pack(k))
    assert loaded.launch_error == reason
    with pytest.raises(ToolMissingError):
        loaded.launcher((1, 1, 1), [])


def test_malformed_bytes_raise():
    for target in ("cpu", "interpreter", "cuda:90"):
        with pytest.raises(Exception):  # noqa: B017 - any error makes the caller recompile
            get_backend(target).load(b"\x05garbage")
