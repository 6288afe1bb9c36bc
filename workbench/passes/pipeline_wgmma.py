"""Hopper's asynchronous wgmma in loops: which ``ttng.warp_group_dot`` of a loop body may stay
in flight, and the ``ttng.warp_group_dot_wait`` ops that keep the rest correct (Triton 3.6
``lib/Dialect/TritonGPU/Transforms/Pipeliner/WGMMAPipeline.cpp``, ``asyncLaunchDots``, run by
``tritongpu-pipeline`` on every ``scf.for``; PTX ISA 9.7.15.7 ``wgmma.commit_group`` and
``wgmma.wait_group N``: wait until at most ``N`` groups are pending).

:func:`launch_async_dots` marks every wgmma directly in the body ``isAsync = true`` (each
lowers to ``wgmma.fence``, the wgmma instructions and one ``wgmma.commit_group``) and sorts
them, in program order:

* **properly asynchronous**: its group may still run when the iteration ends. That needs
  (1) every shared-memory operand to be loop invariant or a slot of a multi-buffer
  (``ttg.memdesc_index``, through views: ``memdesc_trans``, ``memdesc_reshape``,
  ``memdesc_subslice``, ``convert_layout``, and through iter args to what the loop yields),
  a register operand A being fine; (2) its result to be used only by the ``scf.yield``
  (one iter arg; also inside an ``scf.if``, synchronised there); (3) an fp32 accumulator;
  (4) the iter arg to be read, in the next iteration, only as the accumulator of wgmma ops,
  or only after the first ``warp_group_dot_wait {pendings = 0}`` of the body, through which
  it is then threaded;
* otherwise ``ttng.warp_group_dot_wait {pendings = 0}`` right after it.

Then, unless a ``{pendings = 0}`` wait is in the body already (it finishes the previous
iteration's groups anyway), ``warp_group_dot_wait {pendings = n}`` follows the last of the
``n`` properly asynchronous dots (the previous iteration's groups are done: the slots they
read may be refilled), uses of their results inside an ``scf.if`` get a ``{pendings = 0}``
wait at the start of that block, and after the loop ``{pendings = 0}`` waits for the last
groups before anything reads the accumulators.

For attention (``S = Q @ K^T`` read by the softmax, ``acc = P @ V + acc * alpha``) this gives
Triton's schedule: the first dot waits at once (``{pendings = 0}``, which also carries the
previous iteration's ``acc``: the softmax scales it only after that wait), the second stays
in flight into the next iteration.

A wait threads values (:func:`thread_through_wait`): ``%r:k = ttng.warp_group_dot_wait %v...
{pendings}`` returns the values it waited for, and later users read the results. It also
lists the shared-memory operands of the dots those values come from, so their buffers stay
live until the wait (``tritongpu-allocate-shared-memory`` follows the memdesc results).

Triton splits a properly asynchronous dot whose A operand is in registers into dots of
K = 16 when no ``{pendings = 0}`` wait is in the loop (``splitRSDot``); we do not split, and
such a dot (K > 16) waits at once instead. Our fused loop nests (:mod:`.fuse_nested_rewrite`)
carry ``arith.select %last, %init, %d`` of the accumulator; that select is treated as the
yield (:func:`epilogue_if`).
"""
from __future__ import annotations

from ..ir.core import Operation, Value
from ..ir.types import MemDescType, TensorType
from ..layouts.encodings import MmaLayout
from .values import block_of

#: shared-memory views an operand may pass through and still be a multi-buffer's slot
_VIEWS = ("ttg.convert_layout", "ttg.memdesc_trans", "ttg.memdesc_reshape",
          "ttg.memdesc_subslice")


def _is_memdesc(v: Value) -> bool:
    return isinstance(v.type, MemDescType)


def _inside(op: Operation | None, root: Operation) -> bool:
    """``op`` is ``root`` or nested in it."""
    while op is not None:
        if op is root:
            return True
        op = op.parent_op()
    return False


def _defined_outside(v: Value, loop: Operation) -> bool:
    d = v.defining_op
    if d is not None:
        return not _inside(d, loop)
    owner = getattr(v.owner, "parent", None)  # a block argument: its block's region
    return not _inside(getattr(owner, "parent", None), loop)


def _ancestor_in(block, op: Operation | None) -> Operation | None:
    """The op of ``block`` that is ``op`` or contains it, or None."""
    while op is not None and op.parent is not block:
        op = op.parent_op()
    return op


def _after(block, op: Operation, anchor: Operation) -> bool:
    """``op`` (or the op of ``block`` holding it) comes after ``anchor`` in ``block``."""
    a = _ancestor_in(block, op)
    return a is not None and block.ops.index(a) > block.ops.index(anchor)


def _is_noop(op: Operation) -> bool:
    """A conversion that changes nothing (Triton's ``isNoop`` on the way to the yield)."""
    return op.name == "ttg.convert_layout" and op.operands[0].type == op.result.type


def _multibuffered(v: Value, loop: Operation) -> bool:
    """Rule 1 for one operand (module docstring)."""
    if isinstance(v.type, TensorType):
        return True
    body = loop.regions[0].block
    seen: set = set()
    while True:
        d = v.defining_op
        if d is not None and d.name in _VIEWS:
            v = d.operands[0]
        elif d is None and v.owner is body and v.index > 0 and id(v) not in seen:
            seen.add(id(v))
            v = body.terminator.operands[v.index - 1]
        else:
            break
    d = v.defining_op
    return _defined_outside(v, loop) or (d is not None and d.name == "ttg.memdesc_index")


def epilogue_if(dot: Operation, carried) -> Operation | None:
    """The ``scf.if`` of a fused loop nest's epilogue (:mod:`.fuse_nested_rewrite`) when
    ``carried`` (what the loop carries on as the accumulator) is ``arith.select %last,
    %init, %d`` of the dot's result ``%d`` (the reset at a tile's end) and every other use of
    ``%d`` is inside that ``scf.if``, else None."""
    sel = carried.defining_op
    body = block_of(dot)
    if sel is None or sel.name != "arith.select" or sel.parent is not body or \
            sel.operands[2] is not dot.result:
        return None
    ifs = [op for op in body.ops if op.name == "scf.if" and op.operands[0] is sel.operands[0]]
    if len(ifs) != 1:
        return None
    for u, _ in dot.result.uses:
        if u is not sel and not _inside(u, ifs[0]):
            return None
    return ifs[0]


def _yield_index(dot: Operation, loop: Operation) -> int | None:
    """Rule 2: the iter arg index (from 0) the dot's result is carried in, or None."""
    body = loop.regions[0].block
    y = body.terminator
    idx = None
    queue = list(dot.result.uses)
    while queue:
        user, i = queue.pop()
        if user.parent is body:
            if _is_noop(user):
                queue.extend(user.result.uses)
                continue
            if user is y:
                if idx is not None:
                    return None
                idx = i
                continue
            if user.name == "arith.select" and [u for u, _ in user.result.uses] == [y] and \
                    epilogue_if(dot, user.result) is not None:  # a fused nest's reset
                if idx is not None:
                    return None
                idx = user.result.uses[0][1]
                continue
            return None
        parent = user.parent_op()
        if parent is None or parent.name != "scf.if":
            return None
        if user.name == "scf.yield":
            queue.extend(parent.results[i].uses)
    return idx


def _only_feeds_wgmma_acc(v: Value) -> bool:
    """Rule 4a: every use of ``v`` is (through no-op conversions) a wgmma's accumulator."""
    for u, i in v.uses:
        if u.name == "ttng.warp_group_dot":
            if i != 2:
                return False
        elif not (_is_noop(u) and _only_feeds_wgmma_acc(u.result)):
            return False
    return True


def _first_wait0(body) -> Operation | None:
    return next((op for op in body.ops if op.name == "ttng.warp_group_dot_wait"
                 and int(op.attributes.get("pendings", 0)) == 0), None)


def properly_async(dot: Operation, loop: Operation) -> int | None:
    """The iter arg index (from 0) of ``dot``'s accumulator when the dot may stay in flight
    across iterations (rules 1-4 of the module docstring), else None. Threads the iter arg
    through the body's first ``{pendings = 0}`` wait when rule 4 needs it."""
    body = loop.regions[0].block
    if not (_multibuffered(dot.operands[0], loop) and _multibuffered(dot.operands[1], loop)):
        return None
    idx = _yield_index(dot, loop)
    if idx is None:
        return None
    acc = dot.operands[2].type
    if getattr(getattr(acc, "element", None), "name", None) != "f32":
        return None
    arg = body.args[idx + 1]
    if _only_feeds_wgmma_acc(arg):
        return idx
    wait = _first_wait0(body)
    if wait is not None and all(_after(body, u, wait) for u, _ in arg.uses):
        thread_through_wait(wait, [arg])
        return idx
    return None


def _dots_behind(v: Value, block, seen: set, out: list) -> None:
    """The wgmma ops ``v`` comes from: a backward walk over ops of ``block`` that stops at a
    wgmma (collected in ``out``) and at block arguments."""
    d = v.defining_op
    if d is None or id(d) in seen:
        return
    seen.add(id(d))
    if d.name == "ttng.warp_group_dot":
        out.append(d)
        return
    if d.parent is not block:
        return
    for o in d.operands:
        _dots_behind(o, block, seen, out)


def thread_through_wait(wait: Operation, values: list) -> Operation:
    """Replace ``wait`` by one that also returns ``values`` (and lists the shared-memory
    operands of the wgmma ops they come from); uses of ``wait``'s results and the uses of
    ``values`` after the wait read the new results. Returns the new wait."""
    block = block_of(wait)
    ops = list(wait.operands)
    for v in values:
        if not any(v is o for o in ops):
            ops.append(v)
    dots: list = []
    seen: set = set()
    for v in values:
        _dots_behind(v, block, seen, dots)
    for d in dots:
        for o in d.operands:
            if _is_memdesc(o) and not any(o is x for x in ops):
                ops.append(o)
    new = Operation("ttng.warp_group_dot_wait", ops, [o.type for o in ops],
                    dict(wait.attributes), loc=wait.loc)
    for r, o in zip(new.results, ops, strict=True):
        r.name = o.name
    block.insert_before(wait, new)
    n_old = len(wait.operands)
    for i in range(n_old):
        if not _is_memdesc(ops[i]):
            wait.results[i].replace_all_uses_with(new.results[i])
    for i in range(n_old, len(ops)):
        if _is_memdesc(ops[i]):
            continue
        for u, j in list(ops[i].uses):
            if u is not new and _after(block, u, new):
                u.set_operand(j, new.results[i])
    wait.erase()
    return new


def _wait(block, index: int, values: list, pendings: int, loc) -> Operation:
    """A new ``warp_group_dot_wait {pendings}`` at ``index`` of ``block`` threading ``values``."""
    w = Operation("ttng.warp_group_dot_wait", [], [], {"pendings": pendings}, loc=loc)
    block.insert(index, w)
    return thread_through_wait(w, values)


def _rs_needs_wait(dot: Operation, loop: Operation) -> bool:
    """A register A operand computed in the loop, not converted from an MMA layout: the
    registers may be overwritten next iteration (Triton's ``rsDotNeedsWait``)."""
    a = dot.operands[0]
    if not isinstance(a.type, TensorType) or _defined_outside(a, loop):
        return False
    d = a.defining_op
    if d is not None and d.name == "ttg.convert_layout":
        return not isinstance(getattr(d.operands[0].type, "encoding", None), MmaLayout)
    return True


def _would_split(dot: Operation) -> bool:
    """Triton would split this register-A dot along K (K above the instruction's K)."""
    a = dot.operands[0]
    if not isinstance(a.type, TensorType):
        return False
    k = a.type.shape[-1]
    enc = getattr(dot.result.type, "encoding", None)
    instr = enc.instr_shape if isinstance(enc, MmaLayout) and len(enc.instr_shape) > 2 else \
        (0, 0, k)
    return k > int(instr[2])


def launch_async_dots(loop: Operation) -> bool:
    """Make the wgmma ops of ``loop``'s body asynchronous with their waits (module
    docstring). Returns True when the body had any."""
    body = loop.regions[0].block
    dots = [op for op in body.ops if op.name == "ttng.warp_group_dot"]
    if not dots:
        return False
    proper: list = []
    for dot in dots:
        dot.attributes["isAsync"] = True
        idx = properly_async(dot, loop)
        if idx is not None:
            proper.append((dot, idx))
        else:
            _wait(body, body.ops.index(dot) + 1, [dot.result], 0, dot.loc)
    if not proper:
        return True
    if _first_wait0(body) is None:  # Triton splits these; we wait for them at once
        for dot, idx in [p for p in proper if _would_split(p[0])]:
            proper.remove((dot, idx))
            _wait(body, body.ops.index(dot) + 1, [dot.result], 0, dot.loc)
    _waits_in_loop(loop, proper)
    after = block_of(loop)
    _wait(after, after.ops.index(loop) + 1, [loop.results[i] for _, i in proper], 0, loop.loc)
    return True


def _waits_in_loop(loop: Operation, proper: list) -> None:
    """The waits inside the body for properly asynchronous dots (module docstring)."""
    body = loop.regions[0].block
    if not proper or _first_wait0(body) is not None:
        return
    for dot, _ in proper:
        if _rs_needs_wait(dot, loop):
            _wait(body, body.ops.index(dot) + 1, [dot.result], len(proper) - 1, dot.loc)
            continue
        by_block: dict = {}
        for u, _ in dot.result.uses:
            if u is body.terminator or u.parent is body:  # the yield, a fused nest's select
                continue
            by_block.setdefault(id(u.parent), (u.parent, []))[1].append(dot.result)
        for blk, vals in by_block.values():
            _wait(blk, 0, vals[:1], 0, dot.loc)
    last = proper[-1][0]
    if _rs_needs_wait(last, loop):
        return
    _wait(body, body.ops.index(last) + 1, [d.result for d, _ in proper], len(proper), last.loc)


__all__ = ["epilogue_if", "launch_async_dots", "properly_async", "thread_through_wait"]
