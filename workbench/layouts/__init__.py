"""Thread-to-data layouts and shared-memory banks: pure math over ints and numpy.

Encodings print and parse as Triton 3.6 TTGIR attributes; every encoding converts to one
canonical :class:`LinearLayout` (:func:`to_linear`), which ownership, code generation support
and the bank analysis all use. Nothing here imports the rest of the workbench.
"""
from .banks import BankReport, BankRequest, PaddedRowMajor, bank_conflicts, dtype_bytes
from .blocked import blocked_for_shape, coalesced_blocked, default_blocked
from .codegen_support import (
    elements_per_thread,
    is_disjoint,
    num_registers,
    register_offsets,
    thread_bases,
)
from .convert import to_linear
from .encodings import (
    BlockedLayout,
    DotOperandLayout,
    Encoding,
    LinearEncoding,
    MmaLayout,
    NVMMASharedLayout,
    SliceLayout,
    SwizzledSharedLayout,
    check_num_warps,
)
from .errors import LayoutError
from .linear import LinearLayout
from .ownership import Ownership, ownership
from .parse import parse, parse_aliases

__all__ = [
    "BlockedLayout", "SliceLayout", "MmaLayout", "DotOperandLayout", "SwizzledSharedLayout",
    "NVMMASharedLayout", "LinearEncoding", "LinearLayout", "LayoutError", "Encoding", "parse",
    "parse_aliases", "to_linear", "ownership", "Ownership", "bank_conflicts", "BankReport",
    "BankRequest", "PaddedRowMajor", "dtype_bytes", "default_blocked", "blocked_for_shape",
    "coalesced_blocked", "check_num_warps", "register_offsets", "thread_bases", "is_disjoint",
    "num_registers", "elements_per_thread",
]
