"""Hand-built ttir for tests: :class:`K` builds a kernel op by op (the frontend is not involved),
then compiles it for the CPU backend (:meth:`K.compile`, launched with :func:`run`) or the
interpreter (:meth:`K.compile_interpreter`, :meth:`K.interpret`). Numpy arrays become
PointerArgs through :func:`ptr_arg`. Shared by the interpreter, CPU and NVPTX code generation
tests; its own tests live in ``tests/backends/test_ir_kit.py``."""
from __future__ import annotations

import numpy as np

from workbench.backends.base import PointerArg
from workbench.backends.cpu import CpuBackend
from workbench.backends.interpreter import InterpreterBackend
from workbench.config import CompileContext, Options, Target
from workbench.ir.builder import Builder
from workbench.ir.core import Location, module_op
from workbench.ir.types import FunctionType, PointerType, TensorType, f32, i1, i32, like, shape_of

FILE = "/virtual/kernel_under_test.py"


def ptr(t):
    return PointerType(t)


def ptr_arg(a: np.ndarray) -> PointerArg:
    """A PointerArg for a numpy array or view: address of element 0, span of the memory the
    view covers (negative strides reach below element 0)."""
    addr = a.ctypes.data
    lo = hi = 0
    for n, s in zip(a.shape, a.strides, strict=True):
        if n == 0:
            return PointerArg(addr, addr, addr, a.itemsize, a)
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return PointerArg(addr, addr + lo, addr + hi + a.itemsize, a.itemsize, a)


def poisoned(shape, dtype):
    """An output array filled with NaN (floats) or a large sentinel (ints)."""
    a = np.empty(shape, dtype)
    if np.issubdtype(a.dtype, np.floating):
        a.fill(np.nan)
    else:
        a.fill(np.iinfo(a.dtype).max // 3)
    return a


def run(res, grid, *args):
    """Launch a BackendResult with numpy arrays (-> PointerArg) and Python scalars; ``grid`` is
    an int or a tuple of up to 3 ints."""
    if isinstance(grid, int):
        grid = (grid,)
    grid = tuple(grid) + (1,) * (3 - len(grid))
    res.launcher(grid, [ptr_arg(a) if isinstance(a, np.ndarray) else a for a in args])


class K:
    """A kernel under construction: ``K("add", [("x_ptr", ptr(f32)), ("n", i32)])``.
    Ops are attributed to the current source line of :data:`FILE`, set with :meth:`at`."""

    def __init__(self, name, params):
        self.module = module_op()
        self.name = name
        types = [t for _, t in params]
        self.func_loc = Location(FILE, 1, 1)
        self.func = Builder(self.module.regions[0].block, loc=self.func_loc).create(
            "tt.func", [], [], {"sym_name": name, "function_type": FunctionType(tuple(types)),
                                "arg_names": [n for n, _ in params]}, regions=1)
        self.block = self.func.regions[0].add_block(types)
        self.args = self.block.args
        self.b = Builder(self.block, loc=Location(FILE, 2, 5))

    def at(self, line, col=5):
        self.b.loc = Location(FILE, line, col)
        return self

    # ops ------------------------------------------------------------------------------------

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

    def broadcast(self, v, shape):
        return self.op("tt.broadcast", [v], TensorType(tuple(shape), v.type.scalar))

    bcast = broadcast

    def expand(self, v, axis):
        s = list(shape_of(v.type))
        s.insert(axis, 1)
        return self.op("tt.expand_dims", [v], TensorType(tuple(s), v.type.scalar), axis=axis)

    def addptr(self, p, off):
        """``p + off``; a scalar pointer is splatted to the shape of a tensor offset."""
        if off.type.is_tensor and not p.type.is_tensor:
            p = self.splat(p, off.type.shape)
        return self.op("tt.addptr", [p, off], p.type)

    def bin(self, name, a, b):
        return self.op(name, [a, b], a.type)

    def cmp(self, name, pred, a, b):
        return self.op(name, [a, b], like(a.type, i1), predicate=pred)

    def unary(self, name, a, t=None):
        """A one-operand op whose result type is ``t`` (default: the operand's type)."""
        return self.op(name, [a], t or a.type)

    def cast(self, name, a, t):
        """A one-operand op to element type ``t``, keeping the operand's shape."""
        return self.op(name, [a], like(a.type, t))

    def load(self, p, mask=None, other=None):
        ops = [p] + ([mask] if mask is not None else []) + ([other] if other is not None else [])
        return self.op("tt.load", ops, like(p.type, p.type.scalar.pointee))

    def store(self, p, v, mask=None):
        self.b.create("tt.store", [p, v] + ([mask] if mask is not None else []), [])

    # ops with regions -----------------------------------------------------------------------

    def reduce(self, srcs, axis, combine="arith.addf"):
        """``tt.reduce`` of one value or a list of values along ``axis``.

        ``combine`` is either the name of a binary op (``"arith.maxnumf"``) or a function
        ``combine(k, accs, xs) -> list of values`` that builds the region body with ``k``.
        One value in: returns the one result; a list in: returns the list of results."""
        single = not isinstance(srcs, (list, tuple))
        srcs = [srcs] if single else list(srcs)
        if isinstance(combine, str):
            name = combine

            def combine(k, accs, xs):
                return [k.bin(name, a, x) for a, x in zip(accs, xs, strict=True)]
        shape = list(shape_of(srcs[0].type))
        del shape[axis]
        rts = [TensorType(tuple(shape), s.type.scalar) if shape else s.type.scalar for s in srcs]
        op = self.b.create("tt.reduce", srcs, rts, {"axis": axis}, regions=1)
        self._region(op, "tt.reduce.return", [s.type.scalar for s in srcs], combine)
        return op.result if single else op.results

    def scan(self, srcs, axis, combine, reverse=False):
        """``tt.scan``; ``combine`` as for :meth:`reduce` (a function); returns the results."""
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
        for region, fn in zip(op.regions, (then, els), strict=False):
            blk = region.add_block()
            with self.b.at_end_of(blk):
                self.b.create("scf.yield", list(fn(self)), [])
        return op.results

    # finishing and compiling ----------------------------------------------------------------

    def ret(self):
        """Append ``tt.return`` (always); returns ``self``."""
        self.b.create("tt.return", [], [])
        return self

    def finish(self):
        """Append ``tt.return`` unless the body already ends with one; returns the module."""
        if not self.block.ops or self.block.ops[-1].name != "tt.return":
            self.b.create("tt.return", [], [])
        return self.module

    def compile(self, **opts):
        """Compile the module as it stands (call :meth:`ret` first) with the CPU backend;
        ``opts`` are :class:`Options` fields. The result carries its context as ``.ctx``."""
        ctx = CompileContext()
        res = CpuBackend(Target.parse("cpu")).compile(self.module, None, Options(**opts), ctx)
        res.ctx = ctx
        return res

    def compile_interpreter(self, batch_elems=1 << 16):
        """:meth:`finish`, then compile with the interpreter backend."""
        be = InterpreterBackend(batch_elems=batch_elems)
        return be.compile(self.finish(), None, Options(), CompileContext())

    def interpret(self, grid, *args, batch_elems=1 << 16):
        """Compile with the interpreter and launch on ``grid`` (a tuple) with numpy arrays and
        Python scalars; returns the launcher."""
        res = self.compile_interpreter(batch_elems)
        g = tuple(grid) + (1,) * (3 - len(grid))
        res.launcher(g, [ptr_arg(a) if isinstance(a, np.ndarray) else a for a in args])
        return res.launcher


__all__ = [
    "FILE",
    "K",
    "TensorType",
    "f32",
    "i1",
    "i32",
    "poisoned",
    "ptr",
    "ptr_arg",
    "run",
    "shape_of",
]
