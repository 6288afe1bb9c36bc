"""Deep copies of IR modules."""
from __future__ import annotations

from .core import Operation, module_op


def clone_module(module: Operation) -> Operation:
    """A deep copy of an IR module (ops, blocks, values, attributes; types and locations are
    immutable and shared), so passes can run without changing the caller's ttir."""
    vmap: dict = {}

    def clone_op(op):
        new = Operation(op.name, [vmap[id(v)] for v in op.operands],
                        [r.type for r in op.results], dict(op.attributes), len(op.regions),
                        op.loc)
        for r, nr in zip(op.results, new.results, strict=True):
            nr.name = r.name
            vmap[id(r)] = nr
        for reg, nreg in zip(op.regions, new.regions, strict=True):
            for blk in reg.blocks:
                nblk = nreg.add_block()
                for a in blk.args:
                    vmap[id(a)] = nblk.add_arg(a.type, a.name)
                for inner in blk.ops:
                    nblk.append(clone_op(inner))
        return new

    out = module_op(dict(module.attributes), module.loc)
    for op in module.regions[0].block.ops:
        out.regions[0].block.append(clone_op(op))
    return out
