"""The compute micro-kernels behind :mod:`workbench.testing.ceilings`: what rate this compiler
reaches with fused multiply-adds, and with ``tl.dot``, on this machine.

**FMA chains** (:func:`measure_fma`, roofs ``"fp32"``, ``"fp64"``): each element of a
``BLOCK``-wide tile carries 4 independent chains ``x = fma(x, a, b)``; every loop iteration
advances each chain ``CHAIN`` steps (unrolled by ``tl.static_range``). The CPU backend evaluates
elementwise chains lazily inside one loop over the tile's elements, so one iteration is a loop
that loads an element, runs ``CHAIN`` dependent FMAs in registers and stores it: with
``BLOCK = 256`` that loop has 16 (fp32, 512-bit) or 32 (fp64) independent vector iterations,
which the out-of-order core overlaps to hide the FMA latency (4 cycles x 2 FMA ports needs 8
chains in flight), and one load and one store per ``CHAIN`` FMAs keep the loads and stores
off the critical path. With ``CHAIN = 1`` (the kernel before this one) every FMA was a load,
an FMA and a store: a rate of the L1 cache, a quarter of the FMA rate on this machine.
:func:`fma_asm` counts the packed FMAs per register class in the host assembly, so the
ceilings can say whether the roof was measured with the widest vectors of the host.

**Dot** (:func:`measure_dot`, roof ``"<dtype>:dot"``): each program loads one ``BM x BK`` and
one ``BK x BN`` tile once (resident in cache) and runs ``iters`` accumulating ``tl.dot``.
On the GPU that is the tensor cores (fp16); on the CPU it is the backend's register-blocked
dot micro-kernel (fp32, ``input_precision="ieee"``), which reaches a higher rate than
elementwise FMAs because its accumulators never leave registers. Runs whose kernel uses
``tl.dot`` are compared against this roof (see :attr:`workbench.testing.work.Work.dtype`).

Timing: the best (minimum) of many short launches (a few ms each on the CPU) without cache
flushing: the roof is the best this machine does, and short launches are the ones that find
both cores free on a shared machine.
"""
from __future__ import annotations

import os
import re

import numpy as np

import workbench.language as tl

from ..runtime.jit import jit

#: steps of each chain per loop iteration (unrolled)
CHAIN = 8


@jit
def fma_kernel(x_ptr, out_ptr, a, b, iters, BLOCK: tl.constexpr, CHAIN: tl.constexpr):
    """4 independent fma chains per element, ``CHAIN`` steps each per iteration, ``iters``
    iterations: 8 x CHAIN FLOP per element-iteration."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x0 = tl.load(x_ptr + offs)
    x1 = x0 + 1.0
    x2 = x0 + 2.0
    x3 = x0 + 3.0
    for _ in range(iters):
        for _k in tl.static_range(CHAIN):
            x0 = tl.fma(x0, a, b)
            x1 = tl.fma(x1, a, b)
            x2 = tl.fma(x2, a, b)
            x3 = tl.fma(x3, a, b)
    tl.store(out_ptr + offs, (x0 + x1) + (x2 + x3))


@jit
def dot_kernel(a_ptr, b_ptr, c_ptr, iters, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr):
    """``iters`` tl.dot of one BMxBK by BKxBN tile per program, accumulated (tensor cores)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(iters):
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + tl.program_id(0) * BM * BN + rm[:, None] * BN + rn[None, :], acc)


@jit
def dot_ieee_kernel(a_ptr, b_ptr, c_ptr, iters, BM: tl.constexpr, BN: tl.constexpr,
                    BK: tl.constexpr):
    """:func:`dot_kernel` with fp32 operands used as they are (``input_precision="ieee"``),
    the CPU's dot roof."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(iters):
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + tl.program_id(0) * BM * BN + rm[:, None] * BN + rn[None, :], acc)


# ------------------------------------------------------------------------------ helpers
def _arrays(target: str, host_arrays):
    if not target.startswith("cuda"):
        return host_arrays
    from ..backends.cuda_driver import DeviceArray
    return [DeviceArray.from_numpy(a) for a in host_arrays]


def best_ms(fn, device: str, rep_ms: float) -> float:
    """The fastest of ``fn()``'s runs over about ``rep_ms`` ms (no cache flush), in ms."""
    from ..runtime.bench import do_bench
    return do_bench(fn, warmup=1, rep=rep_ms, return_mode="min", device=device, flush_bytes=0)


def calibrate(launch, device: str, target_ms: float, start: int = 4,
              limit: int = 1 << 22) -> int:
    """The iteration count that makes ``launch(iters)`` take about ``target_ms`` (within a
    factor of 2): measured (best of a few runs), rescaled and measured again until it does.
    Re-measuring matters on a many-core host, where the CPU backend runs short launches
    serially (waking helper threads costs more than they save) and long ones in parallel, so
    a rate measured on short launches does not scale."""
    iters = start
    for _ in range(8):
        ms = max(best_ms(lambda iters=iters: launch(iters), device, target_ms), 1e-4)
        if target_ms / 2 <= ms <= 2 * target_ms or (iters >= limit and ms < target_ms):
            break
        iters = int(min(limit, max(1, iters * min(64.0, max(1 / 64, target_ms / ms)))))
    return iters


def workers() -> int:
    """Cores the CPU backend spreads a grid over."""
    return os.cpu_count() or 1


def widest_vector() -> str:
    """The widest x86 vector register class the CPU backend compiles for: ``"zmm"``
    (AVX-512, unless ``WORKBENCH_CPU_PREFER_256``), ``"ymm"`` (AVX), ``"xmm"``; ``""`` on
    other architectures."""
    from ..backends.registry import get_backend
    feats = get_backend("cpu").host_features()
    if "+avx512f" in feats and "-prefer-256-bit" in feats:
        return "zmm"
    if "+avx" in feats:
        return "ymm"
    return "xmm" if "+sse2" in feats else ""


def fma_asm(compiled) -> dict:
    """Counts of FMA instructions in ``compiled``'s host assembly: ``{"zmm": n, "ymm": n,
    "xmm": n, "scalar": n}`` (x86 ``vfmadd``/``vfmsub``/``vfnmadd``... forms); empty for
    a kernel without host assembly."""
    asm = getattr(compiled, "asm", {}).get("asm", "") if hasattr(compiled, "asm") else ""
    out = {"zmm": 0, "ymm": 0, "xmm": 0, "scalar": 0}
    for m in re.finditer(r"^\s*v?f(?:n?m(?:add|sub)|maddsub|msubadd)\w*?(p|s)[sd]\s+([^\n]*)",
                         asm, re.M):
        if m.group(1) == "s":
            out["scalar"] += 1
        else:
            reg = re.search(r"%(zmm|ymm|xmm)", m.group(2))
            if reg:
                out[reg.group(1)] += 1
    return out


# ------------------------------------------------------------------------------ measuring
class Probe:
    """One calibrated micro-kernel launch: :meth:`run` times it (keeping the best time over
    every call, so calls interleaved with other probes sample different moments of a shared
    machine), :meth:`result` reports the rate. ``launch(iters)`` launches it; ``info``:
    fields added to the result."""

    def __init__(self, launch, grid, device: str, target_ms: float, info: dict,
                 iters: int | None = None, start: int = 4):
        self.launch, self.grid, self.device, self.info = launch, grid, device, dict(info)
        self.iters = iters or calibrate(launch, device, target_ms, start=start)
        self.compiled = launch(self.iters)   # (not launch(1): an argument of 1 is specialised)
        self.ms = float("inf")

    def run(self, rep_ms: float) -> float:
        """Time the launch for about ``rep_ms`` ms; the best time so far (ms)."""
        self.ms = min(self.ms, best_ms(lambda: self.launch(self.iters), self.device, rep_ms))
        return self.ms

    def result(self) -> dict:
        """``flops_per_s``, ``flops``, ``seconds`` (best launch), ``iters`` and ``info``."""
        from .work import static_work
        work = static_work(self.compiled, self.grid, {"iters": self.iters})
        return {"flops_per_s": work.flops / (self.ms * 1e-3), "flops": work.flops,
                "seconds": self.ms * 1e-3, "iters": self.iters, **self.info}


def fma_probe(target: str, dtype: str, target_ms: float = 4) -> Probe:
    """The FMA-chain probe for ``dtype`` (``"fp32"``, ``"fp64"``); on the CPU its info holds
    ``asm_fma`` (see :func:`fma_asm`) and ``vector`` (the widest register class used)."""
    np_dt = {"fp32": np.float32, "fp64": np.float64}[dtype]
    gpu = target.startswith("cuda")
    block, programs = (256, 4096) if gpu else (256, 8 * workers())
    n = block * programs
    x, out = _arrays(target, [np.full(n, 0.5, np_dt), np.zeros(n, np_dt)])
    grid = (programs,)

    def launch(iters):
        return fma_kernel[grid](x, out, 0.5, 0.25, iters, BLOCK=block, CHAIN=CHAIN)

    probe = Probe(launch, grid, "cuda" if gpu else "cpu", target_ms,
                  {"BLOCK": block, "CHAIN": CHAIN, "programs": programs})
    if not gpu:
        counts = fma_asm(probe.compiled)
        used = [r for r in ("zmm", "ymm", "xmm") if counts.get(r)]
        probe.info.update(asm_fma=counts, vector=used[0] if used else
                          ("scalar" if counts.get("scalar") else ""))
    return probe


def dot_probe(target: str, dtype: str = "fp16", target_ms: float = 4) -> Probe:
    """The ``tl.dot`` probe with ``dtype`` operands (``"fp16"`` tensor cores on the GPU,
    ``"fp32"`` on the CPU); info: ``tile`` (BM, BN, BK), ``programs``. Raises what compiling
    or launching raises."""
    np_dt = {"fp16": np.float16, "fp32": np.float32}[dtype]
    gpu = target.startswith("cuda")
    bm = bn = 128
    bk = 64 if gpu else 128
    programs = 1024 if gpu else 2 * workers()
    kernel = dot_kernel if gpu else dot_ieee_kernel
    a, b, c = _arrays(target, [np.full((bm, bk), 0.5, np_dt), np.full((bk, bn), 0.5, np_dt),
                               np.zeros((programs, bm, bn), np.float32)])
    grid = (programs,)

    def launch(iters):
        return kernel[grid](a, b, c, iters, BM=bm, BN=bn, BK=bk)

    return Probe(launch, grid, "cuda" if gpu else "cpu", target_ms,
                 {"tile": (bm, bn, bk), "programs": programs}, start=2)


def measure_fma(target: str, dtype: str, target_ms: float = 4, rep_ms: float = 300) -> dict:
    """FMA-chain FLOP/s for ``dtype``: :func:`fma_probe` timed for ``rep_ms``, its result."""
    probe = fma_probe(target, dtype, target_ms)
    probe.run(rep_ms)
    return probe.result()


def measure_dot(target: str, dtype: str = "fp16", target_ms: float = 4,
                rep_ms: float = 300) -> dict:
    """``tl.dot`` FLOP/s: :func:`dot_probe` timed for ``rep_ms``, its result."""
    probe = dot_probe(target, dtype, target_ms)
    probe.run(rep_ms)
    return probe.result()
