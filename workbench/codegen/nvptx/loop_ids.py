"""Loop IDs of the loops we lower: each back edge carries ``llvm.loop`` metadata asking LLVM
not to unroll the loop by a run-time trip count (``llvm.loop.unroll.runtime.disable``, LLVM
LangRef "'llvm.loop'").

Triton runs LLVM's -O3 without a target machine (``optimize_module`` in its
``python/src/llvm.cc``), so the NVPTX cost model, which asks for run-time and partial
unrolling of small loops, never applies to its loops; ours goes through the NVPTX target
machine, and without this a small loop of unknown trip count (a row summed block by block)
became two copies of its body plus a remainder where Triton's PTX keeps one. Loops of known
trip count still unroll fully in both."""
from __future__ import annotations

from llvmlite import ir


def rolled_loop(module: ir.Module, branch) -> None:
    """Give the loop whose back edge is ``branch`` (an llvmlite branch instruction of
    ``module``) its own loop ID with ``llvm.loop.unroll.runtime.disable``."""
    opt = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.runtime.disable")])
    # a loop ID refers to itself (its first operand); a unique placeholder keeps llvmlite's
    # metadata cache from handing two loops one node
    loop_id = module.add_metadata([ir.MetaDataString(module, f"loop {len(module.metadata)}")])
    loop_id.operands = (loop_id, opt)
    branch.set_metadata("llvm.loop", loop_id)


__all__ = ["rolled_loop"]
