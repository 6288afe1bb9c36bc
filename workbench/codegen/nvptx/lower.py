"""ttgir -> NVPTX LLVM IR, thread by thread.

Every tensor value becomes, in each thread, the list of registers its layout gives that thread
(:mod:`.threads`); scalars are lists of one value. Ops are lowered in order by small functions
in :mod:`.elementwise`, :mod:`.memory`, :mod:`.reduce`, :mod:`.local_memory`,
:mod:`.convert_layout` and the other op modules; ``scf.for`` and
``scf.if`` become LLVM blocks with one phi per register.

Kernel ABI: the ``tt.func``'s parameters in order (pointers ``ptr addrspace(1)``, scalars by
value, a TMA descriptor as its 128-byte ``CUtensorMap`` by value, :mod:`.tma`),
``ptx_kernel`` calling convention, ``.reqntid 32*num_warps`` (``nvvm.annotations``
``reqntidx``), dynamic shared memory ``global_smem`` of ``shared`` bytes. Unlike Triton there
are no trailing scratch pointers, but for a kernel that builds tensor maps in global scratch
(device-side TMA descriptors): one, ``global_scratch``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from llvmlite import ir

from ...errors import CompilationError, UnsupportedError
from ...ir.types import TensorDescType, TensorType
from ...passes.insert_barriers import insert_barriers
from ..poison import Poison
from . import (
    async_copy,
    atomics,
    axisinfo,
    convert_layout,
    dedup,
    dot,
    elementwise,
    inline_asm,
    local_memory,
    memory,
    misc_ops,
    printing,
    reduce,
    scan,
    shape_ops,
    smem_access,
    tma,
    wgmma,
)
from .dce import remove_dead_instructions
from .debuginfo import DebugInfo
from .ir_text import module_text
from .kernel_attrs import annotate_kernel
from .loop_ids import rolled_loop
from .scratch import scratch_bytes
from .threads import emit_coords, emit_thread_part, register_map, thread_layout
from .types import GLOBAL_PTR, I32, constant, llvm_type

TRIPLE = "nvptx64-nvidia-cuda"


@dataclass
class LoweredKernel:
    """Result of :func:`lower_module`: LLVM IR ``text``, kernel ``name``, ``shared`` bytes of
    dynamic shared memory, ``num_warps``, and ``llvm_module`` (the llvmlite.ir module)."""

    text: str
    name: str
    shared: int
    num_warps: int
    llvm_module: object = None
    shared_accesses: list = field(default_factory=list)
    #: bytes of global scratch per program (device-side tensor maps; a trailing parameter)
    global_scratch: int = 0


def _sreg(kl, name: str):
    fn = kl.intrinsic(f"llvm.nvvm.read.ptx.sreg.{name}", I32, [])
    return kl.b.call(fn, [])


class KernelLowering:
    """State of one kernel's lowering (no globals): the llvmlite module and builder, the
    registers of every IR value, the per-layout thread parts, shared memory used."""

    def __init__(self, func_op, num_warps: int, arch: int, fp_fusion: bool = True,
                 reflect_ftz: bool = True, maxnreg: int | None = None):
        self.func_op = func_op
        #: mul+add may fuse into fma (the ``enable_fp_fusion`` option)
        self.fp_fusion = fp_fusion
        #: libdevice and ``exp2`` flush fp32 subnormals (the ``enable_reflect_ftz`` option)
        self.reflect_ftz = reflect_ftz
        #: registers per thread the kernel may use (``.maxnreg``; the ``maxnreg`` option)
        self.maxnreg = maxnreg
        self.num_warps = num_warps
        self.arch = arch
        self.name = func_op.attributes["sym_name"]
        self.module = ir.Module(name=self.name)
        self.module.triple = TRIPLE
        block = func_op.regions[0].block
        arg_types = [tma.TMA_PARAM if isinstance(a.type, TensorDescType) else llvm_type(a.type)
                     for a in block.args]
        #: device-side tensor maps: this program's global scratch (a trailing parameter)
        self.global_scratch_offsets, self.global_scratch_size = tma.scratch_plan(func_op)
        if self.global_scratch_size:
            arg_types.append(tma.GLOBAL_PTR)
        self.fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), arg_types), self.name)
        self.fn.calling_convention = "ptx_kernel"
        for a, ia in zip(self.fn.args, block.args, strict=False):
            a.name = (ia.name or f"arg{ia.index}").replace(".", "_")
            if isinstance(ia.type, TensorDescType):
                tma.mark_tensormap_param(a)
        self.global_scratch_arg = self.fn.args[-1] if self.global_scratch_size else None
        if self.global_scratch_arg is not None:
            self.global_scratch_arg.name = "global_scratch"
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.dbg = DebugInfo(self.module, self.fn, self.name, func_op.loc)
        self.vals: dict = {}
        self.parts: dict = {}
        self.layouts: dict = {}
        self.smem_offsets, self.shared_total = local_memory.plan(func_op)
        self.smem_scratch = local_memory.scratch_plan(func_op)
        insert_barriers(func_op, scratch_bytes)  # adds nothing after tritongpu-insert-barriers
        #: where the current op's scratch starts (bytes into ``global_smem``) and its size
        self.scratch_base = 0
        self.scratch_size = 0
        self.shared_accesses: list = []
        self.axis = axisinfo.analyse(func_op)
        #: the kernel's dots are Hopper wgmma (operands read through the async proxy)
        self.uses_wgmma = any(o.name == "ttng.warp_group_dot" for o in func_op.walk())
        if self.uses_wgmma and arch < 90:
            raise UnsupportedError(f"ttng.warp_group_dot (wgmma) needs sm_90a, not sm_{arch}")
        for ia, a in zip(block.args, self.fn.args, strict=False):
            self.vals[id(ia)] = [a]
        self.tid = _sreg(self, "tid.x")
        self.lane = self.b.and_(self.tid, I32(31), name="lane")
        self.warp = self.b.lshr(self.tid, I32(5), name="warp")
        #: the warp id broadcast from lane 0 (``shfl.sync.idx``), which ptxas knows to be
        #: warp-uniform: wgmma descriptors built from it stay in uniform registers (Triton's
        #: ``WarpIdOp`` lowering does the same)
        self.warp_uniform = self.warp
        if self.uses_wgmma:
            shfl = self.intrinsic("llvm.nvvm.shfl.sync.idx.i32", I32, [I32, I32, I32, I32])
            self.warp_uniform = self.b.call(shfl, [I32(-1), self.warp, I32(0), I32(31)],
                                            name="warp_uniform")
        self._precompute_parts(func_op)

    # helpers used by the op modules ---------------------------------------------------------
    def intrinsic(self, name: str, ret, args):
        """Declare (once) and return the LLVM function ``name``."""
        if name in self.module.globals:
            return self.module.globals[name]
        return ir.Function(self.module, ir.FunctionType(ret, list(args)), name)

    def layout(self, t):
        """Cached :class:`~.threads.ThreadLayout` of tensor type ``t``."""
        key = (t.encoding, tuple(t.shape))
        if key not in self.layouts:
            self.layouts[key] = thread_layout(t)
        return self.layouts[key]

    def coords(self, t):
        """Per register of tensor type ``t``, the per-dim i32 coordinates in this thread."""
        key = (t.encoding, tuple(t.shape))
        part = self.parts[key]
        return emit_coords(self.b, self.layout(t), part)

    def _precompute_parts(self, func_op):
        """Thread parts of every layout used, computed in the entry block so they dominate
        every use (also inside loops)."""
        for op in func_op.walk():
            for v in list(op.results) + list(op.operands):
                t = v.type
                if isinstance(t, TensorType):
                    key = (t.encoding, tuple(t.shape))
                    if key not in self.parts:
                        self.parts[key] = emit_thread_part(self.b, self.layout(t), self.lane,
                                                           self.warp)

    def get(self, v) -> list:
        """Registers of IR value ``v`` in this thread."""
        try:
            return self.vals[id(v)]
        except KeyError:
            raise CompilationError(f"internal: value {v} used before definition") from None

    def set(self, v, regs: list) -> None:
        self.vals[id(v)] = list(regs)

    def need_shared(self, nbytes: int) -> None:
        """Check that the op being lowered uses no more than the ``nbytes`` of shared scratch
        allocated to it (at ``self.scratch_base``) by ``allocate-shared-memory``.

        Raises CompilationError when it would (a bug: the size function disagrees)."""
        if nbytes > self.scratch_size:
            raise CompilationError(
                f"internal: an op needs {nbytes} bytes of shared scratch, "
                f"{self.scratch_size} were allocated")

    # driver ---------------------------------------------------------------------------------
    def run(self) -> LoweredKernel:
        self.lower_block(self.func_op.regions[0].block)
        if not self.b.block.is_terminated:
            self.b.ret_void()
        annotate_kernel(self.module, self.fn, self.num_warps, self.maxnreg, self.reflect_ftz)
        remove_dead_instructions(self.module)  # what -O3 would delete first, unprinted
        return LoweredKernel(module_text(self.module), self.name, self.shared_total, self.num_warps,
                             self.module, self.shared_accesses, self.global_scratch_size)

    def lower_block(self, block) -> None:
        for op in block.ops:
            self.b.debug_metadata = self.dbg.location(op.loc)
            try:
                self.lower_op(op)
            except (CompilationError, UnsupportedError):
                raise
            except (ValueError, TypeError, KeyError, AssertionError) as e:
                raise CompilationError(f"CUDA backend could not lower {op.name}: {e}",
                                       op.loc) from None

    def lower_op(self, op) -> None:
        """Lower one op: its results' registers are set, its instructions emitted.

        Raises UnsupportedError for an op the CUDA backend does not lower."""
        name = op.name
        outer = self.scratch_base, self.scratch_size
        if id(op) in self.smem_scratch:
            self.scratch_base, self.scratch_size = self.smem_scratch[id(op)]
        try:
            self._lower_op(op, name)
        finally:
            self.scratch_base, self.scratch_size = outer

    def _lower_op(self, op, name: str) -> None:
        handler = _STRUCTURAL.get(name) or _OPS.get(name)
        if handler is not None:
            handler(self, op)
        elif name in shape_ops.OPS:
            shape_ops.lower(self, op)
        elif name == "scf.while":
            misc_ops.lower_while(self, op)
        elif misc_ops.handles(op):
            misc_ops.lower(self, op)
        elif elementwise.handles(name):
            elementwise.lower(self, op)
            dedup.deduplicate(self, op)  # registers equal by constancy reuse one value
        else:
            raise UnsupportedError(f"{name} is not supported by the CUDA backend yet", op.loc)


def _no_code(kl, op) -> None:
    """Ops that emit nothing (``ttg.local_dealloc``: buffers are planned up front)."""


def _barrier(kl, op) -> None:
    smem_access.barrier(kl)


def _assume(kl, op) -> None:
    """``llvm.intr.assume %c`` (an i1 scalar): ``call void @llvm.assume(i1 %c)``, as
    Triton's LLVM IR has it."""
    fn = kl.intrinsic("llvm.assume", ir.VoidType(), [ir.IntType(1)])
    for c in kl.get(op.operands[0]):
        if isinstance(c.type, ir.IntType) and c.type.width == 1:
            kl.b.call(fn, [c])


#: op name -> lowering function (kl, op), for the ops with a module of their own
_OPS = {
    "tt.load": memory.lower,
    "tt.store": memory.lower,
    "tt.reduce": reduce.lower_reduce,
    "tt.dot": dot.lower_dot,
    "ttng.warp_group_dot": wgmma.lower_warp_group_dot,
    "ttng.warp_group_dot_wait": wgmma.lower_wait,
    "ttg.local_alloc": local_memory.lower_local_alloc,
    "ttg.local_load": local_memory.lower_local_load,
    "ttg.local_store": local_memory.lower_local_store,
    "ttg.local_dealloc": _no_code,
    "ttg.memdesc_index": async_copy.lower_memdesc_index,
    "ttg.async_copy_global_to_local": async_copy.lower_async_copy,
    "ttg.async_commit_group": async_copy.lower_commit,
    "ttg.async_wait": async_copy.lower_wait,
    "tt.print": printing.lower_print,
    "tt.assert": printing.lower_assert,
    "tt.scan": scan.lower_scan,
    "tt.elementwise_inline_asm": inline_asm.lower,
    "tt.atomic_rmw": atomics.lower,
    "tt.atomic_cas": atomics.lower,
    "ttg.convert_layout": convert_layout.lower_convert,
    "gpu.barrier": _barrier,
    "llvm.intr.assume": _assume,
    **tma.OPS,
}


# structural ops -----------------------------------------------------------------------------
def _nregs(kl, t) -> int:
    return kl.layout(t).num_regs if isinstance(t, TensorType) else 1


def _constant(kl, op):
    t = op.result.type
    c = constant(t.scalar, op.attributes["value"])
    kl.set(op.result, [c] * _nregs(kl, t))


def _poison(kl, op):
    t = op.result.type
    kl.set(op.result, [Poison(llvm_type(t.scalar))] * _nregs(kl, t))


def _program_id(kl, op):
    axis = "xyz"[op.attributes["axis"]]
    sreg = "ctaid" if op.name == "tt.get_program_id" else "nctaid"
    kl.set(op.result, [_sreg(kl, f"{sreg}.{axis}")])


def _make_range(kl, op):
    t = op.result.type
    start = int(op.attributes["start"])
    regs = []
    for c in kl.coords(t):
        regs.append(kl.b.add(c[0], I32(start)) if start else c[0])
    kl.set(op.result, regs)


def _splat(kl, op):
    (v,) = kl.get(op.operands[0])
    kl.set(op.result, [v] * _nregs(kl, op.result.type))


def _unsplat(kl, op):
    """The one element of a one-element tensor: every thread holds it in its first register
    (a layout larger than the tensor replicates it)."""
    kl.set(op.result, [kl.get(op.operands[0])[0]])


def _remap(kl, op, project):
    src_t, dst_t = op.operands[0].type, op.result.type
    m = register_map(kl.layout(src_t), kl.layout(dst_t), project)
    src = kl.get(op.operands[0])
    kl.set(op.result, [src[i] for i in m])


def _broadcast(kl, op):
    src_shape = op.operands[0].type.shape
    if not isinstance(op.operands[0].type, TensorType):
        return _splat(kl, op)
    _remap(kl, op, lambda c: tuple(0 if s == 1 else x for x, s in zip(c, src_shape, strict=True)))


def _expand_dims(kl, op):
    ax = op.attributes["axis"]
    _remap(kl, op, lambda c: tuple(x for i, x in enumerate(c) if i != ax))


def _addptr(kl, op):
    ptrs, offs = kl.get(op.operands[0]), kl.get(op.operands[1])
    if len(ptrs) == 1 and len(offs) > 1:
        ptrs = ptrs * len(offs)
    from .types import memory_type
    elem = memory_type(op.result.type.scalar.pointee)
    out = []
    for p, o in zip(ptrs, offs, strict=False):
        if o.type.width < 64:
            o = kl.b.sext(o, ir.IntType(64))
        out.append(kl.b.gep(p, [o], source_etype=elem))
    kl.set(op.result, out)


def _return(kl, op):
    kl.b.ret_void()


def _for(kl, op):
    """scf.for: header block with phis (iv + one per register of each iter arg)."""
    lb, ub, step = (kl.get(v)[0] for v in op.operands[:3])
    inits = [kl.get(v) for v in op.operands[3:]]
    body = op.regions[0].block
    pre = kl.b.block
    header = kl.fn.append_basic_block("for.header")
    body_bb = kl.fn.append_basic_block("for.body")
    exit_bb = kl.fn.append_basic_block("for.exit")
    kl.b.branch(header)
    kl.b.position_at_end(header)
    iv = kl.b.phi(lb.type, name="iv")
    iv.add_incoming(lb, pre)
    phis = []
    for regs in inits:
        ps = []
        for r in regs:
            p = kl.b.phi(r.type)
            p.add_incoming(r, pre)
            ps.append(p)
        phis.append(ps)
    cond = kl.b.icmp_signed("<", iv, ub)
    kl.b.cbranch(cond, body_bb, exit_bb)
    kl.b.position_at_end(body_bb)
    kl.set(body.args[0], [iv])
    for a, ps in zip(body.args[1:], phis, strict=True):
        kl.set(a, ps)
    for inner in body.ops[:-1]:
        kl.b.debug_metadata = kl.dbg.location(inner.loc)
        kl.lower_op(inner)
    yielded = [kl.get(v) for v in body.ops[-1].operands]
    nxt = kl.b.add(iv, step)
    latch = kl.b.block
    iv.add_incoming(nxt, latch)
    for ps, regs in zip(phis, yielded, strict=True):
        for p, r in zip(ps, regs, strict=True):
            p.add_incoming(r, latch)
    rolled_loop(kl.module, kl.b.branch(header))
    kl.b.position_at_end(exit_bb)
    for res, ps in zip(op.results, phis, strict=True):
        kl.set(res, ps)


def _if(kl, op):
    (cond,) = kl.get(op.operands[0])
    then_bb = kl.fn.append_basic_block("if.then")
    else_bb = kl.fn.append_basic_block("if.else")
    merge = kl.fn.append_basic_block("if.end")
    kl.b.cbranch(cond, then_bb, else_bb)
    results = []
    for region, bb in zip(op.regions, (then_bb, else_bb), strict=False):
        kl.b.position_at_end(bb)
        block = region.blocks[0] if region.blocks else None
        vals = []
        if block is not None:
            for inner in block.ops[:-1]:
                kl.b.debug_metadata = kl.dbg.location(inner.loc)
                kl.lower_op(inner)
            term = block.ops[-1] if block.ops else None
            if term is not None and term.name == "scf.yield":
                vals = [kl.get(v) for v in term.operands]
            elif term is not None:
                kl.lower_op(term)
        results.append((kl.b.block, vals))
        kl.b.branch(merge)
    kl.b.position_at_end(merge)
    for i, res in enumerate(op.results):
        regs = []
        for j in range(len(results[0][1][i])):
            p = kl.b.phi(results[0][1][i][j].type)
            for bb, vals in results:
                p.add_incoming(vals[i][j], bb)
            regs.append(p)
        kl.set(res, regs)


_STRUCTURAL = {
    "arith.constant": _constant,
    "ub.poison": _poison,
    "tt.get_program_id": _program_id,
    "tt.get_num_programs": _program_id,
    "tt.make_range": _make_range,
    "tt.splat": _splat,
    "tt.unsplat": _unsplat,
    "tt.broadcast": _broadcast,
    "tt.expand_dims": _expand_dims,
    "tt.addptr": _addptr,
    "tt.return": _return,
    "scf.for": _for,
    "scf.if": _if,
}


def lower_module(module_op, arch: int = 90, fp_fusion: bool = True,
                 reflect_ftz: bool = True) -> LoweredKernel:
    """Lower a ttgir module holding one ``tt.func`` to NVPTX LLVM IR.

    Args:
        module_op: ``builtin.module`` whose tensors all carry layout encodings; its attribute
            ``"ttg.num-warps"`` (set by ``convert-triton-to-tritongpu``) is the one source of
            the warps per program (threads = 32 * num_warps).
        arch: SM version (80, 90): selects instructions (all used ones exist on sm_80).
        fp_fusion: let LLVM and ptxas fuse fp32 multiplies and adds into ``fma``
            (``enable_fp_fusion``; Triton's default too).
        reflect_ftz: fp32 subnormal results of libdevice functions and ``exp2`` flush to
            zero (``enable_reflect_ftz``, Triton's default; off: ``ex2.approx.f32``).
        A module attribute ``"ttg.maxnreg"`` (the ``maxnreg`` option) puts ``.maxnreg N`` on
        the kernel's ``.entry``.
    Returns: :class:`LoweredKernel`.
    Raises: UnsupportedError for a module without ``"ttg.num-warps"`` (ttir, not ttgir), for
        ops or types the CUDA backend does not lower yet; CompilationError (with the op's
        location) for an internal failure.
    """
    funcs = [o for o in module_op.regions[0].block.ops if o.name == "tt.func"]
    if len(funcs) != 1:
        raise UnsupportedError(f"the CUDA backend lowers modules with one tt.func, "
                               f"got {len(funcs)}")
    if "ttg.num-warps" not in module_op.attributes:
        raise UnsupportedError("the CUDA backend lowers ttgir: the module has no "
                               "\"ttg.num-warps\" attribute (run "
                               "workbench.passes.pipelines.ttgir_passes first)")
    maxnreg = module_op.attributes.get("ttg.maxnreg")
    return KernelLowering(funcs[0], int(module_op.attributes["ttg.num-warps"]), arch,
                          fp_fusion, reflect_ftz,
                          None if maxnreg is None else int(maxnreg)).run()


__all__ = ["lower_module", "LoweredKernel", "KernelLowering", "TRIPLE", "GLOBAL_PTR"]
