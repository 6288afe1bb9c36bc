"""Check that IR is well formed; passes' tests run it between passes.

:func:`verify` raises :class:`VerificationError` for the first problem found, naming the op and
its location: unknown op names (not in :data:`workbench.ir.dialects.OPS`), wrong operand /
result / region counts, operands not defined before use (dominance in our single-block
structured regions: a value is visible after its op in its block and inside later ops'
regions), broken use lists, missing or misplaced terminators, and type rules per op family
(binary ops on equal types, compares to ``i1`` of the same shape, ``tt.load`` result = pointee,
``tt.addptr``, ``tt.splat``/``tt.broadcast``/``tt.expand_dims`` shapes, ``tt.reduce`` region
arguments and results, ``scf.for``/``scf.if`` yields against results). In ttgir modules (those
with ``"ttg.num-warps"``) every tensor needs a layout, reduce results are slices of their input
layout and ``expand_dims`` goes from ``slice(axis, P)`` to ``P``, as Triton's verifiers demand.
"""
from __future__ import annotations

from .core import Operation, Value
from .dialects import BINARY_FLOAT, BINARY_INT, CASTS, CMPF_PREDICATES, CMPI_PREDICATES, OPS, \
    UNARY_MATH
from .types import FloatType, IntType, PointerType, TensorType, Type, like, shape_of

_TERMINATOR = {"tt.func": ("tt.return",), "scf.for": ("scf.yield",), "scf.if": ("scf.yield",),
               "tt.reduce": ("tt.reduce.return",), "tt.scan": ("tt.scan.return",),
               "scf.while": ("scf.condition", "scf.yield")}
_TERMINATORS = {"tt.return", "scf.yield", "scf.condition", "tt.reduce.return", "tt.scan.return"}


class VerificationError(Exception):
    """Malformed IR. ``op`` is the offending :class:`Operation` (or None)."""

    def __init__(self, message: str, op: Operation | None = None):
        self.op = op
        super().__init__(message)


def _fail(op: Operation, message: str):
    loc = op.loc
    where = "unknown location" if loc is None or loc.file == "unknown" else str(loc)
    raise VerificationError(f"'{op.name}' at {where}: {message}", op)


def _enc(t: Type):
    return t.encoding if isinstance(t, TensorType) else None


class _Verifier:
    def __init__(self, module: Operation):
        self.ttgir = "ttg.num-warps" in module.attributes

    def block(self, block, scopes: list, owner: Operation, index: int) -> None:
        names = _TERMINATOR.get(owner.name)
        defined = {id(a) for a in block.args}
        scopes = scopes + [defined]
        for k, op in enumerate(block.ops):
            if op.parent is not block:
                _fail(op, "op's parent link does not point at the block holding it")
            for i, v in enumerate(op.operands):
                if not any(id(v) in s for s in scopes):
                    _fail(op, f"operand #{i} ({v.name or 'unnamed'}: {v.type}) is used before "
                              f"it is defined or is not visible here")
                if (op, i) not in v.uses:
                    _fail(op, f"operand #{i} is missing from its value's use list")
            if op.name in _TERMINATORS and k != len(block.ops) - 1:
                _fail(op, "a terminator must be the last op of its block")
            self.op(op)
            for r_i, region in enumerate(op.regions):
                for b in region.blocks:
                    self.block(b, scopes, op, r_i)
            for r in op.results:
                defined.add(id(r))
        empty_else = owner.name == "scf.if" and index == 1 and not block.ops and not owner.results
        if names is not None and not empty_else:
            want = names[index] if owner.name == "scf.while" else names[0]
            last = block.ops[-1] if block.ops else None
            if last is None or last.name != want:
                _fail(owner, f"region #{index} must end with '{want}'"
                             + (f", found '{last.name}'" if last is not None else " (it is empty)"))

    # per-op rules ---------------------------------------------------------------------------
    def op(self, op: Operation) -> None:
        spec = OPS.get(op.name)
        if spec is None:
            _fail(op, "unknown op (not in workbench.ir.dialects.OPS)")
        self.counts(op, spec)
        if self.ttgir:
            for v in list(op.operands) + list(op.results):
                if isinstance(v.type, TensorType) and v.type.shape and v.type.encoding is None:
                    _fail(op, f"tensor {v.type} has no layout in a ttgir module")
        name = op.name
        short = name.split(".", 1)[1]
        if name.startswith("arith.") and short in BINARY_INT + BINARY_FLOAT:
            self.same_types(op)
            kind = IntType if short in BINARY_INT else FloatType
            if not isinstance(op.result.type.scalar, kind):
                _fail(op, f"expects {'integer' if kind is IntType else 'float'} operands, "
                          f"got {op.result.type}")
        elif (name.startswith("math.") and short in UNARY_MATH) or name == "math.fma":
            self.same_types(op)
        elif name in ("arith.cmpi", "arith.cmpf"):
            a, b = op.operands
            if a.type != b.type:
                _fail(op, f"operands have different types {a.type} and {b.type}")
            preds = CMPI_PREDICATES if name == "arith.cmpi" else CMPF_PREDICATES
            if op.attributes.get("predicate") not in preds:
                _fail(op, f"unknown predicate {op.attributes.get('predicate')!r}")
            if op.result.type != like(a.type, IntType(1)):
                _fail(op, f"result must be {like(a.type, IntType(1))}, got {op.result.type}")
        elif name == "arith.select":
            c, x, y = op.operands
            if not (x.type == y.type == op.result.type):
                _fail(op, f"branches {x.type}, {y.type} and result {op.result.type} differ")
            if c.type.scalar != IntType(1) or shape_of(c.type) not in ((), shape_of(x.type)):
                _fail(op, f"condition must be i1 of the same shape, got {c.type}")
        elif name.startswith("arith.") and short in CASTS:
            if shape_of(op.operands[0].type) != shape_of(op.result.type):
                _fail(op, f"cast changes the shape: {op.operands[0].type} to {op.result.type}")
        elif name == "arith.constant":
            if "value" not in op.attributes:
                _fail(op, "missing 'value' attribute")
        else:
            check = getattr(self, "_" + name.replace(".", "_"), None)
            if check is not None:
                check(op)

    def counts(self, op: Operation, spec) -> None:
        req = [o for o in spec.operands if not o.endswith("?") and not o.startswith("*")]
        opt = [o for o in spec.operands if o.endswith("?")]
        var = any(o.startswith("*") for o in spec.operands)
        n = len(op.operands)
        if n < len(req) or (not var and n > len(req) + len(opt)):
            _fail(op, f"has {n} operands, expected "
                      f"{len(req)}{'+' if var else ''}{f' to {len(req) + len(opt)}' if opt else ''}")
        if spec.results == "1" and len(op.results) != 1:
            _fail(op, f"must have 1 result, has {len(op.results)}")
        if spec.results == "0" and op.results:
            _fail(op, f"must have no results, has {len(op.results)}")
        if len(op.regions) != spec.regions:
            _fail(op, f"must have {spec.regions} regions, has {len(op.regions)}")

    def same_types(self, op: Operation) -> None:
        t = op.result.type
        for i, v in enumerate(op.operands):
            if v.type != t:
                _fail(op, f"operand #{i} has type {v.type} but the result has {t}")

    # tt ops ----------------------------------------------------------------------------------
    def _tt_splat(self, op):
        src, t = op.operands[0].type, op.result.type
        if isinstance(src, TensorType) or not isinstance(t, TensorType) or t.element != src:
            _fail(op, f"splats a scalar to a tensor of it; got {src} -> {t}")

    def _tt_broadcast(self, op):
        s, t = op.operands[0].type, op.result.type
        ok = (isinstance(s, TensorType) and isinstance(t, TensorType) and s.rank == t.rank
              and s.element == t.element and all(a in (1, b) for a, b in zip(s.shape, t.shape)))
        if not ok:
            _fail(op, f"can only grow size-1 dims of the same rank and element; {s} -> {t}")
        if self.ttgir and s.encoding != t.encoding:
            _fail(op, f"keeps the layout; {s} -> {t}")

    def _tt_expand_dims(self, op):
        s, t = op.operands[0].type, op.result.type
        axis = op.attributes.get("axis")
        shape = list(shape_of(s))
        if not isinstance(axis, int) or not 0 <= axis <= len(shape):
            _fail(op, f"axis {axis!r} out of range for {s}")
        shape.insert(axis, 1)
        if not isinstance(t, TensorType) or tuple(shape) != t.shape or s.scalar != t.element:
            _fail(op, f"result must be {tuple(shape)} of {s.scalar}, got {t}")
        if self.ttgir:
            se = _enc(s)
            if getattr(se, "dim", None) != axis or getattr(se, "parent", None) != t.encoding:
                _fail(op, f"operand layout must be #ttg.slice<{{dim = {axis}, parent = <result "
                          f"layout>}}>; {s} -> {t}")

    def _tt_addptr(self, op):
        p, o = (v.type for v in op.operands)
        if not isinstance(p.scalar, PointerType) or not isinstance(o.scalar, IntType):
            _fail(op, f"adds an integer offset to a pointer; got {p} and {o}")
        if shape_of(p) != shape_of(o) or op.result.type != p:
            _fail(op, f"pointer {p}, offset {o} and result {op.result.type} must match in shape")

    def _tt_load(self, op):
        p = op.operands[0].type
        if not isinstance(p.scalar, PointerType):
            _fail(op, f"loads through a pointer, got {p}")
        want = like(p, p.scalar.pointee)
        if op.result.type != want:
            _fail(op, f"result must be {want} (the pointee of {p}), got {op.result.type}")
        self._mask(op, 1, p)
        if len(op.operands) > 2 and op.operands[2].type != want:
            _fail(op, f"'other' must be {want}, got {op.operands[2].type}")

    def _tt_store(self, op):
        p, v = op.operands[0].type, op.operands[1].type
        if not isinstance(p.scalar, PointerType) or v != like(p, p.scalar.pointee):
            _fail(op, f"stores {like(p, p.scalar.pointee) if isinstance(p.scalar, PointerType) else 'the pointee'}"
                      f" through {p}, got {v}")
        self._mask(op, 2, p)

    def _mask(self, op, i, p):
        if len(op.operands) > i:
            m = op.operands[i].type
            if m.scalar != IntType(1) or shape_of(m) != shape_of(p):
                _fail(op, f"mask must be i1 of shape {shape_of(p)}, got {m}")

    def _tt_make_range(self, op):
        t, a = op.result.type, op.attributes
        n = a.get("end", 0) - a.get("start", 0)
        if not isinstance(t, TensorType) or t.shape != (n,) or t.element != IntType(32):
            _fail(op, f"result must be tensor<{n}xi32>, got {t}")

    def _tt_get_program_id(self, op):
        if op.result.type != IntType(32) or op.attributes.get("axis") not in (0, 1, 2):
            _fail(op, "returns i32 for axis 0, 1 or 2")

    _tt_get_num_programs = _tt_get_program_id

    def _tt_reduce(self, op):
        axis = op.attributes.get("axis")
        block = op.regions[0].blocks[0] if op.regions[0].blocks else None
        n = len(op.operands)
        if block is None or len(block.args) != 2 * n:
            _fail(op, f"combine region needs {2 * n} arguments (2 per operand), has "
                      f"{len(block.args) if block else 0}")
        if len(op.results) != n:
            _fail(op, f"has {n} operands but {len(op.results)} results")
        for i, (src, res) in enumerate(zip(op.operands, op.results)):
            s = src.type
            if not isinstance(s, TensorType) or not isinstance(axis, int) or not 0 <= axis < s.rank:
                _fail(op, f"axis {axis!r} out of range for operand {s}")
            if block.args[i].type != s.element or block.args[n + i].type != s.element:
                _fail(op, f"combine arguments for operand #{i} must be {s.element}")
            shape = s.shape[:axis] + s.shape[axis + 1:]
            if shape_of(res.type) != shape or res.type.scalar != s.element:
                _fail(op, f"result #{i} must have shape {shape} of {s.element}, got {res.type}")
            if self.ttgir and shape:
                re_ = _enc(res.type)
                if getattr(re_, "dim", None) != axis or getattr(re_, "parent", None) != s.encoding:
                    _fail(op, f"result #{i} layout must be #ttg.slice<{{dim = {axis}, parent = "
                              f"<operand layout>}}>, got {res.type}")
        term = block.ops[-1] if block.ops else None
        if term is not None and term.name == "tt.reduce.return":
            got = [v.type for v in term.operands]
            if got != [s.type.scalar for s in op.operands]:
                _fail(term, f"must return {n} values of the element types, got {got}")

    def _ttg_convert_layout(self, op):
        s, t = op.operands[0].type, op.result.type
        if shape_of(s) != shape_of(t) or s.scalar != t.scalar:
            _fail(op, f"changes only the layout; {s} -> {t}")

    def _tt_dot(self, op):
        a, b, c = (shape_of(v.type) for v in op.operands)
        if len(a) != 2 or len(b) != 2 or a[1] != b[0] or c != (a[0], b[1]) or \
                shape_of(op.result.type) != c:
            _fail(op, f"needs MxK, KxN and MxN operands; got {a}, {b}, {c}")

    # control flow ------------------------------------------------------------------------------
    def _yield_types(self, op, region_index: int, what: str):
        blocks = op.regions[region_index].blocks
        if not blocks or not blocks[0].ops:
            return
        term = blocks[0].ops[-1]
        got = [v.type for v in term.operands]
        want = [r.type for r in op.results]
        if term.name == "scf.yield" and got != want:
            _fail(term, f"{what} yields {[str(t) for t in got]} but the results are "
                        f"{[str(t) for t in want]}")

    def _scf_for(self, op):
        lb, ub, st, *inits = op.operands
        if not (lb.type == ub.type == st.type) or not isinstance(lb.type, (IntType,)):
            _fail(op, f"bounds and step must share one integer type: {lb.type}, {ub.type}, {st.type}")
        block = op.regions[0].blocks[0] if op.regions[0].blocks else None
        if block is None or len(block.args) != 1 + len(inits):
            _fail(op, f"body needs {1 + len(inits)} arguments (iv and iter_args)")
        if block.args[0].type != lb.type:
            _fail(op, f"induction variable must be {lb.type}")
        want = [v.type for v in inits]
        if [a.type for a in block.args[1:]] != want or [r.type for r in op.results] != want:
            _fail(op, "iter_args, their initial values and the results must have equal types")
        self._yield_types(op, 0, "the loop body")

    def _scf_if(self, op):
        c = op.operands[0].type
        if c != IntType(1):
            _fail(op, f"condition must be i1, got {c}")
        if not op.regions[0].blocks:
            _fail(op, "needs a then region")
        if op.results and not (op.regions[1].blocks and op.regions[1].blocks[0].ops):
            _fail(op, "an scf.if with results needs an else region")
        self._yield_types(op, 0, "the then branch")
        self._yield_types(op, 1, "the else branch")


def verify(module: Operation) -> None:
    """Check ``module`` (a ``builtin.module``); returns None or raises VerificationError
    ``"'<op>' at file:line:col: <problem>"`` for the first problem found."""
    if module.name != "builtin.module":
        raise VerificationError(f"expected a builtin.module, got '{module.name}'", module)
    v = _Verifier(module)
    for op in module.regions[0].blocks[0].ops:
        if op.name == "tt.func":
            _check_func(op)
    v.block(module.regions[0].blocks[0], [], module, 0)


def _check_func(func: Operation) -> None:
    ftype = func.attributes.get("function_type")
    if not func.regions or not func.regions[0].blocks:
        _fail(func, "has no body")
    args = func.regions[0].blocks[0].args
    inputs = getattr(ftype, "inputs", None)
    if inputs is not None and [a.type for a in args] != list(inputs):
        _fail(func, f"entry block arguments {[str(a.type) for a in args]} do not match "
                    f"function_type {ftype}")
    results = list(getattr(ftype, "results", ()))
    for op in func.walk():
        if op.name == "tt.return" and [v.type for v in op.operands] != results:
            _fail(op, f"returns {[str(v.type) for v in op.operands]}, the function declares "
                      f"{[str(t) for t in results]}")


__all__ = ["verify", "VerificationError", "Value"]
