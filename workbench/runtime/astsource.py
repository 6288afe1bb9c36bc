"""Triton's ahead-of-time compile inputs: ``ASTSource`` (a kernel with its signature and
constexprs) and ``GPUTarget``, as ``triton.compile(ASTSource(fn, signature, constexprs),
target=GPUTarget("cuda", 90, 32), options={...})`` takes them (Triton 3.6
``python/triton/compiler/compiler.py`` and ``backends/compiler.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..language.core import constexpr


@dataclass(frozen=True)
class GPUTarget:
    """A device target: ``backend`` ("cuda"), ``arch`` (80, 90: sm_80, sm_90) and
    ``warp_size`` (32). ``str()`` gives the workbench's target name (``"cuda:90"``)."""

    backend: str
    arch: int | str
    warp_size: int = 32

    def __str__(self) -> str:
        return f"{self.backend}:{self.arch}"


@dataclass
class ASTSource:
    """A ``@jit`` kernel (or plain function) ``fn`` with ``signature``, a dict from parameter
    name to a Triton type string (``"*fp32"``, ``"i32"``, ``"*fp16:16"``, or ``"constexpr"``
    for parameters whose value is in ``constexprs``), and ``constexprs``, a dict from
    parameter name (or 1-tuple of the parameter's index, as Triton also accepts) to value.
    A tuple parameter's signature is a (nested) tuple of type strings, ``"constexpr"`` where
    an element's value is in ``constexprs`` under its path (``(1, 0)``: parameter 1, element
    0), as Triton 3.6 forms them. Parameters missing from ``signature`` take their defaults.
    A parameter not annotated ``tl.constexpr`` but typed ``"constexpr"`` with a value is
    compiled with that value baked in (Triton's specialisation of ``stride_ak=1``).
    ``attrs`` gives ``tt.divisibility`` 16 by path, as Triton's (``{(0,): [["tt.divisibility",
    16]]}``), like a ``":16"`` suffix on the type string; other attributes are ignored."""

    fn: object
    signature: dict = field(default_factory=dict)
    constexprs: dict | None = None
    attrs: dict | None = None

    def arguments(self, params) -> tuple[list, dict]:
        """(signature entries of the non-constexpr parameters in order: strings, or
        ``constexpr(value)`` for those typed ``"constexpr"``; constexpr values by name) for
        the kernel's parameter list ``params``. Raises KeyError naming a
        parameter that has neither a type nor a default."""
        consts = {}
        inner = {}  # paths inside tuple parameters -> constexpr value
        for key, value in (self.constexprs or {}).items():
            if isinstance(key, tuple) and len(key) > 1:
                inner[key] = value
                continue
            if isinstance(key, tuple):
                key = params[key[0]].name
            consts[key] = value
        divisible = {k for k, v in (self.attrs or {}).items()
                     if isinstance(k, tuple) and ["tt.divisibility", 16] in
                     [list(x) for x in v]}
        entries = []
        for p in params:
            ty = self.signature.get(p.name)
            if p.constexpr or ty == "constexpr":
                if p.name not in consts and ty == "constexpr":
                    raise KeyError(f"constexpr parameter {p.name!r} has no value in constexprs")
                if not p.constexpr and p.name in consts:  # a runtime parameter baked in
                    entries.append(constexpr(consts.pop(p.name)))
                continue
            if ty is None:
                raise KeyError(f"parameter {p.name!r} has no type in the signature")
            entries.append(_tuple_entry(ty, (p.index,), inner, divisible))
        return entries, consts


def _tuple_entry(ty, path: tuple, inner: dict, divisible: set):
    """A tuple signature entry as ``workbench.compile`` takes it: ``"constexpr"`` elements
    replaced by their values from ``inner`` (keyed by path), ``":16"`` added where
    ``divisible`` holds the element's path. Raises KeyError for a constexpr element without
    a value."""
    if isinstance(ty, (tuple, list)):
        return tuple(_tuple_entry(t, (*path, i), inner, divisible) for i, t in enumerate(ty))
    if ty == "constexpr":
        if path not in inner:
            raise KeyError(f"tuple element {path} is a constexpr with no value in constexprs")
        return inner[path]
    return ty + ":16" if path in divisible and not ty.endswith(":16") else ty
