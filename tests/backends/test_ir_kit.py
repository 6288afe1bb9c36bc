"""Helpers for the interpreter tests: build ttir by hand and run it on numpy arrays through
InterpreterBackend (plus a few tests of the helpers themselves)."""
from __future__ import annotations

import numpy as np

from workbench.backends.base import PointerArg
from workbench.backends.interpreter import InterpreterBackend
from workbench.config import CompileContext, Options
from workbench.ir.builder import Builder
from workbench.ir.core import Location, module_op
from workbench.ir.types import FunctionType, PointerType, TensorType, i1, i32, like, shape_of

FILE = "/virtual/interp_kernel.py"


def ptr(t):
    return PointerType(t)


def ptr_arg(a: np.ndarray) -> PointerArg:
    """PointerArg of a numpy array or view: address of element 0 and the byte span covered."""
    addr = a.__array_interface__["data"][0]
    lo = hi = 0
    for n, s in zip(a.shape, a.strides):
        if n == 0:
            return PointerArg(addr, addr, addr, a.itemsize, a)
        lo += min(0, (n - 1) * s)
        hi += max(0, (n - 1) * s)
    return PointerArg(addr, addr + lo, addr + hi + a.itemsize, a.itemsize, a)


class K:
    """A kernel under construction: ``K("add", [("x", ptr(f32)), ("n", i32)])``; ops get the
    source line set with :meth:`at`."""

    def __init__(self, name, params):
        self.module = module_op()
        types = [t for _, t in params]
        func = Builder(self.module.regions[0].block, loc=Location(FILE, 1, 1)).create(
            "tt.func", [], [], {"sym_name": name, "function_type": FunctionType(tuple(types)),
                                "arg_names": [n for n, _ in params]}, regions=1)
        self.func = func
        self.block = func.regions[0].add_block(types)
        self.args = self.block.args
        self.b = Builder(self.block, loc=Location(FILE, 2, 5))

    def at(self, line, col=5):
        self.b.loc = Location(FILE, line, col)
        return self

    def op(self, name, operands, rtype, **attrs):
        return self.b.create(name, list(operands), [rtype], attrs).result

    def const(self, value, t):
        return self.op("arith.constant", [], t, value=value)

    def pid(self, axis=0):
        return self.op("tt.get_program_id", [], i32, axis=axis)

    def nprog(self, axis=0):
        return self.op("tt.get_num_programs", [], i32, axis=axis)

    def arange(self, start, end):
        return self.op("tt.make_range", [], TensorType((end - start,), i32), start=start, end=end)

    def splat(self, v, shape):
        return self.op("tt.splat", [v], TensorType(tuple(shape), v.type))

    def bcast(self, v, shape):
        return self.op("tt.broadcast", [v], TensorType(tuple(shape), v.type.scalar))

    def expand(self, v, axis):
        s = list(shape_of(v.type))
        s.insert(axis, 1)
        return self.op("tt.expand_dims", [v], TensorType(tuple(s), v.type.scalar), axis=axis)

    def addptr(self, p, off):
        if shape_of(off.type) and not shape_of(p.type):
            p = self.splat(p, shape_of(off.type))
        return self.op("tt.addptr", [p, off], p.type)

    def bin(self, name, a, b):
        return self.op(name, [a, b], a.type)

    def cmp(self, name, pred, a, b):
        return self.op(name, [a, b], like(a.type, i1), predicate=pred)

    def cast(self, name, a, t):
        return self.op(name, [a], like(a.type, t))

    def load(self, p, mask=None, other=None):
        ops = [p] + ([mask] if mask is not None else []) + ([other] if other is not None else [])
        return self.op("tt.load", ops, like(p.type, p.type.scalar.pointee))

    def store(self, p, v, mask=None):
        self.b.create("tt.store", [p, v] + ([mask] if mask is not None else []), [])

    def reduce(self, srcs, axis, combine):
        """``combine(k, accs, xs) -> list of values`` builds the region body with ``k``."""
        srcs = list(srcs)
        shape = list(shape_of(srcs[0].type))
        del shape[axis]
        rts = [TensorType(tuple(shape), s.type.scalar) if shape else s.type.scalar for s in srcs]
        op = self.b.create("tt.reduce", srcs, rts, {"axis": axis}, regions=1)
        self._region(op, "tt.reduce.return", [s.type.scalar for s in srcs], combine)
        return op.results

    def scan(self, srcs, axis, combine, reverse=False):
        srcs = list(srcs)
        op = self.b.create("tt.scan", srcs, [s.type for s in srcs],
                           {"axis": axis, "reverse": reverse}, regions=1)
        self._region(op, "tt.scan.return", [s.type.scalar for s in srcs], combine)
        return op.results

    def _region(self, op, term, scalar_types, combine):
        blk = op.regions[0].add_block(scalar_types + scalar_types)
        n = len(scalar_types)
        with self.b.at_end_of(blk):
            outs = combine(self, blk.args[:n], blk.args[n:])
            self.b.create(term, outs, [])

    def for_(self, lb, ub, step, inits, body):
        """``body(k, iv, iters) -> yields``; returns the loop results."""
        op = self.b.create("scf.for", [lb, ub, step] + list(inits), [v.type for v in inits],
                           regions=1)
        blk = op.regions[0].add_block([lb.type] + [v.type for v in inits])
        with self.b.at_end_of(blk):
            ys = body(self, blk.args[0], blk.args[1:])
            self.b.create("scf.yield", list(ys), [])
        return op.results

    def if_(self, cond, then, els, types):
        op = self.b.create("scf.if", [cond], list(types), regions=2)
        for region, fn in zip(op.regions, (then, els)):
            blk = region.add_block()
            with self.b.at_end_of(blk):
                self.b.create("scf.yield", list(fn(self)), [])
        return op.results

    def finish(self):
        if not self.block.ops or self.block.ops[-1].name != "tt.return":
            self.b.create("tt.return", [], [])
        return self.module

    def compile(self, batch_elems=1 << 16):
        be = InterpreterBackend(batch_elems=batch_elems)
        return be.compile(self.finish(), None, Options(), CompileContext())

    def run(self, grid, *args, batch_elems=1 << 16):
        res = self.compile(batch_elems)
        g = tuple(grid) + (1,) * (3 - len(grid))
        res.launcher(g, [ptr_arg(a) if isinstance(a, np.ndarray) else a for a in args])
        return res.launcher


def poisoned(shape, dtype):
    a = np.empty(shape, dtype)
    if np.issubdtype(a.dtype, np.floating):
        a.fill(np.nan)
    else:
        a.fill(np.iinfo(a.dtype).max // 3)
    return a


def test_ptr_arg_spans_strided_views():
    base = np.zeros((4, 6), np.float32)
    v = base[::2, ::-3]
    pa = ptr_arg(v)
    b0 = base.ctypes.data
    assert pa.address == b0 + 5 * 4
    assert (pa.lo, pa.hi) == (b0 + 2 * 4, b0 + 2 * 24 + 5 * 4 + 4)


def test_builder_kit_finishes_with_return():
    k = K("empty", [])
    m = k.finish()
    assert m.regions[0].block.ops[0].regions[0].block.ops[-1].name == "tt.return"
