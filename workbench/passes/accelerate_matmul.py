"""``tritongpu-accelerate-matmul``: put ``tt.dot`` on the tensor cores (MMA v2, ``mma.sync``).

Triton 3.6 ``AccelerateMatmul.cpp`` for Ampere-style MMA (PTX ISA 9.7.14, ``mma.sync``): a dot whose
inputs the tensor cores take gets

* a result in ``#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = W,
  instrShape = [16, 8]}>`` with ``W`` from :func:`workbench.layouts.mma.warps_per_tile_v2`
  (all warps along M when the result feeds another dot);
* operands staged through shared memory, as Triton's ttgir reads after its operand
  optimisation: ``ttg.local_alloc`` of the operand's blocked registers into the
  ``#ttg.swizzled_shared`` layout :func:`workbench.layouts.mma.mma_operand_shared` chooses,
  then ``ttg.local_load`` into ``#ttg.dot_op<{opIdx, parent = #mma, kWidth}>`` with
  ``kWidth = 32 / bitwidth`` (one 32-bit register of K elements);
* the accumulator converted to ``#mma``: a splat constant is re-made in ``#mma``; a
  loop-carried accumulator (``scf.for`` iter arg yielded by the dot) is carried in ``#mma``
  (converted once before the loop and once after), so the K loop has no conversion of it;
  other users of the result get a ``ttg.convert_layout`` back to the old layout.

Then, as Triton's second ``tritongpu-remove-layout-conversions`` (in ``make_ttgir`` of
``third_party/nvidia/backend/compiler.py``), the
``#mma`` results are *anchors*: their layout flows forward through elementwise ops,
reductions (``#ttg.slice`` of ``#mma``), ``expand_dims``/``broadcast`` and ``scf.for``
iter args, and cheap producers are rematerialised in it (:func:`propagate_mma`). Attention's
``acc * alpha[:, None]`` then stays in the accumulator registers. Finally an operand staged
through shared memory whose value already lives in an ``#mma`` layout that owns the same
elements per thread as the ``#ttg.dot_op`` (a chained dot: ``P @ V`` with ``P`` from
``Q @ K^T``; kWidth = 32 / bits) becomes a register ``ttg.convert_layout``
(:func:`operands_in_registers`; Triton's ``shared-memory-free`` mma -> dot_op conversion).

"Chained" (all warps along M, ``warpsPerTileV2``) is decided as Triton does: another dot in
the same block lies in the dot's slice (MLIR's ``getSlice``: backward and forward slices
repeated from every op reached, ``tt.trans`` excluded; two accumulations yielded by one loop
body are connected), and a connected dot that already has an ``#mma`` v2 layout lends its
``warpsPerCTA`` (:mod:`.dot_slices`).

Taken: fp16/bf16 -> fp32, fp16 -> fp16 (``out_dtype = tl.float16``), fp32 with
``inputPrecision = tf32`` -> fp32, int8 -> int32, K a multiple of the instruction's K (16, 8,
32), any M and N (Triton's ``supportMMA`` has no minimum for version 2: a 2 x 4 tile runs
``mma.m16n8k16`` with its rows and columns repeated, the layouts' bases past the tile being
zero), on ``cuda:80`` and newer. Others keep the FMA layout (``convert-triton-to-tritongpu``'s
blocked parent).

**MMA v3 (Hopper wgmma, PTX ISA 9.7.15)** on ``cuda:90`` unless ``mma = "v2"``
(``WORKBENCH_CUDA_MMA=v2``): an fp16/bf16 -> fp32 dot (or fp32 with ``inputPrecision =
tf32``: ``instrShape = [16, N, 8]``, both operands K-major in 32-bit ``#ttg.nvmma_shared``
buffers as for fp8 below, wgmma transposing 16-bit operands only) whose tile the warp groups cover
exactly (:func:`wgmma_unfit`) becomes ``ttng.warp_group_dot %a, %b, %c {inputPrecision,
isAsync = false}`` with B (and A when it comes from a load, :func:`comes_from_load`)
``!ttg.memdesc`` in ``#ttg.nvmma_shared`` (:func:`workbench.layouts.mma.wgmma_operand_shared`:
128-byte swizzle for 64 fp16 along the contiguous dim), an A computed in registers staged as
for MMA v2 into ``#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>`` (a register
conversion when it already lives in ``#mma``: attention's ``P``), and the result in
``#ttg.nvidia_mma<{versionMajor = 3, ..., instrShape =
[16, N, 16]}>``, as Triton's ttgir reads. A dot that stays on mma.sync on ``cuda:90`` gets a
sentence in :attr:`AccelerateMatmul.notes` (the compile report's notes) saying why.

fp8 dots (``e4m3``/``e5m2``, fp32 or fp16 accumulator) reach this pass on ``cuda:90`` only when
:func:`workbench.passes.widen_fp8_dot.keeps_fp8` kept them (``max_num_imprecise_acc`` >= 32,
tile fits); they get ``instrShape = [16, N, 32]``, both operands K-major in 8-bit
``#ttg.nvmma_shared`` buffers (:func:`~workbench.passes.widen_fp8_dot.fp8_wgmma_plan`), an A
computed in registers ``kWidth = 4``, and keep ``maxNumImpreciseAcc`` on the
``ttng.warp_group_dot``. The fp8 dots widened to fp16 keep mma.sync, with a note, as
Triton's MMA v3 check runs on the fp8 types.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.core import Operation, Value, functions
from ..ir.types import FloatType, IntType, MemDescType, TensorType
from ..layouts.encodings import BlockedLayout, DotOperandLayout, MmaLayout, NVMMASharedLayout
from ..layouts.mma import mma_layout_for, mma_operand_shared, wgmma_operand_shared
from .dot_slices import DOT_OPS, connected_mma_warps, feeds_dot, feeds_later_dot, is_chained
from .manager import Pass
from .mma_propagation import cleanup, hoist_invariant_operands, operands_in_registers, propagate_mma
from .values import block_of, shaped_type, tensor_type
from .widen_fp8_dot import (
    WGMMA_FP8,
    fp8_wgmma_plan,
    k_major_wgmma_plan,
    widened_fp8_reason,
    widened_fp8_source,
)


def _arch(target) -> int:
    text = str(target)
    if not text.startswith("cuda:"):
        return 0
    try:
        return int(text.split(":", 1)[1])
    except ValueError:
        return 0


def mma_kind(dot: Operation):
    """(kWidth, Kin) when ``dot`` can use mma.sync, else None. Any M and N: a tile smaller
    than m16n8 repeats its rows/columns in the instruction; a batched (3-D) dot takes a 3-D
    MMA v2 layout, as in Triton 3.6."""
    a_t, c_t = shaped_type(dot.operands[0]), tensor_type(dot.result)
    if len(a_t.shape) not in (2, 3):
        return None
    e, r = a_t.element, c_t.element
    k = a_t.shape[-1]
    prec = dot.attributes.get("inputPrecision", "tf32") or "tf32"
    if isinstance(e, FloatType) and e.name in ("f16", "bf16") and r == FloatType("f32"):
        kw, kin = 2, 16
    elif e == FloatType("f16") and r == FloatType("f16"):  # out_dtype = float16
        kw, kin = 2, 16
    elif e == FloatType("f32") and r == FloatType("f32") and prec == "tf32":
        kw, kin = 1, 8
    elif e == IntType(8) and r == IntType(32):
        kw, kin = 4, 32
    elif getattr(e, "name", "") in WGMMA_FP8 and \
            getattr(shaped_type(dot.operands[1]).element, "name", "") in WGMMA_FP8 and \
            r in (FloatType("f32"), FloatType("f16")):  # kept for wgmma (keeps_fp8)
        kw, kin = 4, 32
    else:
        return None
    if k % kin:
        return None
    return kw, kin


#: the dot ops of ttgir: ``tt.dot`` (FMA, MMA v2) and Hopper's ``ttng.warp_group_dot``.


def _bits(t) -> int:
    if isinstance(t, IntType):
        return t.width
    return 8 if t.name in WGMMA_FP8 else {"f16": 16, "bf16": 16, "f32": 32}[t.name]


def _place_after_source(dot, src, alloc) -> None:
    """Put ``alloc`` right after the op defining ``src`` when that op is in the dot's block
    (as Triton 3.6 places it: the operand is stored as soon as it exists, the loads wait for
    the dot), else just before the dot."""
    block = block_of(dot)
    d = src.defining_op
    if d is not None and d.parent is block:
        ops = block.ops
        nxt = ops[ops.index(d) + 1]
        block.insert_before(nxt, alloc)
    else:
        block.insert_before(dot, alloc)


def _stage_operand(dot, idx, mma, kw):
    v = dot.operands[idx]
    conv = v.defining_op if (v.defining_op is not None and
                             v.defining_op.name == "ttg.convert_layout") else None
    src = conv.operands[0] if conv is not None else v
    shape = tuple(shaped_type(v).shape)
    enc = shaped_type(src).encoding
    order = tuple(enc.order) if isinstance(enc, BlockedLayout) else \
        tuple(range(len(shape) - 1, -1, -1))
    sh = mma_operand_shared(idx, shape, order, kw, _bits(shaped_type(v).element))
    alloc = Operation("ttg.local_alloc", [src],
                      [MemDescType(shape, shaped_type(v).element, sh, mutable=False)], loc=dot.loc)
    load = Operation("ttg.local_load", [alloc.result],
                     [TensorType(shape, shaped_type(v).element, DotOperandLayout(idx, mma, kw))],
                     loc=dot.loc)
    _place_after_source(dot, src, alloc)
    block_of(dot).insert_before(dot, load)
    dot.set_operand(idx, load.result)
    if conv is not None and not conv.result.uses:
        conv.erase()


def _operand_source(dot, idx):
    """(convert_layout feeding operand ``idx`` or None, the value it converts or the operand)."""
    v = dot.operands[idx]
    conv = v.defining_op if (v.defining_op is not None and
                             v.defining_op.name == "ttg.convert_layout") else None
    return conv, (conv.operands[0] if conv is not None else v)


def _order(v) -> tuple:
    enc = shaped_type(v).encoding
    return tuple(enc.order) if isinstance(enc, BlockedLayout) else (1, 0)


def _stage_operand_v3(dot, idx, shared):
    """``ttg.local_alloc`` of operand ``idx`` into ``shared`` (nvmma_shared); the dot reads
    the memdesc."""
    v = dot.operands[idx]
    conv, src = _operand_source(dot, idx)
    alloc = Operation("ttg.local_alloc", [src],
                      [MemDescType(tuple(shaped_type(v).shape), shaped_type(v).element, shared,
                                   mutable=False)],
                      loc=dot.loc)
    block_of(dot).insert_before(dot, alloc)
    dot.set_operand(idx, alloc.result)
    if conv is not None and not conv.result.uses:
        conv.erase()


def wgmma_plan(dot: Operation, num_warps: int):
    """``(mma layout, shared A, shared B)`` for a Hopper wgmma of ``dot``, or a sentence
    saying why wgmma cannot take it (then mma.sync is kept)."""
    a_t, b_t, c_t = (shaped_type(v) for v in dot.operands)
    e = a_t.element
    if getattr(e, "name", "") in WGMMA_FP8:
        return fp8_wgmma_plan(dot, num_warps, feeds_later_dot(dot))
    tf32 = e == FloatType("f32") and \
        (dot.attributes.get("inputPrecision", "tf32") or "tf32") == "tf32"
    if not (isinstance(e, FloatType) and (e.name in ("f16", "bf16") or tf32) and
            b_t.element == e and c_t.element == FloatType("f32")):
        return (f"wgmma is used for fp16/bf16 (or tf32) inputs with fp32 accumulation only "
                f"(this dot: {e} x {b_t.element} -> {c_t.element})")
    if num_warps % 4:
        return f"wgmma needs whole warp groups (num_warps = {num_warps} is not a multiple of 4)"
    m, k = a_t.shape
    n = c_t.shape[1]
    if m % 64 or n % 16:
        return (f"the tile ({m}x{n}) is not a multiple of M = 64, N = 16 "
                f"(Triton's condition for MMA v3)")
    if tf32:  # wgmma transposes 16-bit operands only: both K-major in shared memory
        return k_major_wgmma_plan(dot, num_warps, feeds_later_dot(dot), 32)
    try:
        mma = mma_layout_for((m, n), num_warps, 3, 16, chained=feeds_later_dot(dot))
    except ValueError as err:
        return f"no wgmma shape fits: {err}"
    bits = 16
    sh_a = wgmma_operand_shared((m, k), _order(_operand_source(dot, 0)[1]), bits)
    sh_b = wgmma_operand_shared((k, n), _order(_operand_source(dot, 1)[1]), bits)
    if sh_a is None or sh_b is None:
        return "no 32/64/128-byte swizzled shared layout fits the operand tiles"
    return mma, sh_a, sh_b


def _to_layout(v, enc, before: Operation) -> Value:
    """``v`` in layout ``enc``: a re-made splat constant or a convert_layout before ``before``."""
    t = tensor_type(v).with_encoding(enc)
    d = v.defining_op
    if d is not None and d.name == "arith.constant":
        new = Operation("arith.constant", [], [t], dict(d.attributes), loc=d.loc)
    else:
        new = Operation("ttg.convert_layout", [v], [t], loc=before.loc)
    new.result.name = v.name
    block_of(before).insert_before(before, new)
    return new.result


def _convert_uses_back(value, old_enc, after: Operation, skip=()) -> None:
    users = [(u, i) for u, i in value.uses if u not in skip]
    for u, i in list(users):  # convert(convert(x)) is convert(x)
        if u.name == "ttg.convert_layout":
            users.remove((u, i))
    if not users:
        return
    conv = Operation("ttg.convert_layout", [value], [tensor_type(value).with_encoding(old_enc)],
                     loc=after.loc)
    blk = block_of(after)
    blk.insert(blk.ops.index(after) + 1, conv)
    for u, i in users:
        u.set_operand(i, conv.result)


def _loop_carried(dot):
    """(for op, iter index) when the accumulator is an scf.for iter arg yielded by ``dot``."""
    c = dot.operands[2]
    block = c.owner
    if c.defining_op is not None or block is None or block.parent is None:
        return None
    loop = block.parent.parent
    if loop is None or loop.name != "scf.for" or c.index == 0:
        return None
    i = c.index - 1
    term = block.ops[-1]
    if term.name != "scf.yield" or term.operands[i] is not dot.result:
        return None
    if any(u is not dot for u, _ in c.uses):
        return None
    return loop, i


def accelerate(dot: Operation, num_warps: int, v3=None) -> bool:
    """Rewrite one ``tt.dot`` for MMA v2, or for MMA v3 when ``v3`` is the
    :func:`wgmma_plan` of it (see the module docstring). Returns True if done."""
    kind = mma_kind(dot)
    old = shaped_type(dot.result).encoding
    if kind is None or not isinstance(old, BlockedLayout):
        return False
    kw, _ = kind
    if v3 is not None:
        mma, sh_a, sh_b = v3
        if comes_from_load(dot.operands[0]):
            _stage_operand_v3(dot, 0, sh_a)
        else:  # A stays in registers (#dot_op of the v3 #mma)
            _stage_operand(dot, 0, mma, kw)
        _stage_operand_v3(dot, 1, sh_b)
    else:
        warps = connected_mma_warps(dot)
        mma = MmaLayout(2, warps, (16, 8)) if warps is not None and len(warps) == 2 else \
            mma_layout_for(tuple(shaped_type(dot.result).shape), num_warps, 2,
                           chained=is_chained(dot) or feeds_dot(dot.result))
        _stage_operand(dot, 0, mma, kw)
        _stage_operand(dot, 1, mma, kw)
    _accumulator(dot, mma, old)
    if v3 is not None:
        _to_warp_group_dot(dot)
    return True


def comes_from_load(v) -> bool:
    """True when ``v``, through ``ttg.convert_layout`` and ``tt.trans``, is a ``tt.load``
    (or descriptor load) result or a block argument: wgmma then reads it from shared memory;
    otherwise (attention's ``P``, computed in registers) it is a register operand. Triton 3.6
    ``comesFromLoadOrBlockArg`` (``lib/Dialect/TritonGPU/Transforms/Utility.cpp``)."""
    while v.defining_op is not None and v.defining_op.name in ("ttg.convert_layout",
                                                               "tt.trans"):
        v = v.defining_op.operands[0]
    d = v.defining_op
    return d is None or d.name in ("tt.load", "tt.descriptor_load", "tt.descriptor_gather")


def _to_warp_group_dot(dot: Operation) -> Operation:
    """Replace ``tt.dot`` (operands already memdescs) by ``ttng.warp_group_dot``."""
    prec = dot.attributes.get("inputPrecision", "tf32") or "tf32"
    attrs = {"inputPrecision": prec, "isAsync": False}
    if dot.attributes.get("maxNumImpreciseAcc"):
        attrs["maxNumImpreciseAcc"] = dot.attributes["maxNumImpreciseAcc"]
    new = Operation("ttng.warp_group_dot", list(dot.operands), [dot.result.type], attrs,
                    loc=dot.loc)
    new.result.name = dot.result.name
    block_of(dot).insert_before(dot, new)
    dot.result.replace_all_uses_with(new.result)
    dot.erase()
    return new


def _accumulator(dot: Operation, mma, old) -> None:
    """Carry the accumulator and the result in ``mma`` (module docstring)."""
    carried = _loop_carried(dot)
    new_t = tensor_type(dot.result).with_encoding(mma)
    if carried is not None:
        loop, i = carried
        arg = dot.operands[2]
        arg.type = new_t
        loop.set_operand(3 + i, _to_layout(loop.operands[3 + i], mma, loop))
        res = loop.results[i]
        res.type = new_t
        dot.result.type = new_t
        yield_op = loop.regions[0].blocks[0].ops[-1]
        _convert_uses_back(dot.result, old, dot, skip=(yield_op,))
        _convert_uses_back(res, old, loop)
        return
    dot.set_operand(2, _to_layout(dot.operands[2], mma, dot))
    dot.result.type = new_t
    _convert_uses_back(dot.result, old, dot)


def _alloc_from_source(func: Operation) -> None:
    """``ttg.local_alloc (convert_layout x)`` into ``#ttg.nvmma_shared`` -> ``local_alloc x``:
    the stores take any register layout, so the conversion's own trip through shared memory
    is saved (attention's ``P``, staged for the second wgmma straight from ``#mma``)."""
    for op in list(func.walk()):
        if op.name != "ttg.local_alloc" or not op.operands or \
                not isinstance(shaped_type(op.result).encoding, NVMMASharedLayout):
            continue
        d = op.operands[0].defining_op
        if d is not None and d.name == "ttg.convert_layout" and \
                isinstance(d.operands[0].type, TensorType):
            op.set_operand(0, d.operands[0])
            if not d.result.uses:
                d.erase()


def _line(op) -> str:
    line = op.loc.root().line if op.loc is not None else 0
    return f"the tl.dot at line {line}" if line else "a tl.dot"


@dataclass
class AccelerateMatmul(Pass):
    """The ``tritongpu-accelerate-matmul`` pass. Options: ``target`` (``"cuda:90"``; MMA
    needs ``cuda:80`` or newer), ``num_warps`` (None: the module's ``ttg.num-warps``),
    ``mma`` (``"auto"``/``"v3"``: wgmma on ``cuda:90`` where it fits; ``"v2"``: mma.sync
    everywhere). :attr:`notes`: why a dot kept mma.sync on ``cuda:90``."""

    name = "tritongpu-accelerate-matmul"
    target: str = "cuda:90"
    num_warps: int | None = None
    mma: str = "auto"
    notes: list = field(default_factory=list, compare=False, repr=False)

    def _plan(self, dot, nw):
        if _arch(self.target) < 90 or mma_kind(dot) is None or \
                not isinstance(shaped_type(dot.result).encoding, BlockedLayout):
            return None
        if len(shaped_type(dot.result).shape) == 3:
            self.notes.append(f"{_line(dot)} uses mma.sync (MMA v2), not wgmma: it is a "
                              f"batched (3-D) dot, which Triton 3.6 keeps on MMA v2.")
            return None
        if self.mma == "v2":
            self.notes.append(f"{_line(dot)} uses mma.sync (MMA v2), not wgmma: "
                              f"WORKBENCH_CUDA_MMA=v2 (cuda_mma = 'v2') asks for it.")
            return None
        fp8 = widened_fp8_source(dot.operands[0])
        if fp8 is not None:  # Triton picks the MMA version on the fp8 types, then widens
            why = widened_fp8_reason(dot, fp8, nw)
            self.notes.append(f"{_line(dot)} uses mma.sync (MMA v2) on its fp8 operands "
                              f"widened to fp16, not wgmma: {why}.")
            return None
        plan = wgmma_plan(dot, nw)
        if isinstance(plan, str):
            self.notes.append(f"{_line(dot)} uses mma.sync (MMA v2), not wgmma: {plan}.")
            return None
        return plan

    def run(self, module: Operation, ctx=None) -> None:
        self.notes = []
        if _arch(self.target) < 80:
            return
        nw = self.num_warps or int(module.attributes.get("ttg.num-warps", 4))
        tpw = int(module.attributes.get("ttg.threads-per-warp", 32))
        for func in functions(module):
            done = [accelerate(op, nw, self._plan(op, nw)) for op in list(func.walk())
                    if op.name == "tt.dot"]
            if any(done):
                propagate_mma(func, nw, tpw)
                operands_in_registers(func)
                hoist_invariant_operands(func)
                _alloc_from_source(func)
                cleanup(func, nw)


    @property
    def options(self) -> dict:
        return {"target": self.target, "num_warps": self.num_warps, "mma": self.mma}


__all__ = ["AccelerateMatmul", "accelerate", "mma_kind", "is_chained", "wgmma_plan", "DOT_OPS"]
