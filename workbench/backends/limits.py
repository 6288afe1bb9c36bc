"""Resource limits of a launch: what a kernel needs against what the device allows.

Figures per compute capability (:data:`ARCH_LIMITS`) come from the CUDA C Programming Guide,
"Technical Specifications per Compute Capability" (maximum shared memory per thread block
with opt-in, threads per block, 32-bit registers per thread and per thread block, grid
dimensions). Where a GPU of the kernel's architecture is present, its own answers
(``cuDeviceGetAttribute``) replace the table's (:func:`gpu_limits`).

A check is a :class:`LimitCheck` (``resource``, ``need``, ``allow``, ``unit``, ``hint``); a
backend stores its checks as JSON in ``extra["limits"]`` so they survive the disk cache, the
compile report shows one line per check ("shared memory: 49152 of 232448 bytes"), and the
runtime raises :class:`workbench.errors.OutOfResources` from the first failed one before
launching.
"""
from __future__ import annotations

import functools
import os
from dataclasses import asdict, dataclass

from ..errors import OutOfResources

GUIDE = "CUDA C Programming Guide, Technical Specifications per Compute Capability"
KIB = 1024
#: largest grid per axis (x, y, z), every architecture since compute capability 3.0
MAX_GRID = (2 ** 31 - 1, 65535, 65535)
#: registers are given to a warp in units of this many (CUDA Occupancy Calculator, sm_50+)
REG_ALLOC_UNIT = 256


@dataclass(frozen=True)
class DeviceLimits:
    """What one block (program) may use: ``shared_optin`` (bytes of shared memory per block
    with opt-in), ``threads_per_block``, ``regs_per_thread``, ``regs_per_block`` (32-bit
    registers), ``grid`` (largest grid per axis); ``source``: where the figures come from."""

    shared_optin: int
    threads_per_block: int = 1024
    regs_per_thread: int = 255
    regs_per_block: int = 65536
    grid: tuple = MAX_GRID
    source: str = GUIDE


#: compute capability (major * 10 + minor) -> maximum shared memory per block with opt-in
ARCH_SHARED_OPTIN = {70: 96 * KIB, 72: 48 * KIB, 75: 64 * KIB, 80: 163 * KIB, 86: 99 * KIB,
                     87: 163 * KIB, 89: 99 * KIB, 90: 227 * KIB, 100: 227 * KIB,
                     103: 227 * KIB, 110: 227 * KIB, 120: 99 * KIB, 121: 99 * KIB}


def table_limits(arch: int) -> DeviceLimits:
    """The limits of compute capability ``arch`` (90 for sm_90) from :data:`ARCH_SHARED_OPTIN`
    and the guide's common figures; an architecture not in the table gets the nearest lower
    one's (the guide's figures only grow within a major version)."""
    known = [a for a in sorted(ARCH_SHARED_OPTIN) if a <= arch] or [min(ARCH_SHARED_OPTIN)]
    return DeviceLimits(ARCH_SHARED_OPTIN[known[-1]], source=f"sm_{arch}: {GUIDE}")


@functools.lru_cache(maxsize=None)
def _device_limits(arch: int) -> DeviceLimits | None:
    """The limits device 0 reports, when it is a GPU of compute capability ``arch``."""
    from . import cuda_driver
    try:
        dev = cuda_driver.open_device()
        drv, attr = dev.driver, dev.driver.CUdevice_attribute

        def ask(name: str) -> int:
            return int(cuda_driver.check(
                drv.cuDeviceGetAttribute(getattr(attr, name), dev.device), name))
        cap = ask("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR") * 10 + \
            ask("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
        if cap != arch:
            return None
        grid = tuple(ask(f"CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{a}") for a in "XYZ")
        return DeviceLimits(ask("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
                            ask("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"), 255,
                            ask("CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK"), grid,
                            f"{dev.name or 'GPU'} (sm_{arch}), as its driver reports")
    except Exception:  # noqa: BLE001 - no bindings, no GPU, an old driver: use the table
        return None


def gpu_limits(arch: int) -> DeviceLimits:
    """The limits of a ``cuda:<arch>`` kernel: the present GPU's when it has that compute
    capability, else :func:`table_limits`."""
    return _device_limits(arch) or table_limits(arch)


@dataclass(frozen=True)
class LimitCheck:
    """One resource: the kernel ``need``s so many ``unit``s, the device ``allow``s so many;
    ``hint`` says what to change; ``source`` where ``allow`` comes from."""

    resource: str
    need: int
    allow: int
    unit: str
    hint: str
    source: str = ""

    @property
    def ok(self) -> bool:
        """Whether the kernel fits."""
        return self.need <= self.allow

    def line(self) -> str:
        """The compile report's line, e.g. ``"shared memory: 49152 of 232448 bytes"``."""
        return f"{self.resource}: {self.need} of {self.allow} {self.unit}" + \
            ("" if self.ok else "  (over the limit)")

    def to_json(self) -> dict:
        """A JSON-able dict (for ``extra["limits"]`` and the disk cache)."""
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> "LimitCheck":
        """The check of :meth:`to_json`'s dict."""
        return LimitCheck(d["resource"], int(d["need"]), int(d["allow"]), d["unit"],
                          d["hint"], d.get("source", ""))

    def error(self, kernel: str | None, loc=None) -> OutOfResources:
        """The :class:`OutOfResources` of this (failed) check for ``kernel``."""
        return OutOfResources(self.need, self.allow, self.resource, kernel, self.hint,
                              self.unit, loc, self.source)


def regs_per_block(n_regs: int, num_warps: int) -> int:
    """Registers a block of ``num_warps`` warps takes when each thread uses ``n_regs``: per
    warp ``32 * n_regs`` rounded up to :data:`REG_ALLOC_UNIT` (CUDA Occupancy Calculator)."""
    per_warp = -(-32 * n_regs // REG_ALLOC_UNIT) * REG_ALLOC_UNIT
    return per_warp * num_warps


def gpu_checks(num_warps: int, shared: int, n_regs: int | None,
               limits: DeviceLimits) -> list[LimitCheck]:
    """The checks of a GPU kernel with ``num_warps`` warps (32 threads each), ``shared`` bytes
    of shared memory per block and ``n_regs`` registers per thread (ptxas's report; None when
    ptxas did not run, then no register checks)."""
    src = limits.source
    out = [LimitCheck("threads per block", 32 * num_warps, limits.threads_per_block,
                      "threads", f"Use fewer warps (num_warps <= "
                      f"{limits.threads_per_block // 32}).", src),
           LimitCheck("shared memory", int(shared), limits.shared_optin, "bytes",
                      "Use smaller blocks (BLOCK_M, BLOCK_N, BLOCK_K) or fewer num_stages "
                      "(each stage keeps one more copy of the operand tiles in shared "
                      "memory).", src)]
    if n_regs is not None:
        out.append(LimitCheck("registers per thread", int(n_regs), limits.regs_per_thread,
                              "registers", "Use smaller blocks, or more warps to spread the "
                              "tiles over more threads.", src))
        out.append(LimitCheck("registers per block", regs_per_block(n_regs, num_warps),
                              limits.regs_per_block, "registers",
                              "Use fewer warps (num_warps) or smaller blocks.", src))
    return out


def grid_checks(grid3, limits_grid=MAX_GRID, source: str = GUIDE) -> list[LimitCheck]:
    """The failed checks of a launch grid ``grid3`` (3 ints) against ``limits_grid`` (largest
    size per axis); empty when it fits."""
    out = []
    for axis, size, most in zip("xyz", grid3, limits_grid, strict=True):
        if size > most:
            out.append(LimitCheck(f"grid size along {axis}", int(size), int(most), "programs",
                                  f"Give each program more work (a larger BLOCK) so fewer "
                                  f"programs cover the data, or fold axis {axis} into "
                                  f"another one.", source))
    return out


#: the share of the host's physical memory one launch's scratch arenas may take
HOST_SCRATCH_SHARE = 0.5


def host_memory_bytes() -> int:
    """Physical memory of the host in bytes (``sysconf``), or 2**40 where unknown."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 2 ** 40


def host_scratch_limit(memory: int | None = None) -> int:
    """Bytes of scratch arenas (tiles) one launch of a CPU kernel may take:
    :data:`HOST_SCRATCH_SHARE` of ``memory`` (default :func:`host_memory_bytes`)."""
    return int((host_memory_bytes() if memory is None else memory) * HOST_SCRATCH_SHARE)


def host_scratch_check(arena_bytes: int, memory: int | None = None) -> LimitCheck:
    """The CPU backend's check: one program's tiles live in a scratch arena of
    ``arena_bytes``; one arena must fit in :func:`host_scratch_limit` (the launcher runs
    fewer worker threads when several would not)."""
    return LimitCheck("scratch memory for tiles", int(arena_bytes), host_scratch_limit(memory),
                      "bytes", "Use smaller blocks (fewer or smaller tiles per program).",
                      "half of the host's memory")
