"""Test helpers that Triton's language tests import from ``triton._internal_testing``,
written here for the workbench: on the CPU every ``is_<gpu>`` answer is False; with the
workbench's CUDA backend (``run.py --backend cuda``) the NVIDIA answers follow the GPU.

Names the workbench's runtime may lack (``reinterpret``, ``TensorWrapper``) are looked up
when a test needs them, so a missing one fails that test, not the whole file.
"""
from __future__ import annotations

import os
import re

import numpy as np
import pytest
import torch
from numpy.random import RandomState

import triton.language as tl

int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
integral_dtypes = int_dtypes + uint_dtypes
float_dtypes = ["float16", "float32", "float64"]
float_dtypes_with_bfloat16 = float_dtypes + ["bfloat16"]
dtypes = integral_dtypes + float_dtypes
dtypes_with_bfloat16 = dtypes + ["bfloat16"]
torch_float8_dtypes = ["float8_e4m3fn", "float8_e5m2"]
torch_dtypes = ["bool"] + int_dtypes + ["uint8"] + float_dtypes + ["bfloat16"]
tma_dtypes = sorted(set(dtypes_with_bfloat16) - {"int64", "uint64", "float64"})


def is_interpreter():
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def _cuda_arch() -> int:
    """The GPU's compute capability as an int (90 for sm_90) when the workbench launches on
    its CUDA backend (no ``TRITON_INTERPRET``, a GPU present), or the one the runner's
    ``--compile-target`` names (``SUITE_COMPILE_TARGET=cuda:90``: compile-only files compiled
    for that GPU on a machine without it); 0 on the CPU."""
    forced = os.environ.get("SUITE_COMPILE_TARGET", "")
    if forced:
        return int(forced.split(":")[-1])
    if is_interpreter():
        return 0
    from workbench.runtime.driver import driver
    target = driver.active.get_current_target()
    return target.arch if target.backend == "cuda" else 0


def get_current_target():
    return None if not _cuda_arch() else _target()


def _target():
    from workbench.runtime.driver import GPUTarget, driver
    if os.environ.get("SUITE_COMPILE_TARGET"):
        return GPUTarget("cuda", _cuda_arch(), 32)
    return driver.active.get_current_target()


def is_cuda():
    return _cuda_arch() > 0


def is_ampere_or_newer():
    return _cuda_arch() >= 80


def is_hopper():
    return _cuda_arch() // 10 == 9


def is_hopper_or_newer():
    return _cuda_arch() >= 90


def is_blackwell():
    return _cuda_arch() // 10 == 10


def is_sm12x():
    return _cuda_arch() // 10 == 12


def _no(*_a, **_k):
    return False


is_hip = is_xpu = is_hip_cdna = is_hip_cdna2 = is_hip_cdna3 = _no
is_hip_cdna4 = is_hip_rdna3 = is_hip_rdna4 = is_hip_gfx1250 = _no


def get_arch():
    return str(_cuda_arch() or "")


def get_hip_lds_size():
    return 65536


def numpy_random(shape, dtype_str, rs: RandomState | None = None, low=None, high=None):
    """Random numpy data of a dtype named by string; integers never zero (tests divide)."""
    shape = (shape,) if isinstance(shape, int) else shape
    rs = RandomState(seed=17) if rs is None else rs
    if dtype_str in integral_dtypes:
        info = np.iinfo(getattr(np, dtype_str))
        lo = info.min if low is None else max(low, info.min)
        hi = info.max if high is None else min(high, info.max)
        x = rs.randint(lo, hi, shape, dtype=getattr(np, dtype_str))
        x[x == 0] = 1
        return x
    if dtype_str and "float8" in dtype_str:
        return rs.randint(20, 40, shape, dtype=np.int8)
    if dtype_str in float_dtypes:
        return rs.normal(0, 1, shape).astype(dtype_str)
    if dtype_str == "bfloat16":
        bits = rs.normal(0, 1, shape).astype("float32").view("uint32") & np.uint32(0xFFFF0000)
        return bits.view("float32")
    if dtype_str in ("bool", "int1", "bool_"):
        return rs.normal(0, 1, shape) > 0.0
    raise RuntimeError(f"unknown dtype {dtype_str}")


def _jit_module():
    import triton.runtime.jit as j
    return j


def to_triton(x: np.ndarray, device, dst_type=None):
    """A torch tensor of ``x`` (unsigned and fp8 data through ``reinterpret``)."""
    t = x.dtype.name
    if t in uint_dtypes:
        signed = x.astype(getattr(np, t[1:]))
        return _jit_module().reinterpret(torch.tensor(signed, device=device), getattr(tl, t))
    if dst_type and "float8" in dst_type:
        return _jit_module().reinterpret(torch.tensor(x, device=device), getattr(tl, dst_type))
    if t == "float32" and dst_type == "bfloat16":
        return torch.tensor(x, device=device).bfloat16()
    return torch.tensor(x, device=device)


_CANON = {"bool": "int1", "bool_": "int1", "float8_e4m3fn": "float8e4nv",
          "float8_e5m2": "float8e5"}


def str_to_triton_dtype(x: str):
    return getattr(tl, _CANON.get(x, x))


def torch_dtype_name(dtype) -> str:
    if isinstance(dtype, tl.dtype):
        return dtype.name
    if isinstance(dtype, torch.dtype):
        return re.match(r"^torch\.(\w+)$", str(dtype)).group(1)
    raise TypeError(f"not a triton or torch dtype: {type(dtype)}")


def to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.cpu().float().numpy() if x.dtype is torch.bfloat16 else x.cpu().numpy()
    base = getattr(x, "base", None)
    if isinstance(base, torch.Tensor):
        return base.cpu().numpy().astype(getattr(np, torch_dtype_name(x.dtype)))
    raise ValueError(f"not a tensor: {x!r}")


def unwrap_tensor(t):
    return t if isinstance(t, torch.Tensor) else t.base


def supports_tma(byval_only=False):
    return is_interpreter()


def supports_ws():
    return is_interpreter()


def tma_skip_msg(byval_only=False):
    return "needs TMA"


requires_tma = pytest.mark.skipif(not supports_tma(), reason=tma_skip_msg())


def default_alloc_fn(size: int, align: int, _stream):
    return torch.empty(size, dtype=torch.int8, device="cuda" if is_cuda() else "cpu")


def _fresh_knobs_impl(skipped_attr=None):
    """Triton's ``fresh_knobs`` fixture helper over ``workbench.knobs``: ``fresh()`` drops
    every value set on the knob sets (not in ``skipped_attr``) and unsets their variables
    for the test, returning the knobs module; ``reset()`` puts both back."""
    from workbench import config, knobs

    skipped = set(skipped_attr or ())
    sets = [v for k, v in vars(knobs).items()
            if isinstance(v, knobs.base_knobs) and k not in skipped]
    keys = [d.key for s in sets for d in s.knob_descriptors.values()]
    monkeypatch = pytest.MonkeyPatch()
    saved = config.settings.snapshot()

    def fresh():
        for s in sets:
            s.reset()
        for key in keys:
            monkeypatch.delenv(key, raising=False)
        return knobs

    def reset():
        monkeypatch.undo()
        config.settings.restore(saved)

    return fresh, reset
