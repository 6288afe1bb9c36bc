"""Attribute and float literals as MLIR prints them (``1.000000e+00``, ``array<i32: 1, 0>``,
``{name = value}``), shared by the printer and the custom syntax of op specs."""
from __future__ import annotations

import math
import re
import struct

from .types import FloatType, Type

#: significand bits (with the implicit one) of each float type, for the round-trip check
_PRECISION = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}


def _as_type(value: float, name: str) -> float:
    """``value`` rounded to nearest-even in float type ``name`` (f16, bf16, f32, f64)."""
    if name == "f64":
        return value
    if name == "f16":
        try:
            return struct.unpack("<e", struct.pack("<e", value))[0]
        except OverflowError:
            return math.copysign(math.inf, value)
    try:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    if name == "bf16":
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def _shortest_safe(value: float, precision: int) -> str:
    """LLVM ``APFloat::toString`` with its defaults (``FormatPrecision`` 0, padding 3,
    trailing zeros cut): the exact decimal expansion of ``value`` rounded (half up on the
    first dropped digit, as LLVM does) to ``2 + precision * 59 // 196`` significant digits, in
    plain notation when at most 3 zeros pad it, else ``d.dddE+x``."""
    import decimal
    sign, digits, exponent = decimal.Decimal(value).as_tuple()
    assert isinstance(exponent, int), "finite values only"
    buf = "".join(map(str, digits)).rstrip("0")
    exp = exponent + len(digits) - len(buf)  # value = buf * 10**exp
    keep = 2 + precision * 59 // 196
    if len(buf) > keep:
        drop = len(buf) - keep
        up = buf[keep] >= "5"
        buf, exp = buf[:keep], exp + drop
        if up:
            n = int(buf) + 1
            buf = str(n)
            if len(buf) > keep:  # carried into a new digit
                buf, exp = buf[:-1], exp + 1
        stripped = buf.rstrip("0")
        exp += len(buf) - len(stripped)
        buf = stripped
    nd = len(buf)
    if exp >= 0:
        scientific = exp > 3 or nd + exp > keep
    else:
        msd = exp + nd - 1
        scientific = msd < 0 and -msd > 3
    out = "-" if sign else ""
    if scientific:
        e = exp + nd - 1
        frac = buf[1:] or "0"
        return f"{out}{buf[0]}.{frac}E{'+' if e >= 0 else '-'}{abs(e)}"
    if exp >= 0:
        return out + buf + "0" * exp
    whole = exp + nd
    if whole > 0:
        return f"{out}{buf[:whole]}.{buf[whole:]}"
    return f"{out}0.{'0' * -whole}{buf}"


def format_float(value: float, t: Type) -> str:
    """A float literal as MLIR's printer writes it, so that parsing it back gives the same
    value of type ``t``: ``1.000000e+00`` (6 digits after the point) when that reads back
    bit-identical in ``t``; else LLVM's shortest safe form (``1.22070313E-4``,
    ``0.693147182``) when it has a decimal point; else the hex bit pattern of ``t``
    (``0x4B800001``, and always for inf/nan). Source: MLIR ``AsmPrinter``'s
    ``printFloatValue`` and LLVM ``APFloat::toString``."""
    name = t.scalar.name if isinstance(t.scalar, FloatType) else "f32"
    text = f"{value:.6e}"
    if math.isfinite(value) and name in _PRECISION:
        want = _as_type(value, name)
        if math.isfinite(want) and _as_type(float(text), name) != want:
            text = _shortest_safe(want, _PRECISION[name])
            if "." not in text:
                text = ""
        value = want
        if text and math.isfinite(value):
            return text
    elif math.isfinite(value):
        return text
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
