"""``tt.print``, ``tt.assert`` and ``gpu.barrier`` in the CPU lowering, and the device error
record shared with ``tt.gather``'s index check.

- ``tt.print {prefix, hex, isSigned}``: each operand is written to memory (tiles: a contiguous
  scratch buffer; scalars: a stack slot) and the kernel calls back into Python once per
  program through :data:`HOST_SYMBOL` (the Python side is
  :mod:`workbench.backends.cpu.hostcalls`), which formats the line as the interpreter does. The op's
  ``mem_ops`` entry is ``("print", loc, {"prefix", "hex", "args": [[shape, type, signed]]})``.
- ``tt.assert {message}``: a vectorisable pass over the condition ORs the failing elements;
  if any fails, the kernel writes the error record ``err[0] = 1, err[1] = op index,
  err[2..4] = program id, err[7] = first failing element (row-major)`` and returns 1, like an
  out-of-bounds access. The entry is ``("assert", loc, message)``; the launcher raises
  :class:`~workbench.backends.interp.errors.DeviceAssertionError` (the interpreter's class)
  naming the program id, the source line and the message.
- ``gpu.barrier``: a no-op (a program is one thread on the CPU).
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.core import Operation
from ...ir.types import PointerType, TensorType
from .llvmtypes import I8, I32, I64, PTR, storage_type, to_storage
from .tiles import Buffer, linearize, loop_nest

#: the one external function compiled kernels call (``tt.print``):
#: ``void workbench_cpu_host_call(i64 op_index, i32 pid_x, i32 pid_y, i32 pid_z, ptr err,
#: ptr values)``; the launcher side registers it with MCJIT
HOST_SYMBOL = "workbench_cpu_host_call"


def _type_name(t) -> str:
    return "ptr" if isinstance(t, PointerType) else str(t)


def _host_fn(lw) -> ir.Function:
    fn = lw.m.globals.get(HOST_SYMBOL)
    if fn is None:
        fn = ir.Function(lw.m, ir.FunctionType(ir.VoidType(), [I64, I32, I32, I32, PTR, PTR]),
                         HOST_SYMBOL)
    return fn


def lower_print(lw, op: Operation) -> None:
    b = lw.b
    n = len(op.operands)
    arr = b.bitcast(lw.entry_alloca(ir.ArrayType(I64, max(1, n))), I64.as_pointer())
    signed = list(op.attributes.get("isSigned") or [1] * n)
    args = []
    for k, v in enumerate(op.operands):
        t = v.type
        if isinstance(t, TensorType):
            tile = lw.tile(v)
            buf = tile if isinstance(tile, Buffer) and tile.contiguous() else lw.materialize(tile)
            p, shape, elem = buf.ptr, list(t.shape), t.element
        else:
            p = lw.entry_alloca(storage_type(t))
            b.store(to_storage(b, lw.env[v], t), p)
            shape, elem = [], t
        b.store(b.ptrtoint(p, I64), b.gep(arr, [ir.Constant(I64, k)], source_etype=I64))
        args.append([shape, _type_name(elem), int(signed[k]) if k < len(signed) else 1])
    index = len(lw.mem_ops)
    lw.mem_ops.append(("print", op.loc, {"prefix": str(op.attributes.get("prefix", "")),
                                         "hex": bool(op.attributes.get("hex", False)),
                                         "args": args}))
    b.call(_host_fn(lw), [ir.Constant(I64, index), *lw.pids, lw.err, b.bitcast(arr, PTR)])


def write_error(lw, index: int, elem_index=None) -> None:
    """Write the device error record for ``mem_ops[index]`` and return 1 from the kernel
    (the builder is left in a fresh unreachable block)."""
    b = lw.b
    fields = {0: ir.Constant(I64, 1), 1: ir.Constant(I64, index)}
    for k, p in enumerate(lw.pids):
        fields[2 + k] = b.zext(p, I64)
    fields[7] = elem_index if elem_index is not None else ir.Constant(I64, 0)
    for k, v in fields.items():
        b.store(v, b.gep(lw.err, [ir.Constant(I64, k)], source_etype=I64))
    b.branch(lw.error_block())
    b.position_at_end(lw.fn.append_basic_block("after.error"))


def check_all(lw, shape, bad_at, index: int) -> None:
    """Fail with record ``index`` if ``bad_at(elems, idx)`` (an i1) holds for any element of
    ``shape``: a vectorisable OR pass, then (only on failure) a search for the first bad
    element."""
    b = lw.b
    flag = lw.entry_alloca(I8)
    b.store(ir.Constant(I8, 0), flag)

    def scan(idx):
        b.store(b.or_(b.load(flag, typ=I8), b.zext(bad_at(lw.elems(), idx), I8)), flag)
    loop_nest(b, shape, scan)
    failed = b.icmp_unsigned("!=", b.load(flag, typ=I8), ir.Constant(I8, 0))
    slow = lw.fn.append_basic_block("check.find")
    cont = lw.fn.append_basic_block("check.ok")
    b.cbranch(failed, slow, cont)
    b.position_at_end(slow)

    def find(idx):
        hit = lw.fn.append_basic_block("check.hit")
        nxt = lw.fn.append_basic_block("check.next")
        b.cbranch(bad_at(lw.elems(), idx), hit, nxt)
        b.position_at_end(hit)
        write_error(lw, index, linearize(b, idx, shape) if shape else None)
        b.branch(nxt)
        b.position_at_end(nxt)
    loop_nest(b, shape, find)
    b.branch(cont)
    b.position_at_end(cont)


def lower_assert(lw, op: Operation) -> None:
    t = op.operands[0].type
    shape = tuple(t.shape) if isinstance(t, TensorType) else ()
    cond = lw.tile(op.operands[0], shape)
    index = len(lw.mem_ops)
    lw.mem_ops.append(("assert", op.loc, str(op.attributes.get("message", ""))))
    check_all(lw, shape, lambda e, idx: lw.b.not_(e.get(cond, idx)), index)
