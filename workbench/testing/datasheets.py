"""Vendor datasheet figures of known GPUs, shown beside measured ceilings (never instead).

Bandwidth in bytes/s, compute in FLOP/s; tensor-core (``:dot``) rates are dense, i.e. half of
the datasheets' "with sparsity" figures. Sources: NVIDIA H200 Tensor Core GPU datasheet (SXM),
NVIDIA H100 Tensor Core GPU datasheet (SXM5 and PCIe columns), NVIDIA A100 Tensor Core GPU
datasheet (40GB and 80GB SXM columns).
"""
from __future__ import annotations

import re

# (name pattern, figures); bandwidth in bytes/s, compute in FLOP/s (dense).
DATASHEETS: list[tuple[str, dict]] = [
    ("H200", {"source": "NVIDIA H200 Tensor Core GPU datasheet (SXM)",
              "bandwidth": 4.8e12, "compute": {"fp64": 34e12, "fp32": 67e12,
                                               "fp32:dot": 494.5e12, "fp16:dot": 989.5e12,
                                               "bf16:dot": 989.5e12}}),
    ("H100.*PCIe", {"source": "NVIDIA H100 Tensor Core GPU datasheet (PCIe)",
                    "bandwidth": 2.0e12, "compute": {"fp64": 26e12, "fp32": 51e12,
                                                     "fp32:dot": 378e12, "fp16:dot": 756e12,
                                                     "bf16:dot": 756e12}}),
    ("H100", {"source": "NVIDIA H100 Tensor Core GPU datasheet (SXM5)",
              "bandwidth": 3.35e12, "compute": {"fp64": 34e12, "fp32": 67e12,
                                                "fp32:dot": 494.7e12, "fp16:dot": 989.4e12,
                                                "bf16:dot": 989.4e12}}),
    ("A100.*80GB", {"source": "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM)",
                    "bandwidth": 2.039e12, "compute": {"fp64": 9.7e12, "fp32": 19.5e12,
                                                       "fp32:dot": 156e12, "fp16:dot": 312e12,
                                                       "bf16:dot": 312e12}}),
    ("A100", {"source": "NVIDIA A100 Tensor Core GPU datasheet (40GB SXM)",
              "bandwidth": 1.555e12, "compute": {"fp64": 9.7e12, "fp32": 19.5e12,
                                                 "fp32:dot": 156e12, "fp16:dot": 312e12,
                                                 "bf16:dot": 312e12}}),
]


def datasheet_for(gpu_name: str) -> dict:
    """The datasheet figures of a known GPU (see :data:`DATASHEETS`), else ``{}``."""
    for pattern, figures in DATASHEETS:
        if re.search(pattern, gpu_name, re.IGNORECASE):
            return dict(figures, compute=dict(figures["compute"]))
    return {}
