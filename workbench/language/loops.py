"""Loop iterators the frontend recognises in ``for`` statements (Triton's
``compiler/code_generator.py``).

``tl.static_range(a, b, step)`` is unrolled at compile time (all bounds compile-time ints);
``tl.range(a, b, step, num_stages=None, loop_unroll_factor=None, ...)`` is an ``scf.for`` with
loop attributes. Neither runs as Python.
"""
from __future__ import annotations


class static_range:
    """``for i in tl.static_range(start, end, step)``: unrolled; ``i`` is a constexpr."""

    def __init__(self, arg1, arg2=None, step=1):
        self.start, self.end = (0, arg1) if arg2 is None else (arg1, arg2)
        self.step = step

    def __iter__(self):
        raise RuntimeError("tl.static_range can only be used in a for loop inside a @jit kernel")


class condition:
    """``while tl.condition(c, disable_licm=False):``: the loop test ``c`` with a hint
    (Triton 3.6's ``tl.condition``). ``disable_licm`` asks that nothing be hoisted out of
    the loop: the ``scf.while`` gets Triton's ``llvm.loop_annotation`` attribute, which the
    CPU backend turns into ``!llvm.loop`` metadata that stops LLVM's LICM (as MLIR does)."""

    def __init__(self, arg1, disable_licm=False):
        self.condition = arg1
        self.disable_licm = disable_licm


class range:  # noqa: A001 (Triton's name)
    """``for i in tl.range(start, end, step, num_stages=None, ...)``: an ``scf.for`` whose
    attributes carry the hints."""

    def __init__(self, arg1, arg2=None, step=1, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False,
                 disable_licm=False):
        self.start, self.end = (0, arg1) if arg2 is None else (arg1, arg2)
        self.step = step
        self.num_stages = num_stages
        self.loop_unroll_factor = loop_unroll_factor
        self.disallow_acc_multi_buffer = disallow_acc_multi_buffer
        self.flatten = flatten
        self.warp_specialize = warp_specialize
        self.disable_licm = disable_licm

    def __iter__(self):
        raise RuntimeError("tl.range can only be used in a for loop inside a @jit kernel")
