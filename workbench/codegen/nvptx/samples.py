"""Hand-built ttgir of small kernels (vector add, 2-D broadcast tile, row/column reductions,
softmax, casts), laid out as ``convert-triton-to-tritongpu`` does (default blocked layouts,
slice layouts for ``expand_dims`` sources and reduce results, ``ttg.convert_layout`` back to
blocked). Used by the CUDA backend's tests and ``benchmarks/gpu_check.py`` so they do not
depend on the frontend; every op carries a location in this file. The warps per program live
in the module's ``"ttg.num-warps"`` attribute only (what the code generator reads).
"""
from __future__ import annotations

from ...ir.builder import Builder
from ...ir.core import Location, Operation, module_op
from ...ir.types import FunctionType, PointerType, TensorType, f32, i1, i32
from ...layouts.blocked import blocked_for_shape, default_blocked
from ...layouts.encodings import SliceLayout

FILE = __file__


class KernelBuilder:
    """Builds one ``tt.func`` in a ttgir module of ``num_warps`` warps for ``cuda:<arch>``.
    ``params``: list of (name, type, divisible by 16). ``op(name, operands, type, **attrs)``
    creates an op at source line ``line``."""

    def __init__(self, name: str, params, num_warps: int = 4, arch: int = 90):
        self.module = module_op({"ttg.num-ctas": 1, "ttg.num-warps": num_warps,
                                 "ttg.target": f"cuda:{arch}", "ttg.threads-per-warp": 32})
        types = [t for _, t, _ in params]
        attrs = [{"tt.divisibility": 16} if d else {} for _, _, d in params]
        self.func = Operation("tt.func", [], [], {
            "sym_name": name, "function_type": FunctionType(tuple(types), ()),
            "arg_attrs": attrs, "arg_names": [n for n, _, _ in params]}, regions=1,
            loc=Location(FILE, 1, 1))
        block = self.func.regions[0].add_block(types)
        for a, (n, _, _) in zip(block.args, params, strict=True):
            a.name = n
        self.module.regions[0].block.append(self.func)
        self.args = block.args
        self.b = Builder(block, loc=Location(FILE, 1, 1))
        self.line = 2

    @property
    def num_warps(self) -> int:
        """Warps per program: the module's ``"ttg.num-warps"``."""
        return int(self.module.attributes["ttg.num-warps"])

    def blocked(self, shape):
        """Triton's default blocked layout of ``shape`` for this module's warps."""
        return default_blocked(shape, self.num_warps)

    def op(self, name, operands=(), t=None, **attrs):
        self.line += 1
        loc = Location(FILE, self.line, 5)
        o = self.b.create(name, list(operands), [t] if t is not None else [], attrs, loc=loc)
        return o.result if t is not None else o

    def const(self, value, t):
        return self.op("arith.constant", [], t, value=value)

    def finish(self):
        self.op("tt.return")
        return self.module


def tensor(shape, elem, enc):
    return TensorType(tuple(shape), elem, enc)


def vector_add(block: int = 1024, num_warps: int = 4, vec: int = 1, dtype=f32,
               n_div16: bool = False):
    """``out[i] = x[i] + y[i]`` for ``i < n``; ``vec`` > 1 uses a coalesced layout with
    ``sizePerThread = [vec]`` (what the coalesce pass picks for 16-byte aligned fp32);
    ``n_div16`` marks ``n`` divisible by 16 (then the mask is constant over 16 elements)."""
    ptr = PointerType(dtype)
    k = KernelBuilder("add_kernel", [("x_ptr", ptr, True), ("y_ptr", ptr, True),
                                     ("out_ptr", ptr, True), ("n", i32, n_div16)], num_warps)
    enc = blocked_for_shape((block,), (vec,), (0,), k.num_warps)
    ti, tp, tf, tb = (tensor((block,), e, enc) for e in (i32, ptr, dtype, i1))
    pid = k.op("tt.get_program_id", [], i32, axis=0)
    base = k.op("arith.muli", [pid, k.const(block, i32)], i32)
    offs = k.op("arith.addi", [k.op("tt.splat", [base], ti),
                               k.op("tt.make_range", [], ti, start=0, end=block)], ti)
    mask = k.op("arith.cmpi", [offs, k.op("tt.splat", [k.args[3]], ti)], tb, predicate="slt")
    loads = []
    for a in k.args[:2]:
        p = k.op("tt.addptr", [k.op("tt.splat", [a], tp), offs], tp)
        loads.append(k.op("tt.load", [p, mask], tf))
    s = k.op("arith.addf", loads, tf)
    po = k.op("tt.addptr", [k.op("tt.splat", [k.args[2]], tp), offs], tp)
    k.op("tt.store", [po, s, mask])
    return k.finish()


def _row_col_offsets(k, shape, stride, enc):
    """2-D offsets ``rows[:, None] * stride + cols[None, :]`` in layout ``enc`` (i32 tensors),
    plus the row and col index tensors (expanded)."""
    m, n = shape
    r_t = tensor((m,), i32, SliceLayout(1, enc))
    c_t = tensor((n,), i32, SliceLayout(0, enc))
    rows = k.op("tt.expand_dims", [k.op("tt.make_range", [], r_t, start=0, end=m)],
                tensor((m, 1), i32, enc), axis=1)
    cols = k.op("tt.expand_dims", [k.op("tt.make_range", [], c_t, start=0, end=n)],
                tensor((1, n), i32, enc), axis=0)
    rs = k.op("arith.muli", [rows, k.op("tt.splat", [stride], tensor((m, 1), i32, enc))],
              tensor((m, 1), i32, enc))
    t2 = tensor(shape, i32, enc)
    offs = k.op("arith.addi", [k.op("tt.broadcast", [rs], t2), k.op("tt.broadcast", [cols], t2)],
                t2)
    return offs, rows, cols


def broadcast_tile(m: int = 32, n: int = 64, num_warps: int = 4):
    """``out[i, j] = x[i] * y[j] + 1`` for ``i < M, j < N`` (row stride ``stride``): 2-D tiles,
    ``x[:, None]`` / ``y[None, :]`` broadcasting, masks on both dims."""
    ptr = PointerType(f32)
    k = KernelBuilder("bcast_kernel", [("x_ptr", ptr, True), ("y_ptr", ptr, True),
                                       ("out_ptr", ptr, True), ("M", i32, False),
                                       ("N", i32, False), ("stride", i32, False)], num_warps)
    enc = k.blocked((m, n))
    offs, rows, cols = _row_col_offsets(k, (m, n), k.args[5], enc)
    t2 = lambda e: tensor((m, n), e, enc)  # noqa: E731
    rmask = k.op("arith.cmpi", [rows, k.op("tt.splat", [k.args[3]], tensor((m, 1), i32, enc))],
                 tensor((m, 1), i1, enc), predicate="slt")
    cmask = k.op("arith.cmpi", [cols, k.op("tt.splat", [k.args[4]], tensor((1, n), i32, enc))],
                 tensor((1, n), i1, enc), predicate="slt")
    mask = k.op("arith.andi", [k.op("tt.broadcast", [rmask], t2(i1)),
                               k.op("tt.broadcast", [cmask], t2(i1))], t2(i1))
    xp = k.op("tt.addptr", [k.op("tt.splat", [k.args[0]], tensor((m, 1), ptr, enc)), rows],
              tensor((m, 1), ptr, enc))
    xv = k.op("tt.load", [xp, rmask], tensor((m, 1), f32, enc))
    yp = k.op("tt.addptr", [k.op("tt.splat", [k.args[1]], tensor((1, n), ptr, enc)), cols],
              tensor((1, n), ptr, enc))
    yv = k.op("tt.load", [yp, cmask], tensor((1, n), f32, enc))
    prod = k.op("arith.mulf", [k.op("tt.broadcast", [xv], t2(f32)),
                               k.op("tt.broadcast", [yv], t2(f32))], t2(f32))
    res = k.op("arith.addf", [prod, k.const(1.0, t2(f32))], t2(f32))
    op_ = k.op("tt.addptr", [k.op("tt.splat", [k.args[2]], t2(ptr)), offs], t2(ptr))
    k.op("tt.store", [op_, res, mask])
    return k.finish()


def _combine_region(k, reduce_op, kind):
    blk = reduce_op.regions[0].add_block([f32, f32])
    saved = (k.b.block, k.b.index)
    k.b.set_insertion_point_to_end(blk)
    name = {"sum": "arith.addf", "max": "arith.maxnumf"}[kind]
    r = k.op(name, list(blk.args), f32)
    k.op("tt.reduce.return", [r])
    k.b.block, k.b.index = saved


def reduce_op(k, src, axis, kind, res_t):
    """A ``tt.reduce`` of ``src`` over ``axis`` with an addf (sum) or maxnumf (max) region."""
    k.line += 1
    o = k.b.create("tt.reduce", [src], [res_t], {"axis": axis}, regions=1,
                   loc=Location(FILE, k.line, 5))
    _combine_region(k, o, kind)
    return o.result


def reduce_2d(m: int = 64, n: int = 128, axis: int = 1, kind: str = "sum", num_warps: int = 4):
    """``out = sum(x, axis)`` (or max) of a contiguous ``m x n`` fp32 tile; result stored
    through a ``convert_layout`` to a 1-D blocked layout, as Triton's ttgir does."""
    ptr = PointerType(f32)
    k = KernelBuilder(f"reduce_{kind}_axis{axis}", [("x_ptr", ptr, True), ("o_ptr", ptr, True)],
                      num_warps)
    enc = k.blocked((m, n))
    offs, _, _ = _row_col_offsets(k, (m, n), k.const(n, i32), enc)
    t2 = lambda e: tensor((m, n), e, enc)  # noqa: E731
    x = k.op("tt.load", [k.op("tt.addptr", [k.op("tt.splat", [k.args[0]], t2(ptr)), offs],
                              t2(ptr))], t2(f32))
    r_len = n if axis == 0 else m
    r = reduce_op(k, x, axis, kind, tensor((r_len,), f32, SliceLayout(axis, enc)))
    enc1 = k.blocked((r_len,))
    rc = k.op("ttg.convert_layout", [r], tensor((r_len,), f32, enc1))
    o = k.op("tt.make_range", [], tensor((r_len,), i32, enc1), start=0, end=r_len)
    po = k.op("tt.addptr", [k.op("tt.splat", [k.args[1]], tensor((r_len,), ptr, enc1)), o],
              tensor((r_len,), ptr, enc1))
    k.op("tt.store", [po, rc])
    return k.finish()


def softmax(block: int = 1024, num_warps: int = 4):
    """Row-wise softmax, one row per program: ``y = exp(x - max) / sum(exp(x - max))`` over
    ``n_cols`` (any value <= block; masked loads with ``other = -inf``); row strides passed."""
    ptr = PointerType(f32)
    k = KernelBuilder("softmax_kernel", [("out_ptr", ptr, True), ("in_ptr", ptr, True),
                                         ("in_stride", i32, False), ("out_stride", i32, False),
                                         ("n_cols", i32, False)], num_warps)
    enc = k.blocked((block,))
    t = lambda e: tensor((block,), e, enc)  # noqa: E731
    row = k.op("tt.get_program_id", [], i32, axis=0)
    cols = k.op("tt.make_range", [], t(i32), start=0, end=block)
    mask = k.op("arith.cmpi", [cols, k.op("tt.splat", [k.args[4]], t(i32))], t(i1),
                predicate="slt")
    in_row = k.op("arith.muli", [row, k.args[2]], i32)
    ip = k.op("tt.addptr", [k.op("tt.splat", [k.args[1]], t(ptr)),
                            k.op("arith.addi", [k.op("tt.splat", [in_row], t(i32)), cols],
                                 t(i32))], t(ptr))
    x = k.op("tt.load", [ip, mask, k.const(float("-inf"), t(f32))], t(f32))
    mx = reduce_op(k, x, 0, "max", f32)
    z = k.op("arith.subf", [x, k.op("tt.splat", [mx], t(f32))], t(f32))
    num = k.op("math.exp", [z], t(f32))
    den = reduce_op(k, num, 0, "sum", f32)
    y = k.op("arith.divf", [num, k.op("tt.splat", [den], t(f32))], t(f32))
    out_row = k.op("arith.muli", [row, k.args[3]], i32)
    op_ = k.op("tt.addptr", [k.op("tt.splat", [k.args[0]], t(ptr)),
                             k.op("arith.addi", [k.op("tt.splat", [out_row], t(i32)), cols],
                                  t(i32))], t(ptr))
    k.op("tt.store", [op_, y, mask])
    return k.finish()


def casts(block: int = 256, num_warps: int = 4, src=f32, chain=None):
    """``out[i] = cast chain of x[i]``: ``chain`` is a list of (op name, IR type) applied in
    order (default f32 -> f16 -> f32 -> bf16 -> f32 -> i32 -> f32, each step an arith cast)."""
    from ...ir.types import bf16, f16
    chain = chain or [("arith.truncf", f16), ("arith.extf", f32), ("arith.truncf", bf16),
                      ("arith.extf", f32), ("arith.fptosi", i32), ("arith.sitofp", f32)]
    out_t = chain[-1][1]
    k = KernelBuilder("cast_kernel", [("x_ptr", PointerType(src), True),
                                      ("out_ptr", PointerType(out_t), True), ("n", i32, False)],
                      num_warps)
    enc = k.blocked((block,))
    t = lambda e: tensor((block,), e, enc)  # noqa: E731
    pid = k.op("tt.get_program_id", [], i32, axis=0)
    offs = k.op("arith.addi", [k.op("tt.splat", [k.op("arith.muli", [pid, k.const(block, i32)],
                                                     i32)], t(i32)),
                               k.op("tt.make_range", [], t(i32), start=0, end=block)], t(i32))
    mask = k.op("arith.cmpi", [offs, k.op("tt.splat", [k.args[2]], t(i32))], t(i1),
                predicate="slt")
    x = k.op("tt.load", [k.op("tt.addptr", [k.op("tt.splat", [k.args[0]], t(PointerType(src))),
                                            offs], t(PointerType(src))), mask], t(src))
    for name, ty in chain:
        x = k.op(name, [x], t(ty))
    po = k.op("tt.addptr", [k.op("tt.splat", [k.args[1]], t(PointerType(out_t))), offs],
              t(PointerType(out_t)))
    k.op("tt.store", [po, x, mask])
    return k.finish()
