"""The specialisation of a launch: per parameter its kind, Triton type string and hints.

Triton's rules (``triton/runtime/jit.py``): ints in [-2^31, 2^31) are ``i32``, others ``i64``
(``u64`` for [2^63, 2^64)); an int equal to 1 becomes a constexpr and leaves the signature; ints and
pointers divisible by 16 get ``tt.divisibility = 16``; floats are ``fp32`` and never
specialised; bools are ``i1``. A tuple argument (a namedtuple too) is specialised element by
element, recursively; Triton's signature entry for it is the tuple of its elements' entries,
and the compiled function takes its runtime elements as separate arguments, depth first.
"""
from __future__ import annotations

from dataclasses import dataclass

# Triton short dtype names <-> numpy dtype names
SHORT_TO_NUMPY = {
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
    # 8-bit floats: ml_dtypes' and torch's names (float8e4b15 has no array dtype: pass uint8
    # data through ``reinterpret(a, tl.float8e4b15)``)
    "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "fp8e4b8": "float8_e4m3fnuz",
    "fp8e5b16": "float8_e5m2fnuz", "fp8e4b15": "float8e4b15",
}
NUMPY_TO_SHORT = {v: k for k, v in SHORT_TO_NUMPY.items()}


@dataclass(frozen=True)
class ArgSpec:
    """One kernel parameter as specialised for a launch.

    ``kind``: "constexpr" (value baked in, not passed), "pointer" or "scalar".
    ``type``: Triton signature string: ``"*fp32"``, ``"i32"``, ``"i64"``, ``"u64"``, ``"fp32"``,
    ``"i1"`` or ``"constexpr"``. ``divisible_by_16``: the value (int) or address (pointer) is a
    multiple of 16. ``equal_to_1``: an int specialised to the constant 1 (Triton drops it from
    the compiled signature). ``value``: the constexpr value.
    """

    name: str
    kind: str
    type: str
    divisible_by_16: bool = False
    equal_to_1: bool = False
    value: object = None
    elements: tuple = ()

    @property
    def passed(self) -> bool:
        """Whether the compiled kernel takes this argument (a tuple: any of its elements) at
        run time."""
        if self.kind == "tuple":
            return any(e.passed for e in self.elements)
        return self.kind != "constexpr" and not self.equal_to_1

    def key(self):
        v = self.value
        if self.kind == "tuple":
            v = (getattr(v, "__module__", ""), getattr(v, "__qualname__", repr(v)),
                 tuple(getattr(v, "_fields", ())), tuple(e.key() for e in self.elements))
        elif self.kind == "constexpr":
            v = (type(v).__name__, repr(v))
        return (self.name, self.kind, self.type, self.divisible_by_16, self.equal_to_1, v)

    def leaves(self) -> list:
        """This ArgSpec (not a tuple) or its tuple's leaf ArgSpecs, depth first."""
        if self.kind != "tuple":
            return [self]
        return [leaf for e in self.elements for leaf in e.leaves()]

    def signature(self):
        """Triton's signature entry: the type string (``"*fp32"``, ``"constexpr"``), or for
        a tuple the (nested) tuple of its elements' entries."""
        if self.kind == "tuple":
            return tuple(e.signature() for e in self.elements)
        return self.type

    def text(self) -> str:
        """``"*fp32:16"``, ``"i32:1"``; a tuple ``"(i32, *fp32:16)"`` (constexpr elements
        shown as ``constexpr``)."""
        if self.kind == "tuple":
            inner = ", ".join(e.text() for e in self.elements)
            return f"({inner},)" if len(self.elements) == 1 else f"({inner})"
        return self.type + (":16" if self.divisible_by_16 else "") + \
            (":1" if self.equal_to_1 else "")


def tuple_spec(name: str, cls, elements) -> ArgSpec:
    """The ArgSpec of a tuple argument of class ``cls`` whose elements are ``elements``."""
    elements = tuple(elements)
    typ = ArgSpec(name, "tuple", "", value=cls, elements=elements).text()
    return ArgSpec(name, "tuple", typ, value=cls, elements=elements)


def flat_runtime(args, per_param) -> list:
    """The runtime values the compiled kernel takes, in order: for each passed ArgSpec of
    ``args`` its value in ``per_param`` (a tuple argument's value is the tuple of its
    elements' values: its passed leaves are taken depth first)."""
    out: list = []
    for a, v in zip(args, per_param, strict=True):
        if a.kind == "tuple":
            out += flat_runtime(a.elements, v)
        elif a.passed:
            out.append(v)
    return out


@dataclass(frozen=True)
class Specialization:
    """The specialisation of every parameter of a kernel, in declaration order."""

    args: tuple

    def key(self):
        return tuple(a.key() for a in self.args)

    @property
    def passed(self) -> tuple:
        """The leaf ArgSpecs passed at run time, in order (tuple arguments flattened)."""
        return tuple(leaf for a in self.args for leaf in a.leaves() if leaf.passed)

    def signature_text(self) -> str:
        """``"*fp32:16, *fp32:16, i32"`` style text of the non-constexpr params (a tuple
        parameter as ``"(i32, *fp32)"``)."""
        return ", ".join(a.text() for a in self.args if a.kind != "constexpr")


def scalar_type_of(value) -> str:
    """Triton's type string for a Python scalar argument."""
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        if -(2 ** 31) <= value < 2 ** 31:
            return "i32"
        if 2 ** 63 <= value < 2 ** 64:
            return "u64"
        return "i64"
    if isinstance(value, float):
        return "fp32"
    raise TypeError(f"not a scalar: {value!r}")
