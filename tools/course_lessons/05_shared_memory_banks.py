# ruff: noqa: E501 - notebook cell text, kept as the cell shows it
"""Lesson 5's text (tools/course_notebook.py writes the notebook)."""
LESSON = 5
RUN_SECONDS = 33  # tools/course_timings.py, 2 CPUs, load average 7-11
NAME = "05_shared_memory_banks.ipynb"

CELLS = [
    ("markdown", """# Lesson 5: shared memory and bank conflicts

When a tile must move between threads (a transpose, a dot operand, a reduction across warps),
the compiler stages it in **shared memory**: every thread stores its registers
(`st.shared`), the warps wait at a barrier, and every thread loads the elements its new layout
gives it (`ld.shared`, or `ldmatrix` for 16-bit elements). Shared memory is 32 **banks** of
4-byte words; a warp's request is served in one **wavefront** per 128 bytes when its lanes
touch at most one word per bank. When `k` lanes hit `k` different words of one bank, the
request takes `k` times the wavefronts: a **k-way bank conflict**.

Triton gives a kernel no pointer into shared memory. A `ttg.convert_layout`'s buffer is
planned when it is lowered (Triton 3.6's `optimalSwizzling`, which the workbench's CUDA
backend follows): the **vector** is the widest run of elements that both the stored and the
loaded registers hold contiguously (at most 16 bytes), and the buffer's address bits are then
permuted (a **swizzle**, an XOR of row and column bits) so that every warp's store and every
warp's load touch each bank once per wavefront. Triton's own conversions are built to be
conflict-free. What *you* decide is which tiles cross shared memory and how often: their
shape, their element type, how many conversions, each a store, a barrier and a load.

Below: a 64 x 64 fp32 transpose (`tl.trans` of the loaded tile, stored row by row of `out`),
compiled for cuda:90. Look at the `ttg.convert_layout` in `ttgir` and the shared-memory table
of the compile report."""),
    ("code", """%load_ext workbench
import numpy as np
import workbench as wb
import workbench.language as tl
from workbench.course import check, hint, solution
from workbench.layouts import SwizzledSharedLayout, bank_conflicts
from workbench.layouts.parse import parse
from workbench.viz import banks_picture
from workbench.viz.shared_report import shared_accesses
from workbench.course.shared_layouts import compare_layouts, conversion_buffer, table"""),
    ("code", """%%tilekernel --target cuda:90 --stages ttgir --signature "*fp32:16,*fp32:16,i32:16,i32:16" -D BM=64 -D BN=64
@jit
def transpose_tile(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :],
                mask=(rows[:, None] < M) & (cols[None, :] < N))
    tl.store(out_ptr + cols[:, None] * M + rows[None, :], tl.trans(x),
             mask=(cols[:, None] < N) & (rows[None, :] < M))"""),
    ("markdown", """## Reading the compiler's data

`compiled.extra["shared_accesses"]` holds one record per shared access: the op, the buffer
(printed as a linear layout: which element each bit of the buffer offset selects), the
register layout that writes or reads it, bytes per lane, wavefronts and the conflict degree.
The stored registers hold 4 elements contiguous down a column (`sizePerThread = [4, 1]`), the
loaded ones 4 along a row (`[1, 4]`): no run is contiguous in both, so the vector is one
4-byte element. The 16 KB tile then takes 128 wavefronts to store and 128 to load, the
least 16 KB can take: no conflict. The buffer holds the whole tile at once, so the kernel
needs 16 KB of shared memory."""),
    ("code", """compiled = wb.compile(transpose_tile, "*fp32:16", "*fp32:16", "i32:16", "i32:16",
                      target="cuda:90", BM=64, BN=64)
rows = shared_accesses(compiled)
for r in rows:
    deg = r["conflict_degree"]
    conflict = "no conflict" if deg == 1 else f"{deg:g}-way conflict"
    print(f"{r['op']:42s} {r['wavefronts']:4d} wavefronts, {conflict}")
print("shared memory:", compiled.metadata.shared, "bytes")
store = rows[0]
assert store["op"].startswith("ttg.convert_layout (st.shared") and store["conflict_degree"] == 1
assert store["wavefronts"] == 64 * 64 * 4 // 128 and compiled.metadata.shared == 64 * 64 * 4"""),
    ("markdown", """## The bank view of that store

The same analysis, drawn for one warp's store request: on the left a plain buffer (the tile
row after row, no swizzle), on the right the conversion's planned buffer, rebuilt from the
report's text. Each row of the picture is a 128-byte line of shared memory, each column a
bank; red borders mark lanes that wait for another wavefront. In the plain buffer the lanes
go down a column, 4 rows (256 words) apart, so 16 of them share one bank."""),
    ("code", """shared = conversion_buffer(store["layout"], (64, 64))
access = parse(store["access_layout"])
report = bank_conflicts(shared, access, (64, 64), "fp32", store["vector_bytes"])
assert report.conflict_degree == store["conflict_degree"]
assert sum(report.wavefronts) == store["wavefronts"]
print(f"planned buffer: {sum(report.wavefronts)} wavefronts (ideal {sum(report.ideal_wavefronts)})")
banks_picture(SwizzledSharedLayout(1, 1, 1, (1, 0)), access, (64, 64), "fp32",
              compare=shared, vector_bytes=store["vector_bytes"])"""),
    ("markdown", """## The same buffer laid out three ways

The layout of the buffer decides the conflicts. Below, the conversion's two accesses (the
store of the loaded layout, the load of the stored one) against three layouts of the same
64 x 64 fp32 buffer, all analysed by the workbench's bank tools:

* **plain**: no swizzle, no padding (what `__shared__ float t[64][64]` is in CUDA): the store
  goes down a column of the buffer, and a stride that is a multiple of 32 words puts every
  such lane in the same bank;
* **padded**: one unused word after each line of 64 (`t[64][65]`, CUDA's classic fix): lanes
  spread over the banks, but not evenly;
* **swizzled**: the conversion's planned buffer, the one the compiler emits."""),
    ("code", """records = [r for r in rows if r["op"].startswith("ttg.convert_layout")][:2]
layouts = compare_layouts(records, (64, 64), "fp32")
print(table(layouts))
plain, padded, swizzled = layouts
assert plain.worst >= 8 and swizzled.worst == 1
assert swizzled.wavefronts < padded.wavefronts < plain.wavefronts"""),
    ("markdown", """## Where conflicts remain

Conflicts still come from buffers that are not a conversion's plan. In real Triton (3.6, which
compiles for an H200 with no GPU) a `tl.dot` in exact fp32 runs on FMAs, and for the third
exercise's kernel (`c = a @ b.T`) Triton stages both operands in **plain** shared buffers
(`vec = 1, perPhase = 1, maxPhase = 1`, visible in its ttgir) in the order they were loaded.
The workbench's bank tools, applied to those layouts: a's slab is read along K, its fastest
dimension, in 16-byte vectors, conflict-free; b's rows are K-contiguous too, so K is its
buffer's fastest dimension, while the FMA's lanes walk N, each a multiple of 32 words after
the last: 16 lanes on one bank. (The workbench's CUDA backend converts these operands through
the conversion plan instead. This part needs `pip install "tile-workbench[triton]"`; without
it, the cell says so.)"""),
    ("code", """from workbench.course.lessons import l05_shared   # the course's own kernels
from workbench.course.shared_layouts import shared_reads_in, triton_ttgir
sig = ("*fp32:16",) * 3 + ("i32:16",) * 3
try:
    for r in shared_reads_in(triton_ttgir(l05_shared.matmul_nt, *sig, BM=32, BN=32, BK=32)):
        print(f"Triton local_load {r['shape']} from {r['layout']}: {r['vector_bytes']} B/lane, "
              f"{r['wavefronts']} wavefronts, {r['conflict_degree']:g}-way")
except wb.errors.ToolMissingError as e:
    print(f"skipped: real Triton is not installed here ({str(e).splitlines()[0]})")"""),
    ("markdown", """## What a conversion costs, then

With conflicts planned away, a conversion costs its wavefronts (the tile's bytes / 128 for
the store and again for the load), a barrier, and shared memory for the whole tile. The
exercises weigh those: a 64 x 64 fp32 tile moved as two 64 x 32 halves (a
`tl.static_range(2)` loop) reuses one 8 KB buffer instead of 16 KB, for two more barriers;
a 4 KB fp16 tile is small enough to move at once (16-byte stores, `ldmatrix.trans` loads);
and an exact-fp32 dot converts its operands once per K step, so wider K steps mean fewer
barriers. The check compares your kernel's compile report with a good solution's."""),
]
