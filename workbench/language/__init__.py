"""The tile language, imported by kernels as ``tl`` (``import workbench.language as tl``).

Names and semantics follow ``triton.language`` 3.6: dtypes,
``constexpr``, ``tensor`` and the builtins. The builtins only work inside ``@jit`` kernels,
where the frontend compiles them to ttir.
"""
from . import (
    extra,  # noqa: F401
    math,  # noqa: F401
    random,  # noqa: F401
    standard,  # noqa: F401
    target_info,  # noqa: F401
)
from .advanced import (
    argmax,
    argmin,
    associative_scan,
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_xchg,
    atomic_xor,
    cumprod,
    cumsum,
    dot,
    permute,
    reduce,
    trans,
    xor_sum,
)
from .blockptr import advance, make_block_ptr
from .builtins import (
    PropagateNan,
    abs,
    arange,
    cast,
    cdiv,
    ceil,
    cos,
    erf,
    exp,
    exp2,
    floor,
    fma,
    full,
    load,
    log,
    log2,
    maximum,
    minimum,
    num_programs,
    program_id,
    rsqrt,
    sigmoid,
    sin,
    sqrt,
    store,
    where,
    zeros,
    zeros_like,
)
from .core import LanguageError, builtin, const, constexpr, tensor
from .core_extras import (
    CONSTEXPR_0,
    binary_op_type_legalization,
    builtin_max,
    builtin_min,
    check_bit_width,
    dispatch,
    extern,
    extern_elementwise,
    is_negative_zero,
    tensor_descriptor_base,
    tensor_descriptor_base_type,
)
from .debug import (
    assume,
    debug_barrier,
    device_assert,
    device_print,
    max_constancy,
    max_contiguous,
    multiple_of,
    static_assert,
    static_print,
)
from .descriptors import (
    load_tensor_descriptor,
    make_tensor_descriptor,
    store_tensor_descriptor,
    tensor_descriptor,
    tensor_descriptor_type,
)
from .dtypes import (
    bfloat16,
    dtype,
    float8e4b8,
    float8e4b15,
    float8e4nv,
    float8e5,
    float8e5b16,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    pointer_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .inline_asm import inline_asm_elementwise
from .loops import condition, range, static_range
from .map_elementwise import map_elementwise
from .mathops import clamp, div_rn, fdiv, sqrt_rn, swizzle2d, to_tensor, umulhi
from .random import (
    pair_uniform_to_normal,
    philox,
    philox_impl,
    rand,
    rand4x,
    randint,
    randint4x,
    randn,
    randn4x,
    uint_to_uniform_float,
)
from .reductions import max, min, sum
from .scaled_dot import dot_scaled
from .shapes import (
    broadcast,
    broadcast_to,
    cat,
    expand_dims,
    flip,
    gather,
    histogram,
    interleave,
    item,
    join,
    ravel,
    reshape,
    sort,
    split,
    squeeze,
    topk,
    unsqueeze,
    view,
)
from .standard import bitonic_merge
from .standard_names import (
    TRITON_MAX_TENSOR_NUMEL,
    add,
    mul,
    reduce_or,
    softmax,
    str_to_ty,
    sub,
)
from .tuples import constexpr_type, tuple, tuple_type
from .typesys import (
    base_type,
    base_value,
    block_type,
    get_int_dtype,
    is_builtin,
    slice,
    slice_type,
    validate_block_shape,
    void,
)
from .utils import constexpr_function, must_use_result, next_power_of_2

bool_ = int1
pi32_t = pointer_type(int32)

__all__ = [
    "load_tensor_descriptor", "make_tensor_descriptor", "store_tensor_descriptor",
    "tensor_descriptor",
    "PropagateNan", "abs", "arange", "broadcast", "broadcast_to", "cast", "cdiv", "ceil", "cos",
    "erf", "exp", "exp2", "expand_dims", "floor", "fma", "full", "load", "log", "log2",
    "max_constancy", "max_contiguous", "maximum", "minimum", "multiple_of", "num_programs",
    "program_id", "reshape", "rsqrt", "sigmoid", "sin", "sqrt", "static_assert", "static_print",
    "store", "where", "zeros", "zeros_like", "LanguageError", "builtin", "const", "constexpr",
    "tensor",
    "bfloat16", "dtype", "float16", "float32", "float64", "float8e4nv", "float8e5",
    "float8e4b15", "float8e4b8", "float8e5b16", "int1", "int8", "int16", "int32",
    "int64", "pointer_type", "uint8", "uint16", "uint32", "uint64", "range", "static_range",
    "const", "condition",
    "max", "min", "sum", "next_power_of_2", "bool_", "math", "device_print", "device_assert",
    "debug_barrier", "argmax", "argmin", "assume", "squeeze", "unsqueeze",
    "constexpr_function", "swizzle2d", "extra",
    "associative_scan", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min",
    "atomic_or", "atomic_xchg", "atomic_xor", "cumprod", "cumsum", "dot", "permute", "reduce",
    "dot_scaled", "trans", "xor_sum", "advance", "make_block_ptr", "clamp", "div_rn", "fdiv",
    "sqrt_rn", "inline_asm_elementwise", "TRITON_MAX_TENSOR_NUMEL", "add", "mul", "reduce_or",
    "softmax", "str_to_ty", "sub",
    "to_tensor", "umulhi", "pair_uniform_to_normal", "philox", "philox_impl", "rand", "rand4x",
    "randint", "randint4x", "randn", "randn4x", "uint_to_uniform_float", "cat", "flip",
    "interleave", "join", "ravel", "sort", "split", "topk", "view", "random", "histogram",
    "item", "gather", "pi32_t", "tuple", "tuple_type", "constexpr_type",
    "standard", "target_info", "tensor_descriptor_type", "map_elementwise", "bitonic_merge",
    "block_type", "slice", "void", "CONSTEXPR_0", "binary_op_type_legalization", "builtin_max",
    "builtin_min", "check_bit_width", "dispatch", "extern", "extern_elementwise",
    "is_negative_zero", "tensor_descriptor_base", "tensor_descriptor_base_type", "base_type",
    "base_value", "get_int_dtype", "is_builtin", "slice_type", "validate_block_shape",
    "must_use_result",
]
