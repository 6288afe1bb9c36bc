"""``tritongpu-fuse-nested-loops``: ``tl.range(..., flatten=True)`` turns a loop nest into one
loop (Triton 3.6 ``lib/Dialect/TritonGPU/Transforms/FuseNestedLoops.cpp``).

A nest is an ``scf.for`` carrying ``tt.flatten`` whose body holds exactly one ``scf.for``
(the inner loop, itself without loops) between a prologue and an epilogue::

    for i in range(lb_i, ub_i, step_i):          # tt.flatten
        prologue(i)
        for j in range(lb_j, ub_j, step_j):      # bounds computable before the nest
            body(i, j)
        epilogue(i)

With ``len_i``, ``len_j`` the trip counts (``(ub - lb + step - 1) / step``, steps > 0) and
``inner_len = max(1, len_j)`` it becomes::

    if len_j <= 0:                                # the nest without its inner loop
        for i ...: prologue(i); epilogue(i)
    else:
        T = 0; i = lb_i - step_i
        for _ in range(len_i * inner_len):
            if T == 0: i += step_i; prologue(i); j = lb_j      # scf.if, results carried
            body(i, j); j += step_j                            # the inner body, inlined
            if T == inner_len - 1: epilogue(i)                  # scf.if
            T = 0 if T == inner_len - 1 else T + 1

Values flow as Triton carries them: the prologue's results used later and the inner loop's
carried values become iter args of the fused loop (zero, or a null pointer, until first
written); an inner init defined before the nest (the accumulator's ``tl.zeros``, hoisted
first as Triton's ``moveLoopInvariantCode`` does) is carried once and restarts with
``arith.select %last, %init, %value``. Unlike Triton, ``T``, ``i`` and ``j`` are derived from
the fused induction variable ``t`` (``T = t % inner_len``, ``i = lb_i + (t / inner_len) *
step_i``, ``j = lb_j + T * step_j``) instead of carried, and the prologue's pure scalar ops
run every iteration: the tile coordinates of a TMA load are then functions of ``t``, and
``tritongpu-pipeline`` (:mod:`.pipeline_tma`) issues the loads of the next tile while the
current one finishes, as Triton's scheduler does. Before fusing, pure prologue ops used only
after the inner loop move into the epilogue (Triton's ``optimizeEpilogueDependencies``),
and the inner loop's bounds are hoisted before the nest (Triton's
``speculateInnerLoopLength``: the inner body then always runs in the fused loop,
``ttg.must-execute``). As in Triton, a ``tl.assume(ub > lb)`` on the inner loop's bounds
(``llvm.intr.assume``, Triton's ``matchPositiveTripCount``) makes the inner loop
``ttg.must-execute`` without that guard; inner bounds that then depend on the outer
induction variable are fused as Triton fuses them, with a length loop and ``T``, ``i``,
``j`` and the inner length carried (:mod:`.fuse_nested_dependent`). Without the assume such
nests are left alone (as Triton does), as are nests with dynamic or non-positive steps and
nests with more than one inner loop (Triton's ``shouldFuse``).

A nest whose inner loop computes a ``tt.dot`` from pointer loads (``tt.load``) is also left
alone while ``num_stages > 1``: their cp.async pipeline needs the unfused K loop here
(:attr:`FuseNestedLoops.notes` says so); descriptor loads (TMA) are pipelined in the fused
loop.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.attrs import UNIT
from ..ir.core import Operation, functions
from .fuse_nested_dependent import fusable, fuse_dependent, positive_trip_count
from .fuse_nested_prep import FLATTEN, MUST_EXECUTE, hoistable, inner_loop, sink_epilogue_only
from .fuse_nested_rewrite import _carried_types_ok, fuse_nest, fuse_one_level, hoist_invariants
from .manager import Pass
from .values import block_of


@dataclass
class FuseNestedLoops(Pass):
    """The ``tritongpu-fuse-nested-loops`` pass (module docstring). ``num_stages``: the
    pipeliner's stages (a nest with a pipelinable dot is left alone when > 1)."""

    name = "tritongpu-fuse-nested-loops"
    num_stages: int = 3
    notes: list = field(default_factory=list, compare=False, repr=False)

    def run(self, module: Operation, ctx=None) -> None:
        self.notes = []
        for func in functions(module):
            for op in list(func.walk()):
                if op.name != "scf.for" or FLATTEN not in op.attributes:
                    continue
                inner = inner_loop(op)
                if inner is None:
                    continue
                if self.num_stages > 1 and _pipelined_dot(inner):
                    self.notes.append(
                        "flatten=True not applied: the inner loop computes a dot from pointer "
                        "loads, which are software-pipelined in the inner loop instead (this "
                        "workbench pipelines a flattened nest only for tensor descriptor "
                        "loads).")
                    continue
                hoist_invariants(op, inner)
                sink_epilogue_only(op, inner)
                if positive_trip_count(inner):
                    if fuse_assumed(op, inner):
                        continue
                fuse_nest(op, inner)

    @property
    def options(self) -> dict:
        return {"num_stages": self.num_stages}


def fuse_assumed(outer: Operation, inner: Operation) -> bool:
    """Fuse a nest whose inner loop is stated to run (``tl.assume(ub > lb)``, Triton's
    ``matchPositiveTripCount``: ``ttg.must-execute`` without the guard for an empty inner
    loop): bounds computable before the nest are hoisted and fused as always
    (:func:`~.fuse_nested_rewrite.fuse_one_level`), bounds that read the outer induction
    variable by :func:`~.fuse_nested_dependent.fuse_dependent`. False (nothing changed)
    when neither applies."""
    ops: list = []
    steps = [s.defining_op for s in (outer.operands[2], inner.operands[2])]
    if all(d is not None and d.name == "arith.constant" and
           isinstance(d.attributes.get("value"), int) and d.attributes["value"] > 0
           for d in steps) and hoistable(outer, inner.operands[:3], ops, set()) and \
            _carried_types_ok(outer, inner):
        for op in ops:
            op.parent.ops.remove(op)  # type: ignore[union-attr]
            block_of(outer).insert_before(outer, op)
        inner.attributes[MUST_EXECUTE] = UNIT
        fuse_one_level(outer, inner)
        return True
    sliced = fusable(outer, inner)
    if sliced is None:
        return False
    fuse_dependent(outer, inner, sliced)
    return True


def _pipelined_dot(inner: Operation) -> bool:
    """Whether the inner loop computes a dot from pointer loads (``tt.load``): the cp.async
    pipeliner takes those only in an unfused loop. Descriptor loads (TMA, sm_90) are
    pipelined in the fused loop too (their coordinates are scalars the fused loop
    recomputes)."""
    body = inner.regions[0].block
    return any(op.name in ("tt.dot", "ttng.warp_group_dot") for op in body.ops) and \
        any(op.name == "tt.load" for op in body.ops)


__all__ = ["FLATTEN", "MUST_EXECUTE", "FuseNestedLoops", "fuse_nest", "inner_loop"]
