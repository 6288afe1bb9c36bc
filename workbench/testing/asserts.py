"""Triton's ``triton.testing.assert_close`` and ``do_bench_cudagraph`` under their names.

``assert_close`` follows ``python/triton/testing.py`` (Triton 3.6): inputs become numpy
arrays, the default tolerances are ``atol=1e-2`` and ``rtol=0``, either may be a function of
the first input's dtype, NaNs compare equal.
"""
from __future__ import annotations

import numpy as np

from ..runtime.bench import do_bench


def _as_numpy(v) -> np.ndarray:
    if hasattr(v, "detach"):  # a torch tensor (bf16 has no numpy dtype: widened first)
        t = v.detach()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.cpu().numpy()
    return np.asarray(v)


def assert_close(x, y, atol=None, rtol=None, err_msg: str = "") -> None:
    """Raise AssertionError unless ``|x - y| <= atol + rtol * |y|`` elementwise.

    ``x``, ``y``: numbers, lists, numpy arrays or torch tensors (any device; read back to
    the host). ``atol`` (default 1e-2) and ``rtol`` (default 0.0): numbers, or functions
    taking the dtype of ``x`` and giving one. NaN equals NaN. ``err_msg`` starts the message
    of a failed scalar comparison (arrays get numpy's report)."""
    dtype = getattr(x, "dtype", None)
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    atol = atol(dtype) if callable(atol) else atol
    rtol = rtol(dtype) if callable(rtol) else rtol
    a, b = _as_numpy(x), _as_numpy(y)
    if a.size > 1 or b.size > 1:
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True,
                                   err_msg=err_msg)
        return
    if not np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True):
        raise AssertionError(f"{err_msg} {a} is not close to {b} (atol={atol}, rtol={rtol})")


def do_bench_cudagraph(fn, rep: float = 20, grad_to_none=None, quantiles=None,
                       return_mode: str = "mean"):
    """Triton's ``do_bench_cudagraph`` signature, timed without a CUDA graph: the workbench's
    launcher does not capture graphs, so each run is ``fn()`` launched as it is (times in
    milliseconds include the per-launch overhead a graph would hide). On a CUDA device
    (``workbench.cuda.is_available()``) it times with CUDA events, else on the host clock.
    Arguments and the returned value as :func:`workbench.testing.do_bench`."""
    from .. import cuda
    device = "cuda" if cuda.is_available() else "cpu"
    return do_bench(fn, warmup=max(1.0, rep / 4), rep=rep, grad_to_none=grad_to_none,
                    quantiles=quantiles, return_mode=return_mode, device=device)
