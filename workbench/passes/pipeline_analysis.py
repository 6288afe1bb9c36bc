"""Which loads of a K loop ``tritongpu-pipeline`` can issue ahead, and why the others cannot.

A load can be issued ``S - 1`` iterations ahead when its address and mask are known for a
future iteration without running the iterations in between. That holds when they are pure
functions of

* the induction variable (``a_ptr + (k + offs_k) * stride``: clone the computation with
  ``iv + (S - 1) * step``),
* loop-invariant values, and
* **affine iter args**: loop-carried pointers advanced by a loop-invariant offset every
  iteration (the Triton tutorial's ``a_ptrs += BLOCK_K * stride_ak``, i.e. ``scf.yield``
  of ``tt.addptr %p, %inc`` with ``%inc`` invariant), or loop-carried integers advanced so
  (``arith.addi``: the offsets of a block pointer moved by ``tl.advance``). Iteration ``j``
  sees ``init + j * inc``.

This is what Triton 3.6's pipeliner accepts for the tutorial form (its loop-carried pointer
is the prefetch pointer, advanced in the loop; see reference ``ir_matmul_sm80.txt``).
:func:`find_candidates` also returns, for every ``tt.dot`` operand loaded in the loop but not
pipelined, a sentence saying why, for the compile report (``BackendResult.extra["notes"]``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.core import Operation, Value
from ..ir.types import TensorType
from ..layouts import to_linear
from ..layouts.encodings import NVMMASharedLayout
from .axis_info import AxisInfoAnalysis, pointee_bytes
from .effects import is_pure

#: the ops that advance an affine iter arg
ADVANCES = ("tt.addptr", "arith.addi")


@dataclass
class Affine:
    """An iter arg ``arg`` (block argument ``index`` of the body, loop operand ``3 + index - 1``)
    whose yielded value is ``advance`` = ``tt.addptr arg, inc`` (a pointer) or ``arith.addi
    arg, inc`` (an integer offset: a block pointer's, once rewritten); ``inc_ops``: the body ops
    computing ``inc`` (pure, loop invariant; empty when ``inc`` is defined outside)."""

    arg: Value
    index: int
    advance: Operation
    inc: Value
    inc_ops: list


@dataclass
class Candidate:
    """A pipelinable load: the ``tt.load``, the ``ttg.local_alloc`` it feeds, the
    ``ttg.local_load`` (or ``ttng.warp_group_dot``) users of the alloc, the body ``ops`` its
    pointer and mask depend on
    (topological order) and the affine iter args (``carried``) they read."""

    load: Operation
    alloc: Operation
    users: list
    ops: list
    carried: list = field(default_factory=list)
    #: elements per vector copy, Triton's ``contiguity`` attribute of the async copy
    contiguity: int = 1


def _is_zero(v: Value) -> bool:
    d = v.defining_op
    return d is not None and d.name == "arith.constant" and d.attributes.get("value") in (0, 0.0)


def invariant_slice(value: Value, body, ops: list, seen: set) -> bool:
    """Collect in ``ops`` the body ops computing ``value`` when it is loop invariant (every
    leaf defined outside the body, every op pure and region free); False otherwise."""
    d = value.defining_op
    if d is None:
        return value.owner is not body
    if d.parent is not body or id(d) in seen:
        return True
    if not is_pure(d) or d.regions:
        return False
    if not all(invariant_slice(v, body, ops, seen) for v in d.operands):
        return False
    seen.add(id(d))
    ops.append(d)
    return True


def affine_iter_args(loop: Operation) -> dict:
    """``{id(arg): Affine}`` for the loop's iter args advanced by a loop-invariant offset
    (pointers by ``tt.addptr``, integers by ``arith.addi``)."""
    body = loop.regions[0].block
    y = body.terminator
    out = {}
    for i, arg in enumerate(body.args[1:], start=1):
        if y is None or i - 1 >= len(y.operands):
            break
        adv = y.operands[i - 1].defining_op
        if adv is None or adv.name not in ADVANCES or adv.parent is not body:
            continue
        if adv.operands[0] is arg:
            inc = adv.operands[1]
        elif adv.name == "arith.addi" and adv.operands[1] is arg:
            inc = adv.operands[0]
        else:
            continue
        inc_ops: list = []
        if invariant_slice(inc, body, inc_ops, set()):
            out[id(arg)] = Affine(arg, i, adv, inc, inc_ops)
    return out


class _Slicer:
    """Collects the body ops a load's pointer and mask depend on; ``why`` says what stops
    it (None while fine)."""

    def __init__(self, body, iv: Value, affine: dict):
        self.body, self.iv, self.affine = body, iv, affine
        self.ops: list = []
        self.seen: set = set()
        self.carried: dict = {}
        self.why: str | None = None

    def add(self, value: Value, what: str) -> bool:
        d = value.defining_op
        if d is None:
            if value is self.iv or value.owner is not self.body:
                return True
            if id(value) in self.affine:
                self.carried[id(value)] = self.affine[id(value)]
                return True
            self.why = (f"its {what} is not an affine function of the loop (it depends on a "
                        "loop-carried value that is not a pointer advanced by a loop-invariant "
                        "offset)")
            return False
        if d.parent is not self.body or id(d) in self.seen:
            return True
        if not is_pure(d) or d.regions:
            self.why = (f"its {what} is not an affine function of the loop (it depends on "
                        f"`{d.name}` inside the loop)")
            return False
        if not all(self.add(v, what) for v in d.operands):
            return False
        self.seen.add(id(d))
        self.ops.append(d)
        return True


#: the public name of the slicer (:mod:`.pipeline_tma` slices descriptor coordinates)
Slicer = _Slicer


def _describe(load: Operation) -> str:
    name = load.loc.name or (load.result.name or "").rsplit("_", 1)[0] or "a tile"
    line = load.loc.root().line if load.loc is not None else 0
    return f"the load of `{name}`" + (f" (line {line})" if line else "")


def copy_bytes(load: Operation, axis) -> int:
    """Bytes one thread can copy at once for ``load`` (a tensor ``tt.load``): the pointer's
    contiguity along its layout's fastest dim, capped by its known alignment and by the
    mask's constancy, times the element size (Triton 3.6 ``LowerLoops.cpp``:
    ``canBeConvertedToAsyncLoad``, ``getContiguity``, ``getMaskAlignment``). ``axis``: an
    :class:`~.axis_info.AxisInfoAnalysis` of the function."""
    ptr = load.operands[0]
    t = ptr.type
    enc = getattr(t, "encoding", None)
    rank = len(getattr(t, "shape", ()))
    order = getattr(enc, "order", None) or tuple(range(rank - 1, -1, -1))
    d = order[0]
    eb = pointee_bytes(t)
    info = axis.get(ptr)
    vec = max(1, min(info.contiguity[d], max(1, info.divisibility[d] // eb)))
    if len(load.operands) > 1:
        vec = min(vec, max(1, axis.get(load.operands[1]).constancy[d]))
    return vec * eb


def copy_contiguity(load: Operation, axis) -> int:
    """Elements one thread copies at once for ``load``: :func:`copy_bytes` in elements, capped
    by the run of consecutive elements each thread holds along the layout's fastest dim
    (Triton 3.6 ``AxisInfo.cpp``: ``getContiguity`` takes the minimum with the layout's
    ``getContigPerThread``). The async copy prints it as ``{contiguity = n : i32}``."""
    t = load.operands[0].type
    assert isinstance(t, TensorType)
    vec = copy_bytes(load, axis) // pointee_bytes(t)
    enc = t.encoding
    if enc is None or not hasattr(enc, "order"):
        return max(1, vec)
    d = enc.order[0]
    run = 1
    for basis in to_linear(enc, t.shape).in_dim_bases("register"):
        if basis != tuple(run if k == d else 0 for k in range(len(t.shape))):
            break
        run *= 2
    return max(1, min(vec, run))


def _transposed_into_shared(load: Operation, alloc: Operation) -> bool:
    """True when the rank-2 ``#ttg.nvmma_shared`` buffer ``alloc`` stores ``load``'s
    registers with the other dim contiguous than their layout's fastest dim: every
    register-to-shared run is one element (Triton 3.6 ``getCopyVecBytes``,
    ``PipeliningUtility.cpp``; for 16-bit wgmma operands and ``#ttg.swizzled_shared`` the
    buffer follows the registers' order)."""
    t = load.result.type
    sh = getattr(alloc.result.type, "encoding", None)
    order = getattr(getattr(t, "encoding", None), "order", None)
    if not isinstance(t, TensorType) or not isinstance(sh, NVMMASharedLayout) or \
            not order or len(t.shape) != 2:
        return False
    return (0 if sh.transposed else 1) != order[0]


def _wgmma_view(op: Operation) -> bool:
    """True for a ``ttg.memdesc_trans`` every user of which is a ``ttng.warp_group_dot`` (a
    transposed wgmma operand: Triton's ``collectNonViewUsers`` looks through such views)."""
    users = [u for u, _ in op.result.uses] if op.results else []
    return op.name == "ttg.memdesc_trans" and bool(users) and \
        all(u.name == "ttng.warp_group_dot" for u in users)


def reads_by_wgmma(users: list) -> bool:
    """Whether any of a buffer's ``users`` is a ``ttng.warp_group_dot``, directly or through
    a :func:`_wgmma_view`."""
    return any(u.name == "ttng.warp_group_dot" or _wgmma_view(u) for u in users)


def _check(load: Operation, body, iv, affine, axis=None) -> tuple:
    """``(Candidate | None, reason | None)`` for one ``tt.load`` of the body."""
    uses = [u for u, _ in load.result.uses]
    if load.attributes.get("isVolatile"):
        return None, "it is volatile"
    if len(uses) != 1 or uses[0].name != "ttg.local_alloc" or uses[0].parent is not body:
        return None, ("its value is used directly, not only through one shared-memory "
                      "buffer read by the dot (nothing to copy asynchronously)")
    alloc = uses[0]
    users = [u for u, _ in alloc.result.uses]
    if not users or any(u.name not in ("ttg.local_load", "ttng.warp_group_dot") and
                        not _wgmma_view(u) for u in users):
        return None, "its shared-memory copy is used by other ops than local_load"
    if len(load.operands) == 3 and not _is_zero(load.operands[2]):
        return None, "its `other` is not zero (cp.async can only zero-fill)"
    if not isinstance(load.operands[0].type, TensorType):
        return None, "it loads a scalar"
    if axis is not None and copy_bytes(load, axis) < 4:
        return None, ("its addresses are not known to be 4-byte aligned runs (no "
                      "divisibility: cp.async copies at least 4 bytes; Triton declines too)")
    if _transposed_into_shared(load, alloc) and \
            pointee_bytes(load.operands[0].type) < 4:
        return None, ("its shared-memory buffer is contiguous along the other dim than its "
                      "registers (an 8-bit wgmma operand is stored K-major), so no thread "
                      "holds 4 bytes that are consecutive in both (cp.async copies at least 4 "
                      "bytes; Triton declines too; a tf32 operand copies one 4-byte element)")
    s = _Slicer(body, iv, affine)
    if not s.add(load.operands[0], "pointer"):
        return None, s.why
    if len(load.operands) > 1 and not s.add(load.operands[1], "mask"):
        return None, s.why
    vec = copy_contiguity(load, axis) if axis is not None else 1
    return Candidate(load, alloc, users, s.ops, list(s.carried.values()), vec), None


def _dot_operand_load(v: Value, body) -> Operation | None:
    """The body ``tt.load`` a dot operand comes from (through local_load, local_alloc,
    convert_layout and elementwise casts), or None."""
    for _ in range(8):
        d = v.defining_op
        if d is None or d.parent is not body:
            return None
        if d.name == "tt.load":
            return d
        if d.name in ("ttg.local_load", "ttg.local_alloc", "ttg.convert_layout") or (
                len(d.operands) == 1 and d.name.startswith(("arith.ext", "arith.trunc",
                                                             "tt.fp_to_fp"))):
            if not d.operands:
                return None
            v = d.operands[0]
            continue
        return None
    return None


def _merge_copies(load: Operation):
    """Make the ``ttg.local_alloc`` copies of ``load`` that have one type (one tile staged
    for two wgmma, one of them through a ``memdesc_trans``) one copy, the first, as Triton's
    ``replaceUsesWithLocalLoad`` points every alloc of the buffer's encoding at the one
    pipelined buffer. Returns a function that undoes it (when the load stays unpipelined)."""
    allocs = [u for u, _ in load.result.uses]
    if len(allocs) < 2 or any(a.name != "ttg.local_alloc" or a.parent is not load.parent or
                              a.result.type != allocs[0].result.type for a in allocs):
        return lambda: None
    blk = load.parent
    assert blk is not None
    allocs.sort(key=blk.ops.index)
    first, rest = allocs[0], allocs[1:]
    saved = []
    for a in rest:
        saved.append((a, blk.ops.index(a), list(a.result.uses)))
        a.result.replace_all_uses_with(first.result)
    for a in rest:
        a.erase()

    def undo() -> None:
        for a, at, uses in saved:
            again = Operation(a.name, [load.result], [a.result.type], dict(a.attributes),
                              loc=a.loc)
            blk.insert(min(at, len(blk.ops)), again)
            for u, i in uses:
                u.set_operand(i, again.result)
    return undo


def find_candidates(loop: Operation) -> tuple:
    """``(candidates, notes)`` for one ``scf.for``: the pipelinable operand loads (list of
    :class:`Candidate`) and one sentence per ``tt.dot`` operand load that is not pipelined."""
    body = loop.regions[0].block
    iv = body.args[0]
    affine = affine_iter_args(loop)
    func = loop.parent_op()
    while func is not None and func.name != "tt.func":
        func = func.parent_op()
    axis = AxisInfoAnalysis(func) if func is not None else None
    cands, notes, done = [], [], set()
    for op in list(body.ops):
        if op.name == "ttg.local_alloc" and op.operands and op.parent is body:
            load = op.operands[0].defining_op
            if load is not None and load.name == "tt.load" and load.parent is body and \
                    id(load) not in done:
                undo = _merge_copies(load)
                c, _ = _check(load, body, iv, affine, axis)
                if c is None:
                    undo()
                    continue
                done.add(id(load))
                cands.append(c)
    for op in body.ops:
        if op.name not in ("tt.dot", "ttng.warp_group_dot"):
            continue
        for v in op.operands[:2]:
            load = _dot_operand_load(v, body)
            if load is None or id(load) in done:
                continue
            done.add(id(load))
            _, why = _check(load, body, iv, affine, axis)
            if why is not None:
                notes.append(f"{_describe(load)} was not pipelined: {why}.")
    return cands, notes


#: public names of the per-load check and the zero test (:mod:`.pipeline_register_loads`
#: keeps only the loads the check accepts)
check_load = _check
is_zero = _is_zero
merge_copies = _merge_copies

__all__ = ["Affine", "Candidate", "Slicer", "affine_iter_args", "check_load",
           "find_candidates", "invariant_slice", "is_zero", "merge_copies", "reads_by_wgmma"]
