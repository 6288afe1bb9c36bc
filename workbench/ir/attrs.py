"""Attribute and float literals as MLIR prints them (``1.000000e+00``, ``array<i32: 1, 0>``,
``{name = value}``), shared by the printer and the custom syntax of op specs."""
from __future__ import annotations

import math
import re
import struct

from .types import FloatType, Type


def format_float(value: float, t: Type) -> str:
    """MLIR's float literal: ``1.000000e+00``, or the hex bit pattern for inf/nan."""
    name = t.scalar.name if isinstance(t.scalar, FloatType) else "f32"
    if math.isfinite(value):
        return f"{value:.6e}"
    if name == "f64":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if name == "f16":
        import numpy as np
        return "0x%04X" % int(np.array(value, np.float16).view(np.uint16))
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if name == "bf16":
        return "0x%04X" % (bits >> 16)
    return "0x%08X" % bits


class UnitAttr:
    """MLIR's unit attribute: present or absent, printed as its bare name in an attribute
    dictionary (``{tt.flatten, tt.num_stages = 2 : i32}``). Use the one instance
    :data:`UNIT`; it is truthy, unlike ``False`` (a ``BoolAttr``, printed ``= false``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNIT"

    def __bool__(self) -> bool:
        return True


UNIT = UnitAttr()


class LoopAnnotation:
    """MLIR's ``#llvm.loop_annotation<...>`` attribute, which Triton's frontend puts on an
    ``scf.for`` or ``scf.while`` as ``llvm.loop_annotation`` and MLIR turns into the loop's
    ``!llvm.loop`` metadata in LLVM IR. ``body`` is the text between the angle brackets,
    e.g. ``licm = <disable = true, versioningDisable = true>`` (what
    ``tl.range(..., disable_licm=True)`` and ``tl.condition(c, disable_licm=True)`` ask
    for). Compared and hashed by its text."""

    __slots__ = ("body",)

    def __init__(self, body: str):
        self.body = body

    @property
    def licm_disabled(self) -> bool:
        """True when the annotation turns LLVM's loop-invariant code motion off."""
        return re.search(r"licm\s*=\s*(#llvm\.loop_licm)?<[^>]*\bdisable\s*=\s*true",
                         self.body) is not None

    def __eq__(self, other) -> bool:
        return isinstance(other, LoopAnnotation) and other.body == self.body

    def __hash__(self) -> int:
        return hash(("llvm.loop_annotation", self.body))

    def __repr__(self) -> str:
        return f"#llvm.loop_annotation<{self.body}>"

    __str__ = __repr__


#: the annotation of a loop whose ``disable_licm`` is set (Triton 3.6's
#: ``builder.get_disable_loop_licm_attr()``: LICM and LICM versioning both off)
LICM_DISABLED = LoopAnnotation("licm = <disable = true, versioningDisable = true>")


def quote(text: str) -> str:
    """``text`` as an MLIR string literal: a backslash doubled, other printable ASCII as is,
    everything else (the quote, newline, tab, non-ASCII UTF-8 bytes) as ``\\XX``, two upper-case
    hex digits per byte (LLVM's ``printEscapedString``, which MLIR's printer uses)."""
    out = []
    for byte in text.encode("utf-8"):
        c = chr(byte)
        if c == "\\":
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and c != '"':
            out.append(c)
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def format_attr(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v} : i32"
    if isinstance(v, float):
        return f"{format_float(v, FloatType('f32'))} : f32"
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, (list, tuple)):
        if all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            return "array<i32" + (": " + ", ".join(str(x) for x in v) if v else "") + ">"
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    return str(v)


#: Hint attributes Triton's frontend stores as ``DenseIntElementsAttr``
#: (``tl.multiple_of``/``max_contiguous``/``max_constancy``: ``ir.make_attr``)
DENSE_I32_HINTS = frozenset({"tt.divisibility", "tt.contiguity", "tt.constancy"})


def format_keyed_attr(k: str, v) -> str:
    """``v`` printed as the value of attribute ``k``: the hint attributes as MLIR prints a
    dense i32 vector (``dense<4> : tensor<1xi32>``, ``dense<[1, 4]> : tensor<2xi32>``; one
    value when all are equal), the rest by :func:`format_attr`."""
    if k in DENSE_I32_HINTS and isinstance(v, (list, tuple)) and v and \
            all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        body = str(v[0]) if len(set(v)) == 1 else "[" + ", ".join(str(x) for x in v) + "]"
        return f"dense<{body}> : tensor<{len(v)}xi32>"
    return format_attr(v)


def symbol_ref(name: str) -> str:
    """``@name`` as MLIR prints a symbol: bare when it is an identifier (letters, digits,
    ``_$.``), else quoted (``@"mod.fn__(1,)"``, as Triton names noinline callees)."""
    if re.fullmatch(r"[A-Za-z_][\w$.]*", name):
        return "@" + name
    return '@"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def attr_key(k: str) -> str:
    """An attribute name as MLIR prints it: bare, or quoted when it has other characters."""
    return k if all(c.isalnum() or c in "_." for c in k) and not k[0].isdigit() else f'"{k}"'


def format_attr_dict(attrs: dict) -> str:
    """``{k = v, ...}`` in the dict's order; a :data:`UNIT` value prints as the bare name."""
    return "{" + ", ".join(attr_key(k) if v is UNIT else
                           f"{attr_key(k)} = {format_keyed_attr(k, v)}"
                           for k, v in attrs.items()) + "}"
