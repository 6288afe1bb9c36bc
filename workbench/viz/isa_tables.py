"""The instruction tables behind :mod:`workbench.viz.isa_help`, written for this project.

``PTX[base] = (syntax, summary, ref)``: ``ref`` names the section of NVIDIA's PTX ISA (8.x),
chapter "Instruction Set", the entry was written from. ``MODIFIERS`` explains the suffixes of
PTX opcodes (state spaces, types, rounding, comparison operators, ...). ``SASS`` and
``SASS_MODIFIERS`` do the same for the native instructions nvdisasm prints (CUDA Binary
Utilities, "Instruction Set Reference", sm_80 and sm_90 tables).
"""
from __future__ import annotations

_INT = "Integer Arithmetic Instructions"
_FP = "Floating-Point Instructions"
_HALF = "Half Precision Floating-Point Instructions"
_CMP = "Comparison and Selection Instructions"
_LOGIC = "Logic and Shift Instructions"
_MOVE = "Data Movement and Conversion Instructions"
_SYNC = "Parallel Synchronization and Communication Instructions"
_FLOW = "Control Flow Instructions"
_MMA = "Warp Level Matrix Multiply-Accumulate Instructions"
_WGMMA = "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions"


def _r(section: str, name: str) -> str:
    return f"PTX ISA, {section}: {name}"


PTX: dict[str, tuple[str, str, str]] = {
    # integer and floating-point arithmetic
    "add": ("add.type d, a, b", "d = a + b. Floats round as the modifier says (.rn: to "
            "nearest even); integers wrap around.", _r(_INT, "add")),
    "sub": ("sub.type d, a, b", "d = a - b.", _r(_INT, "sub")),
    "mul": ("mul.mode.type d, a, b", "d = a * b. For integers .lo keeps the low half of the "
            "double-width product, .hi the high half, .wide the whole product in a register "
            "twice as wide (32x32 -> 64 bits, the usual address computation).",
            _r(_INT, "mul")),
    "mad": ("mad.mode.type d, a, b, c", "d = a * b + c in one instruction (.lo/.hi/.wide as for "
            "mul; for floats, a fused multiply-add).", _r(_INT, "mad")),
    "mul24": ("mul24.mode.type d, a, b", "Multiply the low 24 bits of a and b.",
              _r(_INT, "mul24")),
    "mad24": ("mad24.mode.type d, a, b, c", "24-bit multiply, then add c.", _r(_INT, "mad24")),
    "fma": ("fma.rnd.type d, a, b, c", "d = a * b + c with a single rounding (fused "
            "multiply-add).", _r(_FP, "fma")),
    "div": ("div.mode.type d, a, b", "d = a / b. .full: fast float division with at most 2 ulp "
            "error; .rn: IEEE-rounded; .approx: faster, less precise; integer division "
            "truncates toward zero.", _r(_FP, "div")),
    "rem": ("rem.type d, a, b", "Integer remainder of a / b (sign of a).", _r(_INT, "rem")),
    "abs": ("abs.type d, a", "Absolute value.", _r(_FP, "abs")),
    "neg": ("neg.type d, a", "Negation.", _r(_FP, "neg")),
    "min": ("min.type d, a, b", "Smaller of a and b (floats: a NaN operand is ignored unless "
            ".NaN is given).", _r(_FP, "min")),
    "max": ("max.type d, a, b", "Larger of a and b (floats: a NaN operand is ignored unless "
            ".NaN is given). Reductions such as tl.max become chains of these.",
            _r(_FP, "max")),
    "sqrt": ("sqrt.mode.f32 d, a", "Square root (.rn: IEEE-rounded; .approx: fast "
             "approximation).", _r(_FP, "sqrt")),
    "rsqrt": ("rsqrt.approx.type d, a", "Approximate 1 / sqrt(a).", _r(_FP, "rsqrt")),
    "rcp": ("rcp.mode.type d, a", "Reciprocal 1 / a (.approx or IEEE-rounded).",
            _r(_FP, "rcp")),
    "ex2": ("ex2.approx.type d, a", "d = 2^a, approximate, on the special function unit; "
            "tl.exp(x) is ex2(x * log2(e)).", _r(_FP, "ex2")),
    "lg2": ("lg2.approx.f32 d, a", "d = log2(a), approximate; tl.log(x) is lg2(x) * ln(2).",
            _r(_FP, "lg2")),
    "sin": ("sin.approx.f32 d, a", "Approximate sine (radians).", _r(_FP, "sin")),
    "cos": ("cos.approx.f32 d, a", "Approximate cosine (radians).", _r(_FP, "cos")),
    "tanh": ("tanh.approx.type d, a", "Approximate hyperbolic tangent (sm_75+).",
             _r(_FP, "tanh")),
    "copysign": ("copysign.type d, a, b", "The magnitude of b with the sign of a.",
                 _r(_FP, "copysign")),
    "testp": ("testp.op.type p, a", "Test a float for a class (.finite, .infinite, .number, "
              ".notanumber, .normal, .subnormal) into predicate p.", _r(_FP, "testp")),
    "popc": ("popc.type d, a", "Number of set bits.", _r(_INT, "popc")),
    "clz": ("clz.type d, a", "Number of leading zero bits.", _r(_INT, "clz")),
    "brev": ("brev.type d, a", "Reverse the bit order.", _r(_INT, "brev")),
    "bfe": ("bfe.type d, a, pos, len", "Extract len bits of a starting at bit pos (sign- or "
            "zero-extended by .s/.u); used to pick lane and warp ids apart.", _r(_INT, "bfe")),
    "bfi": ("bfi.type d, f, b, pos, len", "Insert the low len bits of f into b at bit pos.",
            _r(_INT, "bfi")),
    "bfind": ("bfind.type d, a", "Position of the most significant non-sign bit.",
              _r(_INT, "bfind")),
    "prmt": ("prmt.b32 d, a, b, c", "Permute bytes: each byte of d is picked from the eight "
             "bytes of a and b by a selector nibble of c.", _r(_INT, "prmt")),
    "sad": ("sad.type d, a, b, c", "Sum of absolute difference: |a - b| + c.", _r(_INT, "sad")),
    # comparison and selection
    "setp": ("setp.cmp.type p[|q], a, b", "Compare a with b and write predicate p (and its "
             "negation q). Masks (offs < n) become these; later instructions run under @p.",
             _r(_CMP, "setp")),
    "set": ("set.cmp.dtype.stype d, a, b", "Compare and write 1.0/0xffffffff or 0 to a "
            "register.", _r(_CMP, "set")),
    "selp": ("selp.type d, a, b, p", "d = p ? a : b: a select without a branch (tl.where, "
             "masked loads' other value).", _r(_CMP, "selp")),
    "slct": ("slct.dtype.stype d, a, b, c", "d = c >= 0 ? a : b.", _r(_CMP, "slct")),
    # logic and shifts
    "and": ("and.type d, a, b", "Bitwise AND (on .pred: logical AND of predicates).",
            _r(_LOGIC, "and")),
    "or": ("or.type d, a, b", "Bitwise OR (on .pred: logical OR of predicates).",
           _r(_LOGIC, "or")),
    "xor": ("xor.type d, a, b", "Bitwise exclusive OR; butterfly partners and swizzled "
            "shared-memory addresses are computed with it.", _r(_LOGIC, "xor")),
    "not": ("not.type d, a", "Bitwise NOT (on .pred: logical negation).", _r(_LOGIC, "not")),
    "cnot": ("cnot.type d, a", "C's logical not: d = (a == 0) ? 1 : 0.", _r(_LOGIC, "cnot")),
    "lop3": ("lop3.b32 d, a, b, c, immLut", "Any bitwise function of three inputs, given as "
             "an 8-bit truth table.", _r(_LOGIC, "lop3")),
    "shl": ("shl.type d, a, b", "Shift left by b bits (zeros in).", _r(_LOGIC, "shl")),
    "shr": ("shr.type d, a, b", "Shift right by b bits: .s copies the sign bit in, .u and .b "
            "shift zeros in.", _r(_LOGIC, "shr")),
    "shf": ("shf.dir.mode.b32 d, a, b, c", "Funnel shift: shift the 64-bit pair b:a by c and "
            "keep 32 bits.", _r(_LOGIC, "shf")),
    # data movement and conversion
    "mov": ("mov.type d, a", "Copy a register, an immediate, a special register (%tid.x: "
            "thread index, %ctaid.x: program id) or an address into d.", _r(_MOVE, "mov")),
    "cvt": ("cvt.rnd.dtype.stype d, a", "Convert between types (float widths, float <-> int, "
            "sign/zero extension); the rounding modifier says how (.rn nearest even, .rz "
            "toward zero, .rna nearest away from zero).", _r(_MOVE, "cvt")),
    "cvta": ("cvta.space.size d, a", "Convert an address of a state space to a generic "
             "address (or back, with .to).", _r(_MOVE, "cvta")),
    "ld": ("ld.space.type d, [a]", "Load from memory at address a. The state space says which "
           "memory (.global DRAM through L2/L1, .shared on-chip per block, .param kernel "
           "arguments); .v2/.v4 load 2 or 4 elements at once (wider, better coalesced "
           "accesses).", _r(_MOVE, "ld")),
    "ldu": ("ldu.global.type d, [a]", "Load a value that is the same for all threads of a "
            "warp (uniform) through the read-only path.", _r(_MOVE, "ldu")),
    "st": ("st.space.type [a], b", "Store b to memory at address a (state space and vector "
           "width as for ld).", _r(_MOVE, "st")),
    "createpolicy": ("createpolicy.fractional.L2::evict_first|evict_last.b64 p, fraction",
                     "Make a 64-bit L2 cache policy (how the lines an access brings in are "
                     "evicted) for ld/st with .L2::cache_hint; Triton's eviction_policy.",
                     _r(_MOVE, "createpolicy")),
    "prefetch": ("prefetch.space.level [a]", "Bring the line at a into a cache level.",
                 _r(_MOVE, "prefetch, prefetchu")),
    "cp.async": ("cp.async.ca|cg.shared.global [dst], [src], size", "Copy global memory to "
                 "shared memory asynchronously (sm_80+): the thread does not wait. "
                 ".cg caches in L2 only; commit_group closes a group of copies, wait_group N "
                 "waits until at most N groups are in flight. This is how software "
                 "pipelining (num_stages) overlaps loads with the dot.",
                 _r(_MOVE, "cp.async, cp.async.commit_group, cp.async.wait_group")),
    "cp.reduce": ("cp.reduce.async.bulk.tensor.dim.global.shared::cta.op.bulk_group "
                  "[tensorMap, {x, y}], [src]", "Tensor memory accelerator (sm_90): reduce a "
                  "tile from shared memory into the box of a tensor map in global memory, "
                  "atomically per element (op: add, min, max, and, or, xor...; the element "
                  "type is the map's). Triton's descriptor atomic_add/min/max/...",
                  _r(_MOVE, "cp.reduce.async.bulk.tensor")),
    "ldmatrix": ("ldmatrix.sync.aligned.shape.num{.trans}.shared.b16 r, [a]", "Warp-wide load "
                 "of 8x8 matrices of 16-bit elements from shared memory, distributed across "
                 "the lanes in the fragment layout mma expects; .trans transposes.",
                 _r(_MMA, "ldmatrix")),
    "stmatrix": ("stmatrix.sync.aligned.shape.num.shared.b16 [a], r", "Warp-wide store of 8x8 "
                 "matrix fragments to shared memory (sm_90).", _r(_MMA, "stmatrix")),
    "isspacep": ("isspacep.space p, a", "Whether generic address a lies in a state space.",
                 _r(_MOVE, "isspacep")),
    # synchronisation and communication
    "bar": ("bar.sync a{, b}", "Barrier: every thread of the block (or the b threads of "
            "barrier a) waits here until all have arrived; it also orders their shared memory "
            "accesses. Placed around shared-memory round trips.",
            _r(_SYNC, "bar, barrier")),
    "barrier": ("barrier.sync{.aligned} a{, b}", "Block-wide barrier (the newer spelling of "
                "bar).", _r(_SYNC, "bar, barrier")),
    "membar": ("membar.level", "Memory fence: orders this thread's memory accesses at the "
               "level (.cta, .gl, .sys).", _r(_SYNC, "membar, fence")),
    "fence": ("fence.sem.scope / fence.proxy.kind", "Memory ordering fence; fence.proxy.async "
              "makes generic-proxy writes to shared memory visible to the async proxy (TMA, "
              "wgmma) before it reads them.", _r(_SYNC, "membar, fence")),
    "atom": ("atom.space.op.type d, [a], b", "Atomic read-modify-write (add, min, max, exch, "
             "cas, and, or, xor) on memory at a; d gets the old value. .acq_rel.gpu: ordered "
             "with acquire-release semantics across the GPU.", _r(_SYNC, "atom")),
    "red": ("red.space.op.type [a], b", "Atomic reduction without returning the old value.",
            _r(_SYNC, "red")),
    "shfl": ("shfl.sync.mode.b32 d|p, a, b, c, membermask", "Exchange registers between the "
             "lanes of a warp without shared memory: .bfly reads lane (lane ^ b) (butterfly "
             "reductions), .up lane (lane - b) (scans), .down lane (lane + b), .idx lane b.",
             _r(_SYNC, "shfl.sync")),
    "vote": ("vote.sync.mode d, a, membermask", "Warp vote on predicate a: .all, .any, .uni, "
             ".ballot (a bit per lane).", _r(_SYNC, "vote.sync")),
    "match": ("match.sync.mode.type d, a, membermask", "Lanes of the warp holding the same "
              "value as this lane.", _r(_SYNC, "match.sync")),
    "activemask": ("activemask.b32 d", "Bit mask of the lanes currently active.",
                   _r(_SYNC, "activemask")),
    "mbarrier": ("mbarrier.op.shared.b64 ...", "A barrier object in shared memory that "
                 "counts arrivals and transaction bytes (TMA, async copies).",
                 _r(_SYNC, "mbarrier")),
    "elect": ("elect.sync d|p, membermask", "Elect one leader lane of the warp.",
              _r(_SYNC, "elect.sync")),
    "griddepcontrol": ("griddepcontrol.action", "Programmatic dependent launch: let the next "
                       "kernel start, or wait for the previous one.",
                       _r(_SYNC, "griddepcontrol")),
    # control flow
    "bra": ("@p bra{.uni} label", "Branch to label (under predicate @p: only where p holds). "
            ".uni promises that every thread of the warp takes the same path.",
            _r(_FLOW, "bra")),
    "ret": ("ret", "Return from the function (the kernel ends).", _r(_FLOW, "ret")),
    "exit": ("exit", "End this thread.", _r(_FLOW, "exit")),
    "call": ("call (ret), func, (args)", "Call a function (e.g. vprintf for device_print).",
             _r(_FLOW, "call")),
    "trap": ("trap", "Abort the kernel with an error (a failed device_assert).",
             "PTX ISA, Miscellaneous Instructions: trap"),
    "nanosleep": ("nanosleep.u32 t", "Suspend the thread for about t nanoseconds.",
                  "PTX ISA, Miscellaneous Instructions: nanosleep"),
    # matrix multiply-accumulate
    "mma": ("mma.sync.aligned.shape.alayout.blayout.dtype.atype.btype.ctype d, a, b, c",
            "Warp-wide matrix multiply-accumulate on tensor cores: D = A x B + C for one "
            "m16n8kK tile; each lane holds a fragment of A, B, C and D in registers (the "
            "dot-operand and mma layouts of ttgir). tl.dot on sm_80 becomes these.",
            _r(_MMA, "mma")),
    "wgmma": ("wgmma.mma_async.sync.aligned.shape.dtype.atype.btype d, a-desc, b-desc, ...",
              "Hopper (sm_90) warpgroup MMA: four warps together compute a 64xNxK tile; A "
              "and B are read from shared memory through matrix descriptors. fence orders "
              "register accesses before it, commit_group closes a group, wait_group N waits "
              "until at most N groups are pending.", _r(_WGMMA, "wgmma.mma_async")),
}

MODIFIERS: dict[str, str] = {
    ".global": "state space: global memory (device DRAM, cached in L2 and L1)",
    ".shared": "state space: shared memory (on-chip, one per block, 32 banks of 4 bytes)",
    ".shared::cta": "state space: this block's shared memory",
    ".shared::cluster": "state space: shared memory of a block of the cluster",
    ".param": "state space: kernel parameters (the launch arguments)",
    ".local": "state space: per-thread local memory (spills, arrays)",
    ".const": "state space: constant memory",
    ".v2": "vector of 2 elements moved by one instruction",
    ".v4": "vector of 4 elements moved by one instruction",
    ".f32": "type: 32-bit float", ".f16": "type: 16-bit float", ".f64": "type: 64-bit float",
    ".bf16": "type: bfloat16", ".f16x2": "type: two packed 16-bit floats",
    ".tf32": "type: TensorFloat-32 (fp32 with a 10-bit mantissa)",
    ".b8": "type: 8 untyped bits", ".b16": "type: 16 untyped bits",
    ".b32": "type: 32 untyped bits", ".b64": "type: 64 untyped bits",
    ".s8": "type: signed 8-bit integer", ".s16": "type: signed 16-bit integer",
    ".s32": "type: signed 32-bit integer", ".s64": "type: signed 64-bit integer",
    ".u8": "type: unsigned 8-bit integer", ".u16": "type: unsigned 16-bit integer",
    ".u32": "type: unsigned 32-bit integer", ".u64": "type: unsigned 64-bit integer",
    ".pred": "type: predicate (one bit)",
    ".rn": "round to nearest, ties to even", ".rz": "round toward zero",
    ".rm": "round toward minus infinity", ".rp": "round toward plus infinity",
    ".rna": "round to nearest, ties away from zero",
    ".rni": "round to the nearest integer", ".rzi": "round toward zero to an integer",
    ".approx": "fast approximation (not IEEE-rounded)", ".full": "full-range approximation "
    "(at most 2 ulp)", ".ftz": "flush subnormal inputs and results to zero",
    ".sat": "clamp the result to the type's range", ".lo": "low half of the product",
    ".hi": "high half of the product", ".wide": "the whole product, twice as wide",
    ".eq": "compare: equal", ".ne": "compare: not equal", ".lt": "compare: less than",
    ".le": "compare: less or equal", ".gt": "compare: greater than",
    ".ge": "compare: greater or equal", ".ltu": "compare: less than, or unordered (NaN)",
    ".leu": "compare: less or equal, or unordered", ".gtu": "compare: greater, or unordered",
    ".geu": "compare: greater or equal, or unordered", ".equ": "compare: equal, or unordered",
    ".neu": "compare: not equal, or unordered", ".num": "compare: both are numbers",
    ".nan": "compare: either is NaN",
    ".sync": "all lanes of the member mask execute it together",
    ".aligned": "every thread of the warp (warpgroup) executes the same instruction",
    ".uni": "the branch is uniform across the warp",
    ".bfly": "butterfly: read from lane ^ b", ".up": "read from lane - b",
    ".down": "read from lane + b", ".idx": "read from lane b",
    ".ca": "cache at all levels (L1 and L2)", ".cg": "cache in L2 only (global)",
    ".cs": "streaming: likely read once", ".nc": "non-coherent read-only path",
    ".commit_group": "close the group of async operations issued so far",
    ".wait_group": "wait until at most N groups are pending",
    ".mma_async": "asynchronous warpgroup MMA", ".fence": "order register accesses before "
    "the following wgmma",
    ".async": "the asynchronous proxy (TMA, wgmma)", ".proxy": "a proxy fence",
    ".acq_rel": "acquire-release memory ordering", ".relaxed": "relaxed memory ordering",
    ".acquire": "acquire memory ordering", ".release": "release memory ordering",
    ".gpu": "scope: the whole GPU", ".cta": "scope: the block", ".sys": "scope: the system",
    ".add": "operation: add", ".min": "operation: minimum", ".max": "operation: maximum",
    ".exch": "operation: exchange", ".cas": "operation: compare and swap",
    ".and": "operation: and", ".or": "operation: or", ".xor": "operation: xor",
    ".inc": "operation: increment with wrap", ".dec": "operation: decrement with wrap",
    ".row": "A fragment is row-major", ".col": "B fragment is column-major",
    ".trans": "transpose while loading", ".x4": "four 8x8 matrices",
    ".x2": "two 8x8 matrices", ".x1": "one 8x8 matrix", ".m8n8": "8x8 matrices",
    ".m16n8k16": "tile shape m16 n8 k16", ".m16n8k8": "tile shape m16 n8 k8",
    ".m16n8k32": "tile shape m16 n8 k32",
}

_S = "CUDA Binary Utilities, Instruction Set Reference"

SASS: dict[str, tuple[str, str, str]] = {
    "FADD": ("FADD Rd, Ra, Rb", "32-bit float add.", _S),
    "FMUL": ("FMUL Rd, Ra, Rb", "32-bit float multiply.", _S),
    "FFMA": ("FFMA Rd, Ra, Rb, Rc", "32-bit float fused multiply-add Ra*Rb+Rc.", _S),
    "FMNMX": ("FMNMX Rd, Ra, Rb, P", "32-bit float minimum or maximum (chosen by predicate).",
              _S),
    "FSETP": ("FSETP.cmp Pd, Pe, Ra, Rb, Pf", "Compare floats into predicates.", _S),
    "FSEL": ("FSEL Rd, Ra, Rb, P", "Select between two floats by a predicate.", _S),
    "FCHK": ("FCHK P, Ra, Rb", "Check whether a float division needs the slow path.", _S),
    "MUFU": ("MUFU.op Rd, Ra", "Multi-function unit: approximate EX2, LG2, RCP, RSQ, SIN, COS, "
             "TANH, SQRT.", _S),
    "HADD2": ("HADD2 Rd, Ra, Rb", "Two packed fp16 adds.", _S),
    "HMUL2": ("HMUL2 Rd, Ra, Rb", "Two packed fp16 multiplies.", _S),
    "HFMA2": ("HFMA2 Rd, Ra, Rb, Rc", "Two packed fp16 fused multiply-adds.", _S),
    "HMMA": ("HMMA.shape.type Rd, Ra, Rb, Rc", "Tensor-core matrix multiply-accumulate (from "
             "PTX mma.sync).", _S),
    "HGMMA": ("HGMMA.shape.type Rd, gdesc[UR], ...", "Hopper warpgroup tensor-core MMA with "
              "operands in shared memory (from PTX wgmma.mma_async).", _S),
    "IMMA": ("IMMA.shape.type Rd, Ra, Rb, Rc", "Integer tensor-core MMA.", _S),
    "IADD3": ("IADD3 Rd, Ra, Rb, Rc", "Three-input 32-bit integer add.", _S),
    "IMAD": ("IMAD Rd, Ra, Rb, Rc", "Integer multiply-add Ra*Rb+Rc (.WIDE: 64-bit result; "
             ".MOV and .SHL are moves and shifts done on this unit).", _S),
    "IMNMX": ("IMNMX Rd, Ra, Rb, P", "Integer minimum or maximum.", _S),
    "IABS": ("IABS Rd, Ra", "Integer absolute value.", _S),
    "ISETP": ("ISETP.cmp Pd, Pe, Ra, Rb, Pf", "Compare integers into predicates (masks, loop "
              "conditions).", _S),
    "LEA": ("LEA Rd, Ra, Rb, shift", "Rb + (Ra << shift): address arithmetic.", _S),
    "LOP3": ("LOP3.LUT Rd, Ra, Rb, Rc, lut", "Any bitwise function of three inputs.", _S),
    "SHF": ("SHF.dir Rd, Ra, shift, Rc", "Funnel shift.", _S),
    "SHL": ("SHL Rd, Ra, shift", "Shift left.", _S),
    "SHR": ("SHR Rd, Ra, shift", "Shift right.", _S),
    "SGXT": ("SGXT Rd, Ra, bits", "Sign-extend the low bits.", _S),
    "BMSK": ("BMSK Rd, pos, width", "Build a bit mask.", _S),
    "POPC": ("POPC Rd, Ra", "Population count.", _S),
    "FLO": ("FLO Rd, Ra", "Find the leading one.", _S),
    "PRMT": ("PRMT Rd, Ra, sel, Rb", "Permute bytes.", _S),
    "SEL": ("SEL Rd, Ra, Rb, P", "Select by a predicate.", _S),
    "MOV": ("MOV Rd, Ra", "Move a register or constant.", _S),
    "UMOV": ("UMOV URd, URa", "Move into a uniform register (one value for the warp).", _S),
    "S2R": ("S2R Rd, SR_*", "Read a special register (thread index, lane id, ...).", _S),
    "S2UR": ("S2UR URd, SR_*", "Read a special register into a uniform register (program id).",
             _S),
    "CS2R": ("CS2R Rd, SR_*", "Read a special register (fast path, e.g. zero or clock).", _S),
    "F2F": ("F2F.dst.src Rd, Ra", "Convert between float widths.", _S),
    "F2FP": ("F2FP.PACK_AB Rd, Ra, Rb", "Convert two floats and pack them (fp16/bf16 pairs).",
             _S),
    "F2I": ("F2I Rd, Ra", "Float to integer.", _S),
    "I2F": ("I2F Rd, Ra", "Integer to float.", _S),
    "I2FP": ("I2FP Rd, Ra", "Integer to float (fast path).", _S),
    "LDG": ("LDG.E.width Rd, [Ra]", "Load from global memory (.128: 16 bytes per thread).", _S),
    "STG": ("STG.E.width [Ra], Rb", "Store to global memory.", _S),
    "LDS": ("LDS.width Rd, [Ra]", "Load from shared memory.", _S),
    "STS": ("STS.width [Ra], Rb", "Store to shared memory.", _S),
    "LDSM": ("LDSM.16.M88.4 Rd, [Ra]", "Load matrix fragments from shared memory (from PTX "
             "ldmatrix).", _S),
    "LDGSTS": ("LDGSTS.E [Rs], [Rg]", "Asynchronous copy global -> shared (from PTX "
               "cp.async).", _S),
    "LDGDEPBAR": ("LDGDEPBAR", "Close a group of asynchronous copies (cp.async.commit_group).",
                  _S),
    "DEPBAR": ("DEPBAR.LE SB0, N", "Wait until at most N groups of asynchronous copies are "
               "pending (cp.async.wait_group).", _S),
    "LDC": ("LDC Rd, c[bank][offset]", "Load from constant memory (kernel parameters).", _S),
    "ULDC": ("ULDC URd, c[bank][offset]", "Load a constant into a uniform register.", _S),
    "ATOMG": ("ATOMG.op Rd, [Ra], Rb", "Atomic operation on global memory.", _S),
    "ATOM": ("ATOM.op Rd, [Ra], Rb", "Atomic operation (generic address).", _S),
    "ATOMS": ("ATOMS.op Rd, [Ra], Rb", "Atomic operation on shared memory.", _S),
    "RED": ("RED.op [Ra], Rb", "Atomic reduction, no value returned.", _S),
    "BAR": ("BAR.SYNC id", "Block-wide barrier (PTX bar.sync).", _S),
    "MEMBAR": ("MEMBAR.scope", "Memory fence.", _S),
    "FENCE": ("FENCE.VIEW.ASYNC.S", "Proxy fence before asynchronous shared-memory readers.",
              _S),
    "WARPSYNC": ("WARPSYNC mask", "Synchronise the lanes of the mask.", _S),
    "WARPGROUP": ("WARPGROUP.ARRIVE / .DEPBAR", "Warpgroup ordering around HGMMA (wgmma fence "
                  "and wait).", _S),
    "SHFL": ("SHFL.mode Rd, Ra, lane, c", "Exchange registers between lanes of a warp.", _S),
    "VOTE": ("VOTE.mode Rd, P", "Warp vote.", _S),
    "BRA": ("BRA target", "Branch.", _S),
    "BSSY": ("BSSY B, target", "Start of a divergent region (reconvergence point).", _S),
    "BSYNC": ("BSYNC B", "Reconverge the warp after a divergent region.", _S),
    "EXIT": ("EXIT", "The thread ends.", _S),
    "RET": ("RET", "Return.", _S),
    "CALL": ("CALL target", "Call a function.", _S),
    "NOP": ("NOP", "No operation (padding).", _S),
    "ISBERD": ("ISBERD Rd, [Ra]", "Read from the internal stage buffer.", _S),
    # sm_90 integer forms, predicates and uniform registers
    "VIADD": ("VIADD Rd, Ra, Rb", "32-bit integer add (the sm_90 encoding of an add).", _S),
    "VIMNMX": ("VIMNMX Rd, Ra, Rb, P", "32-bit integer minimum or maximum (sm_90 encoding).",
               _S),
    "VIADDMNMX": ("VIADDMNMX Rd, Ra, Rb, Rc, P", "Integer add, then minimum or maximum with a "
                  "third operand.", _S),
    "IMUL": ("IMUL Rd, Ra, Rb", "Integer multiply (.WIDE: 64-bit result).", _S),
    "I2I": ("I2I.dst.src Rd, Ra", "Convert between integer widths (saturating).", _S),
    "BREV": ("BREV Rd, Ra", "Reverse the bit order.", _S),
    "PLOP3": ("PLOP3.LUT Pd, Pe, Pa, Pb, Pc, lut", "Any logical function of three predicates, "
              "written to predicates.", _S),
    "PSETP": ("PSETP.op Pd, Pe, Pa, Pb", "Combine predicates into predicates.", _S),
    "P2R": ("P2R Rd, PR, Ra, mask", "Copy predicate registers into bits of a register (to keep "
            "them across code that needs the predicates).", _S),
    "R2P": ("R2P PR, Ra, mask", "Set predicate registers from bits of a register.", _S),
    "R2UR": ("R2UR URd, Ra", "Copy a register into a uniform register (a value every lane of "
             "the warp holds alike).", _S),
    "REDUX": ("REDUX.op URd, Ra", "Reduce a register over the warp's lanes into a uniform "
              "register (PTX redux.sync).", _S),
    "ELECT": ("ELECT Pd, URd, PT", "Pick one active lane of the warp (PTX elect.sync).", _S),
    "VOTEU": ("VOTEU.mode URd, P", "Warp vote into a uniform register.", _S),
    "MATCH": ("MATCH.mode Rd, Ra", "Find the lanes of the warp holding the same value.", _S),
    "HMNMX2": ("HMNMX2 Rd, Ra, Rb", "Two packed fp16 minimums or maximums.", _S),
    "HSETP2": ("HSETP2.cmp Pd, Pe, Ra, Rb", "Compare two packed fp16 pairs into predicates.",
               _S),
    "HSET2": ("HSET2.cmp Rd, Ra, Rb", "Compare two packed fp16 pairs into a mask register.", _S),
    "DADD": ("DADD Rd, Ra, Rb", "64-bit float add (register pairs).", _S),
    "DMUL": ("DMUL Rd, Ra, Rb", "64-bit float multiply.", _S),
    "DFMA": ("DFMA Rd, Ra, Rb, Rc", "64-bit float fused multiply-add.", _S),
    "DSETP": ("DSETP.cmp Pd, Pe, Ra, Rb", "Compare 64-bit floats into predicates.", _S),
    "FRND": ("FRND.mode Rd, Ra", "Round a float to an integral value (floor, ceil, trunc, "
             "nearest).", _S),
    "FSET": ("FSET.cmp Rd, Ra, Rb", "Compare floats into a mask register.", _S),
    "STSM": ("STSM.16.M88.4 [Ra], Rb", "Store matrix fragments to shared memory (from PTX "
             "stmatrix).", _S),
    "LD": ("LD.E Rd, [Ra]", "Load through a generic address.", _S),
    "ST": ("ST.E [Ra], Rb", "Store through a generic address.", _S),
    "LDL": ("LDL Rd, [Ra]", "Load from thread-local memory (spills, local arrays).", _S),
    "STL": ("STL [Ra], Rb", "Store to thread-local memory (spills, local arrays).", _S),
    "SYNCS": ("SYNCS.op [UR], R", "mbarrier operations in shared memory: arrive, expect "
              "a transaction count, test or wait for a phase (PTX mbarrier.*).", _S),
    "ARRIVES": ("ARRIVES.LDGSTSBAR [Ra]", "Arrive on an mbarrier once this thread's "
                "asynchronous copies land (cp.async.mbarrier.arrive).", _S),
    "UTMALDG": ("UTMALDG.dim [URd], [URa]", "Tensor memory accelerator: copy a tile from "
                "global to shared memory as a tensor map describes (cp.async.bulk.tensor).",
                _S),
    "UTMASTG": ("UTMASTG.dim [URa], [URd]", "Tensor memory accelerator: copy a tile from shared "
                "to global memory.", _S),
    "UTMAREDG": ("UTMAREDG.dim.op [URa], [URd]", "Tensor memory accelerator: reduce a tile "
                 "from shared memory into global memory (cp.reduce.async.bulk.tensor).", _S),
    "UTMACMDFLUSH": ("UTMACMDFLUSH", "Issue the tensor memory accelerator's queued commands.",
                     _S),
    "UBLKCP": ("UBLKCP [URd], [URa], URb", "Bulk copy between global and shared memory "
               "(cp.async.bulk).", _S),
    "UCGABAR": ("UCGABAR_ARV / _WAIT", "Cluster-wide barrier (barrier.cluster).", _S),
    "USETMAXREG": ("USETMAXREG.op N", "Raise or lower the warp's register budget "
                   "(setmaxnreg).", _S),
    "ACQBULK": ("ACQBULK", "Wait for the warp's bulk asynchronous copies to be readable.", _S),
    "CCTL": ("CCTL.op [Ra]", "Cache control (invalidate or write back a line).", _S),
    "ERRBAR": ("ERRBAR", "Error barrier: wait until earlier errors are reported.", _S),
    "LEPC": ("LEPC Rd", "Load the address of the current instruction.", _S),
    "BMOV": ("BMOV Bd, Ra", "Move to or from a convergence barrier register.", _S),
    "BREAK": ("BREAK Bd", "Leave a divergent region early (a loop's break).", _S),
    "YIELD": ("YIELD", "Hint that the scheduler may switch to another warp.", _S),
    "NANOSLEEP": ("NANOSLEEP t", "Suspend the thread for about t nanoseconds.", _S),
    "QSPC": ("QSPC.E.space Pd, Rd, [Ra]", "Query which state space a generic address is in.",
             _S),
}

# a U-prefixed opcode that is not in SASS is the uniform-datapath form of the opcode without
# its U (UIADD3, ULEA, USHF, ...): computed once per warp on uniform registers
UNIFORM_NOTE = ("Uniform datapath: computed once for the whole warp in uniform registers "
                "(URn), for values every lane shares (program ids, kernel arguments, "
                "addresses of whole tiles).")

SASS_MODIFIERS: dict[str, str] = {
    "E": "64-bit (extended) address", "128": "128 bits per thread", "64": "64 bits per thread",
    "U16": "16-bit unsigned", "U32": "32-bit unsigned", "S32": "32-bit signed",
    "F32": "32-bit float", "F16": "16-bit float", "BF16": "bfloat16",
    "WIDE": "64-bit result", "HI": "high half", "X": "with carry in", "LUT": "truth table",
    "SYNC": "synchronising", "FTZ": "flush subnormals to zero", "RN": "round to nearest",
    "RZ": "round toward zero", "EX2": "2^x", "LG2": "log2", "RCP": "reciprocal",
    "RSQ": "1/sqrt", "SIN": "sine", "COS": "cosine", "TANH": "tanh",
    "BFLY": "butterfly exchange", "IDX": "indexed lane", "UP": "from a lower lane",
    "DOWN": "from a higher lane", "LT": "less than", "GT": "greater than", "GE": "greater or "
    "equal", "LE": "less or equal", "EQ": "equal", "NE": "not equal", "AND": "and-combined",
    "OR": "or-combined", "U": "unsigned", "MOV": "used as a move", "SHL": "used as a shift",
    "CONSTANT": "constant cache", "STRONG": "strongly ordered", "GPU": "GPU scope",
    "SYS": "system scope", "ADD": "add", "MIN": "minimum", "MAX": "maximum", "CAS": "compare "
    "and swap", "EXCH": "exchange", "L": "left", "R": "right",
    "S16": "16-bit signed", "S64": "64-bit signed", "U64": "64-bit unsigned",
    "F64": "64-bit float", "PACK_AB": "pack two results", "RELU": "clamp at zero",
    "SAT": "saturate", "NOT": "negated", "XOR": "xor-combined", "TRUNC": "round toward zero",
    "FLOOR": "round down", "CEIL": "round up", "ARRIVE": "arrive", "WAIT": "wait",
    "TRYWAIT": "test the phase",
}
