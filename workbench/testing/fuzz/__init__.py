"""A differential fuzzer of random valid kernels (Csmith-style): programs from a seed, their
``@jit`` source, an independent numpy reference, a check against every backend and a shrinker.

``generate(seed)`` -> :class:`Program`; ``source(prog)`` -> kernel text; ``check(prog)`` ->
:class:`Outcome`; ``shrink(prog, still_fails)`` -> a smaller failing program.
"""
from .build import generate, source
from .check import Outcome, check
from .program import Program
from .shrink import shrink

__all__ = ["Outcome", "Program", "check", "generate", "shrink", "source"]
