"""Helpers for pass tests: wrap op lines in a kernel, run passes, print without locations."""
from __future__ import annotations

from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.ir.verifier import verify
from workbench.passes import PassManager

HEAD = ('module {\n  tt.func public @k(%p: !tt.ptr<f32>, %n: i32, %m: i32, %f: f32) '
        'attributes {noinline = false} {\n')
TAIL = "    tt.return\n  }\n}\n"


def kernel(body: str) -> str:
    """A module text whose kernel has params %p (!tt.ptr<f32>), %n, %m (i32), %f (f32)."""
    lines = [ln.strip() for ln in body.strip().splitlines() if ln.strip()]
    return HEAD + "".join(f"    {ln}\n" for ln in lines) + TAIL


def run(passes, text: str) -> str:
    """Parse ``text``, verify, run ``passes`` with verification, print without locations."""
    m = parse_module(text)
    verify(m)
    PassManager(passes, verify=True).run(m, None, "test")
    return print_module(m, locations=False)
