"""Which loads of a loop Triton 3.6 pipelines besides the MMA operands, and the shared-memory
round trip that lets ``tritongpu-pipeline`` copy them ahead.

Triton's ``tritongpu-assign-latencies`` (``AssignLatencies.cpp``,
``loadOpsToIndirectionLevel``) pipelines, in an innermost loop, every load its depth-first
walk reaches backwards through the body from the A and B operands of each ``tt.dot``, and,
when the loop carries its own ``tt.num_stages`` (``tl.range(..., num_stages=S)``), from every
op of the body. A reached load is kept when its copy is at least 4 bytes per thread
(``canBeConvertedToAsyncLoad``: pointer contiguity, alignment and mask constancy; and
``getCopyVecBytes``: the run of consecutive registers of each thread). ``LowerLoops.cpp``
(``createAsyncCopy``) then copies it into a multi-buffer and reads it back with
``ttg.local_load`` where it was used; the buffer's encoding is ``getSharedEncoding``'s: that of
the ``ttg.local_alloc`` users if any (the MMA operands, already routed so by
``tritongpu-accelerate-matmul``), else, for FMA dot operands and any other load,
``#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = <the load's order>}>``.
A load whose ``other`` is not zero is copied without it (``cp.async`` zero-fills masked
elements) and the value read back is ``arith.select``-ed with ``other`` under the load's mask.

:func:`route_through_shared` rewrites such a load ``%x = tt.load %p, %m, %o`` into the form
the pipeliner (:mod:`.pipeline_analysis`) already handles for MMA operands::

    %x0 = tt.load %p, %m                                  // `other` dropped when not zero
    %s  = ttg.local_alloc %x0 : (...) -> !ttg.memdesc<..., #shared, #smem>
    %x1 = ttg.local_load %s   // in the dot-operand layout when every user converts to it
    %x  = arith.select %m, %x1, %o                        // only when `other` is not zero

and keeps it only where the pipeliner accepts it (otherwise the load is left as it was).
"""
from __future__ import annotations

from ..ir.core import Operation, Value
from ..ir.types import FloatType, IntType, MemDescType, TensorType
from ..layouts.encodings import (
    BlockedLayout,
    DotOperandLayout,
    LinearEncoding,
    MmaLayout,
    SwizzledSharedLayout,
)
from ..layouts.mma import mma_operand_shared
from .axis_info import AxisInfoAnalysis, pointee_bytes
from .pipeline_analysis import (
    affine_iter_args,
    check_load,
    copy_contiguity,
    is_zero,
    merge_copies,
)
from .shape_layouts import permute_linear
from .values import tensor_type

#: the ops whose A and B operands start Triton's walk
DOTS = ("tt.dot", "ttng.warp_group_dot")


def is_innermost(loop: Operation) -> bool:
    """True when no ``scf.for``/``scf.while`` is nested in ``loop``'s body (Triton pipelines
    only innermost loops: ``isOuterLoop``)."""
    return not any(op is not loop and op.name in ("scf.for", "scf.while")
                   for op in loop.walk())


def _producers(op: Operation, body) -> list:
    """The body ops defining the operands of ``op`` and of the ops nested in its regions
    (Triton's ``getNestedOperands``); of a dot only those of A and B."""
    operands = list(op.operands[:2] if op.name in DOTS else op.operands)
    for nested in op.walk():
        if nested is not op:
            operands += nested.operands
    return [d for d in (v.defining_op for v in operands)
            if d is not None and d.parent is body]


def _loads_feeding(start: Operation, body) -> list:
    """The ``tt.load`` ops reached walking back from ``start`` through the body."""
    found, seen, stack = [], set(), [start]
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if cur.name == "tt.load" and cur is not start:
            found.append(cur)
        stack += _producers(cur, body)
    return found


def reached_loads(loop: Operation) -> list:
    """The body's ``tt.load`` ops Triton's latency walk reaches (module docstring), in the
    order it finds them: from the A/B operands of each dot, then, when the loop has a
    ``tt.num_stages`` attribute, from every other op of the body (not the yield)."""
    body = loop.regions[0].block
    starts = [op for op in body.ops if op.name in DOTS]
    if "tt.num_stages" in loop.attributes:
        starts += [op for op in body.ops if op.name not in ("tt.load", "scf.yield")]
    out: dict = {}
    for op in starts:
        for ld in _loads_feeding(op, body):
            out.setdefault(id(ld), ld)
    return list(out.values())


def _shared_encoding(t: TensorType) -> SwizzledSharedLayout:
    order = tuple(getattr(t.encoding, "order", None) or range(len(t.shape) - 1, -1, -1))
    return SwizzledSharedLayout(1, 1, 1, order)


def _read_type(load: Operation) -> TensorType:
    """The type the shared copy is read back in: the dot-operand type (FMA parent) when
    every user converts the load to that one layout, else the load's own type."""
    t = tensor_type(load.result)
    users = [u for u, _ in load.result.uses]
    kinds = {str(u.result.type) for u in users if u.name == "ttg.convert_layout"}
    if users and all(u.name == "ttg.convert_layout" for u in users) and len(kinds) == 1:
        cvt_t = tensor_type(users[0].result)
        enc = cvt_t.encoding
        if isinstance(enc, DotOperandLayout) and isinstance(enc.parent, BlockedLayout):
            return cvt_t
    return t


def _rewrite(load: Operation) -> tuple:
    """Insert the round trip after ``load``; returns ``(new ops, read value, old other)``."""
    blk = load.parent
    assert blk is not None
    t = tensor_type(load.result)
    other = load.operands[2] if len(load.operands) == 3 else None
    drop_other = other is not None and not is_zero(other)
    uses = [(u, i) for u, i in load.result.uses]
    read_t = _read_type(load)
    if drop_other:
        assert other is not None
        load.operands.pop()
        other.uses.remove((load, 2))
    enc = _shared_encoding(t)
    alloc = Operation("ttg.local_alloc", [load.result],
                      [MemDescType(tuple(t.shape), t.element, enc, False)], loc=load.loc)
    blk.insert(blk.ops.index(load) + 1, alloc)
    read = Operation("ttg.local_load", [alloc.result], [read_t], loc=load.loc)
    blk.insert(blk.ops.index(alloc) + 1, read)
    new = [alloc, read]
    value: Value = read.result
    if drop_other:
        assert other is not None
        sel = Operation("arith.select", [load.operands[1], read.result, other], [t],
                        loc=load.loc)
        blk.insert(blk.ops.index(read) + 1, sel)
        new.append(sel)
        value = sel.result
    value.name = load.result.name
    for u, i in uses:
        if read_t is not t and u.name == "ttg.convert_layout":
            u.result.replace_all_uses_with(read.result)
            u.erase()
        else:
            u.set_operand(i, value)
    return new, value, other if drop_other else None


def _undo(load: Operation, new: list, value: Value, other) -> None:
    """Put ``load`` back as it was before :func:`_rewrite` (converts of a dot-operand read
    are recreated as one ``ttg.convert_layout``)."""
    alloc, read = new[0], new[1]
    blk = load.parent
    assert blk is not None
    if read.result.type is not load.result.type:
        cvt = Operation("ttg.convert_layout", [load.result], [read.result.type], loc=read.loc)
        blk.insert(blk.ops.index(read), cvt)
        read.result.replace_all_uses_with(cvt.result)
    else:
        value.replace_all_uses_with(load.result)
    for op in reversed(new):
        op.erase()
    if other is not None:
        load.add_operand(other)
    del alloc


def _transposed_operand(load: Operation) -> tuple | None:
    """``(trans, alloc, read)`` when ``load`` reaches an mma.sync operand as
    ``tt.trans {order = [1, 0]} -> ttg.local_alloc -> ttg.local_load`` (#dot_op of an
    ``#mma`` v2 parent), else None. Its other uses may only be ``ttg.local_alloc`` (the
    untransposed tile staged for another dot: one buffer when the layouts agree)."""
    uses = [u for u, _ in load.result.uses]
    transposes = [u for u in uses if u.name == "tt.trans"]
    if len(transposes) != 1 or any(u.name not in ("tt.trans", "ttg.local_alloc") for u in uses) \
            or [int(o) for o in transposes[0].attributes.get("order", ())] != [1, 0]:
        return None
    trans = transposes[0]
    t_uses = [u for u, _ in trans.result.uses]
    if len(t_uses) != 1 or t_uses[0].name != "ttg.local_alloc" or t_uses[0].parent is not \
            load.parent:
        return None
    alloc = t_uses[0]
    reads = [u for u, _ in alloc.result.uses]
    if len(reads) != 1 or reads[0].name != "ttg.local_load" or len(reads[0].operands) != 1:
        return None
    enc = tensor_type(reads[0].result).encoding
    if not isinstance(enc, DotOperandLayout) or not isinstance(enc.parent, MmaLayout) or \
            enc.parent.version_major != 2:
        return None
    return trans, alloc, reads[0]


def _dot_like_shared(lin: LinearEncoding, t: TensorType) -> SwizzledSharedLayout | None:
    """The shared layout Triton 3.6 gives a buffer read back in ``lin``, a transposed MMA
    operand layout (``Utility.cpp``, ``swizzleDotOperandLike``): the operand whose K dim is
    ``lin``'s contiguous one (A when it is the last dim), ``kWidth`` its run of consecutive
    registers, through the same formula as a staged operand
    (:func:`workbench.layouts.mma.mma_operand_shared`)."""
    regs = lin.linear_layout.in_dim_bases("register")
    if not regs or len(t.shape) != 2:
        return None
    d0 = next((d for d in range(2) if regs[0][d]), None)
    if d0 is None:
        return None
    k_width, i = 1, 0
    while i < len(regs) and tuple(regs[i]) == tuple(k_width if d == d0 else 0 for d in range(2)):
        k_width, i = k_width * 2, i + 1
    if not isinstance(t.element, (IntType, FloatType)):
        return None
    order = (d0, 1 - d0)
    return mma_operand_shared(0 if order == (1, 0) else 1, t.shape, order, k_width,
                              t.element.width)


def _stage_transposed(load: Operation, trans: Operation, alloc: Operation,
                      read: Operation) -> tuple | None:
    """Triton's form of a transposed mma.sync operand ahead of pipelining: the tile staged
    untransposed (``swizzleDotOperandLike``'s buffer), read back in the transposed operand
    layout (``#ttg.linear``) and transposed in registers (``tt.trans``, no data moved).
    Returns ``(new ops, old chain)`` or None when no such layouts exist."""
    t = tensor_type(load.result)
    dot_t = tensor_type(read.result)
    lin = permute_linear(dot_t.encoding, [1, 0], dot_t.shape)
    sh = _dot_like_shared(lin, t) if isinstance(lin, LinearEncoding) else None
    if sh is None:
        return None
    blk = load.parent
    assert blk is not None
    new_alloc = Operation("ttg.local_alloc", [load.result],
                          [MemDescType(tuple(t.shape), t.element, sh, False)], loc=load.loc)
    blk.insert(blk.ops.index(load) + 1, new_alloc)
    new_read = Operation("ttg.local_load", [new_alloc.result],
                         [TensorType(tuple(t.shape), t.element, lin)], loc=read.loc)
    new_trans = Operation("tt.trans", [new_read.result], [dot_t], dict(trans.attributes),
                          loc=trans.loc)
    blk.insert(blk.ops.index(read), new_read)
    blk.insert(blk.ops.index(read), new_trans)
    old = [(op, op.result.type, dict(op.attributes), op.loc) for op in (trans, alloc, read)]
    read.result.replace_all_uses_with(new_trans.result)
    new_trans.result.name = read.result.name
    for op in (read, alloc, trans):
        op.erase()
    return [new_alloc, new_read, new_trans], old


def _unstage_transposed(load: Operation, new: list, old: list) -> None:
    """Undo :func:`_stage_transposed`: the old ``trans -> alloc -> read`` chain again."""
    blk = load.parent
    assert blk is not None
    new_alloc, new_read, new_trans = new
    src = load.result
    at = blk.ops.index(load) + 1
    for k, (op, typ, attrs, loc) in enumerate(old):
        again = Operation(op.name, [src], [typ], attrs, loc=loc)
        if k < 2:
            blk.insert(at + k, again)
        else:
            blk.insert(blk.ops.index(new_read), again)
            new_trans.result.replace_all_uses_with(again.result)
        src = again.result
    for op in (new_trans, new_read, new_alloc):
        op.erase()


def route_through_shared(loop: Operation) -> int:
    """Route the loads of ``loop`` that Triton pipelines but that are read in registers
    through a single shared buffer (module docstring), keeping only those the pipeliner
    accepts. Returns the number of loads rewritten. Leaves outer loops alone."""
    if not is_innermost(loop):
        return 0
    body = loop.regions[0].block
    func = loop.parent_op()
    while func is not None and func.name != "tt.func":
        func = func.parent_op()
    if func is None:
        return 0
    axis = AxisInfoAnalysis(func)
    affine = affine_iter_args(loop)
    done = 0
    for load in reached_loads(loop):
        t = load.result.type
        uses = [u for u, _ in load.result.uses]
        if not isinstance(t, TensorType) or not uses or load.attributes.get("isVolatile"):
            continue
        chain = _transposed_operand(load)
        if chain is not None:
            staged = _stage_transposed(load, *chain)
            if staged is not None:
                unmerge = merge_copies(load)
                if check_load(load, body, body.args[0], affine, axis)[0] is None:
                    unmerge()
                    _unstage_transposed(load, *staged)
                else:
                    done += 1
            continue
        if any(u.name == "ttg.local_alloc" for u in uses):
            continue  # an MMA operand: the pipeliner's own case
        if any(u.name == "ttg.convert_layout" and isinstance(
                getattr(u.result.type, "encoding", None), DotOperandLayout) and
                not isinstance(u.result.type.encoding.parent, BlockedLayout) for u in uses):
            continue
        if copy_contiguity(load, axis) * pointee_bytes(load.operands[0].type) < 4:
            continue
        new, value, other = _rewrite(load)
        cand, _ = check_load(load, body, body.args[0], affine, axis)
        if cand is None:
            _undo(load, new, value, other)
            continue
        done += 1
    return done


__all__ = ["is_innermost", "reached_loads", "route_through_shared"]
