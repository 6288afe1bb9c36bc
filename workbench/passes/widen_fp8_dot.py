"""fp8 dots on the CUDA backend: native fp8 wgmma where Triton takes it, else both operands
widened to fp16 before ``tt.dot``.

Every value of the 8-bit float formats a ``tl.dot`` takes (``f8E5M2``, ``f8E4M3FN`` and their
``FNUZ`` variants) is exactly an fp16 value (fp16 has 5 exponent bits, 10 mantissa bits and
subnormals down to 2**-24; the fp8 formats' smallest subnormals are 2**-16, 2**-9, 2**-17 and
2**-10), so ``tt.fp_to_fp`` to fp16 loses nothing, and the dot then takes the fp16 tensor-core
path (mma.sync m16n8k16) instead of FMA. Triton does the same widening for MMA v2 on GPUs
without fp8 tensor cores (its ``decomposeMixedModeDotOp`` in ``AccelerateMatmul.cpp``: sm_80,
and sm_90 dots that do not get MMA v3). Sums are the same up to the order of the fp32
accumulation. (Which formats a CUDA target takes at all: :mod:`.fp8_support`.)

On ``cuda:90`` a dot of ``e4m3``/``e5m2`` tiles (any pair) with an fp32 accumulator keeps its
fp8 operands when Triton 3.6 gives it MMA v3 (``supportMMA(dot, 3)`` in
``lib/Analysis/Utility.cpp``; :func:`fp8_wgmma_unfit` says when not): it becomes
``wgmma.mma_async...k32.f32.e4m3.e5m2`` (PTX ISA 9.7.15.5.2) in ``tritongpu-accelerate-matmul``.
``max_num_imprecise_acc`` below 32 keeps it off wgmma (Triton: "We cannot use MMA_V3 if we
need to accumulate in F32 within the MMA op"), so it is widened and takes mma.sync.
"""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.types import FloatType, TensorType
from ..layouts.mma import mma_layout_for, wgmma_operand_shared
from .values import block_of, shaped_type

_F16 = FloatType("f16")
_F32 = FloatType("f32")
_WIDENED = ("f8E5M2", "f8E4M3FN", "f8E5M2FNUZ", "f8E4M3FNUZ")
#: the fp8 formats Hopper's wgmma reads (its ``.e5m2`` and ``.e4m3`` operand types)
WGMMA_FP8 = {"f8E5M2": "e5m2", "f8E4M3FN": "e4m3"}


def _fp8_operand(v) -> bool:
    t = v.type
    return isinstance(t, TensorType) and isinstance(t.element, FloatType) and \
        t.element.name in _WIDENED


def fp8_wgmma_unfit(dot: Operation, num_warps: int) -> str | None:
    """None when Triton 3.6 gives the fp8 ``dot`` (ttir or ttgir, operands ``e4m3``/``e5m2``)
    MMA v3 on sm_90, else a sentence saying why not: the accumulator is neither fp32 nor fp16,
    ``maxNumImpreciseAcc`` < 32 with an fp32 accumulator, a batched dot, ``num_warps`` not a
    multiple of 4, or a tile not a multiple of M = 64, N = 16, K = 32 (``supportMMA(dot,
    3)``, ``lib/Analysis/Utility.cpp``)."""
    a_t, b_t, c_t = (shaped_type(v) for v in dot.operands)
    return fp8_wgmma_unfit_types(a_t, b_t, c_t, dot.attributes.get("maxNumImpreciseAcc"),
                                 num_warps)


def fp8_wgmma_unfit_types(a_t, b_t, c_t, imprecise, num_warps: int) -> str | None:
    """:func:`fp8_wgmma_unfit` from the types of A, B and C (tensor or memdesc types) and
    ``maxNumImpreciseAcc`` (None: 0)."""
    names = (getattr(a_t.element, "name", ""), getattr(b_t.element, "name", ""))
    if not all(n in WGMMA_FP8 for n in names):
        return f"wgmma takes e4m3 and e5m2 fp8 operands only (this dot: {a_t.element} x " \
               f"{b_t.element})"
    if c_t.element not in (_F32, _F16):
        return f"fp8 wgmma takes an fp32 or fp16 accumulator (this dot: {c_t.element})"
    imprecise = int(imprecise or 0)
    if imprecise < 32 and c_t.element == _F32:
        return (f"max_num_imprecise_acc = {imprecise} is below 32, and Triton's MMA v3 does not "
                f"take an fp8 dot that must accumulate in fp32 within each wgmma")
    if len(a_t.shape) != 2:
        return "a batched (3-D) dot stays on mma.sync"
    if num_warps % 4:
        return f"wgmma needs whole warp groups (num_warps = {num_warps} is not a multiple of 4)"
    m, k = (int(x) for x in a_t.shape)
    n = int(c_t.shape[1])
    if m % 64 or n % 16 or k % 32:
        return (f"the tile ({m}x{n}, K = {k}) is not a multiple of M = 64, N = 16, K = 32 "
                f"(Triton's condition for MMA v3 on fp8)")
    return None


def widened_fp8_source(v):
    """The fp8 tensor that ``v`` (a dot operand) was widened from by :func:`widen_fp8_dots`
    (``tt.fp_to_fp`` to fp16, maybe behind a ``ttg.convert_layout``), else None."""
    d = v.defining_op
    if d is not None and d.name == "ttg.convert_layout":
        d = d.operands[0].defining_op
    if d is None or d.name != "tt.fp_to_fp" or shaped_type(d.result).element != _F16:
        return None
    src = d.operands[0]
    return src if _fp8_operand(src) else None


def fp8_wgmma_plan(dot: Operation, num_warps: int, chained: bool):
    """``(mma layout, shared A, shared B)`` for the fp8 wgmma of ``dot`` (ttgir), or a
    sentence saying why not: instrShape K = 32, warps as for 16-bit wgmma (``chained``: all
    along M), and both operands K-major in shared memory whatever their register order
    (A ``order = [1, 0]``, B ``[0, 1]``, i.e. ``transposed = true``), since wgmma transposes
    16-bit operands only (Triton 3.6 ``BlockedToMMA``: ``allowTranspose`` is false for fp8,
    so ``getSharedMemoryMMAOperand`` picks the order wgmma expects)."""
    why = fp8_wgmma_unfit(dot, num_warps)
    if why is not None:
        return why
    return k_major_wgmma_plan(dot, num_warps, chained, 8)


def k_major_wgmma_plan(dot: Operation, num_warps: int, chained: bool, bits: int):
    """``(mma layout, shared A, shared B)`` of a wgmma whose operand type the instruction
    reads K-major only (no imm-trans: 8-bit floats, and fp32 read as tf32 with ``bits`` =
    32), or a sentence saying why not. ``instrShape`` K = 256 / ``bits``; both operands go
    to shared memory K-major (A ``order = [1, 0]``, B ``order = [0, 1]``) whatever the
    order of the registers they come from, as Triton 3.6's ``getSharedMemoryMMAOperand``
    does when ``allowTranspose`` is false (any element type but fp16/bf16)."""
    m, k = shaped_type(dot.operands[0]).shape
    n = shaped_type(dot.result).shape[1]
    try:
        mma = mma_layout_for((m, n), num_warps, 3, bits, chained=chained)
    except ValueError as err:
        return f"no wgmma shape fits: {err}"
    sh_a = wgmma_operand_shared((m, k), (1, 0), bits)
    sh_b = wgmma_operand_shared((k, n), (0, 1), bits)
    if sh_a is None or sh_b is None:
        return "no 32/64/128-byte swizzled shared layout fits the operand tiles"
    return mma, sh_a, sh_b


def widened_fp8_reason(dot: Operation, fp8, num_warps: int) -> str:
    """Why the widened fp8 ``dot`` (ttgir; its A widened from ``fp8``) did not keep fp8
    wgmma (:func:`fp8_wgmma_unfit` on the fp8 types)."""
    b8 = widened_fp8_source(dot.operands[1])
    why = None
    if b8 is not None:
        why = fp8_wgmma_unfit_types(shaped_type(fp8), shaped_type(b8), shaped_type(dot.result),
                                    dot.attributes.get("maxNumImpreciseAcc"), num_warps)
    return why or "its operands were widened before layouts were assigned"


def keeps_fp8(dot: Operation, arch: int, num_warps: int, mma: str = "auto") -> bool:
    """True when ``dot`` stays an fp8 dot for native wgmma: ``cuda:90`` (Triton: compute
    capability 90 to 99), ``mma`` not ``"v2"`` (``WORKBENCH_CUDA_MMA``) and
    :func:`fp8_wgmma_unfit` has no objection."""
    return 90 <= arch < 100 and mma != "v2" and fp8_wgmma_unfit(dot, num_warps) is None


def widen_fp8_dots(module: Operation, arch: int = 0, num_warps: int = 4,
                   mma: str = "auto") -> Operation:
    """Widen the operands of every ``tt.dot`` in ``module`` (ttir: no encodings yet) whose A
    and B are both 8-bit floats of the formats above and whose accumulator is fp32 or fp16
    (``out_dtype = tl.float16``: then mma.sync accumulates in fp16, as Triton's MMA v2 does
    after its promotion) to fp16 by ``tt.fp_to_fp``, in place, except the dots that
    :func:`keeps_fp8` for ``arch``
    (80, 90), ``num_warps`` and ``mma``; returns ``module``. Other dots are left as they
    are."""
    for dot in [o for o in module.walk() if o.name == "tt.dot"]:
        a, b = dot.operands[0], dot.operands[1]
        if not (_fp8_operand(a) and _fp8_operand(b)) or \
                getattr(dot.result.type, "element", None) not in (_F32, _F16):
            continue
        if keeps_fp8(dot, arch, num_warps, mma):
            continue
        for i in (0, 1):
            v = dot.operands[i]
            t = v.type
            assert isinstance(t, TensorType)
            wide = Operation("tt.fp_to_fp", [v], [TensorType(t.shape, _F16, t.encoding)],
                             loc=dot.loc)
            block_of(dot).insert_before(dot, wide)
            dot.set_operand(i, wide.result)
    return module


__all__ = ["WGMMA_FP8", "fp8_wgmma_plan", "fp8_wgmma_unfit", "fp8_wgmma_unfit_types",
           "k_major_wgmma_plan", "keeps_fp8", "widened_fp8_reason", "widen_fp8_dots",
           "widened_fp8_source"]
