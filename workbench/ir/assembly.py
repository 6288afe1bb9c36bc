"""Print and parse an op by walking its spec's assembly format (see
:mod:`workbench.ir.dialects.fmt`), as MLIR's ODS generates a printer and a parser from an
``assemblyFormat``.

:func:`print_custom` returns an op's text after its result names (``tt.load %p, %m : T``);
:func:`parse_custom` reads that text back (after the op name) with a
:class:`~workbench.ir.parser.ModuleParser` and returns the new Operation.
"""
from __future__ import annotations

from .attrs import UNIT, attr_key, format_attr, format_keyed_attr, symbol_ref
from .core import Operation
from .dialects.fmt import AttrDict, FunctionalType, Group, Literal, TypeOf, Var
from .dialects.spec import Attr, OpSpec, base_name
from .types import MemDescType, PointerType, TensorDescType

_AXES = "xyz"
_NO_SPACE_BEFORE = {",", ")", "]"}
_OPENERS = {"(", "["}


# printing -----------------------------------------------------------------------------------
class _Printed:
    """The pieces of one op's text and the joining rule (MLIR's: no space before ``,`` ``)``
    ``]`` and before an opening ``(``/``[`` literal, none after an opener)."""

    def __init__(self, name: str):
        self.pieces: list[tuple[str, bool]] = [(name, False)]

    def add(self, text: str, literal: bool = False) -> None:
        if text:
            self.pieces.append((text, literal))

    def text(self) -> str:
        out = [self.pieces[0][0]]
        prev = self.pieces[0]
        for text, lit in self.pieces[1:]:
            # MLIR's rule: an opener after a punctuation literal (`, [`) keeps its space
            after_comma = prev[1] and prev[0] == ","
            tight = (lit and (text in _NO_SPACE_BEFORE or
                              (text in _OPENERS and not after_comma))) or \
                (prev[1] and prev[0] in _OPENERS)
            out.append(text if tight else " " + text)
            prev = (text, lit)
        return "".join(out)


#: the attribute giving each spec operand's count, for ops with several optional operands
SEGMENTS = "operandSegmentSizes"


class _OpView:
    """An op seen through its spec: operands, results and attributes by name."""

    def __init__(self, op: Operation, spec: OpSpec):
        self.op, self.spec = op, spec
        self.operands = spec.operand_slots(len(op.operands),
                                           op.attributes.get(SEGMENTS))
        self.results = spec.result_slots(len(op.results))

    def values(self, name: str) -> list:
        if name == "operands":
            return list(self.op.operands)
        if name == "results":
            return list(self.op.results)
        if name in self.operands:
            return [self.op.operands[i] for i in self.operands[name]]
        return [self.op.results[i] for i in self.results.get(name, [])]

    def attr_value(self, attr: Attr):
        return self.op.attributes.get(attr.name, None if attr.required else attr.default)

    def present(self, e) -> bool:
        name = e.of if isinstance(e, TypeOf) else e.name
        attr = self.spec.attr(name)
        if attr is None:
            return bool(self.values(name))
        value = self.attr_value(attr)
        return value is not None and not attr.elided(value) and value is not False


def _attr_text(attr: Attr, value) -> str:
    kind = attr.kind
    if kind == "enum":
        return str(value)
    if kind == "axis":
        return _AXES[value]
    if kind == "unit":
        return ""
    if kind == "symbol":
        return symbol_ref(value)
    if kind == "i32":
        return str(value)
    return format_attr(value)


def _type_text(p, t, qualified: bool, short: bool = False) -> str:
    text = p.t(t)
    if not qualified and isinstance(t, MemDescType):
        return text[len("!ttg.memdesc"):]
    if short and isinstance(t, (PointerType, TensorDescType)):
        return text[text.index("<"):]
    return text


def attr_dict_text(spec: OpSpec | None, attrs: dict, used: set) -> str:
    """`` {a = 1 : i32, ...}`` of the attributes not in ``used`` and not elided, sorted by
    name as MLIR's dictionary attributes are; ``""`` when there are none."""
    items = []
    for k in sorted(attrs):
        if k in used or k == SEGMENTS:  # MLIR prints it only in the generic form
            continue
        v = attrs[k]
        attr = spec.attr(k) if spec is not None else None
        if v is None or (attr is not None and attr.elided(v)):
            continue
        if attr is not None and attr.kind == "enum_i32":
            v = list(attr.choices).index(v)
        if v is UNIT or (attr is not None and attr.kind == "unit"):
            items.append(attr_key(k))
            continue
        items.append(f"{attr_key(k)} = {format_keyed_attr(k, v)}")
    return (" {" + ", ".join(items) + "}") if items else ""


def _print_elements(p, view: _OpView, elements, out: _Printed, used: set) -> None:
    for e in elements:
        if isinstance(e, Literal):
            out.add(e.text, literal=True)
        elif isinstance(e, Var):
            attr = view.spec.attr(e.name)
            if attr is not None:
                out.add(_attr_text(attr, view.attr_value(attr)))
            else:
                out.add(p.vs(view.values(e.name)))
        elif isinstance(e, TypeOf):
            out.add(", ".join(_type_text(p, v.type, e.qualified, e.short)
                              for v in view.values(e.of)))
        elif isinstance(e, FunctionalType):
            ins = ", ".join(p.t(v.type) for v in view.values(e.ins))
            outs = [p.t(v.type) for v in view.values(e.outs)]
            res = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
            out.add(f"({ins}) -> {res}")
        elif isinstance(e, AttrDict):
            out.add(attr_dict_text(view.spec, view.op.attributes, used).lstrip())
        elif isinstance(e, Group) and view.present(e.anchor):
            _print_elements(p, view, e.body, out, used)


def print_custom(p, op: Operation, spec: OpSpec) -> str:
    """The text of ``op`` from its op name on, by ``spec``'s assembly format; ``p`` is the
    :class:`~workbench.ir.printer.Printer` (value names, types with layout aliases)."""
    out = _Printed(op.name)
    _print_elements(p, _OpView(op, spec), spec.parsed_format, out, set(spec.format_names))
    return out.text()


# parsing ------------------------------------------------------------------------------------
class _Parsed:
    def __init__(self):
        self.operands: dict[str, list] = {}
        self.types: dict[str, list] = {}
        self.attrs: dict = {}


def _starts(r, spec: OpSpec, e) -> bool:
    """Whether an optional group whose first element is ``e`` is present in the text."""
    if isinstance(e, Literal):
        if e.text[:1].isalpha():
            return r.at_same_line(e.text) and r.at_word(e.text)
        return r.at_same_line(e.text)
    if isinstance(e, Var) and spec.attr(e.name) is None:
        return r.at_same_line("%")
    return r.at_same_line("{") if isinstance(e, AttrDict) else False


def _parse_attr(r, attr: Attr):
    kind = attr.kind
    if kind == "enum":
        return r.ident(f"a value of {attr.name}")
    if kind == "axis":
        pos = r.i
        axis = r.ident("an axis (x, y or z)")
        if axis not in _AXES:
            raise r.error(f"axis must be x, y or z, got {axis!r}", pos)
        return _AXES.index(axis)
    if kind == "unit":
        return True
    if kind == "symbol":
        return r.sigil_name("@", "a symbol (@name)")[0]
    if kind == "i32":
        return r.integer()
    return r.attr_value()


def _type_count(spec: OpSpec, of: str, got: _Parsed) -> int | None:
    """How many types ``type($of)`` holds: the operands read, 1 for a single result, None
    (read a list) for variadic results."""
    if of in got.operands:
        return len(got.operands[of])
    if of in ("results", "operands") or ("*" + of) in spec.results:
        return None
    return 1


def _parse_types(r, n: int | None) -> list:
    out = [r.type()]
    while (n is None or len(out) < n) and r.at_same_line(","):
        save = r.i
        r.expect(",")
        r.ws()
        if not (r.at("!") or r.at("tensor") or r.at("<") or r.s[r.i:r.i + 1].isalpha()):
            r.i = save
            break
        out.append(r.type())
    return out


def _parse_attr_dict(r, spec: OpSpec, into: dict) -> None:
    if not r.at_same_line("{"):
        return
    for k, v in r.attr_dict().items():
        attr = spec.attr(k)
        if attr is not None and attr.kind == "enum_i32" and isinstance(v, int):
            v = attr.choices[v]
        if attr is not None and attr.kind == "unit" and v is UNIT:
            v = True
        into[k] = v


def _parse_elements(r, spec: OpSpec, elements, got: _Parsed) -> None:
    for e in elements:
        if isinstance(e, Literal):
            if e.text[:1].isalpha():
                r.expect_word(e.text, f"in {spec.name}")
            else:
                r.expect(e.text, f"in {spec.name}")
        elif isinstance(e, Var):
            attr = spec.attr(e.name)
            if attr is not None:
                got.attrs[e.name] = _parse_attr(r, attr)
            elif e.name == "operands" or any(s == "*" + e.name for s in spec.operands):
                got.operands[e.name] = r.uses()
            else:
                got.operands[e.name] = [r.use()]
        elif isinstance(e, TypeOf):
            n = _type_count(spec, e.of, got)
            got.types[e.of] = _parse_types(r, n) if n != 0 else []
        elif isinstance(e, FunctionalType):
            r.paren_types()
            r.expect("->")
            got.types["results"] = r.paren_types() if r.at("(") else [r.type()]
        elif isinstance(e, AttrDict):
            _parse_attr_dict(r, spec, got.attrs)
        elif isinstance(e, Group) and _starts(r, spec, e.body[0]):
            _parse_elements(r, spec, e.body, got)


def _result_types(spec: OpSpec, got: _Parsed, operands: list) -> list:
    if "results" in got.types:
        return got.types["results"]
    types: list = []
    missing = False
    for s in spec.results:
        t = got.types.get(base_name(s))
        if t is None:
            missing = True
        else:
            types += t
    if not missing:
        return types
    if "same_result_types" in spec.traits and types:
        return [types[0]] * len(spec.results)
    if spec.infer is None:
        raise ValueError(f"{spec.name}: the format gives no result types and nothing infers "
                         "them")
    return spec.infer([v.type for v in operands], got.attrs)


def parse_custom(r, name: str, spec: OpSpec) -> Operation:
    """Read ``name``'s text after the op name by ``spec``'s format (``r``: the module
    parser); raises IRParseError at the first mismatch."""
    got = _Parsed()
    pos = r.i
    _parse_elements(r, spec, spec.parsed_format, got)
    if "operands" in got.operands:
        operands = got.operands["operands"]
    else:
        operands = [v for s in spec.operands for v in got.operands.get(base_name(s), [])]
        if spec.attr(SEGMENTS) is not None:
            got.attrs[SEGMENTS] = [len(got.operands.get(base_name(s), []))
                                   for s in spec.operands]
    for attr in spec.attributes:
        if attr.fill is not None and attr.name not in got.attrs:
            got.attrs[attr.name] = attr.fill
    try:
        results = _result_types(spec, got, operands)
    except ValueError as e:
        raise r.error(str(e), pos) from None
    return Operation(name, operands, results, got.attrs)
