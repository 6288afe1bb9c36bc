"""The host side of a CUDA kernel launch, made cheap: a native trampoline and packed parameters.

Why: a launch through cuda-bindings' ``cuLaunchKernel`` costs about 4 us of Python-side
argument conversion on top of the driver's own work, and building ctypes holders per argument
another 4 us (measured on the H200 host, ``benchmarks/launch_profile.py``). Triton avoids this
by compiling a C launcher per kernel signature. We do the equivalent with what we already ship:

- :class:`Trampoline`: one tiny host function, JIT-compiled once per process with llvmlite's
  MCJIT, ``int32 launch(int64 *block)``. It makes the device's context current if the calling
  thread has another one (``cuCtxGetCurrent``/``cuCtxSetCurrent``) and calls
  ``cuLaunchKernel`` with the fields of ``block``. The driver entry points are looked up in
  ``libcuda.so.1`` (the library cuda-bindings itself loads) and their addresses are constants
  in the IR, so the function is only valid in this process (it is never cached on disk).
- :class:`PackedLaunch`: per kernel, one parameter block per calling thread, laid out as
  8-byte slots::

      0 CUfunction   1 CUcontext   2 &kernelParams[0]   3 blockDim.x   4 dynamic shared bytes
      5 gridDim.x    6 gridDim.y   7 gridDim.z          8 CUstream
      9 ..           the n kernel argument values, one slot each (little-endian, low bytes),
                     but a TMA descriptor (kind ``"tma"``: the 128-byte ``CUtensorMap``) takes
                     16 slots starting at a 64-byte aligned address (the block starts where
                     slot 9 is 64-byte aligned)
      then n slots   kernelParams: the address of each value (written once)

  A launch writes slots 5.. with a single ``struct.pack_into`` (format from the parameter
  kinds) and makes one ctypes call with one argument. Blocks are per thread because ctypes
  releases the GIL during the call; the driver copies the parameters before
  ``cuLaunchKernel`` returns (CUDA Driver API, cuLaunchKernel), so a block can be reused by
  the next launch of the same thread.

Driver signatures: CUDA Driver API reference, ``cuLaunchKernel(CUfunction f, unsigned
gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, CUstream
hStream, void **kernelParams, void **extra)``, ``cuCtxGetCurrent(CUcontext *pctx)``,
``cuCtxSetCurrent(CUcontext ctx)``; all return ``CUresult`` (0 = success).
"""
from __future__ import annotations

import ctypes
import struct
import sys
import threading

#: struct codes of one 8-byte value slot per parameter kind (workbench.backends.cuda.param_kind)
SLOT_CODES = {"ptr": "Q", "i64": "q", "u64": "Q", "i32": "i4x", "u32": "I4x",
              "i16": "h6x", "u16": "H6x", "i8": "b7x", "u8": "B7x", "i1": "B7x",
              "f32": "f4x", "fp32": "f4x", "f64": "d", "fp64": "d", "tma": "128s",
              "f16": "e6x", "fp16": "e6x", "bf16": "H6x"}
#: bytes of a value of each kind that is not one 8-byte slot (aligned to 64 bytes)
_WIDE = {"tma": 128}
_MASKS = {"i64": 2 ** 64 - 1, "u64": 2 ** 64 - 1, "i32": 2 ** 32 - 1, "u32": 2 ** 32 - 1,
          "i16": 0xFFFF, "u16": 0xFFFF, "i8": 0xFF, "u8": 0xFF, "i1": 1}
#: the unsigned code of a masked int kind (values are taken modulo 2**bits, as C casts do)
_UNSIGNED = {"i64": "Q", "i32": "I4x", "i16": "H6x", "i8": "B7x", "i1": "B7x"}
HEADER_SLOTS = 9


def _bf16_bits(x: float) -> int:
    """The bf16 bit pattern of ``x``: its float32 rounded to nearest even on the upper 16 bits
    (a NaN stays a quiet NaN)."""
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return (u >> 16) | 0x40
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def _layout(kinds, code) -> tuple[str, list, int]:
    """``(struct format, byte offset of each value after the header, bytes of all values)``;
    ``code(kind)`` gives each value's struct code (wide kinds are padded to 64 bytes)."""
    fmt, offsets, at = [], [], 0
    for k in kinds:
        if k in _WIDE:
            pad = -at % 64
            fmt.append("x" * pad)
            at += pad
        offsets.append(at)
        fmt.append(code(k))
        at += _WIDE.get(k, 8)
    return "".join(fmt), offsets, at

#: the 32-bit launch fields of the block: (name in the IR, slot)
_U32_FIELDS = (("bx", 3), ("sh", 4), ("gx", 5), ("gy", 6), ("gz", 7))
_U32_LOADS = "\n".join(f"  %{n}p = getelementptr i64, ptr %blk, i64 {slot}\n"
                       f"  %{n}64 = load i64, ptr %{n}p\n"
                       f"  %{n} = trunc i64 %{n}64 to i32" for n, slot in _U32_FIELDS)

_IR = """
define i32 @workbench_cuda_launch(ptr %blk) {{
entry:
  %cur = alloca ptr
  %get = inttoptr i64 {get} to ptr
  %rc0 = call i32 %get(ptr %cur)
  %c = load ptr, ptr %cur
  %ctxp = getelementptr i64, ptr %blk, i64 1
  %ctx = load ptr, ptr %ctxp
  %same = icmp eq ptr %c, %ctx
  br i1 %same, label %go, label %set
set:
  %setf = inttoptr i64 {set} to ptr
  %rc1 = call i32 %setf(ptr %ctx)
  %bad = icmp ne i32 %rc1, 0
  br i1 %bad, label %fail, label %go
fail:
  ret i32 %rc1
go:
  %f = load ptr, ptr %blk
  %pp = getelementptr i64, ptr %blk, i64 2
  %params = load ptr, ptr %pp
""" + _U32_LOADS + """
  %stp = getelementptr i64, ptr %blk, i64 8
  %st = load ptr, ptr %stp
  %launch = inttoptr i64 {launch} to ptr
  %rc = call i32 %launch(ptr %f, i32 %gx, i32 %gy, i32 %gz, i32 %bx, i32 1, i32 1, i32 %sh,
                         ptr %st, ptr %params, ptr null)
  ret i32 %rc
}}
"""


class Trampoline:
    """The process's launch trampoline: ``trampoline(block_address) -> CUresult``.

    ``entry_points``: the addresses of ``cuCtxGetCurrent``, ``cuCtxSetCurrent`` and
    ``cuLaunchKernel`` under the keys ``"get"``, ``"set"``, ``"launch"``; None looks them up
    in ``libcuda.so.1`` (tests pass stand-ins). Raises OSError when the library cannot be
    loaded and RuntimeError when LLVM rejects the IR (a bug); :func:`trampoline` then returns
    None and launches go through cuda-bindings."""

    def __init__(self, entry_points: dict | None = None):
        import llvmlite.binding as llvm
        if entry_points is None:
            lib = ctypes.CDLL("libcuda.so.1")
            entry_points = {k: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                            for k, name in (("get", "cuCtxGetCurrent"),
                                            ("set", "cuCtxSetCurrent"),
                                            ("launch", "cuLaunchKernel"))}
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        mod = llvm.parse_assembly(_IR.format(**{k: int(entry_points[k])
                                                for k in ("get", "set", "launch")}))
        mod.verify()
        tm = llvm.Target.from_default_triple().create_target_machine(jit=True)
        mod.triple = tm.triple
        self._engine = llvm.create_mcjit_compiler(mod, tm)  # owns (keeps alive) the code
        self._engine.finalize_object()
        self.address = self._engine.get_function_address("workbench_cuda_launch")
        self.call = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(self.address)

    def __call__(self, block_address: int) -> int:
        return self.call(block_address)


_lock = threading.Lock()
_built: list = []  # [Trampoline] or [None] once a build failed (process-wide, built lazily)


def trampoline() -> Trampoline | None:
    """The process's :class:`Trampoline`, built at the first call; None when it cannot be
    built here (no ``libcuda.so.1`` for ctypes, or LLVM refused), in which case launches go
    through cuda-bindings."""
    if not _built:
        with _lock:
            if not _built:
                try:
                    _built.append(Trampoline())
                except (OSError, AttributeError, RuntimeError):
                    _built.append(None)
    return _built[0]


def current_stream(ordinal: int = 0) -> int:
    """The stream a launch goes to (a ``CUstream`` as an int; 0 is the legacy default
    stream): PyTorch's current stream of device ``ordinal`` once torch has initialised CUDA
    (``torch.cuda.stream(s)`` contexts are honoured, as Triton's launcher does), else CuPy's
    current stream when CuPy is imported, else 0. Costs about 0.3 us."""
    torch = sys.modules.get("torch")
    if torch is not None and getattr(getattr(torch, "cuda", None), "_initialized", False):
        return torch._C._cuda_getCurrentRawStream(ordinal)
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            return int(cupy.cuda.get_current_stream().ptr)
        except Exception:  # noqa: BLE001 - a CuPy without a usable device
            return 0
    return 0


class PackedLaunch:
    """The parameter blocks of one loaded kernel (see the module docstring), launched through
    the :class:`Trampoline` (``tramp``; None where it cannot be built: then the caller passes
    :meth:`fill`'s ``kernelParams`` address to cuda-bindings' ``cuLaunchKernel``).

    ``function`` and ``context``: the ``CUfunction`` and ``CUcontext`` handles as ints;
    ``kinds``: per passed parameter its kind (keys of :data:`SLOT_CODES`); ``block_x``:
    threads per program (32 * num_warps); ``shared``: dynamic shared memory in bytes.
    ``launch(gx, gy, gz, stream, args)`` returns the driver's ``CUresult`` (0 = success);
    ``args`` are ints (device addresses for pointers), floats and bools, or objects with an
    ``address`` (:class:`~workbench.backends.base.PointerArg`). Raises ValueError naming the
    argument when a value cannot be passed as its kind."""

    def __init__(self, tramp: Trampoline, function: int, context: int, kinds, block_x: int,
                 shared: int):
        unknown = [k for k in kinds if k not in SLOT_CODES]
        if unknown:
            raise ValueError(f"cannot pass parameters of kind {unknown[0]}")
        self.kinds = tuple(kinds)
        self.n = len(self.kinds)
        self._header = (function, context, block_x, shared)
        fmt, self._offsets, self._value_bytes = _layout(self.kinds, SLOT_CODES.__getitem__)
        self._fmt = struct.Struct("<4Q" + fmt)
        self._tramp = tramp  # keeps the JIT-compiled code alive
        self._call = tramp.call if tramp is not None else None
        self.direct = tramp is not None  # launch() works; else fill() + cuda-bindings
        self._blocks: dict = {}

    def _new_block(self, ident: int):
        n = self.n
        slots = HEADER_SLOTS + self._value_bytes // 8 + n
        buf = (ctypes.c_uint64 * (slots + 8))()  # 64 spare bytes to align the values
        raw = ctypes.addressof(buf)
        skip = -(raw + 8 * HEADER_SLOTS) % 64  # a multiple of 8
        base = raw + skip
        values = base + 8 * HEADER_SLOTS
        params = values + self._value_bytes
        first = skip // 8
        function, context, block_x, shared = self._header
        buf[first:first + 5] = [function, context, params, block_x, shared]
        at = first + HEADER_SLOTS + self._value_bytes // 8
        for i in range(n):
            buf[at + i] = values + self._offsets[i]
        entry = (buf, base, skip + 40)
        if len(self._blocks) > 64:  # threads come and go: keep the table small
            self._blocks.clear()
        self._blocks[ident] = entry
        return entry

    def launch(self, gx, gy, gz, stream, args, _ident=threading.get_ident) -> int:
        entry = self._blocks.get(_ident()) or self._new_block(_ident())
        try:
            self._fmt.pack_into(entry[0], entry[2], gx, gy, gz, stream, *args)
        except struct.error:
            self._pack_slow(entry[0], entry[2], gx, gy, gz, stream, args)
        return self._call(entry[1])

    def fill(self, gx, gy, gz, stream, args) -> int:
        """Write this thread's block as :meth:`launch` does, without launching; returns the
        address of its ``kernelParams`` array (for cuda-bindings' ``cuLaunchKernel``)."""
        ident = threading.get_ident()
        buf, base, at = self._blocks.get(ident) or self._new_block(ident)
        try:
            self._fmt.pack_into(buf, at, gx, gy, gz, stream, *args)
        except struct.error:
            self._pack_slow(buf, at, gx, gy, gz, stream, args)
        return base + 8 * HEADER_SLOTS + self._value_bytes

    def _pack_slow(self, buf, at, gx, gy, gz, stream, args) -> None:
        """The slow packing (at byte ``at`` of ``buf``): PointerArgs to addresses, ints taken
        modulo 2**bits; a TMA descriptor must be its 128 bytes."""
        if len(args) != self.n:
            raise ValueError(f"takes {self.n} arguments, got {len(args)}")
        vals: list = []
        codes: list = []
        for i, (a, kind) in enumerate(zip(args, self.kinds, strict=True)):
            try:
                if kind == "tma":
                    if not isinstance(a, (bytes, bytearray)) or len(a) != 128:
                        raise TypeError("a TMA descriptor is 128 bytes")
                    vals.append(bytes(a))
                    codes.append("128s")
                elif kind == "ptr":
                    v = a.address if hasattr(a, "address") else int(a)
                    vals.append(v & (2 ** 64 - 1))
                    codes.append("Q")
                elif kind in _MASKS:
                    vals.append(int(a) & _MASKS[kind])
                    codes.append(_UNSIGNED.get(kind, SLOT_CODES[kind]))
                elif kind == "bf16":
                    vals.append(_bf16_bits(float(a)))
                    codes.append("H6x")
                else:
                    vals.append(float(a))
                    codes.append(SLOT_CODES[kind])
            except (TypeError, ValueError):
                raise ValueError(f"argument {i} ({type(a).__name__}) cannot be passed as "
                                 f"{kind}") from None
        for g in (gx, gy, gz):
            if not 0 <= int(g) < 2 ** 32:
                raise ValueError(f"grid size {g} is out of range")
        it = iter(codes)
        fmt = _layout(self.kinds, lambda k: next(it))[0]
        struct.pack_into("<4Q" + fmt, buf, at, int(gx), int(gy), int(gz), int(stream), *vals)
