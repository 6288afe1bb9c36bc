"""``tt.atomic_rmw`` and ``tt.atomic_cas`` in the CPU lowering: real LLVM atomics.

Programs of one grid run on several threads at once, so every element of an atomic op is one
hardware atomic instruction (``atomicrmw`` / ``cmpxchg``, x86 ``lock`` prefixed) on the
element's address. Elements of one tile are applied in row-major index order, so duplicate
addresses inside a tile see each other's updates in that order (as the interpreter does).
Masked-off elements touch no memory and return 0.

``atomic_rmw_op`` spellings (those of the frontend and the interpreter): ``add``, ``fadd``,
``max``/``min`` (signed ints; floats), ``umax``/``umin``, ``and``, ``or``, ``xor``, ``xchg``
(also ``exch``), ``fmax``/``fmin``. Integer ops and float ``fadd``/``xchg`` map to one
``atomicrmw``; float max/min (NaN-propagating, as ``np.maximum``; the frontend itself lowers
``tl.atomic_max`` on floats to integer max/umin per sign, reference section 1.11) and every
bf16 op (bf16 lives in memory as ``i16``) use a ``cmpxchg`` loop. ``tt.atomic_cas`` compares
bit patterns (floats through their integer view), like PTX ``atom.cas.b32``.

Memory semantics (``sem``): ``relaxed`` -> LLVM ``monotonic``, ``acquire``, ``release``,
``acq_rel`` (default); a compare-exchange fails with ``acquire`` (or ``monotonic`` for
``relaxed``/``release``). ``scope`` does not matter on the host (one coherent memory).
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.core import Operation
from ...ir.types import FloatType, IntType, TensorType
from . import memory
from .irtypes import pointee
from .llvmtypes import (
    DOUBLE,
    FLOAT,
    HALF,
    PTR,
    from_storage,
    is_bf16,
    storage_size,
    storage_type,
    to_storage,
    value_type,
)
from .tiles import loop_nest

_ORDER = {"relaxed": "monotonic", "monotonic": "monotonic", "acquire": "acquire",
          "release": "release", "acq_rel": "acq_rel", "seq_cst": "seq_cst"}
_FAIL = {"monotonic": "monotonic", "acquire": "acquire", "release": "monotonic",
         "acq_rel": "acquire", "seq_cst": "seq_cst"}
_INT_OPS = {"add": "add", "and": "and", "or": "or", "xor": "xor", "max": "max", "min": "min",
            "umax": "umax", "umin": "umin", "xchg": "xchg", "exch": "xchg"}


def _ordering(op: Operation) -> str:
    sem = str(op.attributes.get("sem") or "acq_rel").lower()
    if sem not in _ORDER:
        raise UnsupportedError(f"unknown atomic memory semantics {sem!r}", op.loc)
    return _ORDER[sem]


def _bits_type(elem) -> ir.IntType:
    """The integer type with the bits of one stored element (for cmpxchg)."""
    return ir.IntType(8 * storage_size(elem))


def _to_bits(b, v, elem):
    s = to_storage(b, v, elem)
    return s if isinstance(s.type, ir.IntType) else b.bitcast(s, _bits_type(elem))


def _from_bits(b, v, elem):
    st = storage_type(elem)
    return from_storage(b, v if isinstance(st, ir.IntType) else b.bitcast(v, st), elem)


def _cas_loop(lw, p, elem, update, order):
    """``old = *p; *p = update(old)`` with a compare-exchange loop on the element's bits;
    returns ``old`` (an SSA value of IR type ``elem``)."""
    b = lw.b
    bt = _bits_type(elem)
    init = b.load_atomic(p, "monotonic", storage_size(elem), typ=bt)
    pre = b.block
    loop = lw.fn.append_basic_block("atomic.retry")
    done = lw.fn.append_basic_block("atomic.done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(bt)
    old.add_incoming(init, pre)
    new = _to_bits(b, update(_from_bits(b, old, elem)), elem)
    pair = b.cmpxchg(p, old, new, order, _FAIL[order])
    seen, ok = b.extract_value(pair, 0), b.extract_value(pair, 1)
    old.add_incoming(seen, b.block)
    b.cbranch(ok, done, loop)
    b.position_at_end(done)
    return _from_bits(b, seen, elem)


def _float_update(lw, kind, elem, val):
    b = lw.b
    vt = value_type(elem)
    name = {"fadd": None, "add": None, "max": "llvm.maximum", "fmax": "llvm.maximum",
            "min": "llvm.minimum", "fmin": "llvm.minimum"}[kind]
    if name is None:
        return lambda old: b.fadd(old, val)
    fn = lw.m.declare_intrinsic(name, [vt], ir.FunctionType(vt, [vt, vt]))
    return lambda old: b.call(fn, [old, val])


def _rmw_one(lw, kind: str, elem, p, val, order):
    """One element: returns the old value."""
    b = lw.b
    if kind in ("xchg", "exch"):
        if is_bf16(elem):
            return _cas_loop(lw, p, elem, lambda old: val, order)
        return from_storage(b, b.atomic_rmw("xchg", p, to_storage(b, val, elem), order), elem)
    if isinstance(elem, FloatType):
        if kind in ("fadd", "add") and value_type(elem) in (HALF, FLOAT, DOUBLE) \
                and not is_bf16(elem):
            return b.atomic_rmw("fadd", p, val, order)
        if kind not in ("fadd", "add", "max", "min", "fmax", "fmin"):
            raise UnsupportedError(f"atomic {kind} on {elem}")
        return _cas_loop(lw, p, elem, _float_update(lw, kind, elem, val), order)
    if isinstance(elem, IntType) and elem.width >= 8 and kind in _INT_OPS:
        return b.atomic_rmw(_INT_OPS[kind], p, val, order)
    raise UnsupportedError(f"atomic {kind} on {elem}")


def _elementwise_atomic(lw, op: Operation, operands: list, mask_v, one) -> None:
    """Shared driver: bounds check, then one ``one(p, *values)`` per active element in index
    order, results (old values) into a buffer or an SSA scalar."""
    b = lw.b
    rt = op.result.type if op.results else operands[0].type
    shape = tuple(rt.shape) if isinstance(rt, TensorType) else ()
    elem = pointee(op.operands[0].type)
    ptr = lw.tile(op.operands[0], shape)
    vals = [lw.tile(v, shape) for v in operands]
    mask = lw.tile(mask_v, shape) if mask_v is not None else None
    if lw.options.bounds_check:
        memory.check_access(lw, op, 2, ptr, mask, storage_size(elem))
        lw.set_loc(op)
    has_result = bool(op.results)
    st = storage_type(elem)
    out = None
    if has_result:
        out = lw.alloc(shape, elem) if shape else lw.entry_alloca(st)

    def body(idx):
        e = lw.elems()
        p = b.inttoptr(e.get(ptr, idx), PTR)
        xs = [e.get(t, idx) for t in vals]
        if mask is not None:
            m = e.get(mask, idx)
            # the masked-off result, made before the branch: for bf16 it takes instructions,
            # which must dominate the join's phi
            zero = from_storage(b, ir.Constant(st, 0), elem)
            old = memory.guarded(lw, m, lambda: one(p, *xs), zero, "atomic")
        else:
            old = one(p, *xs)
        if has_result:
            if shape:
                e.store(out, idx, old)
            else:
                b.store(to_storage(b, old, elem), out)
    loop_nest(b, shape, body)
    if has_result:
        lw.env[op.result] = out if shape else from_storage(b, b.load(out, typ=st), elem)


def lower_atomic_rmw(lw, op: Operation) -> None:
    """``tt.atomic_rmw [ptr, val, mask?] {atomic_rmw_op, sem, scope}`` -> old values."""
    kind = str(op.attributes.get("atomic_rmw_op", "")).lower()
    elem = pointee(op.operands[0].type)
    order = _ordering(op)
    if isinstance(elem, IntType) and elem.width < 8:
        raise UnsupportedError(f"atomic {kind} on {elem} is not supported", op.loc)
    mask_v = op.operands[2] if len(op.operands) > 2 else None

    def one(p, val):
        try:
            return _rmw_one(lw, kind, elem, p, val, order)
        except UnsupportedError as exc:
            raise UnsupportedError(f"the CPU backend does not support {exc.reason}",
                                   op.loc) from None
    _elementwise_atomic(lw, op, [op.operands[1]], mask_v, one)


def lower_atomic_cas(lw, op: Operation) -> None:
    """``tt.atomic_cas [ptr, cmp, val] {sem, scope}``: where ``*ptr == cmp`` (bitwise) store
    ``val``; returns the old values."""
    b = lw.b
    elem = pointee(op.operands[0].type)
    order = _ordering(op)

    def one(p, cmp, val):
        pair = b.cmpxchg(p, _to_bits(b, cmp, elem), _to_bits(b, val, elem), order,
                         _FAIL[order])
        return _from_bits(b, b.extract_value(pair, 0), elem)
    _elementwise_atomic(lw, op, [op.operands[1], op.operands[2]], None, one)
