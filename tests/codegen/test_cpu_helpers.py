"""Helpers for the CPU backend tests: build ttir by hand (the frontend is written in parallel)
and run it on numpy arrays through CpuBackend. No tests here."""
from __future__ import annotations

import numpy as np

from workbench.backends.base import PointerArg
from workbench.backends.cpu import CpuBackend
from workbench.config import CompileContext, Options, Target
from workbench.ir.builder import Builder
from workbench.ir.core import Location, module_op
from workbench.ir.types import (FunctionType, PointerType, TensorType, f32, i1, i32, like,
                                shape_of)

FILE = "/virtual/kernel_under_test.py"


def ptr_arg(a: np.ndarray) -> PointerArg:
    """A PointerArg for a numpy array or view: address of element 0, span of the memory the
    view covers."""
    addr = a.ctypes.data
    lo = hi = 0
    for n, s in zip(a.shape, a.strides):
        if n == 0:
            return PointerArg(addr, addr, addr, a.itemsize, a)
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return PointerArg(addr, addr + lo, addr + hi + a.itemsize, a.itemsize, a)


class K:
    """A kernel under construction: ``K("add", [("x_ptr", ptr(f32)), ("n", i32)])``.
    Each builder method takes the source ``line`` its op is attributed to (default: the
    current line, advanced with :meth:`at`)."""

    def __init__(self, name, params):
        self.module = module_op()
        types = [t for _, t in params]
        self.func_loc = Location(FILE, 1, 1)
        func = Builder(self.module.regions[0].block, loc=self.func_loc).create(
            "tt.func", [], [], {"sym_name": name, "function_type": FunctionType(tuple(types)),
                                "arg_names": [n for n, _ in params]}, regions=1)
        self.block = func.regions[0].add_block(types)
        self.args = self.block.args
        self.b = Builder(self.block, loc=Location(FILE, 2, 5))
        self.name = name

    def at(self, line, col=5):
        self.b.loc = Location(FILE, line, col)
        return self

    def op(self, name, operands, rtype, **attrs):
        return self.b.create(name, operands, [rtype], attrs).result

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

    def broadcast(self, v, shape):
        return self.op("tt.broadcast", [v], TensorType(tuple(shape), v.type.element))

    def expand(self, v, axis):
        s = list(v.type.shape)
        s.insert(axis, 1)
        return self.op("tt.expand_dims", [v], TensorType(tuple(s), v.type.element), axis=axis)

    def bin(self, name, a, b):
        return self.op(name, [a, b], a.type)

    def cmp(self, name, pred, a, b):
        return self.op(name, [a, b], like(a.type, i1), predicate=pred)

    def unary(self, name, a, t=None):
        return self.op(name, [a], t or a.type)

    def addptr(self, p, off):
        if p.type.is_tensor or not off.type.is_tensor:
            return self.op("tt.addptr", [p, off], p.type)
        p = self.splat(p, off.type.shape)
        return self.op("tt.addptr", [p, off], p.type)

    def load(self, p, mask=None, other=None):
        ops = [p] + ([mask] if mask is not None else []) + ([other] if other is not None else [])
        return self.op("tt.load", ops, like(p.type, p.type.scalar.pointee))

    def store(self, p, v, mask=None):
        self.b.create("tt.store", [p, v] + ([mask] if mask is not None else []), [])

    def reduce(self, src, axis, combine="arith.addf"):
        t = src.type
        shape = tuple(s for d, s in enumerate(t.shape) if d != axis)
        rt = TensorType(shape, t.element) if shape else t.element
        op = self.b.create("tt.reduce", [src], [rt], {"axis": axis}, regions=1)
        blk = op.regions[0].add_block([t.element, t.element])
        inner = Builder(blk, loc=self.b.loc)
        r = inner.create(combine, blk.args, [t.element]).result
        inner.create("tt.reduce.return", [r], [])
        return op.result

    def ret(self):
        self.b.create("tt.return", [], [])
        return self

    def compile(self, **opts):
        ctx = CompileContext()
        res = CpuBackend(Target.parse("cpu")).compile(self.module, None, Options(**opts), ctx)
        res.ctx = ctx
        return res


def run(res, grid, *args):
    """Launch a BackendResult with numpy arrays (-> PointerArg) and Python scalars."""
    if isinstance(grid, int):
        grid = (grid,)
    grid = tuple(grid) + (1,) * (3 - len(grid))
    res.launcher(grid, [ptr_arg(a) if isinstance(a, np.ndarray) else a for a in args])


def ptr(t):
    return PointerType(t)


__all__ = ["K", "run", "ptr", "ptr_arg", "f32", "i32", "i1", "shape_of", "TensorType"]
