"""Triton's ``tt`` dialect (``TritonOps.td`` of Triton 3.6): names, operands, attributes,
effects and the assembly formats Triton prints. Region ops (``tt.func``, ``tt.reduce``,
``tt.scan``) are in :mod:`workbench.ir.dialects.tt_regions`."""
from __future__ import annotations

from . import tt_checks as chk
from .spec import REQUIRED, Attr, op, pointee_of_operand, same_as_operand

_PURE = ("pure",)
SCALE_DOT_TYPES = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "bf16", "fp16")
_EW = ("pure", "elementwise")
_ARROW = "$src attr-dict `:` type($src) `->` type($result)"
_MEM = ("(`cacheModifier` `=` $cache^)? (`evictionPolicy` `=` $evict^)? attr-dict "
        "`:` type($ptr)")
#: the cache modifier and eviction policy of memory ops (also ``ttg.async_copy_global_to_local``)
CACHE_ATTR = Attr("cache", "enum", None, elide=(None, "", "none"))
EVICT_ATTR = Attr("evict", "enum", None, elide=(None, "", "normal", "evict_normal"))
_SEM = Attr("sem", "enum", "acq_rel", elide=())
_SCOPE = Attr("scope", "enum", "gpu", elide=())
#: Triton's ``InputPrecision`` enum in order (attribute dictionaries print its number)
INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
#: Triton's ``PaddingOption`` enum in order (``{padding = 2 : i32}`` is "nan")
PADDING_OPTIONS = ("none", "zero", "nan")
#: Triton's ``DescriptorReduceKind`` names as ``tt.descriptor_reduce`` prints them
DESCRIPTOR_REDUCE_KINDS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


SPECS = [
    op("tt.return", ["*srcs"], results=(), traits=("pure", "terminator"),
       format="attr-dict ($srcs^ `:` type($srcs))?", doc="return from a tt.func"),
    op("tt.call", ["*args"], results=("*results",),
       attributes=[Attr("callee", "symbol", REQUIRED)],
       effects=("read:global", "write:global", "write:io"),
       format="$callee `(` $args `)` attr-dict `:` functional-type(operands, results)",
       doc="call of a noinline tt.func"),
    op("tt.get_program_id", attributes=[Attr("axis", "axis", REQUIRED)], traits=_PURE,
       format="$axis attr-dict `:` type($result)", verify=chk.program_id,
       doc="program id along axis 0..2 -> i32"),
    op("tt.get_num_programs", attributes=[Attr("axis", "axis", REQUIRED)], traits=_PURE,
       format="$axis attr-dict `:` type($result)", verify=chk.program_id,
       doc="grid size along axis 0..2 -> i32"),
    op("tt.make_range", attributes=[Attr("start", "i32", REQUIRED), Attr("end", "i32", REQUIRED)],
       traits=_PURE, format="attr-dict `:` type($result)", verify=chk.make_range,
       doc="tensor<Nxi32> [start, end)"),
    op("tt.splat", ["src"], traits=_PURE, format=_ARROW, verify=chk.splat,
       doc="scalar -> tensor of copies"),
    op("tt.unsplat", ["src"], traits=_PURE, format="$src attr-dict `:` type($src)",
       infer=lambda types, attrs: [types[0].element], verify=chk.unsplat,
       doc="one-element tensor -> its element"),
    op("tt.broadcast", ["src"], traits=_PURE, format=_ARROW, verify=chk.broadcast,
       doc="size-1 dims -> larger dims (same rank)"),
    op("tt.expand_dims", ["src"], attributes=[Attr("axis", "i32", REQUIRED)], traits=_PURE,
       format=_ARROW, verify=chk.expand_dims, doc="insert a size-1 dim at axis"),
    op("tt.addptr", ["ptr", "offset"], traits=_EW,
       format="$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)",
       verify=chk.addptr, doc="pointer + offset in elements"),
    op("tt.load", ["ptr", "mask?", "other?"],
       attributes=[CACHE_ATTR, EVICT_ATTR, Attr("isVolatile", "bool", False, elide=(None, False))],
       effects=("read:global",), format="$ptr (`,` $mask^)? (`,` $other^)? " + _MEM,
       infer=pointee_of_operand, verify=chk.load,
       doc="load; masked-off lanes give other (undefined when other is absent)"),
    op("tt.store", ["ptr", "value", "mask?"], results=(), attributes=[CACHE_ATTR, EVICT_ATTR],
       effects=("write:global",), format="$ptr `,` $value (`,` $mask^)? " + _MEM,
       verify=chk.store, doc="store"),
    op("tt.reduce.return", ["*result"], results=(), traits=("pure", "terminator"),
       format="$result attr-dict `:` type($result)", doc="yield of a tt.reduce combine region"),
    op("tt.scan.return", ["*result"], results=(), traits=("pure", "terminator"),
       format="$result attr-dict `:` type($result)", doc="yield of a tt.scan combine region"),
    op("tt.dot", ["a", "b", "c"], results=("d",), traits=_PURE, verify=chk.dot,
       attributes=[Attr("inputPrecision", "enum", "tf32", elide=("ieee",), fill="ieee",
                        choices=INPUT_PRECISIONS),
                   Attr("maxNumImpreciseAcc", "i32", 0, elide=(None, 0))],
       format="$a `,` $b `,` $c (`,` `inputPrecision` `=` $inputPrecision^)? attr-dict `:` "
              "type($a) `*` type($b) `->` type($d)",
       doc="c + a @ b (inputPrecision: how fp32 inputs are multiplied; absent means tf32)"),
    op("tt.dot_scaled", ["a", "b", "c", "a_scale?", "b_scale?"], results=("d",),
       traits=_PURE, verify=chk.dot_scaled,
       attributes=[Attr("a_elem_type", "enum", REQUIRED, choices=SCALE_DOT_TYPES),
                   Attr("b_elem_type", "enum", REQUIRED, choices=SCALE_DOT_TYPES),
                   Attr("fastMath", "bool", False, elide=(None,)),
                   Attr("lhs_k_pack", "bool", True, elide=(None, True)),
                   Attr("rhs_k_pack", "bool", True, elide=(None, True)),
                   Attr("operandSegmentSizes", "i32_array", None)],
       format="$a (`scale` $a_scale^)? `,` $b (`scale` $b_scale^)? `,` $c `lhs` `=` "
              "$a_elem_type `rhs` `=` $b_elem_type attr-dict `:` type($a) (`,` "
              "type($a_scale)^)? `*` type($b) (`,` type($b_scale)^)? `->` type($d)",
       doc="c + (a * 2**a_scale) @ (b * 2**b_scale), microscaled (e8m0 scales per 32 "
           "elements of K; e2m1 packs two values per byte)"),
    op("tt.trans", ["src"], attributes=[Attr("order", "i32_array", REQUIRED)], traits=_PURE,
       format=_ARROW, doc="permute dims"),
    op("tt.reshape", ["src"], traits=_PURE,
       attributes=[Attr("allow_reorder", "unit", False, elide=(None, False)),
                   Attr("efficient_layout", "unit", False, elide=(None, False))],
       format="$src (`allow_reorder` $allow_reorder^)? (`efficient_layout` "
              "$efficient_layout^)? attr-dict `:` type($src) `->` type($result)",
       doc="reshape (same numel)"),
    op("tt.join", ["lhs", "rhs"], traits=_PURE,
       format="$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)",
       doc="new minor dim of size 2"),
    op("tt.split", ["src"], results=("outLHS", "outRHS"),
       traits=_PURE + ("same_result_types", "named_results"),
       format="$src attr-dict `:` type($src) `->` type($outLHS)",
       doc="split the minor dim of size 2 (two equal results)"),
    op("tt.cat", ["lhs", "rhs"], traits=_PURE,
       format="$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)",
       doc="concatenate (may reorder)"),
    op("tt.bitcast", ["src"], traits=_EW, format=_ARROW,
       doc="reinterpret bits (pointers and same-width ints/floats)"),
    op("tt.int_to_ptr", ["src"], traits=_EW, format=_ARROW, doc="i64 -> pointer"),
    op("tt.ptr_to_int", ["src"], traits=_EW, format=_ARROW, doc="pointer -> i64"),
    op("tt.fp_to_fp", ["src"], traits=_EW, attributes=[Attr("rounding", "enum", None)],
       format="$src attr-dict (`,` `rounding` `=` $rounding^)? `:` type($src) `->` "
              "type($result)",
       doc="float conversion with a rounding mode (rtne, rtz)"),
    op("tt.clampf", ["x", "min", "max"], traits=_EW + ("same_operands_and_result_type",),
       attributes=[Attr("propagateNan", "enum", "none", elide=())],
       format="$x `,` $min `,` $max `,` `propagateNan` `=` $propagateNan attr-dict `:` "
              "type($result)", doc="clamp"),
    op("tt.precise_sqrt", ["x"], traits=_EW, format="$x attr-dict `:` type($x)",
       infer=same_as_operand(0), doc="IEEE sqrt"),
    op("tt.precise_divf", ["x", "y"], traits=_EW, format="$x `,` $y attr-dict `:` type($x)",
       infer=same_as_operand(0), doc="IEEE division"),
    op("tt.mulhiui", ["x", "y"], traits=_EW, format="$x `,` $y attr-dict `:` type($x)",
       infer=same_as_operand(0), doc="high half of the product"),
    op("tt.extern_elementwise", ["*srcs"], traits=("elementwise",),
       attributes=[Attr("symbol", "str", REQUIRED), Attr("libname", "str", "", elide=()),
                   Attr("libpath", "str", "", elide=()), Attr("pure", "bool", True, elide=())],
       format="operands attr-dict `:` functional-type(operands, results)",
       doc="a libdevice-style math function"),
    op("tt.atomic_rmw", ["ptr", "val", "mask?"], effects=("read:global", "write:global"),
       attributes=[Attr("atomic_rmw_op", "enum", REQUIRED), _SEM, _SCOPE],
       format="$atomic_rmw_op `,` $sem `,` $scope `,` $ptr `,` $val (`,` $mask^)? attr-dict "
              "`:` functional-type(operands, results)",
       doc="atomic read-modify-write, returns the old value"),
    op("tt.atomic_cas", ["ptr", "cmp", "val"], effects=("read:global", "write:global"),
       attributes=[_SEM, _SCOPE],
       format="$sem `,` $scope `,` $ptr `,` $cmp `,` $val attr-dict `:` "
              "functional-type(operands, results)", doc="atomic compare and swap"),
    op("tt.histogram", ["src", "mask?"], traits=_PURE,
       format="$src (`,` $mask^)? attr-dict `:` type($src) `->` type($result)",
       doc="counts per bin"),
    op("tt.gather", ["src", "indices"], attributes=[Attr("axis", "i32", REQUIRED)],
       traits=_PURE, format="$src `[` $indices `]` attr-dict `:` "
                            "functional-type(operands, results)", doc="gather along axis"),
    # tensor descriptors (TritonOps.td: TT_MakeTensorDescOp, TT_DescriptorLoadOp, ...)
    op("tt.make_tensor_descriptor", ["base", "*shape", "*strides"], traits=_PURE,
       attributes=[Attr("padding", "enum_i32", "zero", elide=(None, "zero"),
                        choices=PADDING_OPTIONS)],
       format="$base `,` `[` $shape `]` `,` `[` $strides `]` attr-dict `:` short(type($base)) "
              "`,` short(type($result))",
       doc="a descriptor of the tensor at base (shape i32, strides i64 in elements)"),
    op("tt.descriptor_load", ["desc", "*indices"], attributes=[CACHE_ATTR, EVICT_ATTR],
       effects=("read:global",),
       format="$desc `[` $indices `]` (`cacheModifier` `=` $cache^)? (`evictionPolicy` `=` "
              "$evict^)? attr-dict `:` type($desc) `->` type($result)",
       doc="the block at indices (i32, elements); out-of-bounds elements read as padding"),
    op("tt.descriptor_store", ["desc", "*indices", "src"], results=(),
       effects=("write:global",),
       format="$desc `[` $indices `]` `,` $src attr-dict `:` type($desc) `,` type($src)",
       doc="store the block at indices; out-of-bounds elements are not written"),
    op("tt.descriptor_reduce", ["desc", "*indices", "src"], results=(),
       attributes=[Attr("kind", "enum", REQUIRED, choices=DESCRIPTOR_REDUCE_KINDS)],
       effects=("read:global", "write:global"),
       format="$kind `,` $desc `[` $indices `]` `,` $src attr-dict `:` type($desc) `,` "
              "type($src)",
       doc="atomic reduce of the block into memory at indices (add, min, max, and, or, xor)"),
    op("tt.descriptor_gather", ["desc", "x_offsets", "y_offset"], effects=("read:global",),
       format="$desc `[` $x_offsets `,` $y_offset `]` attr-dict `:` "
              "functional-type(operands, results)",
       doc="rows x_offsets (tensor<Nxi32>) of the descriptor's 2-D tensor, from column "
           "y_offset"),
    op("tt.descriptor_scatter", ["desc", "x_offsets", "y_offset", "src"], results=(),
       effects=("write:global",),
       format="$desc `[` $x_offsets `,` $y_offset `]` `,` $src attr-dict `:` type(operands)",
       doc="store the rows of src at rows x_offsets, from column y_offset"),
    op("tt.print", ["*args"], results=(), effects=("write:io",),
       attributes=[Attr("prefix", "str", ""), Attr("hex", "bool", False, elide=()),
                   Attr("isSigned", "i32_array", (), elide=())],
       format="$prefix attr-dict (`:` $args^ `:` type($args))?", doc="device print"),
    op("tt.assert", ["condition"], results=(), effects=("write:io",),
       attributes=[Attr("message", "str", "")],
       format="$condition `,` $message attr-dict `:` type($condition)", doc="device assert"),
]
