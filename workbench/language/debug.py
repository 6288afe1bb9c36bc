"""Compiler hints and debugging builtins: ``multiple_of``, ``max_contiguous``,
``max_constancy``, ``static_print``, ``static_assert``, ``device_print``, ``device_assert``,
``debug_barrier`` (Triton's ``language/core.py``)."""
from __future__ import annotations

from . import dtypes as dt
from .core import LanguageError, StaticAssertFailure, builtin, tensor
from .semantic import unwrap


def _hint(x, values, attr, sem=None):
    """Set hint ``attr`` on ``x``'s defining op. Triton 3.6's frontend generates a loop's
    body once with the values from before the loop to find what it carries, then again with
    the iter args (``code_generator.py``, ``visit_For``); a hint in the body sets its
    attribute during the first run on the value from before the loop, and that op stays:
    ``tl.multiple_of(a_ptrs, [16, 16])`` in a loop, its result discarded, marks the pointer
    computed before the loop (Triton's tutorial 08). ``sem.loop_entry`` gives that value."""
    values = unwrap(values)
    values = [unwrap(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
    if not isinstance(x, tensor):
        raise LanguageError(f"{attr} hint needs a tensor")
    if len(values) != max(1, len(x.shape)):
        raise LanguageError(f"{attr} hint needs {max(1, len(x.shape))} values, got {len(values)}")
    for i, v in enumerate(values):
        # Triton 3.6 asks for constexpr ints too (core.py); a value below 1 it accepts and
        # then crashes on in its axis analysis, so it is refused here
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise LanguageError(f"{attr} hint value {i} must be a compile-time int >= 1, "
                                f"got {v!r}")
    op = x.handle.defining_op
    if op is None and sem is not None:  # a loop-carried value: the hint lands on its value
        entry = sem.loop_entry.get(x.handle)  # from before the loop, as in Triton
        op = entry.defining_op if entry is not None else None
    if op is not None:
        op.attributes[attr] = list(values)
    return x


@builtin
def multiple_of(input, values, _semantic=None):
    """Hint: the first element of each group is divisible by ``values``
    (``tt.divisibility`` attribute on the defining op, printed ``dense<v> : tensor<Nxi32>``).
    On a value with no defining op (a kernel argument) nothing is recorded and nothing is
    raised, as in Triton 3.6 (its ``Value.set_attr`` skips the function's arguments,
    ``python/src/ir.cc``). Returns ``input``."""
    return _hint(unwrap(input), values, "tt.divisibility", _semantic)


@builtin
def max_contiguous(input, values, _semantic=None):
    """Hint: runs of ``values`` consecutive integers (``tt.contiguity`` attribute)."""
    return _hint(unwrap(input), values, "tt.contiguity", _semantic)


@builtin
def max_constancy(input, values, _semantic=None):
    """Hint: runs of ``values`` equal elements (``tt.constancy`` attribute)."""
    return _hint(unwrap(input), values, "tt.constancy", _semantic)


@builtin
def assume(cond, _semantic=None):
    """Hint that ``cond`` (a boolean scalar or tensor, or a compile-time bool) holds (Triton's
    ``tl.assume``). A scalar condition emits ``llvm.intr.assume`` as in Triton:
    ``tritongpu-fuse-nested-loops`` reads an assumed ``ub > lb`` as a positive trip count,
    the CUDA backend hands it to LLVM (``llvm.assume``); nothing is checked at run time. A
    tensor condition emits nothing (Triton's ``llvm.intr.assume`` takes only an ``i1``).
    Raises :class:`LanguageError` for a condition that is not boolean, or a compile-time
    False (the kernel would be wrong by its own statement)."""
    c = unwrap(cond)
    if isinstance(c, (bool, int)):
        if not c:
            raise LanguageError("tl.assume(False): the assumed condition is false at compile "
                                "time", "fix the condition or drop the assume")
        return None
    dtype = getattr(c, "dtype", None)
    if dtype is None or not dtype.is_bool():
        raise LanguageError(f"tl.assume needs a boolean condition, got {dtype or type(c)}",
                            "compare first: tl.assume(x > 0)")
    if isinstance(c, tensor) and not c.is_block():
        _semantic.builder.create("llvm.intr.assume", [c.handle], [])
    return None


@builtin
def static_print(*values, sep=" ", end="\n", file=None, flush=False, _semantic=None):
    """Print compile-time values (and tensors' dtypes and shapes) while compiling; ``sep``,
    ``end``, ``file``, ``flush`` as Python's ``print``."""
    if not getattr(_semantic, "quiet", False):
        print(*(unwrap(v) for v in values), sep=sep, end=end, file=unwrap(file),
              flush=bool(unwrap(flush)))


@builtin
def static_assert(cond, msg="", _semantic=None):
    """Fail the compile with ``msg`` when the compile-time ``cond`` is false."""
    cond = unwrap(cond)
    if isinstance(cond, tensor):
        raise LanguageError("static_assert needs a compile-time condition",
                            "use tl.device_assert for values known only at run time")
    if not cond:
        raise StaticAssertFailure(f"static_assert failed: {unwrap(msg)}")


@builtin
def device_print(prefix, *args, hex=False, _semantic=None):  # noqa: A002 (Triton's name)
    """Print ``prefix`` and the values of ``args`` when the kernel runs (``tt.print``)."""
    prefix = unwrap(prefix)
    if not isinstance(prefix, str) or not prefix.isascii():
        raise LanguageError("device_print's prefix must be an ASCII string literal")
    if prefix and not prefix.endswith(" ") and args:
        prefix += " "
    vals = [_semantic.to_tensor(unwrap(a)) for a in args]
    _semantic.builder.create("tt.print", [v.handle for v in vals], [], {
        "prefix": prefix, "hex": bool(unwrap(hex)),
        "isSigned": [1 if v.dtype.is_int_signed() else 0 for v in vals]})


@builtin
def device_assert(cond, msg="", mask=None, _semantic=None):
    """Check ``cond`` when the kernel runs (``tt.assert``); compiled only with
    ``Options(debug=True)``, as in Triton."""
    if not getattr(_semantic, "debug", False):
        return
    cond = _semantic.to_tensor(unwrap(cond))
    if unwrap(mask) is not None:
        cond = _semantic.logical("or", cond, _semantic.logical_not(unwrap(mask)))
    cond = _semantic.cast(cond, dt.int1)
    _semantic.builder.create("tt.assert", [cond.handle], [], {"message": str(unwrap(msg))})


@builtin
def debug_barrier(_semantic=None):
    """A barrier for all threads of the program (``gpu.barrier``)."""
    _semantic.builder.create("gpu.barrier", [], [])
