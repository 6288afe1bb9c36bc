"""Is a right answer also fast? The student's kernel and the exercise's good solution are
compiled for an H200 (``cuda:90``, no GPU needed) and what the compiler decided is compared:
the widest global access, tensor-core use, shared memory, barriers, bank conflicts, registers
(when ptxas is installed) and an estimated time on the H200's roofline (FLOPs and bytes
counted from the IR against the datasheet's roofs: NVIDIA H200 Tensor Core GPU datasheet).
Each difference that costs time becomes one sentence of advice.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .exercise import Case

TARGET = "cuda:90"


@dataclass
class Facts:
    """What the compiler decided for one kernel: ``load_bytes``/``store_bytes`` (widest
    global access of one thread, bytes), ``tensor_cores`` (``mma``/``wgmma`` in the PTX),
    ``shared`` (bytes), ``barriers`` (``bar.sync`` in the PTX), ``barriers_run`` (the
    ttgir's ``gpu.barrier`` ops one program passes, loops unrolled; None without ttgir),
    ``conflict`` (worst
    shared-memory bank-conflict degree, 1 = none), ``registers`` (per thread, None without
    ptxas), ``flops``, ``bytes`` (counted from the IR) and ``seconds`` (estimated on an
    H200: max(FLOPs / compute roof, bytes / bandwidth)), ``dot_inputs`` (the element type of
    the first ``tl.dot``'s operands in ttgir, e.g. ``"f16"``; '' without a dot),
    ``bytes_issued`` (every load and store counted, re-reads included), ``wavefronts``
    (shared-memory wavefronts of one program, every recorded access summed: the compiler's
    bank analysis), ``roof`` (the roof that binds on the H200's roofline: ``"memory"`` or
    ``"compute"``) and ``ridge`` (FLOP/byte where the two roofs meet for its dtype)."""

    load_bytes: int = 0
    store_bytes: int = 0
    tensor_cores: bool = False
    shared: int = 0
    barriers: int = 0
    barriers_run: int | None = None
    conflict: float = 1.0
    registers: int | None = None
    flops: float = 0.0
    bytes: float = 0.0
    seconds: float = 0.0
    dot_inputs: str = ""
    bytes_issued: float = 0.0
    wavefronts: int = 0
    roof: str = "memory"
    ridge: float = 0.0
    notes: list = field(default_factory=list)


_DOT = re.compile(r"\b(?:tt\.dot|ttng\.warp_group_dot)\b.*?:\s*(?:!ttg\.memdesc|tensor)"
                  r"<(?:\d+x)+([a-z0-9]+)")
_ACCESS = re.compile(r"\b(ld|st)\.global(?:\.[a-z0-9:]+)*?(?:\.v(\d))?\.([bfsu])(\d+)\b")


def widest_access(ptx: str, kind: str) -> int:
    """Bytes of the widest ``ld.global`` (``kind="ld"``) or ``st.global`` (``"st"``) of one
    thread in ``ptx`` (vector count x element bits / 8; PTX ISA 9.7.9.8 and 9.7.9.10)."""
    best = 0
    for m in _ACCESS.finditer(ptx):
        if m.group(1) == kind:
            best = max(best, int(m.group(2) or 1) * int(m.group(4)) // 8)
    return best


def dot_inputs(ttgir: str) -> str:
    """The element type (``"f16"``, ``"f32"``...) of the first dot's operands in ``ttgir``."""
    m = _DOT.search(ttgir)
    return m.group(1) if m else ""


def _bits(t: str) -> int:
    m = re.search(r"(\d+)", t)
    return int(m.group(1)) if m else 0


def roofline(flops: float, nbytes: float, dtype: str) -> tuple:
    """``(seconds, roof, ridge)`` on an H200: the time bound max(FLOPs / compute roof, bytes
    / bandwidth) in seconds, which of the two binds (``"compute"`` or ``"memory"``) and the
    ridge point in FLOP/byte (compute roof / bandwidth) for ``dtype`` (``"fp32"``,
    ``"fp16:dot"``...; fp32's roof when the datasheet has none). Roofs: NVIDIA H200 Tensor
    Core GPU datasheet; the model: Williams, Waterman and Patterson, CACM 2009."""
    from ..testing.datasheets import datasheet_for
    ds = datasheet_for("NVIDIA H200")
    roof = ds["compute"].get(dtype) or ds["compute"]["fp32"]
    compute, memory = flops / roof, nbytes / ds["bandwidth"]
    return max(compute, memory), ("compute" if compute > memory else "memory"), \
        roof / ds["bandwidth"]


def facts(kernel, case: Case) -> Facts:
    """Compile ``kernel`` for ``cuda:90`` with ``case``'s arguments and read :class:`Facts`.
    Raises what the compiler raises (the caller reports it in words)."""
    from ..runtime.aot import compile as wb_compile
    from ..testing.work import WorkCountError, barriers_executed, count_work, launch_values
    args = case.fresh_args()
    ck = wb_compile(kernel, *args, target=TARGET, **case.kwargs)
    ptx = ck.asm.get("ptx", "")
    md = ck.metadata
    extra = getattr(ck, "extra", None) or {}
    degrees = [float(r.get("conflict_degree") or 1) for r in extra.get("shared_accesses") or []]
    try:
        work = count_work(ck, case.grid, *args, **case.launch_kwargs())
    except WorkCountError:    # a trip count known only when running: count on the interpreter
        work = count_work(kernel, case.grid, *case.fresh_args(), exact=True, **case.kwargs)
    seconds, roof, ridge = roofline(work.flops, work.bytes, work.dtype)
    return Facts(load_bytes=widest_access(ptx, "ld"), store_bytes=widest_access(ptx, "st"),
                 tensor_cores=bool(re.search(r"\b(?:mma\.sync|wgmma\.mma_async)\b", ptx)),
                 shared=int(getattr(md, "shared", 0) or 0),
                 barriers=len(re.findall(r"\b(?:bar|barrier)\.sync\b", ptx)),
                 barriers_run=barriers_executed(
                     ck, launch_values(kernel, args, case.launch_kwargs())
                     if hasattr(kernel, "params") else None),
                 conflict=max(degrees, default=1.0),
                 registers=getattr(md, "n_regs", None), flops=work.flops, bytes=work.bytes,
                 dot_inputs=dot_inputs(ck.asm.get("ttgir", "")),
                 bytes_issued=work.bytes_issued, seconds=seconds, roof=roof, ridge=ridge,
                 wavefronts=sum(int(r.get("wavefronts") or 0)
                                for r in extra.get("shared_accesses") or []))


def _intensity(f: Facts) -> str:
    return f"{f.flops / f.bytes:.3g}" if f.bytes else "inf"


def _us(s: float) -> str:
    return f"{s * 1e6:.3g} us"


def compare(mine: Facts, good: Facts) -> list:
    """Sentences of advice, most costly first; empty when ``mine`` is as good as ``good``."""
    out = []
    if good.tensor_cores and not mine.tensor_cores:
        out.append("your kernel multiplies with scalar FMAs where tl.dot on whole tiles runs "
                   "on the tensor cores (mma/wgmma in the PTX): use tl.dot(a, b, acc)")
    if mine.dot_inputs and good.dot_inputs and _bits(mine.dot_inputs) > _bits(good.dot_inputs):
        out.append(f"your tl.dot multiplies {mine.dot_inputs} tiles where the data is "
                   f"{good.dot_inputs}: converting the inputs up first runs the tensor cores "
                   f"at the wider type's rate (tf32 is half of fp16's on an H200); pass the "
                   f"{good.dot_inputs} tiles to tl.dot and accumulate in fp32")
    if mine.load_bytes and mine.load_bytes < good.load_bytes:
        out.append(f"your loads use {mine.load_bytes}-byte accesses where {good.load_bytes} "
                   "are possible: the offsets are not known to be contiguous, or not known to "
                   "start on a 16-byte boundary (build the fastest-moving offsets from "
                   "tl.arange with a stride of 1 known at compile time, and promise what you "
                   "know with tl.multiple_of, so each thread loads a vector)")
    if mine.store_bytes and mine.store_bytes < good.store_bytes:
        out.append(f"your stores use {mine.store_bytes}-byte accesses where "
                   f"{good.store_bytes} are possible: the stored offsets are not contiguous")
    if mine.flops > 1.3 * good.flops:
        out.append(f"your kernel does {mine.flops / 1e6:.3g} MFLOP where the solution does "
                   f"{good.flops / 1e6:.3g}: it computes results that are then thrown away "
                   "(masked off) or computes them more than once")
    if mine.bytes_issued > 1.3 * good.bytes_issued:
        out.append(f"your kernel issues {mine.bytes_issued / 1e6:.3g} MB of loads and stores "
                   f"where the solution issues {good.bytes_issued / 1e6:.3g} MB: it reads the "
                   "same data more than once (keep what you loaded in registers and reuse it)")
    if mine.conflict > good.conflict:
        out.append(f"your shared-memory accesses are {mine.conflict:g}-way bank-conflicted "
                   f"(the solution's: {good.conflict:g}): lanes of a warp hit the same bank")
    if mine.wavefronts > 1.2 * good.wavefronts and good.wavefronts:
        out.append(f"your shared-memory accesses take {mine.wavefronts} wavefronts where the "
                   f"solution's take {good.wavefronts} (each access of the code counted once, "
                   "a loop body once; the compile report's shared-memory table lists them)")
    if mine.roof == "compute" and good.roof == "memory":
        out.append(f"your kernel does {_intensity(mine)} FLOP per byte, above its ridge of "
                   f"{mine.ridge:.3g} FLOP/byte on an H200: the compute roof binds it, where "
                   f"the solution's {_intensity(good)} FLOP/byte is below its ridge of "
                   f"{good.ridge:.3g} and memory binds it (below the ridge extra arithmetic "
                   "is free, above it every FLOP costs time)")
    if mine.seconds > 1.25 * good.seconds:
        out.append(f"on an H200 your kernel needs about {_us(mine.seconds)} against "
                   f"{_us(good.seconds)} (roofline estimate): it moves "
                   f"{mine.bytes / 1e6:.3g} MB and does {mine.flops / 1e6:.3g} MFLOP where the "
                   f"solution moves {good.bytes / 1e6:.3g} MB and does "
                   f"{good.flops / 1e6:.3g} MFLOP")
    if mine.shared > 1.5 * good.shared + 1024:
        out.append(f"your kernel uses {mine.shared} bytes of shared memory where "
                   f"{good.shared} do (fewer programs fit on a multiprocessor at once)")
    if mine.barriers_run is not None and good.barriers_run is not None and \
            mine.barriers_run > good.barriers_run:
        out.append(f"your kernel waits at {mine.barriers_run} barriers where the solution waits "
                   f"at {good.barriers_run} (each program, every loop iteration counted)")
    elif mine.barriers > good.barriers:
        out.append(f"your kernel waits at {mine.barriers} barriers where the solution waits "
                   f"at {good.barriers}")
    if mine.registers and good.registers and mine.registers > good.registers + 32:
        out.append(f"your kernel uses {mine.registers} registers per thread where "
                   f"{good.registers} do")
    return out
