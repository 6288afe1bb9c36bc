"""Closures for control flow (``scf.for``, ``scf.if``, ``scf.while``, ``tt.return``,
``tt.call``) and debugging ops (``tt.print``, ``tt.assert``).

Loop bounds and branch conditions are the same for every program of a batch (the launcher
batches only kernels whose control flow does not depend on the program id or on memory), so a
loop runs once per batch. Inside reduce/scan combine regions an ``scf.if`` whose condition
differs per lane runs both branches and selects (combine regions have no side effects).
"""
from __future__ import annotations

import sys

import numpy as np

from ...ir.types import FloatType, IntType
from .block import PIDS, Return, run_block
from .dtypes import bf16_to_f32, is_bf16, unsigned
from .errors import DeviceAssertionError, first_program


def _uniform(x: np.ndarray, what: str):
    """The single value of a scalar that must be the same for all programs of a batch."""
    if x.size != 1 and not (x == x.flat[0]).all():
        raise RuntimeError(f"{what} differs between programs run together")
    return x.flat[0]


def _set(env, slots, values):
    for s, v in zip(slots, values, strict=False):
        env[s] = v


class ControlFlowMixin:
    """Mixed into the FunctionCompiler: ``op_scf_*``, ``op_tt_return``, ``op_tt_call``,
    ``op_tt_print``, ``op_tt_assert``."""

    def op_scf_for(self, op):
        lb, ub, step = (self.slot(v) for v in op.operands[:3])
        inits = [self.slot(v) for v in op.operands[3:]]
        body = op.regions[0].block
        iv = self.slot(body.args[0])
        iters = [self.slot(a) for a in body.args[1:]]
        fns, ys = self.block(body)
        res = [self.slot(r) for r in op.results]
        ivdt = np.dtype(np.int64) if body.args[0].type.width == 64 else np.dtype(np.int32)
        if body.args[0].type.width not in (32, 64):
            ivdt = np.dtype(f"int{max(8, body.args[0].type.width)}")

        def for_(env):
            lo = int(_uniform(env[lb], "a loop's lower bound"))
            hi = int(_uniform(env[ub], "a loop's upper bound"))
            st = int(_uniform(env[step], "a loop's step"))
            if st <= 0:
                raise ValueError(f"scf.for step must be positive, got {st}")
            vals = [env[s] for s in inits]
            for i in range(lo, hi, st):
                env[iv] = np.array([i], dtype=ivdt)
                _set(env, iters, vals)
                run_block(fns, env)
                vals = [env[s] for s in ys]
            _set(env, res, vals)
        return for_

    def op_scf_if(self, op):
        c = self.slot(op.operands[0])
        then_fns, then_ys = self.block(op.regions[0].block)
        has_else = len(op.regions) > 1 and op.regions[1].blocks
        else_fns, else_ys = self.block(op.regions[1].block) if has_else else ([], [])
        res = [self.slot(r) for r in op.results]

        def if_(env):
            cv = env[c]
            if cv.size == 1 or (cv == cv.flat[0]).all():
                if cv.flat[0]:
                    run_block(then_fns, env)
                    _set(env, res, [env[s] for s in then_ys])
                else:
                    run_block(else_fns, env)
                    _set(env, res, [env[s] for s in else_ys])
                return
            # lanes disagree (only inside combine regions): both sides, then select
            run_block(then_fns, env)
            tv = [env[s] for s in then_ys]
            run_block(else_fns, env)
            ev = [env[s] for s in else_ys]
            _set(env, res, [np.where(cv.reshape(cv.shape + (1,) * (np.ndim(t) - cv.ndim)), t, e)
                            for t, e in zip(tv, ev, strict=False)])
        return if_

    def op_scf_while(self, op):
        inits = [self.slot(v) for v in op.operands]
        before, after = op.regions[0].block, op.regions[1].block
        b_args = [self.slot(a) for a in before.args]
        b_fns, b_out = self.block(before)  # b_out: [cond, args...]
        a_args = [self.slot(a) for a in after.args]
        a_fns, a_ys = self.block(after)
        res = [self.slot(r) for r in op.results]

        def while_(env):
            vals = [env[s] for s in inits]
            while True:
                _set(env, b_args, vals)
                run_block(b_fns, env)
                cond = _uniform(env[b_out[0]], "a while loop's condition")
                vals = [env[s] for s in b_out[1:]]
                if not cond:
                    break
                _set(env, a_args, vals)
                run_block(a_fns, env)
                vals = [env[s] for s in a_ys]
            _set(env, res, vals)
        return while_

    def op_tt_return(self, op):
        vals = [self.slot(v) for v in op.operands]

        def return_(env, vals=vals):
            raise Return([env[s] for s in vals])
        return return_

    def op_tt_call(self, op):
        callee_name = op.attributes["callee"]
        callee_name = callee_name.lstrip("@") if isinstance(callee_name, str) else callee_name
        if self.module is None:
            raise NotImplementedError("tt.call without a module")
        target = None
        for f in self.module.regions[0].block.ops:
            if f.name == "tt.func" and f.attributes.get("sym_name") == callee_name:
                target = f
        if target is None:
            raise NotImplementedError(f"callee {callee_name!r} not found")
        cf = self.callees.get(callee_name)
        if cf is None:
            cf = self.compile_callee(target)
            self.callees[callee_name] = cf
        args = [self.slot(v) for v in op.operands]
        res = [self.slot(r) for r in op.results]

        def call(env):
            sub = list(cf.template)
            sub[:8] = env[:8]
            _set(sub, cf.arg_slots, [env[s] for s in args])
            try:
                run_block(cf.body, sub)
                out = [sub[s] for s in cf.ret_slots]
            except Return as r:
                out = r.values
            _set(env, res, out)
        return call

    def op_tt_print(self, op):
        a = op.attributes
        prefix = a.get("prefix", "")
        hexa = bool(a.get("hex", False))
        signed = list(a.get("isSigned", ())) or [1] * len(op.operands)
        ins = [self.slot(v) for v in op.operands]
        types = [v.type for v in op.operands]

        def fmt(x, t, sgn):
            if is_bf16(t):
                x = bf16_to_f32(x)
            elif isinstance(t.scalar, IntType) and (not sgn or hexa):
                x = unsigned(x)
            if hexa and isinstance(t.scalar, IntType):
                return np.array2string(np.asarray(x), formatter={"int": hex})
            if hexa and isinstance(t.scalar, FloatType):
                return np.array2string(np.asarray(x).view(f"u{x.dtype.itemsize}"),
                                       formatter={"int": hex})
            return np.array2string(np.asarray(x)) if np.ndim(x) else str(x)

        def print_(env):
            pids = env[PIDS]
            for b, pid in enumerate(pids):
                parts = []
                for s, t, sg in zip(ins, types, signed, strict=False):
                    v = env[s]
                    v = v[b] if v.shape[0] > 1 else v[0]
                    parts.append(fmt(v, t, sg))
                pid_s = "(" + ", ".join(str(int(p)) for p in pid) + ")"
                sys.stdout.write(f"pid {pid_s} {prefix}{' '.join(parts)}\n")
        return print_

    def op_tt_assert(self, op):
        c = self.slot(op.operands[0])
        msg = op.attributes.get("message", "")
        loc = op.loc

        def assert_(env):
            cv = env[c]
            if not cv.all():
                _, pid = first_program(~cv, env[PIDS])
                raise DeviceAssertionError(msg, tuple(int(p) for p in pid), loc)
        return assert_
