"""Compiler passes: one pass per file, a pass manager with snapshots and timings, and the pass
lists of each stage (:mod:`workbench.passes.pipelines`)."""
from .canonicalize import Canonicalize
from .convert_to_ttgir import ConvertToTTGIR, convert_to_ttgir
from .cse import CSE
from .dce import DCE
from .manager import Pass, PassManager
from .pipelines import REGISTRY, get_pass, ttgir_passes, ttir_passes

__all__ = ["Pass", "PassManager", "Canonicalize", "CSE", "DCE", "ConvertToTTGIR",
           "convert_to_ttgir", "get_pass", "ttir_passes", "ttgir_passes", "REGISTRY"]
