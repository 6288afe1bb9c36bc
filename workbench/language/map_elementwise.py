"""``tl.map_elementwise(scalar_fn, *args, pack=1)``: apply a scalar ``@jit`` function to every
element of tiles (Triton 3.6, ``triton/language/core.py``).

The frontend compiles ``scalar_fn`` once, on scalars, into the region of one
``tt.map_elementwise`` op, as Triton prints it::

    %0:2 = "tt.map_elementwise"(%a, %b) <{pack = 1 : i32}> ({
    ^bb0(%arg4: f32, %arg5: f32):
      ...
      tt.map_elementwise.return %8, %6 : f32, f32
    }) : (tensor<128xf32>, tensor<128xf32>) -> (tensor<128xf32>, tensor<128xf32>)

so control flow in ``scalar_fn`` (an ``if`` per element) stays per element. With ``pack=p`` the
function takes ``p`` consecutive elements of each input (``a0, a1, b0, b1`` for two inputs
and ``p=2``) and returns ``p`` values per result, grouped the same way.
"""
from __future__ import annotations

from ..ir.core import Region
from .core import LanguageError, builtin, tensor
from .semantic import ir_type, unwrap


def _inputs(args, sem) -> list:
    """The inputs as tiles of one broadcast shape (scalars are splatted, as Triton does)."""
    xs = [sem.to_tensor(unwrap(a)) for a in args]
    if not xs:
        raise LanguageError("tl.map_elementwise needs at least one input tile")
    shape: tuple = ()
    for x in xs:
        shape = sem.broadcast_shapes(shape, x.shape) if shape else tuple(x.shape)
    if not shape:
        raise LanguageError("tl.map_elementwise needs at least one tile (not only scalars)",
                            "call the function directly on scalars")
    return [sem.broadcast_to_shape(x, shape) for x in xs]


def _results(r, sem) -> list:
    if r is None:
        raise LanguageError("the function given to tl.map_elementwise returned nothing",
                            "return one value per result (a tuple for several)")
    vals = list(r) if isinstance(r, (tuple, list)) else [r]
    return [sem.to_tensor(unwrap(v)) for v in vals]


@builtin
def map_elementwise(scalar_fn, *args, pack=1, _semantic=None):
    """Apply the ``@jit`` ``scalar_fn`` to each element of the tiles ``args`` (broadcast to one
    shape). Returns one tile, or a tuple of tiles when ``scalar_fn`` returns a tuple; each has
    the inputs' shape and the dtype ``scalar_fn`` returned. ``pack`` (a power of two dividing
    the tile's size): how many consecutive elements one call takes.

    Raises LanguageError for a non-``@jit`` function, a non-scalar return, a bad ``pack`` or
    results whose dtypes differ within a pack."""
    sem = _semantic
    fn = unwrap(scalar_fn)
    pack = unwrap(pack)
    if not getattr(fn, "__workbench_jit__", False):
        raise LanguageError(f"tl.map_elementwise needs a @jit function, got {fn!r}")
    if sem.call_jit is None:
        raise LanguageError("tl.map_elementwise needs the frontend")
    xs = _inputs(args, sem)
    shape = tuple(xs[0].shape)
    numel = xs[0].numel
    if not isinstance(pack, int) or pack < 1 or pack & (pack - 1) or numel % pack:
        raise LanguageError(f"pack={pack!r} must be a power of two dividing the tile's "
                            f"{numel} elements")
    b = sem.builder
    region = Region()
    block = region.add_block([x.dtype.to_ir() for x in xs for _ in range(pack)])
    with b.at_end_of(block):
        scalars = [sem.wrap(a, xs[i // pack].dtype) for i, a in enumerate(block.args)]
        r = sem.call_jit(fn, scalars)
        single = not isinstance(r, (tuple, list))
        outs = _results(r, sem)
        if any(o.shape for o in outs):
            raise LanguageError("the function given to tl.map_elementwise must return "
                                "scalars, not tiles")
        if len(outs) % pack:
            raise LanguageError(f"with pack={pack} the function must return a multiple of "
                                f"{pack} values, got {len(outs)}")
        dtypes = [o.dtype for o in outs[::pack]]
        for k in range(1, pack):
            if [o.dtype for o in outs[k::pack]] != dtypes:
                raise LanguageError("type mismatch in unpacked results: the values of one "
                                    "result must share a dtype across the pack")
        b.create("tt.map_elementwise.return", [o.handle for o in outs], [])
    op = b.create("tt.map_elementwise", [x.handle for x in xs],
                  [ir_type(d, shape) for d in dtypes], {"pack": pack}, regions=1)
    op.regions[0] = region
    region.parent = op
    res = [tensor(v, d, shape, sem) for v, d in zip(op.results, dtypes, strict=True)]
    return res[0] if single else tuple(res)
