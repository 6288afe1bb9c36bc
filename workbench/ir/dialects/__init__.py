"""The op catalogue: every op name the compiler uses, its operands, attributes and meaning.

Names follow Triton 3.6 and MLIR's upstream dialects so what a learner reads here is what
Triton prints. This table is the contract between the frontend, the passes, the interpreter and
the code generators; :mod:`workbench.ir.verifier` checks IR against it.

Each entry: ``name -> OpSpec(operands, attributes, doc)``. Operand lists use ``?`` for optional
trailing operands and ``*`` for variadic ones.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpSpec:
    operands: tuple
    attributes: tuple
    doc: str
    regions: int = 0
    results: str = "1"  # "1", "0", "*" (variadic)


def _s(operands, attributes, doc, regions=0, results="1"):
    return OpSpec(tuple(operands), tuple(attributes), doc, regions, results)


BINARY_INT = ["addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori", "xori",
              "shli", "shrsi", "shrui", "maxsi", "minsi", "maxui", "minui"]
BINARY_FLOAT = ["addf", "subf", "mulf", "divf", "remf", "maxnumf", "minnumf", "maximumf",
                "minimumf"]
CASTS = ["extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf", "truncf",
         "bitcast"]
UNARY_MATH = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "absf", "absi", "floor", "ceil",
              "sin", "cos", "erf", "tanh"]

# cmpi predicates (MLIR arith): eq ne slt sle sgt sge ult ule ugt uge
# cmpf predicates: oeq one olt ole ogt oge ord une ueq ult ule ugt uge uno

OPS: dict[str, OpSpec] = {
    "builtin.module": _s([], ["attributes"], "the top level; holds tt.func ops", 1, "0"),
    "tt.func": _s([], ["sym_name", "function_type", "arg_attrs", "arg_names", "visibility",
                       "noinline"], "a kernel; its entry block's arguments are its parameters",
                  1, "0"),
    "tt.return": _s(["*values"], [], "return from a tt.func", 0, "0"),
    "tt.call": _s(["*args"], ["callee"], "call of a noinline tt.func", 0, "*"),
    "arith.constant": _s([], ["value"], "a scalar, or a splat tensor constant (value is a Python "
                                        "int/float/bool)"),
    "arith.cmpi": _s(["lhs", "rhs"], ["predicate"], "integer compare -> i1"),
    "arith.cmpf": _s(["lhs", "rhs"], ["predicate"], "float compare -> i1"),
    "arith.select": _s(["condition", "true_value", "false_value"], [], "elementwise choose"),
    "math.fma": _s(["a", "b", "c"], [], "a*b+c, one rounding"),
    "tt.get_program_id": _s([], ["axis"], "program id along axis 0..2 -> i32"),
    "tt.get_num_programs": _s([], ["axis"], "grid size along axis 0..2 -> i32"),
    "tt.make_range": _s([], ["start", "end"], "tensor<Nxi32> [start, end)"),
    "tt.splat": _s(["src"], [], "scalar -> tensor of copies"),
    "tt.broadcast": _s(["src"], [], "size-1 dims -> larger dims (same rank)"),
    "tt.expand_dims": _s(["src"], ["axis"], "insert a size-1 dim at axis"),
    "tt.addptr": _s(["ptr", "offset"], [], "pointer + offset in elements"),
    "tt.load": _s(["ptr", "mask?", "other?"], ["cache", "evict", "isVolatile"],
                  "load; masked-off lanes give other (undefined when other is absent)"),
    "tt.store": _s(["ptr", "value", "mask?"], ["cache", "evict"], "store", 0, "0"),
    "tt.reduce": _s(["*srcs"], ["axis"], "reduce srcs along axis with the combine region "
                                         "(block args: 2 per src; terminator tt.reduce.return)",
                    1, "*"),
    "tt.reduce.return": _s(["*values"], [], "yield of a tt.reduce combine region", 0, "0"),
    "tt.scan": _s(["*srcs"], ["axis", "reverse"], "inclusive scan along axis", 1, "*"),
    "tt.scan.return": _s(["*values"], [], "yield of a tt.scan combine region", 0, "0"),
    "tt.dot": _s(["a", "b", "c"], ["inputPrecision", "maxNumImpreciseAcc"], "c + a @ b"),
    "tt.trans": _s(["src"], ["order"], "permute dims"),
    "tt.reshape": _s(["src"], ["allow_reorder"], "reshape (same numel)"),
    "tt.join": _s(["lhs", "rhs"], [], "new minor dim of size 2"),
    "tt.split": _s(["src"], [], "split the minor dim of size 2", 0, "*"),
    "tt.cat": _s(["lhs", "rhs"], [], "concatenate (may reorder)"),
    "tt.bitcast": _s(["src"], [], "reinterpret bits (pointers and same-width ints/floats)"),
    "tt.int_to_ptr": _s(["src"], [], "i64 -> pointer"),
    "tt.ptr_to_int": _s(["src"], [], "pointer -> i64"),
    "tt.fp_to_fp": _s(["src"], ["rounding"], "float conversion with a rounding mode (rtne, rtz)"),
    "tt.clampf": _s(["x", "min", "max"], ["propagateNan"], "clamp"),
    "tt.precise_sqrt": _s(["x"], [], "IEEE sqrt"),
    "tt.precise_divf": _s(["x", "y"], [], "IEEE division"),
    "tt.mulhiui": _s(["x", "y"], [], "high half of the product"),
    "tt.extern_elementwise": _s(["*args"], ["symbol", "libname", "libpath", "pure"],
                                "a libdevice-style math function"),
    "tt.atomic_rmw": _s(["ptr", "val", "mask?"], ["atomic_rmw_op", "sem", "scope"],
                        "atomic read-modify-write, returns the old value"),
    "tt.atomic_cas": _s(["ptr", "cmp", "val"], ["sem", "scope"], "atomic compare and swap"),
    "tt.histogram": _s(["src", "mask?"], [], "counts per bin"),
    "tt.gather": _s(["src", "indices"], ["axis"], "gather along axis"),
    "tt.print": _s(["*args"], ["prefix", "hex", "isSigned"], "device print", 0, "0"),
    "tt.assert": _s(["condition"], ["message"], "device assert", 0, "0"),
    "scf.for": _s(["lower", "upper", "step", "*inits"], [],
                  "counted loop; block args (iv, iter_args); terminator scf.yield", 1, "*"),
    "scf.if": _s(["condition"], [], "then/else regions; terminator scf.yield", 2, "*"),
    "scf.while": _s(["*inits"], [], "before region ends in scf.condition, after in scf.yield",
                    2, "*"),
    "scf.condition": _s(["condition", "*args"], [], "while-loop continue test", 0, "0"),
    "scf.yield": _s(["*values"], [], "region result", 0, "0"),
    "ttg.convert_layout": _s(["src"], [], "change a tile's layout (registers, shuffles or "
                                          "shared memory)"),
    "ttg.local_alloc": _s(["src?"], ["allocation.offset"], "allocate shared memory"),
    "ttg.local_load": _s(["src"], [], "shared memory -> registers"),
    "ttg.local_store": _s(["value", "dst"], [], "registers -> shared memory", 0, "0"),
    "ttg.local_dealloc": _s(["src"], [], "free shared memory", 0, "0"),
    "gpu.barrier": _s([], [], "CTA-wide barrier (bar.sync)", 0, "0"),
    "ttg.memdesc_index": _s(["src", "index"], [], "one buffer of a multi-buffered shared "
                                                  "allocation"),
    "ttg.async_copy_global_to_local": _s(["src", "dst", "pred", "mask?"], [],
                                         "cp.async global -> shared", 0, "0"),
    "ttg.async_commit_group": _s([], [], "cp.async.commit_group", 0, "0"),
    "ttg.async_wait": _s([], ["num"], "cp.async.wait_group num", 0, "0"),
    "ttng.warp_group_dot": _s(["a", "b", "c"], ["inputPrecision", "isAsync"],
                              "Hopper wgmma: a (M x K) and b (K x N) memdescs in nvmma_shared, "
                              "c the MMA v3 accumulator; isAsync: leaves the group in flight"),
    "ttng.warp_group_dot_wait": _s(["*inputs"], ["pendings"],
                                   "wgmma.wait_group pendings; returns its inputs (the "
                                   "accumulators) once the older groups have finished",
                                   0, "*"),
}

for _n in BINARY_INT + BINARY_FLOAT:
    OPS["arith." + _n] = _s(["lhs", "rhs"], [], f"elementwise {_n}")
for _n in CASTS:
    OPS["arith." + _n] = _s(["in"], [], f"conversion {_n}")
for _n in UNARY_MATH:
    OPS["math." + _n] = _s(["operand"], [], f"elementwise {_n}")

CMPI_PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF_PREDICATES = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
                   "ult", "ule", "une", "uno", "true"]
