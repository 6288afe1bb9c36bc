"""``tl.inline_asm_elementwise``: a piece of PTX applied element by element (Triton 3.6
``language/core.py``), compiled to ``tt.elementwise_inline_asm``. Only the CUDA backend runs
it (the interpreter and the CPU backend refuse it at the call's line, as Triton's interpreter
has no PTX either)."""
from __future__ import annotations

from . import dtypes as dt
from .core import LanguageError, builtin, tensor
from .semantic import ir_type, unwrap


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack, _semantic=None):
    """Run the PTX ``asm`` once per group of ``pack`` elements of the broadcast ``args``.

    ``constraints``: LLVM inline-asm constraints, outputs first (``"=r,r,r"``); ``$0..`` in
    ``asm`` name the outputs, then the inputs. ``dtype``: the result dtype, or a tuple of
    dtypes for several outputs (then a tuple of tensors is returned). ``is_pure``: False keeps
    the statement even when its result is unused. ``pack``: elements per register (4 int8
    in one ``.b32``). Scalar arguments with tile arguments are broadcast to the tiles' shape.
    Raises LanguageError for a non-string asm or constraints, or a pack below 1."""
    sem = _semantic
    asm, constraints, pack = unwrap(asm), unwrap(constraints), unwrap(pack)
    is_pure = bool(unwrap(is_pure))
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise LanguageError("inline_asm_elementwise needs the asm text and the constraints "
                            "as compile-time strings")
    if isinstance(pack, bool) or not isinstance(pack, int) or pack < 1:
        raise LanguageError(f"inline_asm_elementwise: pack must be an int >= 1, got {pack!r}")
    dtypes = unwrap(dtype)
    multiple = isinstance(dtypes, (list, tuple))
    dtypes = [unwrap(d) for d in (dtypes if multiple else [dtypes])]
    for d in dtypes:
        if not isinstance(d, dt.dtype):
            raise LanguageError(f"inline_asm_elementwise: dtype must be a tl dtype, got {d!r}")
    xs = [sem.to_tensor(unwrap(a)) for a in unwrap(args)]
    shape: tuple = ()
    for x in xs:
        if x.shape:
            shape = sem.broadcast_shapes(shape, tuple(x.shape)) if shape else tuple(x.shape)
    xs = [sem.broadcast_to_shape(x, shape) if shape else x for x in xs]
    attrs = {"asm_string": asm, "constraints": constraints, "pure": is_pure,
             "packed_element": pack}
    op = sem.builder.create("tt.elementwise_inline_asm", [x.handle for x in xs],
                            [ir_type(d, shape) for d in dtypes], attrs)
    outs: list[tensor] = [sem.wrap(r, d, shape) for r, d in zip(op.results, dtypes, strict=True)]
    return tuple(outs) if multiple else outs[0]


__all__ = ["inline_asm_elementwise"]
