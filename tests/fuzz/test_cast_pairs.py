"""Every cast the fuzzer draws, each (source, destination) pair at least once per run: one kernel
per source dtype casts a fresh random tile to every destination, on the interpreter and the CPU
backend, against the fuzzer's own numpy model of casts (``workbench.testing.fuzz.types.cast``).
The random programs cover the pairs only by chance; this covers all of them every run.

Pairs: ints, unsigned ints, bool, fp16, bf16, fp32, fp64 to each other, and the 8-bit floats
(float8e4nv, float8e5, float8e4b15) to and from every float type (they do not convert to or from
integers). A float to an integer is checked on lanes inside the integer's range only (outside
it the result is undefined, in Triton too)."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from workbench.runtime.aot import compile as wb_compile
from workbench.testing.fuzz import types as ft

ALL = ft.INTS + ("i1",) + ft.FLOATS + ft.FP8
N = 64


def _targets(src: str) -> list:
    if ft.is_fp8(src):
        return [d for d in ft.FLOATS + ft.FP8 if d != src]
    return [d for d in ALL if d != src and (ft.is_float(src) or not ft.is_fp8(d))]


def _stored(d: str) -> str:
    """The dtype a destination is stored as (bool as int8, bf16 and 8-bit floats as fp32)."""
    return "i8" if d == "i1" else "fp32" if d == "bf16" or ft.is_fp8(d) else d


def _loaded(src: str) -> str:
    """The dtype the input array has (bf16 and 8-bit floats are loaded as fp32, bool as int8)."""
    return _stored(src)


def _source(src: str, targets: list) -> str:
    outs = ", ".join(f"o{i}" for i in range(len(targets)))
    lines = ["import workbench as wb", "import workbench.language as tl", "", "", "@wb.jit",
             f"def casts(x_ptr, {outs}, N: tl.constexpr):", "    offs = tl.arange(0, N)",
             f"    s = tl.load(x_ptr + offs).to({ft.TL_NAME[src]})"]
    for i, d in enumerate(targets):
        lines.append(f"    tl.store(o{i} + offs, s.to({ft.TL_NAME[d]}).to("
                     f"{ft.TL_NAME[_stored(d)]}))")
    return "\n".join(lines) + "\n"


def _load(src: str, targets: list, tmp_path):
    path = tmp_path / f"casts_{src}.py"
    path.write_text(_source(src, targets))
    spec = importlib.util.spec_from_file_location(f"wb_cast_pairs_{src}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.casts


def _inputs(src: str, rng) -> tuple:
    """(array loaded by the kernel, the source-typed values the reference starts from)."""
    if src == "i1":
        x = rng.integers(0, 2, N).astype(np.int8)
        return x, x != 0
    if ft.is_int(src):
        # below 2**24 in magnitude (the model converts wide ints to bf16 through float32,
        # which would round twice), plus the dtype's extremes
        lo, hi = ft.int_range(src)
        x = rng.integers(max(lo, -(1 << 24)), min(hi, 1 << 24), N, endpoint=True)
        x = x.astype(ft.NP[src])
        x[:4] = [0, 1, hi, lo]  # the extremes, always
        return x, x
    # floats: multiples of 1/8 in -300..300 (rounded by bf16 and the 8-bit floats), zeros
    x = (rng.integers(-2400, 2401, N) / 8).astype(np.float32 if src != "fp64" else np.float64)
    x[:3] = [0.0, -0.0, 1.0]
    if src == "fp16":
        x = x.astype(np.float16)
    return x, ft.cast(x, "fp64" if src == "fp64" else "fp32", src) if src != "fp16" else x


def _check(target: str, src: str, targets: list, xs, outs: list) -> None:
    for d, got in zip(targets, outs, strict=True):
        want = ft.cast(ft.cast(xs, src, d), d, _stored(d))
        ok = np.ones(N, bool)
        if (ft.is_float(src) or ft.is_fp8(src)) and ft.is_int(d):
            lo, hi = ft.int_range(d)
            ok = (xs.astype(np.float64) > lo - 1) & (xs.astype(np.float64) < hi + 1)
        same = (got == want) | (np.isnan(got) & np.isnan(want) if got.dtype.kind == "f"
                                else False)
        bad = np.flatnonzero(ok & ~same)
        assert bad.size == 0, (f"{target}: {src} -> {d}: lane {bad[0]}: {xs[bad[0]]!r} gave "
                               f"{got[bad[0]]!r}, expected {want[bad[0]]!r}")


@pytest.mark.parametrize("src", ALL)
def test_every_cast_from(src, tmp_path):
    """Both backends in one test per source dtype (15 kernels, 2 compiles each)."""
    rng = np.random.default_rng()
    targets = _targets(src)
    kern = _load(src, targets, tmp_path)
    x, xs = _inputs(src, rng)
    for target in ("interpreter", "cpu"):
        outs = [np.zeros(N, ft.NP[_stored(d)]) for d in targets]
        ck = wb_compile(kern, x, *outs, target=target, N=N)
        ck[(1,)](x, *outs, N=N)
        _check(target, src, targets, xs, outs)


@pytest.mark.gpu
@pytest.mark.parametrize("src", ALL)
def test_every_cast_from_on_the_gpu(src, tmp_path):
    """The same casts on the GPU (the CUDA backend, device arrays)."""
    import workbench.cuda as wcuda
    rng = np.random.default_rng()
    targets = _targets(src)
    kern = _load(src, targets, tmp_path)
    x, xs = _inputs(src, rng)
    outs = [wcuda.to_device(np.zeros(N, ft.NP[_stored(d)])) for d in targets]
    kern[(1,)](wcuda.to_device(x), *outs, N=N)
    wcuda.synchronize()
    _check("cuda", src, targets, xs, [o.to_numpy() for o in outs])


def test_the_pairs_are_every_pair_the_language_takes():
    pairs = {(s, d) for s in ALL for d in _targets(s)}
    assert len(pairs) == 186  # 13 * 12 among ints, bool and floats; 3 * 6 + 4 * 3 with fp8
    assert ("u64", "i1") in pairs and ("fp8e5", "fp8e4b15") in pairs
    assert ("fp8e4nv", "i32") not in pairs and ("u8", "fp8e5") not in pairs
