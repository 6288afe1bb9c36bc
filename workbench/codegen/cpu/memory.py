"""Loads, stores and their bounds checks in the CPU lowering.

Bounds checks (``Options.bounds_check``): before a load or store touches memory, a first loop
over the tile computes, for every active (unmasked) element, whether its byte range
``[addr, addr + size)`` lies in the span ``[lo, hi)`` of a pointer parameter it may derive from
(the *provenance*, tracked statically through addptr, splat, broadcast, select and
loop-carried values; unknown provenance accepts any pointer parameter; a pointer that may
come from an integer or from memory, whose array the launch does not know, is not checked).
That loop has no early exit, so LLVM vectorises it as an OR-reduction. Only when some
element is bad does a second loop find the first one (row-major order) and write the error record:

    err[0] = 1, err[1] = memory op index, err[2..4] = program id x, y, z,
    err[5] = parameter index, err[6] = byte offset from that parameter's address,
    err[7] = linear element index in the tile, err[8] = 0 for a load, 1 for a store,
    2 for an atomic; err[10], err[11] are set by the launcher for host calls (launch
    token, worker index: :data:`TOKEN`, :data:`WORKER`; see
    :mod:`workbench.backends.cpu.hostcalls`)

then the kernel returns 1 and the grid loop stops. Masked-off elements are never accessed;
a masked load without ``other`` yields 0.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...ir.core import Operation
from ...ir.types import PointerType, TensorType
from .access import Run, contiguous_run, element_pointer, run_nest, runs_nest
from .irtypes import tensor_of, terminator_of
from .llvmtypes import I8, I64, from_storage, storage_size, storage_type, to_storage
from .tiles import Lazy, linearize, loop_nest

ERR_FIELDS = 12
#: error-record slots the launcher sets for host calls: launch token, worker index
TOKEN, WORKER = 10, 11
_PASS_THROUGH = {"tt.addptr", "tt.splat", "tt.unsplat", "tt.broadcast", "tt.expand_dims",
                 "tt.trans", "tt.reshape", "tt.bitcast"}


def provenance(func: Operation) -> dict:
    """For every pointer-typed IR value of ``func``: the frozenset of pointer parameter indices
    it may derive from; ``None`` means unknown (any parameter). Fixpoint over loops."""
    prov: dict = {}
    for i, a in enumerate(func.regions[0].block.args):
        if isinstance(a.type.scalar, PointerType):
            prov[a] = frozenset([i])
    changed = True
    while changed:
        changed = False
        for op in func.walk():
            for dst, src_set in _flows(op, prov):
                changed |= _flow(prov, dst, src_set)
    return prov


def _join(a, b):
    if a is None or b is None:
        return None
    return a | b


def _flow(prov: dict, dst, src_set) -> bool:
    """Add ``src_set`` to the provenance of ``dst`` (a pointer value); whether it changed."""
    if not isinstance(dst.type.scalar, PointerType):
        return False
    old = prov.get(dst, frozenset())
    new = _join(old, src_set)
    if new != old or dst not in prov:
        prov[dst] = new
        return True
    return False


def _flows(op: Operation, prov: dict) -> list:
    """``(value, provenance set)`` pairs that ``op`` passes on (see :func:`provenance`)."""
    def get(v):
        return prov.get(v, frozenset())

    n = op.name
    if n in _PASS_THROUGH and op.results:
        return [(op.result, get(op.operands[0]))]
    if n == "arith.select":
        return [(op.result, _join(get(op.operands[1]), get(op.operands[2])))]
    if n in ("tt.int_to_ptr", "tt.load", "tt.atomic_rmw", "tt.atomic_cas"):
        return [(op.result, None)] if op.results else []
    out = []
    if n == "scf.for":
        body = op.regions[0].block
        yields = terminator_of(body).operands
        for k, init in enumerate(op.operands[3:]):
            s = _join(get(init), get(yields[k]))
            out += [(body.args[k + 1], s), (op.results[k], s)]
    elif n == "scf.if":
        for region in op.regions:
            if region.blocks and region.block.terminator is not None:
                out += [(op.results[k], get(y))
                        for k, y in enumerate(region.block.terminator.operands)]
    return out


def _candidates(lw, ptr_value) -> list:
    """The pointer parameters an access through ``ptr_value`` is checked against: those it
    derives from; every one when the analysis found none; none (no check) when it may come
    from an integer or from memory (``tt.int_to_ptr``, a loaded pointer: e.g. tutorial 08's
    array of matrix addresses), whose arrays the launch does not know. Triton checks
    nothing."""
    if ptr_value in lw.prov and lw.prov[ptr_value] is None:
        return []
    s = lw.prov.get(ptr_value)
    allp = [i for i, sp in enumerate(lw.spans) if sp is not None]
    if not s:
        return allp
    return sorted(s)


def _in_span(b, lw, cands, addr, size):
    ok = None
    for c in cands:
        _, lo, hi = lw.spans[c]
        last = b.sub(hi, ir.Constant(I64, size))
        inside = b.and_(b.icmp_unsigned(">=", addr, lo), b.icmp_unsigned("<=", addr, last))
        ok = inside if ok is None else b.or_(ok, inside)
    return ok if ok is not None else ir.Constant(ir.IntType(1), 0)


KIND_NAMES = ("load", "store", "atomic")


def check_access(lw, op: Operation, kind: int, ptr_tile, mask_tile, size: int,
                 run: Run | None = None) -> None:
    """Emit the two-loop bounds check described in the module docstring for an access of
    ``kind`` (0 load, 1 store, 2 atomic) of ``size``-byte elements. With a contiguous
    ``run`` (:mod:`.access`), the first loop tests only each run's first and last element
    and the loop finding the first bad active element runs only when one of those is
    outside every candidate span."""
    b = lw.b
    op_index = len(lw.mem_ops)
    cands = _candidates(lw, op.operands[0])
    lw.mem_ops.append((KIND_NAMES[kind], op.loc, cands[0] if cands else None))
    if not cands:
        return
    flag = lw.entry_alloca(I8)
    b.store(ir.Constant(I8, 0), flag)
    shape = ptr_tile.shape
    if run is not None:
        _check_runs(lw, cands, ptr_tile, run, size, flag)
        _check_exact(lw, op_index, kind, cands, ptr_tile, mask_tile, size, flag, shape,
                     scan=False)
        return
    _check_exact(lw, op_index, kind, cands, ptr_tile, mask_tile, size, flag, shape)


def _check_runs(lw, cands, ptr_tile, run, size, flag) -> None:
    """flag |= some run of ``ptr_tile`` is not inside one candidate span."""
    b = lw.b
    span = (run.length - 1) * size

    def at(start_idx):
        first = lw.elems().get(ptr_tile, start_idx)
        last = b.add(first, ir.Constant(I64, span)) if span else first
        ok = None
        for c in cands:
            _, lo, hi = lw.spans[c]
            top = b.sub(hi, ir.Constant(I64, size))
            inside = b.and_(b.icmp_unsigned(">=", first, lo), b.icmp_unsigned("<=", last, top))
            inside = b.and_(inside, b.icmp_unsigned("<=", first, last))
            ok = inside if ok is None else b.or_(ok, inside)
        b.store(b.or_(b.load(flag, typ=I8), b.zext(b.not_(ok), I8)), flag)
    runs_nest(b, ptr_tile.shape, run, at)


def _check_exact(lw, op_index, kind, cands, ptr_tile, mask_tile, size, flag, shape,
                 scan: bool = True) -> None:
    """With ``scan``: an OR-reduction loop over every active element sets ``flag``;
    without, ``flag`` was set by the caller (the per-run check). Then, if ``flag`` is set,
    the loop finding the first bad element (which writes the error record and returns 1,
    or falls through when every active element is fine)."""
    b = lw.b

    def bad_at(e, idx):
        addr = e.get(ptr_tile, idx)
        bad = b.not_(_in_span(b, lw, cands, addr, size))
        if mask_tile is not None:
            bad = b.and_(bad, e.get(mask_tile, idx))
        return addr, bad

    def scan_at(idx):
        _, bad = bad_at(lw.elems(), idx)
        b.store(b.or_(b.load(flag, typ=I8), b.zext(bad, I8)), flag)
    if scan:
        loop_nest(b, shape, scan_at)
    failed = b.icmp_unsigned("!=", b.load(flag, typ=I8), ir.Constant(I8, 0))
    slow = lw.fn.append_basic_block("oob.find")
    cont = lw.fn.append_basic_block("oob.ok")
    b.cbranch(failed, slow, cont)
    b.position_at_end(slow)

    def find(idx):
        addr, bad = bad_at(lw.elems(), idx)
        hit = lw.fn.append_basic_block("oob.hit")
        nxt = lw.fn.append_basic_block("oob.next")
        b.cbranch(bad, hit, nxt)
        b.position_at_end(hit)
        base = lw.spans[cands[0]][0]
        fields = [ir.Constant(I64, 1), ir.Constant(I64, op_index)]
        fields += [b.zext(p, I64) for p in lw.pids]
        fields += [ir.Constant(I64, cands[0]), b.sub(addr, base),
                   linearize(b, idx, shape) if shape else ir.Constant(I64, 0),
                   ir.Constant(I64, kind)]
        for k, v in enumerate(fields):
            slot = b.gep(lw.err, [ir.Constant(I64, k)], source_etype=I64)
            b.store(v, slot)
        b.branch(lw.error_block())
        b.position_at_end(nxt)
    loop_nest(b, shape, find)
    b.branch(cont)
    b.position_at_end(cont)


def _operands(lw, op: Operation, names: int):
    ops = list(op.operands) + [None] * 3
    return ops[:names]


def lower_load(lw, op: Operation) -> None:
    """``tt.load [ptr, mask?, other?]``: tiles load into a scratch buffer, scalars into an SSA
    value. Masked-off elements take ``other`` (0 when absent). Contiguous pointer tiles load
    run by run (:mod:`.access`). A load that :mod:`.load_fusion` defers becomes a lazy tile
    read inside its store's loop (its bounds check stays here)."""
    b = lw.b
    ptr_v, mask_v, other_v = _operands(lw, op, 3)
    rt = op.result.type
    elem = rt.element if isinstance(rt, TensorType) else rt
    shape = tuple(rt.shape) if isinstance(rt, TensorType) else ()
    ptr = lw.tile(ptr_v, shape)
    mask = lw.tile(mask_v, shape) if mask_v is not None else None
    other = lw.tile(other_v, shape) if other_v is not None else None
    size = storage_size(elem)
    run = contiguous_run(lw, ptr_v, ptr, shape)
    if lw.options.bounds_check:
        check_access(lw, op, 0, ptr, mask, size, run)
        lw.set_loc(op)
    if not shape:  # a scalar: one read, an SSA value
        e = lw.elems()
        p = b.inttoptr(e.get(ptr, ()), ir.PointerType())
        lw.env[op.result] = _read(lw, e, p, mask, other, (), elem)
        return
    tile = Lazy(shape, elem, "load", [ptr, mask, other], op=op, param=LoadReader(run))
    lw.env[op.result] = tile if _deferrable(lw, op) else _copy(lw, tile)


def _read(lw, e, p, mask, other, idx, elem):
    """The element at pointer ``p``, or ``other`` (0) where ``mask`` is off: the read sits in
    its own block, so masked-off elements are never touched."""
    b = lw.b
    st = storage_type(elem)
    if mask is None:
        return from_storage(b, b.load(p, typ=st), elem)
    m = e.get(mask, idx)
    alt = e.get(other, idx) if other is not None else _zero(b, elem, st)
    return guarded(lw, m, lambda: from_storage(b, b.load(p, typ=st), elem), alt, "load")


def guarded(lw, cond, make, alt, name: str):
    """``cond ? make() : alt`` with ``make``'s instructions (a memory access) in a block of
    their own that runs only when ``cond`` (i1) holds; ``alt`` must be computed before."""
    b = lw.b
    pre = b.block
    yes = lw.fn.append_basic_block(f"{name}.on")
    join = lw.fn.append_basic_block(f"{name}.join")
    b.cbranch(cond, yes, join)
    b.position_at_end(yes)
    v = make()
    yes_end = b.block
    b.branch(join)
    b.position_at_end(join)
    phi = b.phi(v.type)
    phi.add_incoming(v, yes_end)
    phi.add_incoming(alt, pre)
    return phi


def _deferrable(lw, op: Operation) -> bool:
    """Whether load ``op`` is read in its store's loop (:mod:`.load_fusion`): the analysis
    allows it, the store walks the load's contiguous run (if it has one) and, unless the
    store writes through the load's own pointers, both pointers have known, different
    parameters whose arrays :func:`_disjoint` can compare."""
    f = lw.fusions.get(op)
    if f is None:
        return False
    shape = tuple(tensor_of(op.result.type).shape)
    run = contiguous_run(lw, op.operands[0], None, shape)
    if run is not None and run != contiguous_run(lw, f.store.operands[0], None, shape):
        return False  # read element by element in the store's loop: not worth it
    if f.same_pointer:
        return True
    mine = _candidates(lw, op.operands[0])
    theirs = _candidates(lw, f.store.operands[0])
    return bool(mine) and bool(theirs) and not set(mine) & set(theirs)


def _disjoint(lw, loads: list, store: Operation):
    """i1: no array a deferred load of ``loads`` may read overlaps one ``store`` may write
    (byte spans ``[lo, hi)`` of the launch's arguments)."""
    b = lw.b
    ok = None
    for ld in loads:
        for i in _candidates(lw, ld.operands[0]):
            for j in _candidates(lw, store.operands[0]):
                _, lo_i, hi_i = lw.spans[i]
                _, lo_j, hi_j = lw.spans[j]
                apart = b.or_(b.icmp_unsigned("<=", hi_i, lo_j), b.icmp_unsigned("<=", hi_j, lo_i))
                ok = apart if ok is None else b.and_(ok, apart)
    return ok if ok is not None else ir.Constant(ir.IntType(1), 1)


@dataclass(frozen=True, eq=False)
class LoadReader:
    """How a tile load's element is read inside a loop (the copy into its scratch buffer,
    or the loop of the store a deferred load feeds): through the loop's run pointer when
    the loop walks the load's contiguous run at the same index (LLVM then sees a
    consecutive access and vectorises it), else through the element's own address.
    ``run``: the load's contiguous :class:`~.access.Run` or None."""

    run: Run | None

    def element(self, lw, e, tile, idx):
        """The LLVM value of load ``tile`` at ``idx`` in the loop body of ``e``."""
        ptr, mask, other = tile.operands
        st = storage_type(tile.elem)
        ctx = e.run_ctx
        b = lw.b
        saved = b.debug_metadata
        lw.set_loc(tile.op)  # the read keeps the load's source line
        if (self.run is not None and ctx is not None and ctx[0] == self.run
                and all(x is y for x, y in zip(ctx[1], idx, strict=True))):
            p = element_pointer(b, e, ptr, ctx[2], ctx[3], st)
        else:
            p = b.inttoptr(e.get(ptr, idx), ir.PointerType())
        v = _read(lw, e, p, mask, other, idx, tile.elem)
        b.debug_metadata = saved
        return v


def _zero(b, elem, st):
    return from_storage(b, ir.Constant(st, 0), elem)


def lower_store(lw, op: Operation) -> None:
    """``tt.store [ptr, value, mask?]``: one loop storing every active element (run by run
    for contiguous pointer tiles). Loads deferred into it (:mod:`.load_fusion`) are read in
    the same loop; where they need it, a run-time test sends launches whose arrays overlap
    to a copy of the loop that reads them from scratch buffers first."""
    b = lw.b
    ptr_v, val_v, mask_v = _operands(lw, op, 3)
    pt = ptr_v.type
    shape = tuple(pt.shape) if isinstance(pt, TensorType) else ()
    elem = pt.scalar.pointee
    ptr = lw.tile(ptr_v, shape)
    val = lw.tile(val_v, shape)
    mask = lw.tile(mask_v, shape) if mask_v is not None else None
    run = contiguous_run(lw, ptr_v, ptr, shape)
    if lw.options.bounds_check:
        check_access(lw, op, 1, ptr, mask, storage_size(elem), run)
        lw.set_loc(op)
    st = storage_type(elem)

    def emit(subst):
        def body(idx, start_idx=None, r=None):
            e = lw.elems()
            e.subst = subst
            if run is not None:
                e.run_ctx = (run, idx, start_idx, r)
                p = element_pointer(b, e, ptr, start_idx, r, st)
            else:
                p = b.inttoptr(e.get(ptr, idx), ir.PointerType())
            v = e.get(val, idx)
            if mask is not None:
                m = e.get(mask, idx)
                yes = lw.fn.append_basic_block("store.on")
                join = lw.fn.append_basic_block("store.join")
                b.cbranch(m, yes, join)
                b.position_at_end(yes)
            b.store(to_storage(b, v, elem), p)
            if mask is not None:
                b.branch(join)
                b.position_at_end(join)
        if run is not None:
            run_nest(b, shape, run, body)
        else:
            loop_nest(b, shape, body)

    checked = [f.load for f in lw.fused_into.get(op, ())
               if not f.same_pointer and isinstance(lw.env.get(f.load.result), Lazy)]
    if not checked:
        emit({})
        return
    fused = lw.fn.append_basic_block("store.fused")
    copied = lw.fn.append_basic_block("store.copied")
    done = lw.fn.append_basic_block("store.done")
    b.cbranch(_disjoint(lw, checked, op), fused, copied)
    b.position_at_end(fused)
    emit({})
    b.branch(done)
    b.position_at_end(copied)
    emit({id(t): _copy(lw, t) for t in (lw.env[ld.result] for ld in checked)})
    b.branch(done)
    b.position_at_end(done)


def _copy(lw, tile):
    """A scratch buffer holding load ``tile`` (a Lazy "load"), read run by run."""
    buf = lw.alloc(tile.shape, tile.elem)
    run = tile.param.run

    def body(idx, start_idx=None, r=None):
        e = lw.elems()
        if run is not None:
            e.run_ctx = (run, idx, start_idx, r)
        e.store(buf, idx, e.get(tile, idx))
    if run is not None:
        run_nest(lw.b, tile.shape, run, body)
    else:
        loop_nest(lw.b, tile.shape, body)
    return buf
