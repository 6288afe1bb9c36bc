"""ttir -> host LLVM IR: the kernel body.

:class:`KernelLowering` walks one ``tt.func`` and emits an LLVM function

    i32 @<name>(i64 addr0, i64 lo0, i64 hi0, ..., <scalar params>...,
                i32 pid_x, i32 pid_y, i32 pid_z, i32 nprog_x, i32 nprog_y, i32 nprog_z,
                ptr noalias scratch, ptr err, ptr stop)

returning 0, or 1 after writing an out-of-bounds record into ``err`` (see :mod:`.memory`), or
2 when it left a ``scf.while`` loop because another program of the launch failed (the grid's
shared i32 flag ``*stop`` is set; see :meth:`KernelLowering.leave_if_stopped`). Pointer params
arrive as an address plus the byte span ``[lo, hi)`` of the array the launch passed. Tiles are
lowered per :mod:`.tiles`; loads, reductions and expensive multi-use values are materialised in
the scratch arena, whose size (``arena_bytes``) is fixed at compile time.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError, cuda_only
from ...ir.core import Operation, Value
from ...ir.dialects.tt import is_grid_dependency_control
from ...ir.types import PointerType, TensorType
from ...passes.axis_info import AxisInfoAnalysis
from ..poison import Poison
from . import atomics, control, debug_ops, dot, load_fusion, memory, reduce, tile_ops
from .debuginfo import DebugInfo
from .irtypes import tensor_of
from .llvmtypes import I32, I64, PTR, const, storage_size, value_type
from .scalar_ops import ELEMENTWISE, emit_elementwise
from .tiles import Buffer, Elems, Lazy, Splat, Tile, contiguous_strides, loop_nest, numel

# Ops cheap enough to recompute in every consumer's loop even when used several times.
CHEAP = {"arith.constant", "tt.make_range", "tt.splat", "tt.broadcast", "tt.expand_dims",
         "tt.addptr", "arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori",
         "arith.xori", "arith.cmpi", "arith.cmpf", "arith.select", "arith.extsi", "arith.extui",
         "arith.trunci", "arith.bitcast", "tt.trans", "tt.bitcast", "tt.int_to_ptr",
         "tt.ptr_to_int", "arith.shli", "arith.shrsi", "arith.shrui", "arith.maxsi",
         "arith.minsi", "arith.maxui", "arith.minui"}
ALIGN = 64
#: ops lowered by a function of another module: name -> ``f(lowering, op)``
_LOWER = {"tt.scan": tile_ops.lower_scan, "tt.join": tile_ops.lower_join,
          "tt.split": tile_ops.lower_split, "tt.cat": tile_ops.lower_cat,
          "tt.histogram": tile_ops.lower_histogram, "tt.gather": tile_ops.lower_gather,
          "tt.print": debug_ops.lower_print,
          "tt.assert": debug_ops.lower_assert, "gpu.barrier": lambda lw, op: None,
          # an assumption is not handed to LLVM here: the bounds checks must stay
          "llvm.intr.assume": lambda lw, op: None,
          "tt.load": memory.lower_load, "tt.store": memory.lower_store,
          "tt.reduce": reduce.lower_reduce, "scf.for": control.lower_for,
          "scf.if": control.lower_if, "scf.while": control.lower_while,
          "tt.atomic_rmw": atomics.lower_atomic_rmw, "tt.atomic_cas": atomics.lower_atomic_cas,
          "tt.dot": dot.lower_dot}
_VIEWS = ("tt.splat", "tt.broadcast", "tt.expand_dims", "tt.trans", "tt.reshape")


class KernelLowering:
    """Lowers one ``tt.func`` into ``module``. After :meth:`run`: ``fn`` (the body function),
    ``arena_bytes`` (scratch bytes per worker), ``mem_ops`` (list of ``(kind, Location,
    param_index)`` indexed by the op index stored in error records), ``param_types``."""

    def __init__(self, module: ir.Module, di: DebugInfo, func: Operation, options):
        self.m, self.di, self.func, self.options = module, di, func, options
        self.name = func.attributes["sym_name"]
        self.block = func.regions[0].block
        self.param_types = [a.type for a in self.block.args]
        self.env: dict = {}
        self.arena_bytes = 0
        self.mem_ops: list = []
        self.prov = memory.provenance(func)
        self.axis = AxisInfoAnalysis(func)
        #: tile loads read in their store's loop (load_fusion), by load and by store
        self.fusions = load_fusion.fusions(func)
        self.fused_into: dict = {}
        for f in self.fusions.values():
            self.fused_into.setdefault(f.store, []).append(f)
        self.scope = None
        self._error_block = None
        self._stopped_block = None

    # ---------------------------------------------------------------------------------------
    def run(self) -> ir.Function:
        arg_tys = []
        for t in self.param_types:
            arg_tys += [I64, I64, I64] if isinstance(t, PointerType) else [value_type(t)]
        arg_tys += [I32] * 6 + [PTR, PTR, PTR]
        fn = ir.Function(self.m, ir.FunctionType(I32, arg_tys), self.name)
        fn.linkage = "internal"
        fn.args[-3].add_attribute("noalias")
        self.fn = fn
        floc = self.func.loc
        self.scope = self.di.subprogram(self.name, floc.file if floc.line > 0 else "kernel.py",
                                        floc.line, fn)
        self.entry = fn.append_basic_block("entry")
        body = fn.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self.spans: list[tuple | None] = []
        k = 0
        for arg, t in zip(self.block.args, self.param_types, strict=True):
            if isinstance(t, PointerType):
                self.spans.append(tuple(fn.args[k:k + 3]))
                self.env[arg] = fn.args[k]
                k += 3
            else:
                self.spans.append(None)
                self.env[arg] = fn.args[k]
                k += 1
        self.pids = fn.args[k:k + 3]
        self.nprogs = fn.args[k + 3:k + 6]
        self.scratch, self.err, self.stop = fn.args[k + 6], fn.args[k + 7], fn.args[k + 8]
        self.lower_block(self.block)
        ir.IRBuilder(self.entry).branch(body)
        return fn

    # helpers -------------------------------------------------------------------------------
    def set_loc(self, op: Operation) -> None:
        self.b.debug_metadata = self.di.loc(op.loc, self.scope)

    def entry_alloca(self, ty: ir.Type):
        """An alloca in the entry block (promoted to SSA by LLVM's mem2reg)."""
        eb = ir.IRBuilder(self.entry)
        if self.entry.instructions:
            eb.position_before(self.entry.instructions[0])
        return eb.alloca(ty)

    def error_block(self) -> ir.Block:
        if self._error_block is None:
            blk = self.fn.append_basic_block("oob.exit")
            ir.IRBuilder(blk).ret(ir.Constant(I32, 1))
            self._error_block = blk
        return self._error_block

    def leave_if_stopped(self) -> None:
        """Return 2 from the program when the launch's shared ``*stop`` flag is set (another
        program failed), else continue in a fresh block. Emitted at the head of loops that may
        wait for another program (a spin lock: ``while tl.atomic_cas(lock, 0, 1) == 1``): a
        program that fails while holding the lock never releases it, and its waiters, running
        on other worker threads, would spin forever (on a GPU the failing launch is aborted as
        a whole). A relaxed load: the flag only needs to be seen eventually."""
        b = self.b
        if self._stopped_block is None:
            self._stopped_block = self.fn.append_basic_block("stopped.exit")
            ir.IRBuilder(self._stopped_block).ret(ir.Constant(I32, 2))
        flag = b.load_atomic(self.stop, "monotonic", 4, typ=I32)
        running = self.fn.append_basic_block("running")
        b.cbranch(b.icmp_unsigned("!=", flag, ir.Constant(I32, 0)), self._stopped_block,
                  running)
        b.position_at_end(running)

    def alloc(self, shape: tuple, elem) -> Buffer:
        """A fresh scratch buffer for a tile of ``shape`` and IR element type ``elem``."""
        off = (self.arena_bytes + ALIGN - 1) // ALIGN * ALIGN
        nbytes = numel(shape) * storage_size(elem)
        self.arena_bytes = off + max(nbytes, 1)
        ptr = self.b.gep(self.scratch, [ir.Constant(I64, off)], inbounds=True,
                         source_etype=ir.IntType(8))
        return Buffer(tuple(shape), elem, ptr, contiguous_strides(shape))

    def elems(self) -> Elems:
        return Elems(self.b, self.emit_elem, self)

    def emit_elem(self, op: Operation, args: list):
        saved = self.b.debug_metadata
        self.set_loc(op)
        try:
            v = emit_elementwise(self.b, self.m, op.name, op.attributes, args,
                                 [o.type for o in op.operands], op.results[0].type)
        except UnsupportedError as e:
            if e.loc is not None or op.loc is None:
                raise
            raise UnsupportedError(e.reason, op.loc, e.hint) from None  # point at the line
        self.b.debug_metadata = saved
        return v

    def tile(self, v: Value, shape=None) -> Tile:
        """The Tile of IR value ``v``; scalars become a Splat of ``shape``."""
        x = self.env[v]
        if isinstance(x, Tile):
            return x
        return Splat(tuple(shape or ()), v.type, x)

    def materialize(self, t: Tile, into: Buffer | None = None) -> Buffer:
        """Evaluate every element of ``t`` into a (fresh or given) contiguous buffer."""
        buf = into or self.alloc(t.shape, t.elem)

        def body(idx):
            e = self.elems()
            e.store(buf, idx, e.get(t, idx))
        loop_nest(self.b, t.shape, body)
        return buf

    # op dispatch ---------------------------------------------------------------------------
    def lower_block(self, block) -> None:
        for op in block.ops:
            self.set_loc(op)
            self.lower_op(op)

    def lower_op(self, op: Operation) -> None:
        name = op.name
        if is_grid_dependency_control(op):   # no griddepcontrol on the host: a no-op
            self.env[op.result] = ir.Constant(ir.IntType(32), 0)
            return
        if name == "tt.elementwise_inline_asm":
            raise cuda_only("tl.inline_asm_elementwise", "the CPU backend", op.loc,
                            op.attributes.get("asm_string", ""))
        lower = _LOWER.get(name)
        if lower is not None:
            lower(self, op)
        elif name in ELEMENTWISE:
            self.lower_elementwise(op)
        elif name == "tt.unsplat" or (name in _VIEWS and not isinstance(op.result.type,
                                                                         TensorType)):
            self.env[op.result] = self.only_element(op)  # a 1-element tile made a scalar
        elif name in _VIEWS:
            self.env[op.result] = self.view(op)
        else:
            self.lower_leaf(op)

    def lower_leaf(self, op: Operation) -> None:
        """``tt.return``, constants (``ub.poison`` too), program ids and ranges;
        UnsupportedError for the rest."""
        name = op.name
        if name == "tt.return":
            if op.operands:
                raise UnsupportedError("kernels cannot return values", op.loc)
            self.b.ret(ir.Constant(I32, 0))
        elif name == "arith.constant":
            t = op.result.type
            c = const(t.scalar, op.attributes["value"])
            self.env[op.result] = Splat(t.shape, t.element, c) if isinstance(t, TensorType) else c
        elif name == "ub.poison":
            t = op.result.type
            c = Poison(value_type(t.scalar))
            self.env[op.result] = Splat(t.shape, t.element, c) if isinstance(t, TensorType) else c
        elif name in ("tt.get_program_id", "tt.get_num_programs"):
            axis = int(op.attributes["axis"])
            src = self.pids if name == "tt.get_program_id" else self.nprogs
            self.env[op.result] = src[axis]
        elif name == "tt.make_range":
            t = tensor_of(op.result.type)
            self.env[op.result] = Lazy(t.shape, t.element, "range", param=op.attributes["start"])
        else:
            raise UnsupportedError(f"the CPU backend does not support {name} yet", op.loc,
                                   "use the interpreter target for this kernel")

    def only_element(self, op: Operation):
        """The scalar of a one-element tile: ``tt.unsplat`` (also a ``tt.reshape`` to a scalar,
        which IR read from a file may hold)."""
        src = self.tile(op.operands[0])
        return self.elems().get(src, tuple(ir.Constant(I64, 0) for _ in src.shape))

    def view(self, op: Operation) -> Tile:
        t = tensor_of(op.result.type)
        shape, elem = tuple(t.shape), t.element
        src = self.tile(op.operands[0], shape if op.name == "tt.splat" else None)
        if op.name == "tt.splat" or isinstance(src, Splat):
            assert isinstance(src, Splat), src
            return Splat(shape, elem, src.value)
        if op.name == "tt.broadcast":
            if isinstance(src, Buffer):
                st = tuple(0 if s == 1 and n != 1 else x
                           for x, s, n in zip(src.strides, src.shape, shape, strict=True))
                return Buffer(shape, elem, src.ptr, st)
            return Lazy(shape, elem, "broadcast", [src])
        if op.name == "tt.expand_dims":
            axis = int(op.attributes["axis"])
            if isinstance(src, Buffer):
                st = src.strides[:axis] + (0,) + src.strides[axis:]
                return Buffer(shape, elem, src.ptr, st)
            return Lazy(shape, elem, "expand", [src], param=axis)
        if op.name == "tt.trans":
            order = tuple(op.attributes.get("order", tuple(reversed(range(len(shape))))))
            if isinstance(src, Buffer):
                return Buffer(shape, elem, src.ptr, tuple(src.strides[o] for o in order))
            return Lazy(shape, elem, "trans", [src], param=order)
        if isinstance(src, Buffer) and src.contiguous():
            return Buffer(shape, elem, src.ptr, contiguous_strides(shape))
        return Lazy(shape, elem, "reshape", [src])

    def lower_elementwise(self, op: Operation) -> None:
        res = op.result
        if not isinstance(res.type, TensorType):
            self.env[res] = self.emit_elem(op, [self.env[v] for v in op.operands])
            return
        shape = tuple(res.type.shape)
        tiles = [self.tile(v, shape) for v in op.operands]
        values = [t.value for t in tiles if isinstance(t, Splat)]
        if len(values) == len(tiles):
            self.env[res] = Splat(shape, res.type.element, self.emit_elem(op, values))
            return
        lazy = Lazy(shape, res.type.element, "elementwise", tiles, op=op)
        self.env[res] = self.materialize(lazy) if self.must_materialize(op) else lazy

    def must_materialize(self, op: Operation) -> bool:
        """Materialise an expensive value used more than once or inside a nested region (a
        loop would recompute it every iteration)."""
        if op.name in CHEAP:
            return False
        uses = op.result.uses
        return len(uses) > 1 or any(u.parent is not op.parent for u, _ in uses)


def lower_function(module: ir.Module, di: DebugInfo, func: Operation, options) -> KernelLowering:
    """Lower ``func`` (a ``tt.func``) into ``module``; returns the finished lowering (see
    :class:`KernelLowering` for what it records). Raises UnsupportedError for ops the CPU
    backend does not handle, pointing at the op's source line."""
    lw = KernelLowering(module, di, func, options)
    lw.run()
    return lw
