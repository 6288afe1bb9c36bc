"""The course's exercises, lesson by lesson (each lesson module defines ``EXERCISES``)."""
from __future__ import annotations

from . import (
    l01_blocks,
    l02_tiles,
    l03_reductions,
    l04_coalescing,
    l05_shared,
    l06_matmul,
    l07_roofline,
    l08_attention,
)

LESSONS = {
    1: "program ids, blocks and masks",
    2: "2-D tiles, strides and broadcasting",
    3: "reductions: row sum, softmax, layer norm",
    4: "coalescing and vector width",
    5: "shared memory and bank conflicts",
    6: "matmul: a K loop, tl.dot and the tensor cores",
    7: "autotuning and the roofline",
    8: "flash attention: the online softmax and two dots",
}

EXERCISES = {e.name: e for mod in (l01_blocks, l02_tiles, l03_reductions, l04_coalescing,
                                    l05_shared, l06_matmul, l07_roofline,
                                    l08_attention)
             for e in mod.EXERCISES}
