"""``num_ctas`` (Triton's CTAs per program, a thread-block cluster on sm_90) is accepted on
every target but CUDA before sm_90 (refused there with Triton's ValueError): a program runs
on one CTA, computing the same values; the CUDA compile report says so; a value that is not
a power of two up to 16 is a launch error at the user's line."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import LaunchError


@wb.jit
def row_sums(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@pytest.mark.parametrize("num_ctas", [2, 4])
def test_num_ctas_computes_the_same_values(backend, num_ctas):
    rng = np.random.default_rng()
    x = rng.standard_normal((7, 100)).astype(np.float32)
    out = np.full(7, np.nan, dtype=np.float32)
    row_sums[(7,)](x, out, 100, BLOCK=128, num_ctas=num_ctas)
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_cuda_report_names_the_one_cta_choice():
    k = wb.compile(row_sums, "*fp32", "*fp32", "i32", target="cuda:90", BLOCK=128,
                   num_ctas=2)
    notes = " ".join(k.extra["notes"])
    assert "num_ctas=2" in notes and "one CTA" in notes and "cluster of 2" in notes
    plain = wb.compile(row_sums, "*fp32", "*fp32", "i32", target="cuda:90", BLOCK=128)
    assert not any("num_ctas" in n for n in plain.extra["notes"])


@pytest.mark.parametrize("bad", [3, 0, 32])
def test_bad_num_ctas_is_a_launch_error(bad):
    x = np.zeros((1, 4), np.float32)
    with pytest.raises(LaunchError, match="num_ctas must be a power of two") as e:
        row_sums[(1,)](x, np.zeros(1, np.float32), 4, BLOCK=4, num_ctas=bad)
    assert "test_num_ctas.py" in str(e.value)


def test_num_ctas_before_sm90_is_refused_as_triton_does():
    with pytest.raises(ValueError, match=r"num_ctas > 1 requires NVIDIA SM90\+ \(Hopper\)"):
        wb.compile(row_sums, "*fp32", "*fp32", "i32", target="cuda:80", BLOCK=128, num_ctas=2)
    with pytest.raises(LaunchError, match="Current target is sm_80"):
        wb.compile(row_sums, "*fp32", "*fp32", "i32", target="cuda:90", BLOCK=128, num_ctas=2,
                   arch="sm80")
