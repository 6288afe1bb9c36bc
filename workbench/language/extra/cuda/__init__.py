"""``tl.extra.cuda``: Triton 3.6's ``triton.language.extra.cuda``: ``libdevice``, the timer and
SM id, thread and warp counts, the fp8e4b15 conversions and grid dependency control."""
from .. import libdevice
from .gdc import gdc_launch_dependents, gdc_wait
from .utils import (
    convert_custom_float8_sm70,
    convert_custom_float8_sm80,
    globaltimer,
    num_threads,
    num_warps,
    smid,
)

__all__ = ["libdevice", "globaltimer", "num_threads", "num_warps", "smid",
           "convert_custom_float8_sm70", "convert_custom_float8_sm80",
           "gdc_launch_dependents", "gdc_wait"]
