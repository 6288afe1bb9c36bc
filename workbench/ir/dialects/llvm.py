"""MLIR's ``llvm`` dialect op Triton 3.6 prints in ttir and ttgir: ``llvm.intr.assume``, what
``tl.assume(cond)`` of a scalar condition emits (``semantic.assume`` ->
``create_assume``). Passes read it as a fact (``tritongpu-fuse-nested-loops`` takes an
assumed ``ub > lb`` as a positive trip count); the CUDA backend passes it on to LLVM as
``llvm.assume``, the interpreter and the CPU backend ignore it."""
from __future__ import annotations

from .spec import op

SPECS = [
    # MLIR's LLVM_AssumeOp has no declared memory effects (unknown): it is never removed or
    # moved, which "write:io" gives here
    op("llvm.intr.assume", ["cond"], results=(), effects=("write:io",),
       format="$cond attr-dict `:` type($cond)",
       doc="the i1 condition holds (LLVM's llvm.assume; no code)"),
]
