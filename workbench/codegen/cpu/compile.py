"""Build, optimise and JIT-compile the host module of one kernel.

:func:`build_module` lowers a ttir ``builtin.module`` (one ``tt.func``) to an llvmlite module
holding the kernel body (see :mod:`.lower`) and the native grid loop

    i32 @<name>_grid(i64 total, i64 chunk, ptr next, i32 gx, i32 gy, i32 gz,
                     ptr args, ptr scratch, ptr err, ptr stop)

run by every worker thread of a launch at once: it takes chunks of ``chunk`` linear program
ids with an atomic fetch-and-add on the shared i64 ``*next`` (dynamic scheduling, so a
worker that the OS preempts does not hold up the others) until ``total`` is reached, and runs
them in order (x fastest: ``x = lin % gx``, ``y = lin / gx % gy``, ``z = lin / (gx * gy)``).
The first program that reports an error (out-of-bounds access, failed assert) sets the shared
i32 ``*stop`` and returns 1; the other workers finish their current chunk and take no more, so
every program with a lower id than a failing one has run, except a program waiting in a
``scf.while`` loop that reads memory (a spin lock the failed program may hold): it sees
``*stop`` at the loop head and leaves (returns 2, no error record; see :mod:`.lower`).
``args`` is a flat array of u64 slots, one per scalar parameter (the value in its storage type,
little-endian, in the slot's low bytes) and three per pointer parameter (``address, lo, hi``).

:func:`jit` runs LLVM's O3 pipeline for the host CPU (name and features from LLVM; loop
unrolling off, which keeps the code and the compile time small: the loops that matter are
vectorised and interleaved by the loop vectoriser, and the dot micro-kernel is unrolled by
construction), prints the optimised IR, and generates the machine code twice at once: MCJIT's
on this thread, the host assembly text on another (:class:`_AsmJob`).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

from ...config import env_flag
from ...errors import CompilationError
from ...ir.core import functions
from ...ir.types import PointerType
from .debuginfo import DebugInfo
from .llvmtypes import I32, I64, PTR, from_storage, storage_type
from .lower import KernelLowering, lower_function


@dataclass
class HostModule:
    """An unoptimised host module: ``module`` (llvmlite), ``lowering`` (the body's
    KernelLowering: arena size, memory ops, param types), ``grid_name``."""

    module: ir.Module
    lowering: KernelLowering
    grid_name: str


def build_module(ttir_module, options) -> HostModule:
    """Lower the single ``tt.func`` of ``ttir_module`` to host LLVM IR with debug info.
    Raises CompilationError if there is not exactly one kernel, UnsupportedError for ops the
    CPU backend cannot lower."""
    funcs = functions(ttir_module)
    if len(funcs) != 1:
        raise CompilationError(f"expected one tt.func in the module, found {len(funcs)}")
    func = funcs[0]
    name = func.attributes["sym_name"]
    m = ir.Module(name=name)
    m.triple = llvm.get_process_triple()
    loc = func.loc
    main_file = loc.file if loc.line > 0 else "kernel.py"
    di = DebugInfo(m, main_file)
    lw = lower_function(m, di, func, options)
    lw.fn.attributes.add("noinline")
    grid_name = name + "_grid"
    _build_grid(m, di, lw, grid_name, main_file, max(loc.line, 0))
    return HostModule(m, lw, grid_name)


def _build_grid(m, di, lw, grid_name, main_file, line) -> None:
    gfn = ir.Function(m, ir.FunctionType(I32, [I64, I64, PTR, I32, I32, I32, PTR, PTR, PTR,
                                               PTR]), grid_name)
    total, chunk, counter, gx, gy, gz, argv, scratch, err, stop = gfn.args
    sp = di.subprogram(grid_name, main_file, line, gfn)
    entry = gfn.append_basic_block("entry")
    grab = gfn.append_basic_block("grab")
    take = gfn.append_basic_block("take")
    head = gfn.append_basic_block("program")
    done = gfn.append_basic_block("done")
    fail = gfn.append_basic_block("failed")
    b = ir.IRBuilder(entry)
    if line > 0:
        b.debug_metadata = m.add_debug_info("DILocation", {"line": line, "column": 1,
                                                           "scope": sp})
    params = []
    slot = 0
    for t in lw.param_types:
        if isinstance(t, PointerType):
            for k in range(3):
                params.append(b.load(b.gep(argv, [ir.Constant(I64, slot + k)],
                                           source_etype=I64), typ=I64))
            slot += 3
        else:
            p = b.gep(argv, [ir.Constant(I64, slot)], source_etype=I64)
            params.append(from_storage(b, b.load(p, typ=storage_type(t)), t))
            slot += 1
    gx64, gy64 = b.zext(gx, I64), b.zext(gy, I64)
    gxy = b.mul(gx64, gy64)
    b.branch(grab)
    b.position_at_end(grab)
    stopped = b.load_atomic(stop, "monotonic", 4, typ=I32)
    b.cbranch(b.icmp_unsigned("!=", stopped, ir.Constant(I32, 0)), done, take)
    b.position_at_end(take)
    start = b.atomic_rmw("add", counter, chunk, "monotonic")
    end = b.add(start, chunk)
    end = b.select(b.icmp_signed("<", end, total), end, total)
    b.cbranch(b.icmp_signed("<", start, total), head, done)
    b.position_at_end(head)
    lin = b.phi(I64, name="pid")
    lin.add_incoming(start, take)
    x = b.trunc(b.urem(lin, gx64), I32)
    y = b.trunc(b.urem(b.udiv(lin, gx64), gy64), I32)
    z = b.trunc(b.udiv(lin, gxy), I32)
    rc = b.call(lw.fn, params + [x, y, z, gx, gy, gz, scratch, err, stop])
    nxt = b.add(lin, ir.Constant(I64, 1))
    cont = gfn.append_basic_block("next")
    b.cbranch(b.icmp_unsigned("!=", rc, ir.Constant(I32, 0)), fail, cont)
    b.position_at_end(cont)
    lin.add_incoming(nxt, cont)
    b.cbranch(b.icmp_signed("<", nxt, end), head, grab)
    b.position_at_end(done)
    b.ret(ir.Constant(I32, 0))
    b.position_at_end(fail)
    b.atomic_rmw("xchg", stop, ir.Constant(I32, 1), "monotonic")
    b.ret(ir.Constant(I32, 1))


@dataclass
class JitResult:
    """Optimised IR text (``llir``), host assembly (``asm``), the MCJIT ``engine`` (keep it
    alive while calling into it) and the grid function's ``address``; ``timings`` in seconds
    for "llir" (optimisation), "asm" and "jit"."""

    llir: str
    asm: str
    engine: object
    address: int
    timings: dict


def target_machine():
    """An LLVM target machine for this host (its CPU name and :func:`host_features`, O3,
    JIT-capable), as used to compile kernels and to reload them from the disk cache."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=host_features(), opt=3, jit=True)


def host_features() -> str:
    """The host CPU's LLVM feature string; with AVX-512, plus ``-prefer-256-bit`` so the
    vectoriser uses 512-bit vectors (LLVM's default tuning for Intel server cores stays at
    256 bits to avoid frequency drops in mixed scalar code; kernels here are vector loops)."""
    feats = llvm.get_host_cpu_features().flatten()
    if "+avx512f" in feats and not env_flag("WORKBENCH_CPU_PREFER_256"):
        feats += ",-prefer-256-bit"
    return feats


def jit(host: HostModule, opt_level: int = 3) -> JitResult:
    """Verify, optimise (LLVM new pass manager, ``opt_level``), print and load ``host``.
    Raises CompilationError if LLVM rejects the module (a bug in this backend)."""
    import time
    t0 = time.perf_counter()
    try:
        mod = llvm.parse_assembly(str(host.module))
        mod.verify()
    except RuntimeError as exc:  # pragma: no cover - backend bug
        raise CompilationError(
            f"internal error: invalid LLVM IR from the CPU backend: {exc}") from exc
    tm = target_machine()
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = False
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    llir = str(mod)
    t1 = time.perf_counter()
    asm_job = _AsmJob(llir)
    asm_job.start()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    address = engine.get_function_address(host.grid_name)
    t2 = time.perf_counter()
    asm = asm_job.result()
    t3 = time.perf_counter()
    return JitResult(llir, asm, engine, address, {"llir": t1 - t0, "asm": asm_job.seconds,
                                                  "jit": t2 - t1, "asm_wait": t3 - t2})


def _emit_assembly_unlocked(tm, mod) -> str:
    """``tm.emit_assembly(mod)`` without holding llvmlite's global lock during code
    generation (llvmlite serialises every LLVM call; this module lives in its own LLVM
    context and ``tm`` is this thread's own, the setup LLVM supports for concurrent code
    generation, as its parallel LTO back ends do). Falls back to the locked call if
    llvmlite's internals differ."""
    from ctypes import string_at

    from llvmlite.binding import ffi
    raw = getattr(ffi.lib.LLVMPY_TargetMachineEmitToMemory, "_cfn", None)
    if raw is None:  # pragma: no cover - other llvmlite versions
        return tm.emit_assembly(mod)
    with ffi.OutputString() as outerr:
        mb = raw(tm, mod, 0, outerr)
        if not mb:
            raise RuntimeError(str(outerr))
    try:
        return string_at(ffi.lib.LLVMPY_GetBufferStart(mb),
                         ffi.lib.LLVMPY_GetBufferSize(mb)).decode("utf-8")
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(mb)


class _AsmJob(threading.Thread):
    """Host assembly of optimised IR text, generated on another thread in its own LLVM
    context and target machine while MCJIT generates the machine code (the two code
    generations run on two cores; llvmlite releases the GIL in LLVM calls)."""

    def __init__(self, llir: str):
        super().__init__(daemon=True, name="workbench-cpu-asm")
        self.llir = llir
        self.asm: str | None = None
        self.error: BaseException | None = None
        self.seconds = 0.0

    def run(self) -> None:
        import time
        t0 = time.perf_counter()
        try:
            ctx = llvm.create_context()
            mod = llvm.parse_assembly(self.llir, context=ctx)
            self.asm = _emit_assembly_unlocked(target_machine(), mod)
        except BaseException as exc:  # noqa: BLE001 - re-raised by result()
            self.error = exc
        self.seconds = time.perf_counter() - t0

    def result(self) -> str:
        self.join()
        if self.error is not None:
            raise self.error
        assert self.asm is not None
        return self.asm
