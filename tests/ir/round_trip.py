"""The IR round-trip property, checked on every kernel the test suite compiles.

:func:`install` wraps :func:`workbench.runtime.compiler.compile_specialization` so that each
compiled kernel's ``ttir`` and ``ttgir`` texts are parsed and printed again; the reprint must
be identical (:func:`assert_round_trip`). ``tests/conftest.py`` installs it for the session.
"""
from __future__ import annotations

import difflib

from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module

STAGES = ("ttir", "ttgir")


def assert_round_trip(text: str, what: str = "IR") -> None:
    """Raise AssertionError (with a diff) unless ``print(parse(text)) == text``."""
    again = print_module(parse_module(text), locations="loc(" in text)
    if again != text:
        diff = "".join(list(difflib.unified_diff(text.splitlines(True), again.splitlines(True),
                                                 "printed", "reprinted"))[:40])
        raise AssertionError(f"{what} does not round-trip through the parser:\n{diff}")


def install():
    """Check every compile's IR stages; returns a function that undoes the wrapping."""
    from workbench.runtime import compiler

    original = compiler.compile_specialization

    def checked(jit_fn, spec, options, target, *args, **kwargs):
        kernel = original(jit_fn, spec, options, target, *args, **kwargs)
        for stage in STAGES:
            text = kernel.asm.get(stage)
            if text:
                assert_round_trip(text, f"{stage} of {getattr(jit_fn, '__name__', jit_fn)} "
                                        f"for {target}")
        return kernel

    compiler.compile_specialization = checked

    def undo() -> None:
        compiler.compile_specialization = original
    return undo
