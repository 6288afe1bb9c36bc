"""MLIR's ``gpu`` dialect op Triton 3.6 prints in ttgir: the CTA-wide barrier."""
from __future__ import annotations

from .spec import op

SPECS = [
    op("gpu.barrier", results=(), effects=("read:shared", "write:shared"), format="attr-dict",
       doc="CTA-wide barrier (bar.sync 0; PTX ISA 9.7.13.1)"),
]
