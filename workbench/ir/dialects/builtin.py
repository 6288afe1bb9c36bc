"""MLIR's ``builtin.module``: the top level, printed ``module attributes {...} { ... }``."""
from __future__ import annotations

from ..attrs import format_attr_dict
from .spec import CustomSyntax, op


def _print_module(p, o, indent) -> None:
    attrs = o.attributes
    head = "module" + (f" attributes {format_attr_dict(attrs)}" if attrs else "") + " {"
    p.emit(indent, head, None)
    p.region_body(o.regions[0].block, indent + 1)
    p.emit(indent, "}", None)


def _parse_module(r, name):
    raise r.error("a module is only valid at the top level")


SPECS = [
    op("builtin.module", results=(), regions=1, custom=CustomSyntax(_print_module, _parse_module),
       doc="the top level; holds tt.func ops"),
]
