"""Measured ceilings of this machine: memory bandwidth and arithmetic rate per dtype, from
short micro-kernels written in the workbench's language and launched through
``workbench.jit`` (so they are the roofs *this compiler* reaches), cached per machine.

- Memory: the STREAM triad ``a = b + s*c`` (McCalpin, STREAM benchmark) over three fp32
  arrays totalling at least 4x the last-level cache (256 MiB by default), best of several
  runs; bytes counted as STREAM counts them, 3 x n x 4 (write-allocate traffic not counted,
  as in the work model of :mod:`workbench.testing.work`).
- Compute, per dtype (fp32, fp64): 4 independent ``tl.fma`` chains per element of a
  256-wide tile, each advanced 8 steps per loop iteration in registers (so the CPU backend's
  vectorised element loop issues FMAs, not loads and stores; see
  :mod:`workbench.testing.microkernels`), FLOPs counted by
  :func:`workbench.testing.work.static_work` (2 per fma), best of many short launches. On the
  CPU the host assembly's FMAs are counted (``details[dtype]["asm_fma"]``) and a note says so
  when they are not of the host's widest vectors.
- ``tl.dot``: on the CPU, ``"fp32:dot"``: 128x128x128 fp32 tiles resident in cache,
  accumulated ``iters`` times (the backend's register-blocked dot reaches more than the FMA
  chains, as BLAS does); on the GPU, ``"fp16:dot"``: the tensor cores, when the CUDA backend
  lowers ``tt.dot`` (otherwise skipped with a note). A run whose kernel uses ``tl.dot`` is
  compared with the dot roof (:attr:`workbench.testing.work.Work.dtype`).

Datasheet figures for known GPUs (NVIDIA H100 SXM5, H100 PCIe, H200 SXM, A100 SXM4 datasheets;
dense tensor-core rates, i.e. half of the "with sparsity" figures) are kept in
``Ceilings.datasheet``, beside the measured figures, never instead of them.

Cache: ``<cache dir>/ceilings/<machine>-<target>.json`` where the cache dir is
``$WORKBENCH_CACHE_DIR`` or the platform user cache of ``tile-workbench``; a file measured by
another compiler version (``compiler_hash``) or by another measuring method (``METHOD``) is
re-measured, as is any with ``refresh=True``.
"""
from __future__ import annotations

import json
import math
import os
import re
import socket
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .datasheets import DATASHEETS, datasheet_for  # noqa: F401 - re-exported
from .examples import triad_kernel  # noqa: F401 - the memory roof's kernel
from .microkernels import (  # noqa: F401 - re-exported  # noqa: F401 - re-exported
    _arrays,
    dot_kernel,
    dot_probe,
    fma_kernel,
    fma_probe,
    measure_dot,
    measure_fma,
    widest_vector,
)

MiB = 1 << 20
#: version of the measuring method; a cached file measured by another one is re-measured
METHOD = 4

@dataclass
class Ceilings:
    """Roofs of one machine and target.

    ``bandwidth``: measured memory bandwidth (bytes/s); ``compute``: measured arithmetic rate
    per roof (``"fp32"``, ``"fp64"``, ``"fp16:dot"`` -> FLOP/s); ``datasheet``: the vendor's
    figures for a known GPU (``{"source", "bandwidth", "compute"}``, empty otherwise);
    ``llc_bytes``: last-level cache size (bytes); ``details``: per measurement sizes and times;
    ``method``: the measuring method's version (:data:`METHOD`);
    ``notes``: what was skipped and why; ``seconds``: time the measurement took."""

    target: str
    machine: str
    bandwidth: float
    compute: dict
    datasheet: dict = field(default_factory=dict)
    llc_bytes: int = 0
    details: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    measured_at: str = ""
    seconds: float = 0.0
    compiler: str = ""
    method: int = 0
    from_cache: bool = False

    def roof(self, dtype: str = "fp32") -> float:
        """The compute roof (FLOP/s) for ``dtype`` (``"fp16:dot"`` falls back to ``"fp16"``,
        then to ``"fp32"``, then to the highest measured roof)."""
        for key in (dtype, dtype.split(":")[0], "fp32"):
            if key in self.compute:
                return float(self.compute[key])
        return float(max(self.compute.values())) if self.compute else math.inf

    def ridge(self, dtype: str = "fp32") -> float:
        """The ridge point: the arithmetic intensity (FLOP/byte) where the memory roof meets
        the compute roof of ``dtype``."""
        return self.roof(dtype) / self.bandwidth

    def bound(self, intensity: float, dtype: str = "fp32") -> float:
        """The attainable FLOP/s at ``intensity`` (FLOP/byte): min(roof, intensity x BW)
        (Williams, Waterman, Patterson, "Roofline", CACM 2009)."""
        return min(self.roof(dtype), intensity * self.bandwidth)

    def to_text(self) -> str:
        """A few lines: machine, bandwidth, roofs (measured, then datasheet)."""
        lines = [f"ceilings of {self.machine} ({self.target}), measured {self.measured_at}"
                 f"{' (cached)' if self.from_cache else ''}:",
                 f"  memory bandwidth {self.bandwidth / 1e9:.2f} GB/s (STREAM triad)"]
        for k, v in self.compute.items():
            lines.append(f"  {k:9s} {v / 1e9:10.2f} GFLOP/s   ridge {self.ridge(k):.2f} FLOP/B")
        if self.datasheet:
            ds = self.datasheet
            lines.append(f"  datasheet ({ds['source']}): {ds['bandwidth'] / 1e9:.0f} GB/s, "
                         + ", ".join(f"{k} {v / 1e12:.1f} TFLOP/s"
                                     for k, v in ds["compute"].items()))
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html
        # mathjax_ignore/tex2jax_ignore: no notebook typesets a "$" of this table as maths
        return (f"<pre class='mathjax_ignore tex2jax_ignore'>{html.escape(self.to_text())}"
                "</pre>")

    def __repr__(self) -> str:
        return self.to_text()


# ------------------------------------------------------------------------------ machine
def llc_bytes() -> int:
    """Size of the last-level cache in bytes, from /sys/devices/system/cpu/cpu0/cache, else
    ``lscpu``, else 32 MiB."""
    best = (0, 0)
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")) if base.exists() else ():
        try:
            level = int((idx / "level").read_text())
            kind = (idx / "type").read_text().strip()
            size = _parse_size((idx / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind != "Instruction" and (level, size) > best:
            best = (level, size)
    if best[1]:
        return best[1]
    try:
        import subprocess
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=5).stdout
        for line in out.splitlines():
            if re.match(r"\s*L3 cache:", line):
                return _parse_size(line.split(":", 1)[1].split("(")[0])
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    return 32 * MiB


def _parse_size(text: str) -> int:
    m = re.match(r"\s*([\d.]+)\s*([KMG]?)i?B?", text.strip())
    if not m:
        raise ValueError(text)
    return int(float(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)])


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), or ``platform.processor()``."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def machine_id(target: str) -> str:
    """``hostname / CPU model`` (cpu, interpreter) or ``hostname / GPU name`` (cuda)."""
    host = socket.gethostname()
    if target.startswith("cuda"):
        from ..backends.cuda_driver import open_device
        return f"{host} / {open_device().name}"
    return f"{host} / {cpu_model()}"


def cache_path(target: str, machine: str) -> Path:
    """Where the ceilings of ``machine`` and ``target`` are cached."""
    from ..config import cache_dir
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{machine}-{target}").strip("_")[:150]
    return cache_dir() / "ceilings" / f"{slug}.json"


# ------------------------------------------------------------------------------ measuring
def _best_ms(fn, device: str, rep_ms: float) -> float:
    from ..runtime.bench import do_bench
    return do_bench(fn, warmup=1, rep=rep_ms, return_mode="min", device=device, flush_bytes=0)


def measure_bandwidth(target: str, working_set_bytes: int, rep_ms: float = 300,
                      rounds: int = 3) -> dict:
    """Triad bandwidth (bytes/s) over ``working_set_bytes`` (three fp32 arrays): the best of
    ``rounds`` timings of ``rep_ms / rounds`` ms each, taken apart in time (a busy moment of a
    shared machine lowers one sample, not the roof), and on the GPU the best of a few (BLOCK,
    num_warps) shapes, since the roof is what the compiler reaches at its best. The kernel
    runs through the same backend, hence with the same number of CPU worker threads
    (``details["threads"]``), as the user's kernels."""
    # a whole number of the largest BLOCK: a mask over a length that is not a multiple of 16
    # elements keeps the compiler from 16-byte vectors (as Triton), which would lower the roof
    n = max(8192, working_set_bytes // 12 // 8192 * 8192)
    a, b, c = _arrays(target, [np.zeros(n, np.float32), np.ones(n, np.float32),
                               np.full(n, 2.0, np.float32)])
    gpu = target.startswith("cuda")
    device = "cuda" if gpu else "cpu"
    shapes = ((1024, 4), (2048, 4), (2048, 8), (4096, 8), (8192, 8)) if gpu else ((4096, 4),)
    best: tuple | None = None
    samples = []
    for _ in range(max(1, rounds)):
        for block, warps in shapes:
            grid = (-(-n // block),)
            ms = _best_ms(lambda grid=grid, block=block, warps=warps: triad_kernel[grid](
                a, b, c, 3.0, n, BLOCK_SIZE=block, num_warps=warps), device,
                rep_ms / max(1, rounds))
            samples.append(ms)
            if best is None or ms < best[0]:
                best = (ms, block, warps)
    assert best is not None  # shapes is never empty
    ms, block, warps = best
    moved = 3 * n * 4
    return {"bandwidth": moved / (ms * 1e-3), "bytes": moved, "seconds": ms * 1e-3,
            "elements": n, "BLOCK": block, "num_warps": warps, "rounds": rounds,
            "worst_seconds": max(samples) * 1e-3, "threads": 0 if gpu else os.cpu_count()}


def default_working_set(llc: int, target: str = "cpu") -> int:
    """On the CPU: at least 4x the last-level cache and 256 MiB, at most a quarter of free
    memory. On the GPU: 2 GiB (at least 16x the L2), at most a quarter of the free device
    memory, so that one triad launch lasts hundreds of microseconds and the launch latency
    and the last wave's tail (a few microseconds) cost about 1% of the time rather than the
    ~10% they cost a 256 MiB triad on an H200 (60 us)."""
    if target.startswith("cuda"):
        want = max(2048 * MiB, 16 * llc)
        free = _gpu_free_bytes()
        return min(want, free // 4) if free else want
    want = max(256 * MiB, 4 * llc)
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                want = min(want, int(line.split()[1]) * 1024 // 4)
    except (OSError, ValueError, IndexError):
        pass
    return want


def measure(target: str = "cpu", working_set_bytes: int | None = None,
            dtypes=("fp32", "fp64"), compute_ms: float | None = None,
            dot: bool = True, rounds: int | None = None, rep_ms: float | None = None) -> Ceilings:
    """Measure the ceilings now (no cache). ``working_set_bytes``: triad size (default
    :func:`default_working_set`); ``dtypes``: FMA roofs to measure; ``compute_ms``: target
    duration of one compute launch (ms; default 4 on the CPU, 20 on the GPU); ``dot``: also
    measure the ``tl.dot`` roof (``"fp32:dot"`` on the CPU, ``"fp16:dot"`` on the GPU);
    ``rounds`` x ``rep_ms / rounds`` ms of timing per compute roof, the roofs interleaved
    (a busy moment of a shared machine then lowers one sample, not the roof; default 5 x 200
    ms on the CPU, 1 x 300 ms on a GPU, which nothing else shares). Raises ToolMissingError
    for ``cuda`` without a GPU."""
    from ..runtime.disk_cache import compiler_hash
    t0 = time.perf_counter()
    tgt = "cuda" if str(target).startswith("cuda") else "cpu"
    compute_ms = compute_ms or (20.0 if tgt == "cuda" else 4.0)
    rounds = rounds or (1 if tgt == "cuda" else 5)
    rep_ms = rep_ms or (300.0 if tgt == "cuda" else 1000.0)
    machine = machine_id(tgt)
    notes, details = [], {}
    if str(target) == "interpreter":
        notes.append("the interpreter has no roofs of its own: these are the cpu target's")
    llc = llc_bytes() if tgt == "cpu" else _gpu_l2_bytes()
    ws = working_set_bytes or default_working_set(llc, tgt)
    if ws < 4 * llc:
        notes.append(f"triad working set {ws / MiB:.1f} MiB is under 4x the last-level cache "
                     f"({llc / MiB:.1f} MiB): the memory roof is a cache bandwidth")
    details["triad"] = measure_bandwidth(tgt, ws, rounds=rounds if tgt == "cpu" else 2)
    probes = {dt: fma_probe(tgt, dt, compute_ms) for dt in dtypes}
    datasheet = datasheet_for(machine) if tgt == "cuda" else {}
    if dot:
        key = "fp16:dot" if tgt == "cuda" else "fp32:dot"
        try:
            probes[key] = dot_probe(tgt, key.split(":")[0], compute_ms)
        except Exception as e:  # noqa: BLE001 - a backend may not lower tt.dot yet
            unit = "tensor cores" if tgt == "cuda" else "tl.dot"
            notes.append(f"{unit} not measured: the {tgt} backend could not run tl.dot "
                         f"({type(e).__name__}: {str(e).splitlines()[0][:160]}); runs using "
                         f"tl.dot are compared with the {key.split(':')[0]} FMA roof")
    for _ in range(rounds):          # interleaved: each roof sampled at several moments
        for probe in probes.values():
            probe.run(rep_ms / rounds)
    compute = {}
    for name, probe in probes.items():
        details[name] = probe.result()
        compute[name] = details[name]["flops_per_s"]
        notes += _vector_notes(name, details[name])
    return Ceilings(target=tgt, machine=machine, bandwidth=details["triad"]["bandwidth"],
                    compute=compute, datasheet=datasheet, llc_bytes=llc, details=details,
                    notes=notes, measured_at=time.strftime("%Y-%m-%d %H:%M:%S"),
                    seconds=time.perf_counter() - t0, compiler=compiler_hash()[:16],
                    method=METHOD)


def _vector_notes(dtype: str, d: dict) -> list:
    """A note when the CPU's FMA kernel did not use the widest vectors of the host."""
    if "vector" not in d:
        return []
    want = widest_vector()
    if not want or d["vector"] == want:
        return []
    return [f"{dtype} FMA roof measured with {d['vector'] or 'no'} FMAs, not {want} ones: "
            "the backend did not vectorise the FMA kernel to the host's width, so this roof "
            "is below the machine's"]


def _gpu_l2_bytes() -> int:
    from ..backends.cuda_driver import check, open_device
    dev = open_device()
    drv = dev.driver
    attr = drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
    return int(check(drv.cuDeviceGetAttribute(attr, dev.device), "cuDeviceGetAttribute"))


def _gpu_free_bytes() -> int:
    from ..backends.cuda_driver import check, open_device
    dev = open_device()
    free, _total = check(dev.driver.cuMemGetInfo(), "cuMemGetInfo")
    return int(free)


def remeasure(c: Ceilings, memory: bool = True, dtypes=()) -> tuple[Ceilings, list]:
    """Measure again the memory roof (``memory``) and the compute roofs named in ``dtypes``
    of ``c`` (which must be this machine's), keeping for each the higher of the old and the new
    figure (a roof is the best the machine reaches; a lower old figure means the first
    measurement ran while the machine was busy). Returns the new Ceilings (also cached) and
    one sentence per roof saying old -> new. Raises ToolMissingError for ``cuda`` without a
    GPU."""
    tgt = c.target
    notes = []
    bandwidth = c.bandwidth
    details = dict(c.details)
    if memory:
        llc = c.llc_bytes or (llc_bytes() if tgt == "cpu" else _gpu_l2_bytes())
        ws = int((c.details.get("triad") or {}).get("bytes") or default_working_set(llc, tgt))
        again = measure_bandwidth(tgt, ws, rounds=5)
        bandwidth = max(c.bandwidth, again["bandwidth"])
        if again["bandwidth"] > c.bandwidth:
            details["triad"] = again
        notes.append(f"memory roof re-measured: {c.bandwidth / 1e9:.3g} -> "
                     f"{bandwidth / 1e9:.3g} GB/s (best of both)")
    compute = dict(c.compute)
    for dt in dtypes:
        if dt not in compute:
            continue
        base = dt.split(":")[0]
        probe = (dot_probe(tgt, base, 20.0 if tgt == "cuda" else 4.0) if dt.endswith(":dot")
                 else fma_probe(tgt, dt, 20.0 if tgt == "cuda" else 4.0))
        for _ in range(3):
            probe.run(200.0)
        new = probe.result()["flops_per_s"]
        notes.append(f"{dt} roof re-measured: {compute[dt] / 1e9:.4g} -> "
                     f"{max(new, compute[dt]) / 1e9:.4g} GFLOP/s (best of both)")
        compute[dt] = max(new, compute[dt])
    out = Ceilings(**{**asdict(c), "bandwidth": bandwidth, "compute": compute,
                      "details": details, "notes": list(c.notes) + notes})
    try:
        save(out, cache_path(tgt, c.machine))
    except OSError as e:
        out.notes.append(f"not cached: {e}")
    return out, notes


def load(path: Path) -> Ceilings | None:
    """The ceilings stored at ``path``, or None when missing or unreadable."""
    try:
        data = json.loads(path.read_text())
        return Ceilings(**{k: v for k, v in data.items() if k in Ceilings.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return None


def save(c: Ceilings, path: Path) -> None:
    """Write ``c`` as JSON atomically (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = asdict(c)
    data.pop("from_cache", None)
    tmp.write_text(json.dumps(data, indent=1, default=float))
    os.replace(tmp, path)


def ceilings(target: str = "cpu", refresh: bool = False, **measure_kw) -> Ceilings:
    """The ceilings of this machine for ``target`` (``"cpu"``, ``"interpreter"`` (the cpu's),
    ``"cuda"``/``"cuda:90"``): read from the cache, or measured (under 15 s) and cached when
    missing, measured by another compiler version or method, or ``refresh=True``.
    ``measure_kw`` go to :func:`measure` (e.g. ``working_set_bytes``, ``dtypes``). Raises
    ToolMissingError for ``cuda`` without a GPU."""
    tgt = "cuda" if str(target).startswith("cuda") else "cpu"
    from ..runtime.disk_cache import compiler_hash
    path = cache_path(tgt, machine_id(tgt))
    if not refresh:
        cached = load(path)
        if cached is not None and cached.compiler == compiler_hash()[:16] \
                and cached.method == METHOD:
            cached.from_cache = True
            return cached
    c = measure(tgt, **measure_kw)
    try:
        save(c, path)
    except OSError as e:
        c.notes.append(f"not cached: {e}")
    return c
