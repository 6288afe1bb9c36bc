"""More of the tl surface (Triton's ``language/core.py``, ``standard.py``): argmax/argmin, xor_sum,
reduce and associative_scan with a @jit combine function, cumsum/cumprod, dot, trans/permute,
atomics.
"""
from __future__ import annotations

from . import dtypes as dt
from .core import LanguageError, PyScalar, builtin, tensor
from .fp8casts import fp8_dot_operands
from .reductions import reduce_tiles, reduce_with_indices, scan_tiles
from .semantic import ir_type, unwrap


def _tile(x, sem, what):
    x = unwrap(x)
    if not isinstance(x, tensor) or not x.shape:
        raise LanguageError(f"tl.{what} needs a tile, got {x!r}")
    return x


def _argreduce(which, input, axis, tie_break_left, keep_dims, sem):
    x = _tile(input, sem, "arg" + which)
    if unwrap(axis) is None:
        raise LanguageError(f"tl.arg{which} needs an axis")
    return reduce_with_indices(x, axis, which, tie_break_left, keep_dims, sem)[1]


@builtin
def argmax(input, axis, tie_break_left=True, keep_dims=False, _semantic=None):
    """int32 index of the maximum along ``axis`` (ties: the smallest index)."""
    return _argreduce("max", input, axis, tie_break_left, keep_dims, _semantic)


@builtin
def argmin(input, axis, tie_break_left=True, keep_dims=False, _semantic=None):
    """int32 index of the minimum along ``axis`` (ties: the smallest index)."""
    return _argreduce("min", input, axis, tie_break_left, keep_dims, _semantic)


@builtin
def xor_sum(input, axis=None, keep_dims=False, _semantic=None):
    """Bitwise xor of the elements along ``axis``; integer tiles only."""
    x = _tile(input, _semantic, "xor_sum")
    if not x.dtype.is_int():
        raise LanguageError(f"xor_sum only supports integers, got {x.dtype}")
    return reduce_tiles(x, axis, lambda s, a, b: s.bitwise("xor", a, b), _semantic, keep_dims)


def _jit_combine(fn, sem):
    if sem.call_jit is None:
        raise LanguageError("combine functions need the frontend")
    fn = unwrap(fn)
    if not getattr(fn, "__workbench_jit__", False):
        raise LanguageError(f"combine_fn must be a @jit function taking two values per input "
                            f"and returning their combination, got {fn!r}")

    def combine(s, *args):
        return s.call_jit(fn, list(args))
    return combine


@builtin
def reduce(input, axis, combine_fn, keep_dims=False, _semantic=None):
    """Reduce ``input`` (a tile or tuple of tiles) with the @jit ``combine_fn``."""
    return reduce_tiles(unwrap(input), axis, _jit_combine(unwrap(combine_fn), _semantic),
                        _semantic, keep_dims)


@builtin
def associative_scan(input, axis, combine_fn, reverse=False, _semantic=None):
    """Inclusive scan of ``input`` with the @jit ``combine_fn`` (``tt.scan``)."""
    return scan_tiles(unwrap(input), axis, _jit_combine(unwrap(combine_fn), _semantic),
                      _semantic, reverse)


def _bf16_to_fp32(x, sem):
    return sem.cast(x, dt.float32) if x.dtype == dt.bfloat16 else x


def _acc_dtype(x, dtype):
    dtype = unwrap(dtype)
    if dtype is None and x.dtype.is_int() and x.dtype.int_bitwidth < 32:
        dtype = dt.int32 if x.dtype.is_int_signed() else dt.uint32
    return dtype


@builtin
def cumsum(input, axis=0, reverse=False, dtype=None, _semantic=None):
    """Inclusive prefix sum along ``axis``: bf16 is summed in fp32, ints narrower than 32
    bits in int32/uint32 (Triton's ``language/standard.py``)."""
    x = _bf16_to_fp32(_tile(input, _semantic, "cumsum"), _semantic)
    d = _acc_dtype(x, dtype)
    if d is not None:
        x = _semantic.cast(x, d)
    return scan_tiles(x, axis, lambda s, a, b: s.add(a, b), _semantic, reverse)


@builtin
def cumprod(input, axis=0, reverse=False, dtype=None, _semantic=None):
    """Inclusive prefix product along ``axis`` (bf16 multiplied in fp32, as Triton does)."""
    x = _bf16_to_fp32(_tile(input, _semantic, "cumprod"), _semantic)
    d = _acc_dtype(x, dtype)
    if d is not None:
        x = _semantic.cast(x, d)
    return scan_tiles(x, axis, lambda s, a, b: s.mul(a, b), _semantic, reverse)


@builtin
def permute(input, *dims, _semantic=None):
    """Permute the dims of ``input`` (``tt.trans {order}``)."""
    x = _tile(input, _semantic, "permute")
    if len(dims) == 1 and isinstance(unwrap(dims[0]), (tuple, list)):
        dims = unwrap(dims[0])
    order = [unwrap(d) for d in dims]
    if sorted(order) != list(range(len(x.shape))):
        raise LanguageError(f"permute needs a permutation of {list(range(len(x.shape)))}, "
                            f"got {order}")
    shape = tuple(x.shape[d] for d in order)
    return _semantic._op("tt.trans", [x], x.dtype, shape, {"order": order})


@builtin
def trans(input, *dims, _semantic=None):
    """Transpose: no dims swaps the last two axes; else like :func:`permute`."""
    x = _tile(input, _semantic, "trans")
    if not dims:
        n = len(x.shape)
        if n < 2:
            return x
        dims = list(range(n - 2)) + [n - 1, n - 2]
    return permute(x, *dims, _semantic=_semantic)


_DOT_DTYPES = (dt.int8, dt.uint8, dt.float16, dt.bfloat16, dt.float32, dt.float64)


def _check_dot_dtypes(a, b) -> None:
    """Triton 3.6's operand rule (``language/semantic.py``, ``dot``): fp8 with fp8, else both
    operands one of int8, uint8, fp16, bf16, fp32, fp64 and the same dtype."""
    if any(getattr(d, "is_fp8", lambda: False)() for d in (a, b)):
        return                  # fp8 with fp8, or the fp8 rule's own message (fp8_dot_operands)
    for side, d in (("first", a), ("second", b)):
        if d not in _DOT_DTYPES:
            raise LanguageError(f"tl.dot does not take {d} operands ({side} operand); it takes "
                                "int8, uint8, fp16, bf16, fp32, fp64 (or fp8 with fp8)")
    if a != b:
        raise LanguageError(f"tl.dot operands must have one dtype, got {a} and {b}")


@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None,
        max_num_imprecise_acc=None, out_dtype=dt.float32, _semantic=None):
    """``acc + input @ other`` (``tt.dot``) on 2-D tiles (M x K @ K x N) or batched 3-D tiles
    (B x M x K @ B x K x N -> B x M x N, one matrix product per batch index, as Triton 3.6's
    ``semantic.dot`` allows); rank 4 and up (batch dims ``B1 x .. x Bj``) is reshaped to one
    batch dim of their product and back, as Triton 3.6's ``core.dot`` does. int8 -> int32,
    floats -> ``out_dtype`` (fp32 default). fp32
    inputs default to ``input_precision="tf32"`` (Triton's ``tl.dot``). Raises LanguageError
    for other ranks, mismatched inner or batch extents, K < 16 (32 for 8-bit inputs) or an
    accumulator of another shape."""
    sem = _semantic
    a, b = _tile(input, sem, "dot"), _tile(other, sem, "dot")
    rank = len(a.shape)
    if rank >= 4 and len(b.shape) == rank and a.shape[:-2] == b.shape[:-2]:
        return _batched_dot(sem, a, b, acc, input_precision, allow_tf32,
                            max_num_imprecise_acc, out_dtype)
    if rank < 2 or len(b.shape) != rank:
        raise LanguageError(f"tl.dot needs two tiles of one rank >= 2, got {list(a.shape)} and "
                            f"{list(b.shape)}")
    if a.shape[-1] != b.shape[-2]:
        raise LanguageError(f"tl.dot inner dimensions differ: {list(a.shape)} @ {list(b.shape)}")
    if rank >= 3 and a.shape[:-2] != b.shape[:-2]:
        raise LanguageError(f"tl.dot batch dimensions differ: {list(a.shape)} @ "
                            f"{list(b.shape)}")
    _check_dot_dtypes(a.dtype, b.dtype)
    k = a.shape[-1]
    min_k = 32 if min(a.dtype.primitive_bitwidth, b.dtype.primitive_bitwidth) == 8 else 16
    if k < min_k:  # Triton's words (language/semantic.py, dot's min_dot_size check)
        raise LanguageError(f"Input shapes should have M >= 1, N >= 1 and K >= {min_k} "
                            f"(tl.dot on tensor cores; 8-bit inputs need K >= 32), got K = {k}")
    imprecise = 0
    if a.dtype.is_fp8() or b.dtype.is_fp8():
        a, b, imprecise = fp8_dot_operands(sem, a, b, k, max_num_imprecise_acc)
    elif a.dtype != b.dtype:
        raise LanguageError(f"tl.dot operands must have one dtype, got {a.dtype} and {b.dtype}")
    prec = _precision(input_precision, allow_tf32)
    out_dtype = unwrap(out_dtype)
    ret = dt.int32 if a.dtype.is_int() else (
        out_dtype if a.dtype == dt.float16 or a.dtype.is_fp8() else dt.float32)
    if a.dtype == dt.float64:
        ret = dt.float64
    shape = a.shape[:-1] + (b.shape[-1],)
    acc = unwrap(acc)
    c = sem.constant(0, ret, shape) if acc is None else sem.to_tensor(acc)
    if c.shape != shape:
        raise LanguageError(f"tl.dot accumulator has shape {list(c.shape)}, expected "
                            f"{list(shape)}")
    if acc is not None:
        if c.dtype.is_floating() != ret.is_floating():
            raise LanguageError(f"tl.dot accumulator of type {c.dtype} cannot hold the product "
                                f"of {a.dtype} tiles (expected {ret})",
                                f"accumulate in {ret}: acc = tl.zeros(..., dtype=tl.{ret.name})")
        ret = c.dtype
    return sem._op("tt.dot", [a, b, c], ret, shape,
                   {"inputPrecision": prec, "maxNumImpreciseAcc": imprecise})


def _batched_dot(sem, a, b, acc, input_precision, allow_tf32, max_num_imprecise_acc,
                 out_dtype):
    """A dot of rank >= 4: the batch dims folded into one (``tt.reshape``, no reordering),
    a 3-D dot, the result unfolded."""
    from .shapes import reshape
    batch = 1
    for s in a.shape[:-2]:
        batch *= s
    c_shape = a.shape[:-1] + (b.shape[-1],)

    def fold(x, tail):
        return reshape(x, (batch,) + tuple(tail), can_reorder=False, _semantic=sem)
    acc = unwrap(acc)
    if acc is not None:
        acc = sem.to_tensor(acc)
        if tuple(acc.shape) != c_shape:
            raise LanguageError(f"tl.dot accumulator has shape {list(acc.shape)}, expected "
                                f"{list(c_shape)}")
        acc = fold(acc, c_shape[-2:])
    res = dot(fold(a, a.shape[-2:]), fold(b, b.shape[-2:]), acc, input_precision, allow_tf32,
              max_num_imprecise_acc, out_dtype, _semantic=sem)
    return reshape(res, c_shape, can_reorder=False, _semantic=sem)


def _precision(input_precision, allow_tf32) -> str:
    if unwrap(allow_tf32) is not None and unwrap(input_precision) is not None:
        raise LanguageError("pass only one of input_precision and allow_tf32")
    prec = unwrap(input_precision) or ("ieee" if unwrap(allow_tf32) is False else "tf32")
    if prec not in ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6"):
        raise LanguageError(f"unknown input_precision {prec!r}")
    return prec


def _atomic(op_name, pointer, val, mask, sem_, scope, sem):
    pointer = sem.to_tensor(unwrap(pointer))
    if not pointer.dtype.is_ptr():
        raise LanguageError(f"atomic_{op_name} needs a pointer, got {pointer.dtype!r}")
    if pointer.dtype.is_const():
        raise LanguageError("Cannot store to a constant pointer",
                            f"atomic_{op_name} writes; the pointer comes from a parameter "
                            "annotated tl.const")
    elt = pointer.dtype.element_ty
    val = unwrap(val)
    val = sem.broadcast_to_shape(
        sem.cast(val, elt) if isinstance(val, tensor) else PyScalar(val, elt), pointer.shape)
    mask = unwrap(mask)
    if mask is None:
        mask = PyScalar(True, dt.int1)
    elif not sem.to_tensor(mask).dtype.is_bool():
        raise LanguageError(f"mask must have boolean scalar type, got {sem.to_tensor(mask).dtype}",
                            "build it from a comparison, e.g. mask = offs < n")
    mask = sem.broadcast_to_shape(mask, pointer.shape)
    semantics = unwrap(sem_) or "acq_rel"
    scope = unwrap(scope) or "gpu"
    if semantics not in ("acquire", "release", "acq_rel", "relaxed"):
        raise LanguageError(f"unknown memory semantics {semantics!r}")
    if scope not in ("gpu", "cta", "sys"):
        raise LanguageError(f"unknown scope {scope!r}")
    return pointer, val, mask, {"sem": semantics, "scope": scope}


def _rmw(kind, pointer, val, mask, sem_, scope, sem):
    pointer, val, mask, attrs = _atomic(kind, pointer, val, mask, sem_, scope, sem)
    d = val.dtype
    if (d.is_int() and d.primitive_bitwidth < 32) or d.is_fp8():
        raise LanguageError(f"atomic_{kind} does not support {d}")
    if kind in ("max", "min") and d.is_floating():
        if d not in (dt.float32, dt.float64):
            raise LanguageError(f"atomic_{kind} on floats supports fp32/fp64, got {d}")
        # as Triton's float atomic_max/atomic_min (semantic.py): signed-int max/min for
        # values whose sign bit is clear, unsigned min/max for the others (-0.0 and negative
        # NaNs included), chosen per element by the sign bit (``_signbit``: shift, then != 0)
        it, ut = (dt.int32, dt.uint32) if d == dt.float32 else (dt.int64, dt.uint64)
        bits = sem.bitcast(val, it)
        ip = sem.bitcast(pointer, dt.pointer_type(it))  # in Triton's order
        sign = sem.bitwise("rshift", sem.bitcast(val, ut), PyScalar(ut.primitive_bitwidth - 1, ut))
        neg = sem.cast(sign, dt.int1)
        pos = sem.logical_not(neg)
        up = sem.bitcast(pointer, dt.pointer_type(ut))
        pos_op = "max" if kind == "max" else "min"
        neg_op = "umin" if kind == "max" else "umax"
        r1 = _emit_rmw(pos_op, ip, bits, sem.logical("and", mask, pos), attrs, sem, it)
        r2 = _emit_rmw(neg_op, up, sem.bitcast(bits, ut),
                       sem.logical("and", mask, neg), attrs, sem, ut)
        return sem.bitcast(sem.where(pos, r1, sem.bitcast(r2, it)), d)
    op = {"add": "fadd" if d.is_floating() else "add", "and": "and", "or": "or", "xor": "xor",
          "xchg": "exch", "max": "max" if d.is_int_signed() else "umax",
          "min": "min" if d.is_int_signed() else "umin"}[kind]
    if kind in ("and", "or", "xor") and not d.is_int():
        raise LanguageError(f"atomic_{kind} needs integers, got {d}")
    return _emit_rmw(op, pointer, val, mask, attrs, sem, d)


def _emit_rmw(op, pointer, val, mask, attrs, sem, d):
    return sem._op("tt.atomic_rmw", [pointer, val, mask], d, pointer.shape,
                   dict(attrs, atomic_rmw_op=op))


def _make_rmw(kind):
    @builtin
    def f(pointer, val, mask=None, sem=None, scope=None, _semantic=None):
        return _rmw(kind, pointer, val, mask, sem, scope, _semantic)
    f.__name__ = f.__qualname__ = "atomic_" + kind
    f.__doc__ = (f"Atomic {kind} of ``val`` into ``*pointer`` where ``mask``; returns the old "
                 "values (``tt.atomic_rmw``).")
    return f


atomic_add = _make_rmw("add")
atomic_max = _make_rmw("max")
atomic_min = _make_rmw("min")
atomic_and = _make_rmw("and")
atomic_or = _make_rmw("or")
atomic_xor = _make_rmw("xor")
atomic_xchg = _make_rmw("xchg")


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None, _semantic=None):
    """Atomic compare-and-swap: where ``*pointer == cmp`` store ``val``; returns the old
    values (``tt.atomic_cas``; 16/32/64-bit elements)."""
    s = _semantic
    pointer, val, _, attrs = _atomic("cas", pointer, val, None, sem, scope, s)
    if val.dtype.primitive_bitwidth < 16:
        raise LanguageError(f"atomic_cas needs 16, 32 or 64-bit elements, got {val.dtype}")
    cmp = unwrap(cmp)
    cmp = s.broadcast_to_shape(s.cast(cmp, val.dtype) if isinstance(cmp, tensor)
                               else PyScalar(cmp, val.dtype), pointer.shape)
    op = s.builder.create("tt.atomic_cas", [pointer.handle, cmp.handle, val.handle],
                          [ir_type(val.dtype, pointer.shape)], attrs)
    return s.wrap(op.result, val.dtype, pointer.shape)
