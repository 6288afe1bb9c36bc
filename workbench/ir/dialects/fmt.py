"""The assembly-format language of op specs, modelled on MLIR ODS's ``assemblyFormat``.

Elements (separated by spaces):

- ```kw``` a literal: punctuation (``,`` ``:`` ``->`` ``[`` ...) or a keyword (``to``);
- ``$name`` an operand (all of a variadic one, comma-separated) or an attribute of the spec;
- ``operands``: every operand, comma-separated;
- ``type($name)``, ``type(operands)``, ``type(results)``: the types, comma-separated;
  ``qualified(type(...))`` the same (``type(...)`` of a memory descriptor prints it without its
  ``!ttg.memdesc`` prefix, as MLIR prints a type of a known class);
  ``short(type($x))`` prints a pointer or a tensor descriptor without its ``!tt.ptr`` /
  ``!tt.tensordesc`` prefix (``<f32>``), as MLIR does for an operand whose constraint is one
  type class (``tt.make_tensor_descriptor``);
- ``functional-type(operands, results)``: ``(T, T) -> T``;
- ``attr-dict``: the attributes no other element prints, ``{name = value, ...}``, leaving out
  values the spec elides;
- ``( ... )?`` an optional group, printed when its anchor (the element marked ``^``) is
  present: an operand that is there, an attribute the spec does not elide. The parser decides
  by the group's first element (a literal, or ``%`` for an operand).

Example (``tt.load``): ``$ptr (`,` $mask^)? (`,` $other^)? attr-dict `:` type($ptr)``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Literal:
    """A literal token."""

    text: str


@dataclass(frozen=True)
class Var:
    """``$name``: an operand or attribute; ``anchor`` when marked ``^``."""

    name: str
    anchor: bool = False


@dataclass(frozen=True)
class TypeOf:
    """``type($x)``: ``of`` is an operand or result name, ``operands`` or ``results``."""

    of: str
    qualified: bool = False
    anchor: bool = False
    short: bool = False


@dataclass(frozen=True)
class FunctionalType:
    """``functional-type(operands, results)``."""

    ins: str
    outs: str


@dataclass(frozen=True)
class AttrDict:
    """``attr-dict``."""


@dataclass(frozen=True)
class Group:
    """``( ... )?``: printed when ``anchor`` (an element of ``body``) is present."""

    body: tuple
    anchor: object


Element = Literal | Var | TypeOf | FunctionalType | AttrDict | Group

_TOKEN = re.compile(r"\s*(`[^`]*`|\$\w+\^?|(?:qualified|short)\(type\([$\w]+\)\)\^?|"
                    r"type\([$\w]+\)\^?|"
                    r"functional-type\([$\w]+,\s*[$\w]+\)|attr-dict|operands|\(|\)\?)")


def parse_format(text: str) -> list:
    """The elements of an assembly format string; raises ValueError for a malformed one."""
    tokens = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"bad assembly format at {text[pos:pos + 20]!r} in {text!r}")
        tokens.append(m.group(1))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    elements, rest = _elements(tokens, 0, text)
    if rest != len(tokens):
        raise ValueError(f"unbalanced ')?' in assembly format {text!r}")
    return elements


def _elements(tokens: list, i: int, text: str) -> tuple[list, int]:
    out: list = []
    while i < len(tokens):
        tok = tokens[i]
        if tok == ")?":
            return out, i
        if tok == "(":
            body, j = _elements(tokens, i + 1, text)
            if j >= len(tokens):
                raise ValueError(f"unclosed '(' in assembly format {text!r}")
            anchors = [e for e in body if getattr(e, "anchor", False)]
            if len(anchors) != 1:
                raise ValueError(f"an optional group needs one anchor (^) in {text!r}")
            out.append(Group(tuple(body), anchors[0]))
            i = j + 1
            continue
        out.append(_element(tok))
        i += 1
    return out, i


def _element(tok: str):
    anchor = tok.endswith("^")
    tok = tok.rstrip("^")
    if tok.startswith("`"):
        return Literal(tok[1:-1])
    if tok.startswith("$"):
        return Var(tok[1:], anchor)
    if tok == "attr-dict":
        return AttrDict()
    if tok == "operands":
        return Var("operands", anchor)
    if tok.startswith("functional-type("):
        ins, outs = (s.strip().lstrip("$") for s in tok[16:-1].split(","))
        return FunctionalType(ins, outs)
    qualified = tok.startswith("qualified(")
    short = tok.startswith("short(")
    inner = tok[tok.index("(") + 1:-1] if (qualified or short) else tok
    return TypeOf(inner[5:-1].lstrip("$"), qualified, anchor, short)
