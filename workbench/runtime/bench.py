"""``do_bench``: time a callable the way Triton's ``triton.testing.do_bench`` does (Triton 3.6,
``triton/testing.py``), in milliseconds. ``workbench.testing.do_bench`` is this function.

Method (Triton 3.6): run ``fn`` once (compiles, warms caches), estimate its time from 5 runs
each preceded by a cache flush (the flush counts in the estimate, as Triton's 5-run estimate
includes its ``cache.zero_()``), then ``max(1, warmup / estimate)`` warm-up runs and
``max(1, rep / estimate)`` timed runs, each timed run preceded by a flush that is not timed.

- On the host (``device="cpu"``, the default): :func:`time.perf_counter` (monotonic) around
  each run; the flush writes a buffer larger than the last-level cache (64 MiB by default,
  allocated once per call) so every run starts with cold caches, as on the GPU.
- On an NVIDIA GPU (``device="cuda"``): CUDA events around each run on the default stream
  (cuda-bindings, :class:`workbench.backends.cuda_driver.EventTimer`), and a 256 MiB device
  buffer set by ``cuMemsetD8`` flushes L2, as Triton does.
"""
from __future__ import annotations

import time

import numpy as np

RETURN_MODES = ("min", "max", "mean", "median", "all")
CPU_FLUSH_BYTES = 64 << 20
GPU_FLUSH_BYTES = 256 << 20


def summarize(times, quantiles=None, return_mode: str = "mean"):
    """Triton's ``_summarize_statistics``: the list of ``quantiles`` of ``times`` (linear
    interpolation, as ``torch.quantile``; a single quantile gives a float), else the
    ``return_mode`` statistic (a float) or the raw list for ``"all"``.
    Raises ValueError for an unknown ``return_mode`` or a quantile outside [0, 1]."""
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {', '.join(RETURN_MODES)}, "
                         f"got {return_mode!r}")
    arr = np.asarray(times, dtype=np.float64)
    if quantiles is not None:
        qs = [float(q) for q in quantiles]
        if any(not 0.0 <= q <= 1.0 for q in qs):
            raise ValueError(f"quantiles must lie in [0, 1], got {list(quantiles)}")
        out = [float(v) for v in np.quantile(arr, qs)]
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return [float(t) for t in arr]
    return float(getattr(np, return_mode)(arr))


class _HostClock:
    """perf_counter timing with a last-level-cache flush by writing a large buffer."""

    def __init__(self, flush_bytes: int):
        self.buf = np.empty(max(int(flush_bytes), 0), np.uint8) if flush_bytes else None
        self.k = 0

    def flush(self):
        if self.buf is not None:
            self.k = (self.k + 1) & 0xFF
            self.buf.fill(self.k)

    def block(self, fn, n: int) -> float:
        """ms for ``n`` x (flush + fn), as one block (the estimate)."""
        t0 = time.perf_counter()
        for _ in range(n):
            self.flush()
            fn()
        return (time.perf_counter() - t0) * 1e3

    def timed(self, fn) -> float:
        self.flush()
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3

    def sync(self):
        pass


class _CudaClock:
    """CUDA events around each run; L2 flushed with cuMemsetD8 on a 256 MiB buffer."""

    def __init__(self, flush_bytes: int):
        from ..backends import cuda_driver
        self.cd = cuda_driver
        self.drv = cuda_driver.import_driver()
        cuda_driver.open_device().make_current()
        self.buf = cuda_driver.DeviceArray.empty((int(flush_bytes),), np.uint8) \
            if flush_bytes else None

    def flush(self):
        if self.buf is not None:
            self.cd.check(self.drv.cuMemsetD8(self.buf.ptr, 0, self.buf.nbytes), "cuMemsetD8")

    def block(self, fn, n: int) -> float:
        with self.cd.EventTimer() as t:
            for _ in range(n):
                self.flush()
                fn()
        return t.ms

    def timed(self, fn) -> float:
        self.flush()
        with self.cd.EventTimer() as t:
            fn()
        return t.ms

    def sync(self):
        self.cd.synchronize()


def do_bench(fn, warmup: float = 25, rep: float = 100, grad_to_none=None, quantiles=None,
             return_mode: str = "mean", device: str = "cpu", flush_bytes: int | None = None):
    """Time ``fn()`` (no arguments) and return **milliseconds**, as Triton's ``do_bench``.

    ``warmup`` and ``rep``: target warm-up and measurement durations in ms (the run counts
    come from a 5-run estimate: ``max(1, int(warmup / est))`` and ``max(1, int(rep / est))``).
    ``quantiles``: e.g. ``(0.5, 0.2, 0.8)`` -> list of those quantiles of the run times
    (one quantile -> a float); otherwise ``return_mode`` in ``"mean"``, ``"median"``,
    ``"min"``, ``"max"`` (a float) or ``"all"`` (the list of every timed run).
    ``grad_to_none``: objects whose ``.grad`` is set to None before each timed run (Triton's
    argument, for torch tensors). ``device``: ``"cpu"`` (perf_counter, host cache flush) or
    ``"cuda"`` (CUDA events, L2 flush; needs cuda-bindings and a GPU). ``flush_bytes``: bytes
    written before each run to flush caches (default 64 MiB on the host, 256 MiB on the GPU;
    0 disables flushing). Exceptions raised by ``fn`` propagate. Raises ValueError for a bad
    ``return_mode``/``device``, ToolMissingError for ``"cuda"`` without a GPU."""
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {', '.join(RETURN_MODES)}, "
                         f"got {return_mode!r}")
    dev = str(device).split(":")[0].lower()
    clock: _HostClock | _CudaClock
    if dev == "cpu":
        clock = _HostClock(CPU_FLUSH_BYTES if flush_bytes is None else flush_bytes)
    elif dev == "cuda":
        clock = _CudaClock(GPU_FLUSH_BYTES if flush_bytes is None else flush_bytes)
    else:
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    fn()
    clock.sync()
    estimate_ms = max(clock.block(fn, 5) / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    for _ in range(n_warmup):
        fn()
    times = []
    for _ in range(n_repeat):
        for g in grad_to_none or ():
            g.grad = None
        times.append(clock.timed(fn))
    return summarize(times, quantiles, return_mode)
