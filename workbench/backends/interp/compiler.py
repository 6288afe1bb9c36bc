"""Precompile a ``tt.func`` into a list of Python closures over a flat list of value slots.

Each op becomes one closure ``f(env)`` that reads its operands from ``env[i]`` and writes its
results to ``env[j]`` (no name dispatch at run time). Constants and anything computed only
from constants (``make_range``, splats of constants...) are evaluated once, at compile time,
into the environment template. Reserved slots: 0-2 program id (x, y, z), 3-5 number of
programs, 6 the launch's :class:`~.memory.Memory`, 7 the list of program ids of the batch.

Values are numpy arrays with a leading program axis (size 1 or the batch size B), so scalars
are shape ``(B,)`` and a ``tensor<MxN>`` is ``(B, M, N)``; see :mod:`.dtypes` for dtypes.
"""
from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError, WorkbenchError, cuda_only
from ...ir.core import Operation
from ...ir.dialects.tt import is_grid_dependency_control
from ...ir.types import TensorType, shape_of
from . import shape_ops
from .analysis import analyse
from .arith import elementwise_fn
from .async_ops import AsyncOpsMixin
from .block import FIRST_SLOT, MEM, NPROG, PID, PIDS, Return, run_block  # noqa: F401
from .control import ControlFlowMixin
from .dtypes import constant_array, np_dtype
from .errors import InterpreterError
from .memory_ops import MemoryOpsMixin
from .tma_ops import TmaOpsMixin


class CompiledFunction:
    """A ``tt.func`` ready to run: ``template`` (initial env), ``body`` closures, parameter
    ``arg_slots``/``arg_types``/``arg_names``, ``facts`` (:class:`.analysis.KernelFacts`),
    ``where`` (closure -> op, for error locations), ``max_numel`` (largest tile)."""

    def __init__(self, name, template, body, arg_slots, arg_types, arg_names, facts, where,
                 max_numel, ret_slots):
        self.name, self.template, self.body = name, template, body
        self.arg_slots, self.arg_types, self.arg_names = arg_slots, arg_types, arg_names
        self.facts, self.where, self.max_numel, self.ret_slots = facts, where, max_numel, ret_slots

    def failing_op(self, exc: BaseException) -> Operation | None:
        """The op whose closure raised ``exc`` (innermost block runner in the traceback)."""
        tb, found = exc.__traceback__, None
        while tb is not None:
            fr = tb.tb_frame
            if fr.f_code is run_block.__code__:
                f = fr.f_locals.get("f")
                if f in self.where:
                    found = self.where[f]
            tb = tb.tb_next
        return found


_PURE_SHAPE = {"tt.splat", "tt.unsplat", "tt.broadcast", "tt.expand_dims", "tt.reshape",
               "tt.trans", "tt.join", "tt.cat"}


class FunctionCompiler(ControlFlowMixin, MemoryOpsMixin, AsyncOpsMixin, TmaOpsMixin):
    """Compiles one ``tt.func`` (and, for ``tt.call``, the functions of its ``module``)."""

    def __init__(self, func: Operation, module: Operation | None = None):
        self.func, self.module = func, module
        self.facts = analyse(func)
        self.slots: dict = {}
        self.template: list = [None] * FIRST_SLOT
        self.where: dict = {}
        self.max_numel = 1
        self.callees: dict = {}

    # -- slots ------------------------------------------------------------------------------
    def slot(self, v) -> int:
        s = self.slots.get(v)
        if s is None:
            s = len(self.template)
            self.template.append(None)
            self.slots[v] = s
            if isinstance(v.type, TensorType):
                self.max_numel = max(self.max_numel, v.type.numel)
        return s

    def compile_callee(self, func: Operation) -> CompiledFunction:
        """Compile ``func``, the target of a ``tt.call`` in this function's module, with a
        plain FunctionCompiler (used by ``op_tt_call`` of the control-flow mixin)."""
        return FunctionCompiler(func, self.module).compile()

    def compile(self) -> CompiledFunction:
        entry = self.func.regions[0].block
        arg_slots = [self.slot(a) for a in entry.args]
        body, ret_slots = self.block(entry, top=True)
        a = self.func.attributes
        names = a.get("arg_names") or [f"arg{i}" for i in range(len(entry.args))]
        return CompiledFunction(a.get("sym_name", "kernel"), self.template, body, arg_slots,
                                [x.type for x in entry.args], list(names), self.facts,
                                self.where, self.max_numel, ret_slots)

    def block(self, block, top: bool = False):
        """Closures of ``block``'s ops; returns ``(fns, terminator operand slots)``."""
        fns = []
        ops = block.ops
        term = ops[-1] if ops and ops[-1].name in (
            "scf.yield", "tt.reduce.return", "tt.scan.return", "scf.condition") else None
        if top and ops and ops[-1].name == "tt.return":
            term = ops[-1]
        for op in ops:
            if op is term:
                break
            try:
                f = self.op(op)
            except (NotImplementedError, KeyError, TypeError) as e:
                raise UnsupportedError(f"the interpreter cannot run {op.name}: {e}",
                                       op.loc) from None
            if f is not None:
                self.where[f] = op
                fns.append(f)
        ret = [self.slot(v) for v in term.operands] if term is not None else []
        return fns, ret

    # -- dispatch (compile time only) -------------------------------------------------------
    def op(self, op: Operation):
        name = op.name
        if is_grid_dependency_control(op):   # no griddepcontrol on the host: a no-op
            self.template[self.slot(op.result)] = np.zeros((1,), np.int32)
            return None
        if name == "tt.elementwise_inline_asm":
            raise cuda_only("tl.inline_asm_elementwise", "the interpreter", op.loc,
                            op.attributes.get("asm_string", ""))
        if name in ("arith.constant", "ub.poison"):  # poison: any value does; zeros
            r = op.result
            t = r.type
            val = constant_array(op.attributes.get("value", 0), t)
            self.template[self.slot(r)] = np.broadcast_to(
                val.reshape((1,) * (1 + len(shape_of(t)))), (1,) + shape_of(t)).copy()
            return None
        if name in ("tt.get_program_id", "tt.get_num_programs"):
            self.slots[op.result] = (PID if name == "tt.get_program_id" else NPROG) + \
                op.attributes["axis"]
            return None
        if name == "tt.make_range":
            a = op.attributes
            self.template[self.slot(op.result)] = np.arange(
                a["start"], a["end"], dtype=np.int32)[None, :]
            return None
        if name in ("ttg.convert_layout", "tt.int_to_ptr", "tt.ptr_to_int") or (
                name == "tt.bitcast" and np_dtype(op.operands[0].type) == np_dtype(op.result.type)):
            self.slots[op.result] = self.slot(op.operands[0])
            return None
        if name in ("gpu.barrier", "ttg.local_dealloc", "llvm.intr.assume"):
            return None
        method = getattr(self, "op_" + name.replace(".", "_"), None)
        if method is not None:
            return self._fold(op, method(op))
        fn = elementwise_fn(op)
        if fn is None:
            raise NotImplementedError("unknown op")
        return self._fold(op, self._elementwise(op, fn))

    def _fold(self, op, f):
        """Evaluate ``f`` now when it is pure and all its operands are compile-time constants."""
        pure = op.name in _PURE_SHAPE or op.name.startswith(("arith.", "math.")) or \
            op.name in ("tt.addptr", "tt.bitcast", "tt.fp_to_fp", "tt.clampf", "tt.split")
        if f is None or not pure or op.regions:
            return f
        ins = [self.slots.get(v) for v in op.operands]
        if any(s is None or s < FIRST_SLOT or self.template[s] is None for s in ins):
            return f
        with np.errstate(all="ignore"):
            f(self.template)
        return None

    def _elementwise(self, op, fn):
        ins = [self.slot(v) for v in op.operands]
        r = self.slot(op.result)
        if len(ins) == 1:
            a, = ins

            def f1(env, fn=fn, a=a, r=r):
                env[r] = fn(env[a])
            return f1
        if len(ins) == 2:
            a, b = ins

            def f2(env, fn=fn, a=a, b=b, r=r):
                env[r] = fn(env[a], env[b])
            return f2

        def fn_n(env, fn=fn, ins=ins, r=r):
            env[r] = fn(*[env[i] for i in ins])
        return fn_n

    # -- tile ops ---------------------------------------------------------------------------
    def op_arith_select(self, op):
        c, a, b = (self.slot(v) for v in op.operands)
        r = self.slot(op.result)
        rank = len(shape_of(op.result.type))
        if rank and not shape_of(op.operands[0].type):
            tail = (1,) * rank

            def sel_scalar(env, c=c, a=a, b=b, r=r, tail=tail):
                cv = env[c]
                env[r] = np.where(cv.reshape(cv.shape + tail), env[a], env[b])
            return sel_scalar

        def sel(env, c=c, a=a, b=b, r=r):
            env[r] = np.where(env[c], env[a], env[b])
        return sel

    def op_tt_addptr(self, op):
        from .dtypes import mem_dtype
        p, o = self.slot(op.operands[0]), self.slot(op.operands[1])
        r = self.slot(op.result)
        k = mem_dtype(op.operands[0].type.scalar.pointee).itemsize

        def addptr(env, p=p, o=o, r=r, k=k):
            base, off = env[p], env[o].astype(np.int64)  # a fresh array: update in place
            if k != 1:
                off *= k
            if base.shape[0] <= off.shape[0]:
                off += base
                env[r] = off
            else:
                env[r] = base + off
        return addptr

    def __getattr__(self, name):
        # tile shape ops live in shape_ops as functions op_xxx(compiler, op)
        if name.startswith("op_tt_"):
            f = getattr(shape_ops, name[3:], None)
            if f is not None:
                return lambda op: f(self, op)
        raise AttributeError(name)


def compile_function(func: Operation, module: Operation | None = None) -> CompiledFunction:
    """Precompile ``func`` (a ``tt.func``). Raises UnsupportedError (with the op's location)
    for ops the interpreter cannot run."""
    return FunctionCompiler(func, module).compile()


def reraise_with_location(cf: CompiledFunction, exc: Exception, pid) -> None:
    """Turn an unexpected exception from a closure into an :class:`InterpreterError` naming
    the op's source line and the program id; WorkbenchErrors pass through unchanged."""
    if isinstance(exc, WorkbenchError):
        raise exc
    op = cf.failing_op(exc)
    loc = op.loc if op is not None else None
    what = op.name if op is not None else "the kernel"
    raise InterpreterError(f"{what} failed: {type(exc).__name__}: {exc}",
                           tuple(int(x) for x in pid), loc) from exc
