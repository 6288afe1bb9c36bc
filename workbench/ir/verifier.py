"""Check that IR is well formed; passes' tests run it between passes.

:func:`verify` raises :class:`VerificationError` for the first problem found, naming the op and
its location. What it checks comes from the op specs (:data:`workbench.ir.dialects.OPS`):
unknown op names, operand / result / region counts, required attributes and the kinds of
their values, the terminator each region must end with (and terminators only at the end of a
block), and each spec's ``verify`` hook (type rules: binary ops on equal types, compares to
``i1`` of the same shape, ``tt.load`` result = pointee, ``tt.addptr``,
``tt.splat``/``tt.broadcast``/``tt.expand_dims`` shapes, ``tt.reduce`` region arguments and
results, ``scf.for``/``scf.if`` yields against results). Structural checks are the verifier's
own: operands defined before use (dominance in our single-block structured regions: a value
is visible after its op in its block and inside later ops' regions) and intact use lists. In
ttgir modules (those with ``"ttg.num-warps"``) every tensor needs a layout, as Triton's
verifiers demand.
"""
from __future__ import annotations

from .core import Operation, Value
from .dialects import OPS
from .dialects.spec import ATTR_KINDS, OpSpec, VerificationError, fail
from .types import TensorType


class _Verifier:
    def __init__(self, module: Operation):
        self.ttgir = "ttg.num-warps" in module.attributes

    def block(self, block, scopes: list, owner: Operation, index: int) -> None:
        defined = {id(a) for a in block.args}
        scopes = scopes + [defined]
        for k, op in enumerate(block.ops):
            self.uses(op, block, scopes)
            spec = self.op(op)
            if "terminator" in spec.traits and k != len(block.ops) - 1:
                fail(op, "a terminator must be the last op of its block")
            for r_i, region in enumerate(op.regions):
                for b in region.blocks:
                    self.block(b, scopes, op, r_i)
            for r in op.results:
                defined.add(id(r))
        self.terminator(block, owner, index)

    def uses(self, op: Operation, block, scopes: list) -> None:
        if op.parent is not block:
            fail(op, "op's parent link does not point at the block holding it")
        for i, v in enumerate(op.operands):
            if not any(id(v) in s for s in scopes):
                fail(op, f"operand #{i} ({v.name or 'unnamed'}: {v.type}) is used before "
                         f"it is defined or is not visible here")
            if (op, i) not in v.uses:
                fail(op, f"operand #{i} is missing from its value's use list")

    @staticmethod
    def terminator(block, owner: Operation, index: int) -> None:
        spec = OPS.get(owner.name)
        if spec is None or index >= len(spec.terminators):
            return
        want = spec.terminators[index]
        if want.endswith("?"):  # may be empty when the op has no results (scf.if's else)
            want = want[:-1]
            if not block.ops and not owner.results:
                return
        last = block.ops[-1] if block.ops else None
        if last is None or last.name != want:
            fail(owner, f"region #{index} must end with '{want}'"
                        + (f", found '{last.name}'" if last is not None else " (it is empty)"))

    # per-op rules ---------------------------------------------------------------------------
    def op(self, op: Operation) -> OpSpec:
        spec = OPS.get(op.name)
        if spec is None:
            fail(op, "unknown op (not in workbench.ir.dialects.OPS)")
        self.counts(op, spec)
        self.attributes(op, spec)
        if self.ttgir:
            for v in list(op.operands) + list(op.results):
                if isinstance(v.type, TensorType) and v.type.shape and v.type.encoding is None:
                    fail(op, f"tensor {v.type} has no layout in a ttgir module")
        if spec.verify is not None:
            spec.verify(op, self)
        return spec

    @staticmethod
    def counts(op: Operation, spec: OpSpec) -> None:
        for what, names, n in (("operands", spec.operands, len(op.operands)),
                               ("results", spec.results, len(op.results))):
            req = sum(1 for o in names if not o.endswith("?") and not o.startswith("*"))
            opt = sum(1 for o in names if o.endswith("?"))
            var = any(o.startswith("*") for o in names)
            if n < req or (not var and n > req + opt):
                if what == "results" and not var and not opt:
                    fail(op, f"must have {req} result{'s' if req != 1 else ''}, has {n}"
                         if req else f"must have no results, has {n}")
                fail(op, f"has {n} {what}, expected "
                         f"{req}{'+' if var else ''}{f' to {req + opt}' if opt else ''}")
        if len(op.regions) != spec.regions:
            fail(op, f"must have {spec.regions} regions, has {len(op.regions)}")

    @staticmethod
    def attributes(op: Operation, spec: OpSpec) -> None:
        for attr in spec.attributes:
            value = op.attributes.get(attr.name)
            if value is None:
                if attr.required:
                    fail(op, f"missing '{attr.name}' attribute")
                continue
            if not ATTR_KINDS[attr.kind](value):
                fail(op, f"attribute '{attr.name}' = {value!r} is not a valid {attr.kind}")
            if attr.choices and value not in attr.choices:
                fail(op, f"attribute '{attr.name}' = {value!r} is not one of "
                         f"{', '.join(attr.choices)}")


def verify(module: Operation) -> None:
    """Check ``module`` (a ``builtin.module``); returns None or raises VerificationError
    ``"'<op>' at file:line:col: <problem>"`` for the first problem found."""
    if module.name != "builtin.module":
        raise VerificationError(f"expected a builtin.module, got '{module.name}'", module)
    v = _Verifier(module)
    v.block(module.regions[0].blocks[0], [], module, 0)


__all__ = ["verify", "VerificationError", "Value"]
