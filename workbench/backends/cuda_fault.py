"""A kernel that faults on the GPU leaves the CUDA context unusable: the record of it.

CUDA reports a fault in a kernel (an illegal address, a misaligned access, a trap, a failed
device assert, a timeout) as a *sticky* error: every later call in the process's context
returns it, and only a new process gets a working context (CUDA C Programming Guide,
"Error Checking"; CUDA Driver API, ``CUresult``). Kernels run asynchronously, so the error
usually surfaces at a later call (a synchronize, a copy back, the next launch), not at the
faulting launch.

So the driver wrappers keep, per process, the last launch (:func:`record_launch`: the kernel's
name, grid and a description of its arguments) and, once a sticky error is seen
(:func:`fault_from`), the fault. From then on :func:`raise_if_faulted` raises the same
:class:`~workbench.errors.DeviceFaultError` at every launch or allocation through the
workbench, instead of using the broken context. The record is process-wide because the
broken context is (one primary context per device per process).
"""
from __future__ import annotations

from ..errors import DeviceFaultError

#: CUresult codes that leave the context unusable (CUDA Driver API, ``CUresult``)
STICKY = {700: "CUDA_ERROR_ILLEGAL_ADDRESS", 702: "CUDA_ERROR_LAUNCH_TIMEOUT",
          710: "CUDA_ERROR_ASSERT", 714: "CUDA_ERROR_HARDWARE_STACK_ERROR",
          715: "CUDA_ERROR_ILLEGAL_INSTRUCTION", 716: "CUDA_ERROR_MISALIGNED_ADDRESS",
          717: "CUDA_ERROR_INVALID_ADDRESS_SPACE", 718: "CUDA_ERROR_INVALID_PC",
          719: "CUDA_ERROR_LAUNCH_FAILED"}

RESTART = ("The CUDA context of this process is now unusable: every later launch, copy or "
           "allocation would fail. Restart the notebook's kernel (or the Python process) to "
           "get a new one.")

#: [the last launch: (kernel name, grid3, args, parameter kinds)], [None] before any
LAST: list = [None]
#: [the DeviceFaultError] once a kernel faulted (empty while the context works)
FAULT: list = []


def record_launch(name: str, grid3, args, kinds) -> None:
    """Remember a launch (after every successful ``cuLaunchKernel``; the launcher stores
    into :data:`LAST` directly, one list store, and the description is made only when a
    fault is reported)."""
    LAST[0] = (name, grid3, args, kinds)


def _describe_arg(i: int, a, kind: str) -> str:
    obj = getattr(a, "obj", None)
    shape, dtype = getattr(obj, "shape", None), getattr(obj, "dtype", None)
    if kind == "ptr":
        what = f"shape {tuple(shape)} dtype {dtype}" if shape is not None else "pointer"
        addr = getattr(a, "address", a)
        return f"arg {i} ({kind}): {what} at {int(addr):#x}" if isinstance(addr, int) else \
            f"arg {i} ({kind}): {what}"
    if kind == "tma":
        return f"arg {i} (tma): a TMA tensor map (CUtensorMap, 128 bytes)"
    return f"arg {i} ({kind}): {a!r}"


#: added to an illegal-instruction fault: the TMA unit raises it for a tensor-descriptor load
#: or store whose innermost offset is not a multiple of 16 bytes (measured on an H200: fp32
#: offsets 63 and -7 fault, 64 and -8 do not; Triton documents the rule on ``desc.load``)
TMA_HINT = ("\nIf the kernel uses tensor descriptors on sm_90 (TMA): each load or store's "
            "innermost offset must be a multiple of 16 bytes (Triton's rule), and "
            "WORKBENCH_CUDA_TMA=0 lowers descriptors to plain loads and stores instead.")


def describe_last_launch() -> str | None:
    """The last launch in words: ``kernel 'k' over grid (x, y, z) with arg 0 (ptr): shape
    (1024,) dtype float32 at 0x..., arg 1 (i32): 1024``; None before any launch."""
    if LAST[0] is None:
        return None
    name, grid3, args, kinds = LAST[0]
    parts = [_describe_arg(i, a, k) for i, (a, k) in enumerate(zip(args, kinds, strict=False))]
    return f"kernel '{name}' over grid {tuple(grid3)} with " + (", ".join(parts) or "no arguments")


def fault_from(code: int, what: str, code_name: str | None = None) -> DeviceFaultError | None:
    """The :class:`DeviceFaultError` of CUresult ``code`` seen at call ``what`` when the code
    is sticky (:data:`STICKY`), recorded so later calls raise it too; None for other codes.
    The first fault is kept (later calls only see its echo)."""
    if int(code) not in STICKY:
        return None
    if FAULT:
        return FAULT[0]
    name = code_name if code_name and code_name != "unknown" else STICKY[int(code)]
    launch = describe_last_launch()
    kernel = LAST[0][0] if LAST[0] is not None else None
    culprit = f"the last launch: {launch}" if launch else "no kernel was launched by the " \
        "workbench before it"
    err = DeviceFaultError(
        f"a kernel faulted on the GPU: {name} (CUDA error {int(code)}), reported by {what}; "
        f"{culprit}.\n{RESTART}\nTo find the bad access, run the kernel on the CPU "
        "(arrays on the host, or WORKBENCH_INTERPRET=1): out-of-bounds accesses are "
        "reported there with the program id, the offset and the source line."
        + (TMA_HINT if int(code) == 715 else ""),
        int(code), name, kernel, launch)
    FAULT.append(err)
    return err


def faulted() -> DeviceFaultError | None:
    """The recorded fault, or None while the context works."""
    return FAULT[0] if FAULT else None


def raise_if_faulted() -> None:
    """Raise the recorded :class:`DeviceFaultError` (a new instance with the same message,
    saying the context is unusable) when a kernel faulted earlier in this process."""
    if FAULT:
        old = FAULT[0]
        raise DeviceFaultError(f"cannot use the GPU: an earlier kernel faulted and the CUDA "
                               f"context is unusable.\n{old}", old.code, old.code_name,
                               old.kernel, old.launch)
