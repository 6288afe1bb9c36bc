"""Pointers made from integers on the interpreter: a kernel loads a table of addresses of
arrays that are not launch arguments (Triton's grouped-GEMM pattern) and reads and writes
through them; the interpreter finds the live arrays that hold those addresses. An address in
no live array stays an out-of-bounds error naming the line."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import OutOfBoundsError


@wb.jit
def scale_rows(table_ptr, out_table_ptr, N: tl.constexpr):
    g = tl.program_id(0)
    src = tl.load(table_ptr + g).to(tl.pointer_type(tl.float32))
    dst = tl.load(out_table_ptr + g).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, N)
    tl.store(dst + offs, tl.load(src + offs) * (g + 1))


@pytest.fixture
def interpreter(monkeypatch):
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")


def test_numpy_arrays_reached_through_an_address_table(interpreter):
    rng = np.random.default_rng()
    srcs = [rng.standard_normal(32).astype(np.float32) for _ in range(4)]
    dsts = [np.full(32, np.nan, np.float32) for _ in range(4)]
    table = np.array([a.ctypes.data for a in srcs], dtype=np.int64)
    out_table = np.array([a.ctypes.data for a in dsts], dtype=np.int64)
    scale_rows[(4,)](table, out_table, 32)
    for g in range(4):
        np.testing.assert_array_equal(dsts[g], srcs[g] * np.float32(g + 1))


def test_torch_tensors_reached_through_an_address_table(interpreter):
    torch = pytest.importorskip("torch")
    srcs = [torch.randn(16) for _ in range(3)]
    dsts = [torch.zeros(16) for _ in range(3)]
    table = torch.tensor([t.data_ptr() for t in srcs], dtype=torch.int64)
    out_table = torch.tensor([t.data_ptr() for t in dsts], dtype=torch.int64)
    scale_rows[(3,)](table, out_table, 16)
    for g in range(3):
        assert torch.equal(dsts[g], srcs[g] * (g + 1))


def test_an_address_in_no_live_array_is_out_of_bounds(interpreter):
    table = np.array([4096, 4096], dtype=np.int64)  # the first pages: never an array
    with pytest.raises(OutOfBoundsError) as e:
        scale_rows[(1,)](table, table, 16)
    assert "tl.load(src + offs)" in str(e.value)
