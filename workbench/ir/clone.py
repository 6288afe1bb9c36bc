"""Deep copies of IR ops and modules."""
from __future__ import annotations

from .core import Operation, module_op


def clone_op(op: Operation, vmap: dict, types: list | None = None) -> Operation:
    """A deep copy of ``op`` (regions, blocks, attributes; types and locations are immutable
    and shared) whose operands read ``vmap[id(value)]`` in place of a value mapped there (an
    unmapped value is read as it is, e.g. one defined outside the copied code). The copy's
    results and block arguments are added to ``vmap``. ``types``: result types of the copy
    (default: ``op``'s)."""
    new = Operation(op.name, [vmap.get(id(v), v) for v in op.operands],
                    [r.type for r in op.results] if types is None else types,
                    dict(op.attributes), len(op.regions), op.loc)
    for r, nr in zip(op.results, new.results, strict=True):
        nr.name = r.name
        vmap[id(r)] = nr
    for reg, nreg in zip(op.regions, new.regions, strict=True):
        for blk in reg.blocks:
            nblk = nreg.add_block()
            for a in blk.args:
                vmap[id(a)] = nblk.add_arg(a.type, a.name)
            for inner in blk.ops:
                nblk.append(clone_op(inner, vmap))
    return new


def clone_module(module: Operation) -> Operation:
    """A deep copy of an IR module (see :func:`clone_op`), so passes can run without changing
    the caller's ttir."""
    vmap: dict = {}
    out = module_op(dict(module.attributes), module.loc)
    for op in module.regions[0].block.ops:
        out.regions[0].block.append(clone_op(op, vmap))
    return out
