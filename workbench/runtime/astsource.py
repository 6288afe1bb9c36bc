"""Triton's ahead-of-time compile inputs: ``ASTSource`` (a kernel with its signature and
constexprs) and ``GPUTarget``, as ``triton.compile(ASTSource(fn, signature, constexprs),
target=GPUTarget("cuda", 90, 32), options={...})`` takes them (Triton 3.6
``python/triton/compiler/compiler.py`` and ``backends/compiler.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field


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
    Parameters missing from ``signature`` take their defaults. ``attrs`` is accepted and
    ignored (hints come from the type strings' ``:16``)."""

    fn: object
    signature: dict = field(default_factory=dict)
    constexprs: dict | None = None
    attrs: dict | None = None

    def arguments(self, params) -> tuple[list, dict]:
        """(signature strings of the non-constexpr parameters in order, constexpr values by
        name) for the kernel's parameter list ``params``. Raises KeyError naming a
        parameter that has neither a type nor a default."""
        consts = {}
        for key, value in (self.constexprs or {}).items():
            if isinstance(key, tuple):
                key = params[key[0]].name
            consts[key] = value
        entries = []
        for p in params:
            ty = self.signature.get(p.name)
            if p.constexpr or ty == "constexpr":
                if p.name not in consts and ty == "constexpr":
                    raise KeyError(f"constexpr parameter {p.name!r} has no value in constexprs")
                continue
            if ty is None:
                raise KeyError(f"parameter {p.name!r} has no type in the signature")
            entries.append(ty)
        return entries, consts
