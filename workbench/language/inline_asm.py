"""``tl.inline_asm_elementwise``: PTX inline assembly applied elementwise
(``tt.elementwise_inline_asm``, Triton 3.6's ``language/core.py``).

The arguments become tensors (Python numbers as ``to_tensor`` types them) and are broadcast to
one shape, with no type promotion: each keeps its dtype. ``dtype`` is one dtype (one result) or
a sequence of them (a tuple of results, each of the broadcast shape). The assembly sees
``pack`` elements at a time: each operand and result whose elements are narrower than 32 bits
travels as 32-bit registers holding ``32 // bits`` elements each (``<4 x i8>``, ``<2 x half>``),
wider ones one element per register; the registers are numbered ``$0, $1, ...`` results first,
then operands, each result's (operand's) registers in turn. ``constraints`` are LLVM's
inline-asm constraints for those registers (``=r`` a 32-bit output, ``r`` a 32-bit input, ``f``
an f32, ``l`` a 64-bit integer, ``h`` a 16-bit one; PTX ISA "Inline PTX Assembly in CUDA").

Only the CUDA backend runs it; the interpreter and the CPU backend refuse it at compile time
with the kernel's line (Triton's interpreter cannot run it either).
"""
from __future__ import annotations

from . import dtypes as dt
from .core import LanguageError, builtin
from .semantic import ir_type, unwrap


def _dtypes(dtype) -> tuple[list, bool]:
    d = unwrap(dtype)
    if isinstance(d, (tuple, list)):
        return [unwrap(x) for x in d], True
    return [d], False


def _check(asm, constraints, ds, pack) -> None:
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise LanguageError("inline_asm_elementwise needs the assembly and the constraints as "
                            "strings", "pass string literals or tl.constexpr strings")
    if not isinstance(pack, int) or isinstance(pack, bool) or pack < 1:
        raise LanguageError(f"inline_asm_elementwise: pack must be a positive int, got {pack!r}")
    for d in ds:
        if not isinstance(d, dt.dtype) or d.is_ptr():
            raise LanguageError(f"inline_asm_elementwise: result dtype {d!r} is not a scalar "
                                "dtype", "give tl.int32, tl.float32, ... or a tuple of them")


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack, _semantic=None):
    """Run PTX ``asm`` over the elements of ``args`` (see the module docstring).

    ``args``: tensors or Python scalars, broadcast together (any shapes that broadcast);
    ``dtype``: the result dtype, or a tuple of them for several results; ``is_pure``: False
    keeps the op even when its results are unused; ``pack``: elements per invocation.
    Returns a tensor of the broadcast shape (a tuple of them for a tuple ``dtype``; scalars
    when every argument is a scalar). Raises LanguageError for non-string ``asm`` or
    ``constraints``, a bad ``pack`` or a pointer result dtype.
    """
    sem = _semantic
    asm, constraints, pack = unwrap(asm), unwrap(constraints), unwrap(pack)
    ds, several = _dtypes(dtype)
    _check(asm, constraints, ds, pack)
    xs = [sem.to_tensor(unwrap(a)) for a in unwrap(args)]
    shape: tuple = ()
    for x in xs:
        shape = sem.broadcast_shapes(shape, tuple(x.shape))
    xs = [sem.broadcast_to_shape(x, shape) if shape else x for x in xs]
    attrs = {"asm_string": asm, "constraints": constraints, "packed_element": pack,
             "pure": bool(unwrap(is_pure))}
    op = sem.builder.create("tt.elementwise_inline_asm", [x.handle for x in xs],
                            [ir_type(d, shape) for d in ds], attrs)
    outs = tuple(sem.wrap(r, d, shape) for r, d in zip(op.results, ds, strict=True))
    return outs if several else outs[0]
