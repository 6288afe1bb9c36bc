"""Step 3 of ``tritongpu-remove-layout-conversions``: move a conversion that stays above the
broadcast or extension that feeds it (a helper, not a pass).

A ``ttg.convert_layout`` left after backward rematerialisation often converts a value that a
``tt.broadcast``, ``tt.expand_dims`` or a widening cast (``arith.extf``/``extsi``/``extui``,
an up-casting ``tt.fp_to_fp``) made bigger than it needs to be. Attention's
``acc * alpha[:, None]`` is the example: ``alpha`` lives in a slice of the first dot's
``#mma``, the accumulator in the second dot's, and converting the 64x64 broadcast moves 64
times more data than converting the 64x1 column before the broadcast. For each conversion
(not to a ``#ttg.dot_op``):

1. the backward slice of its operand in the target layout, stopping at those ops
   (:func:`workbench.passes.remat.backward_slice` with ``stop``);
2. for each such op in it, the slice of its operand in the layout the op needs
   (``inferSrcEncoding``): when that can be computed again without conflicting with a layout
   already chosen, it joins the slice (no conversion needed there); otherwise the op is the
   place to convert. With more than one such op nothing changes (the conversion would be
   duplicated);
3. the conversion moves to that op's operand, the op is cloned in the target layout, and the
   rest of the slice is computed again in the target layout after it
   (:func:`workbench.passes.remat.rewrite_slice`).

Source: Triton 3.6 ``lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp``
(``LayoutRematerialization::hoistConvertOnTopOfExtOrBroadcast``, run by ``hoistConvert``
after the backward rematerialisation rounds).
"""
from __future__ import annotations

from ..ir.core import Operation
from ..layouts import DotOperandLayout
from .remat import backward_slice, can_rematerialise, infer_src, rewrite_slice
from .values import block_of, shaped_type, tensor_type

_EXT = frozenset({"arith.extsi", "arith.extui", "arith.extf", "tt.broadcast", "tt.expand_dims"})


def _bits(v) -> int:
    e = tensor_type(v).element
    return int(getattr(e, "width", 0) or {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(
        getattr(e, "name", ""), 8))


def is_ext_or_broadcast(op: Operation) -> bool:
    """Ops that make a tensor bigger (more elements or wider ones)."""
    if op.name in _EXT:
        return True
    return op.name == "tt.fp_to_fp" and _bits(op.operands[0]) < _bits(op.result)


def _ext_op(sl, num_warps: int, tpw: int):
    """The single op of the slice ``sl`` to convert before, after merging into ``sl`` the
    operands' slices of the others (step 2); None when there is none or several."""
    found = None
    for v in list(sl.values()):
        d = v.defining_op
        if d is None or not is_ext_or_broadcast(d):
            continue
        src = infer_src(d, sl.enc(v))
        if src is None:
            return None
        sub = backward_slice(d.operands[0], d, src, {})
        if sub is not None and can_rematerialise(sub, num_warps, tpw) and all(
                id(w) not in sl.layout or sl.enc(w) == sub.enc(w) for w in sub.values()):
            for w in sub.values():
                sl.update(w, sub.enc(w))
            continue
        if found is not None:
            return None
        found = d
    return found


def hoist_above_ext(cvt: Operation, num_warps: int, tpw: int = 32) -> bool:
    """Move ``cvt`` above the broadcast or extension feeding it (module docstring). Returns
    True when the IR changed (the old conversion is then without users)."""
    enc = shaped_type(cvt.result).encoding
    if isinstance(enc, DotOperandLayout) or not cvt.result.uses:
        return False
    sl = backward_slice(cvt.operands[0], cvt, enc, {}, stop=is_ext_or_broadcast)
    if sl is None or not can_rematerialise(sl, num_warps, tpw):
        return False
    ext = _ext_op(sl, num_warps, tpw)
    if ext is None:
        return False
    dst = sl.enc(ext.result)
    src = infer_src(ext, dst)
    if src is None:
        return False
    operand = ext.operands[0]
    new_cvt = Operation("ttg.convert_layout", [operand],
                        [tensor_type(operand).with_encoding(src)], loc=cvt.loc)
    new_ext = Operation(ext.name, [new_cvt.result], [tensor_type(ext.result).with_encoding(dst)],
                        dict(ext.attributes), loc=ext.loc)
    new_ext.result.name = ext.result.name
    block_of(ext).insert_before(ext, new_cvt)
    block_of(ext).insert_before(ext, new_ext)
    del sl.layout[id(ext.result)]
    rewrite_slice(sl, cvt, {}, {id(ext.result): new_ext.result})
    return True


def hoist_converts(func: Operation, num_warps: int, tpw: int = 32) -> int:
    """:func:`hoist_above_ext` for every conversion of ``func``, in program order; returns how
    many moved."""
    return sum(hoist_above_ext(op, num_warps, tpw) for op in list(func.walk())
               if op.name == "ttg.convert_layout" and op.parent is not None)


__all__ = ["hoist_converts", "hoist_above_ext", "is_ext_or_broadcast"]
