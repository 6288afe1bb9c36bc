"""The op spec: one declarative record per op, as MLIR's ODS or xDSL's IRDL define ops.

An :class:`OpSpec` gives an op's name, operands (``"x"``, optional ``"x?"``, variadic
``"*x"``), results (the same markers), attributes (:class:`Attr`: kind, default, what the text
leaves out), regions and the terminator each must end with, memory effects, traits and its
assembly format. The printer (:mod:`workbench.ir.printer`), the parser
(:mod:`workbench.ir.parser`) and the verifier (:mod:`workbench.ir.verifier`) read nothing
else about an op.

The assembly format is a small language modelled on MLIR ODS's ``assemblyFormat`` (see
:mod:`workbench.ir.dialects.fmt`). Ops whose syntax no declarative format expresses (regions,
``arith.constant``) name a :class:`CustomSyntax`: a print function and a parse function
defined next to their spec, as an MLIR op with ``hasCustomAssemblyFormat`` does.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

from ..core import Operation
from ..types import IntType, PointerType, like
from .fmt import Group, Var, parse_format

REQUIRED = object()  #: marks an attribute that must be present


class VerificationError(Exception):
    """Malformed IR. ``op`` is the offending :class:`Operation` (or None)."""

    def __init__(self, message: str, op: Operation | None = None):
        super().__init__(message)
        self.op = op


def fail(op: Operation, message: str) -> NoReturn:
    """Raise :class:`VerificationError` ``"'<op>' at file:line:col: <message>"``."""
    loc = op.loc
    where = "unknown location" if loc is None or loc.file == "unknown" else str(loc)
    raise VerificationError(f"'{op.name}' at {where}: {message}", op)


#: attribute kinds and the Python values that hold them
ATTR_KINDS: dict[str, Callable[[Any], bool]] = {
    "i32": lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "unit": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "enum": lambda v: isinstance(v, str),
    "enum_i32": lambda v: isinstance(v, str),
    "axis": lambda v: v in (0, 1, 2),
    "i32_array": lambda v: isinstance(v, (tuple, list)),
    "symbol": lambda v: isinstance(v, str),
    "any": lambda v: True,
}


@dataclass(frozen=True)
class Attr:
    """An inherent attribute of an op.

    ``kind``: a key of :data:`ATTR_KINDS` (``enum`` values print as bare words in a format,
    ``axis`` as ``x``/``y``/``z``, ``unit`` as a keyword). ``default``: the value the IR means
    when the attribute is absent (:data:`REQUIRED`: it must be present). ``elide``: values the
    text leaves out (Triton's ODS default; an optional group anchored on the attribute is not
    printed for them). ``fill``: the value the parser stores when the text leaves it out
    (when it differs from ``default``). ``choices``: the allowed values of an enum, if checked.
    """

    name: str
    kind: str = "any"
    default: Any = None
    elide: tuple = (None,)
    fill: Any = None
    choices: tuple = ()

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def elided(self, value) -> bool:
        """True when the text leaves ``value`` out."""
        return any(value is e or (e is not None and value == e) for e in self.elide)


@dataclass(frozen=True)
class CustomSyntax:
    """A hand-written print/parse pair: ``print(printer, op, indent)`` emits the op's lines,
    ``parse(parser, name)`` reads the op's text after its name and returns the Operation."""

    print: Callable
    parse: Callable


@dataclass(frozen=True)
class OpSpec:
    """Everything the IR layer knows about one op (see the module docstring).

    ``effects``: ``"read:global"``, ``"write:shared"``, ``"alloc:shared"``, ``"free:shared"``,
    ... (empty: no memory effect). ``traits``: ``pure``, ``commutative``, ``terminator``,
    ``elementwise``, ``same_operands_and_result_type``, ``same_operands_type``,
    ``named_results`` (the op names each of its results, as MLIR's ``getAsmResultNames`` does,
    so several results print as ``%a, %b = ...``; every other op with several results prints
    MLIR's result group ``%a:2 = ...``, read as ``%a#0``, ``%a#1``).
    ``terminators``: per region, the op that must end it (``"tt.return"``; for regions that
    may be empty use a trailing ``?``). ``infer``: ``infer(operand_types, attrs) ->
    result types`` for results the format gives no type for. ``verify``: extra checks
    ``verify(op, ctx)`` that call :func:`fail` (``ctx.ttgir`` is True in ttgir modules).
    """

    name: str
    operands: tuple = ()
    results: tuple = ("result",)
    attributes: tuple = ()
    regions: int = 0
    terminators: tuple = ()
    effects: tuple = ()
    traits: frozenset = frozenset()
    format: str | None = None
    custom: CustomSyntax | None = None
    infer: Callable | None = None
    verify: Callable | None = None
    doc: str = ""
    parsed_format: tuple = field(default=(), init=False, compare=False)
    format_names: frozenset = field(default=frozenset(), init=False, compare=False)

    def __post_init__(self) -> None:
        elements = tuple(parse_format(self.format)) if self.format is not None else ()
        object.__setattr__(self, "parsed_format", elements)
        object.__setattr__(self, "format_names", frozenset(_names(elements)))

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def writes(self) -> bool:
        """True when the op writes or frees memory (or has another observable effect)."""
        return any(e.split(":")[0] in ("write", "free") for e in self.effects)

    @property
    def reads(self) -> bool:
        """True when the op reads or allocates memory and writes none."""
        return not self.writes and any(e.split(":")[0] in ("read", "alloc")
                                       for e in self.effects)

    def attr(self, name: str) -> Attr | None:
        for a in self.attributes:
            if a.name == name:
                return a
        return None

    def operand_slots(self, n: int, segments=None) -> dict[str, list[int]]:
        """Operand name -> the operand indices it covers, for an op with ``n`` operands.
        Optional operands are filled in order; one variadic takes what is left, several share
        it equally. ``segments`` (MLIR's ``operandSegmentSizes``: one count per spec operand)
        decides instead, for ops with several optional operands of which any may be absent
        (``tt.dot_scaled``)."""
        if segments is not None and len(segments) == len(self.operands):
            out, i = {}, 0
            for s, k in zip(self.operands, segments, strict=True):
                out[base_name(s)] = list(range(i, i + int(k)))
                i += int(k)
            return out
        return _slots(self.operands, n)

    def result_slots(self, n: int) -> dict[str, list[int]]:
        """Result name -> result indices, as :meth:`operand_slots`."""
        return _slots(self.results, n)


def _names(elements) -> set:
    """The ``$name`` elements of a format, including those inside optional groups."""
    out = set()
    for e in elements:
        if isinstance(e, Var):
            out.add(e.name)
        elif isinstance(e, Group):
            out |= _names(e.body)
    return out


def base_name(marked: str) -> str:
    """``"*srcs"`` / ``"mask?"`` -> ``"srcs"`` / ``"mask"``."""
    return marked.lstrip("*").rstrip("?")


def _slots(names: tuple, n: int) -> dict[str, list[int]]:
    required = sum(1 for s in names if not s.endswith("?") and not s.startswith("*"))
    spare = n - required
    # several variadics share what is left equally (MLIR's SameVariadicOperandSize)
    variadics = sum(1 for s in names if s.startswith("*"))
    share = max(spare, 0) // variadics if variadics > 1 else None
    out: dict[str, list[int]] = {}
    i = 0
    for s in names:
        if s.startswith("*"):
            take = max(spare, 0) if share is None else share
            spare -= take
        elif s.endswith("?"):
            take = 1 if spare > 0 else 0
            spare -= take
        else:
            take = 1
        out[base_name(s)] = list(range(i, min(i + take, n)))
        i += take
    return out


def op(name: str, operands=(), results=("result",), attributes=(), **kw) -> OpSpec:
    """Build an :class:`OpSpec` (lists become tuples; the format is parsed once, raising
    ValueError if it is malformed)."""
    traits = frozenset(kw.pop("traits", ()))
    return OpSpec(name, tuple(operands), tuple(results), tuple(attributes), traits=traits, **kw)


def registry(*groups) -> dict[str, OpSpec]:
    """One name -> spec mapping from lists of specs; a name defined twice is an error."""
    out: dict[str, OpSpec] = {}
    for group in groups:
        for spec in group:
            if spec.name in out:
                raise ValueError(f"op {spec.name} is defined twice")
            out[spec.name] = spec
    return out


# result type inference for results a format does not print ------------------------------------
def same_as_operand(index: int = 0) -> Callable:
    """Infer one result with the type of operand ``index``."""
    return lambda types, attrs: [types[index]]


def same_as_operands(types, attrs) -> list:
    """Infer one result per operand, each of its operand's type."""
    return list(types)


def element_of_operand(types, attrs) -> list:
    """Infer the element type of operand 0, a scalar (``tt.unsplat``)."""
    return [types[0].scalar]


def i1_like_operand(types, attrs) -> list:
    """Infer ``i1`` with the shape and layout of operand 0 (compares)."""
    return [like(types[0], IntType(1))]


def pointee_of_operand(types, attrs) -> list:
    """Infer the pointee of operand 0's pointer type, same shape (loads)."""
    p = types[0]
    if not isinstance(p.scalar, PointerType):
        raise ValueError(f"expected a pointer type, got {p}")
    return [like(p, p.scalar.pointee)]
