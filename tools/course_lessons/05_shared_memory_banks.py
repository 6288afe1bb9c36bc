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
gives it (`ld.shared`). Shared memory is 32 **banks** of 4-byte words; a warp's request is
served in one **wavefront** per phase when its lanes touch at most one word per bank.
When `k` lanes hit `k` different words of one bank, the request takes `k` wavefronts: a
**k-way bank conflict**.

Triton gives a kernel no pointer into shared memory: the compiler picks the buffer's layout, a
`#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>` that permutes each row's columns so
that both the store and the load spread over the banks. What *you* decide is which tiles cross
shared memory: their shape, their element type, how many at once. For some shapes no swizzle
the compiler tries is conflict-free, and the compile report says so: its shared-memory table
lists every access with its wavefronts and conflict degree, computed from the same linear
layouts code generation uses. (These are the workbench compiler's figures for an H200; real
Triton's swizzle choice can differ.)

Below: a 64 x 64 fp32 transpose (`tl.trans` of the loaded tile, stored row by row of `out`),
compiled for cuda:90. Look at the `ttg.convert_layout` in
`ttgir` and the shared-memory table of the compile report."""),
    ("code", """%load_ext workbench
import numpy as np
import workbench as wb
import workbench.language as tl
from workbench.course import check, hint, solution
from workbench.layouts import bank_conflicts
from workbench.layouts.parse import parse
from workbench.viz import banks_picture
from workbench.viz.shared_report import shared_accesses
from workbench.course.shared_layouts import compare_layouts, table"""),
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

`compiled.extra["shared_accesses"]` holds one record per shared access: the op, the shared
layout, the register layout that reads or writes it, bytes per lane, wavefronts for one pass
and the conflict degree. The store of the whole 64 x 64 tile is 2-way conflicted: it takes
twice the wavefronts it ideally needs."""),
    ("code", """compiled = wb.compile(transpose_tile, "*fp32:16", "*fp32:16", "i32:16", "i32:16",
                      target="cuda:90", BM=64, BN=64)
rows = shared_accesses(compiled)
for r in rows:
    deg = r["conflict_degree"]
    conflict = "no conflict" if deg == 1 else f"{deg:g}-way conflict"
    print(f"{r['op']:42s} {r['wavefronts']:4d} wavefronts, {conflict}")
store = rows[0]
assert store["op"].startswith("ttg.convert_layout (st.shared") and store["conflict_degree"] == 2"""),
    ("markdown", """## The bank view of that store

The same analysis, drawn: the recorded shared layout and the register layout that writes it,
parsed back from the report's text. Each row of the picture is a 128-byte line of shared
memory, each column a bank; red borders mark lanes that wait for another wavefront."""),
    ("code", """shared, access = parse(store["layout"]), parse(store["access_layout"])
report = bank_conflicts(shared, access, (64, 64), "fp32", store["vector_bytes"])
assert report.conflict_degree == store["conflict_degree"]
assert sum(report.wavefronts) == store["wavefronts"]
print(report.summary().splitlines()[0])
banks_picture(shared, access, (64, 64), "fp32", vector_bytes=store["vector_bytes"])"""),
    ("markdown", """## The same buffer laid out three ways

The layout of that buffer decides the conflicts. Below, the conversion's two accesses (the
store of the loaded layout, the load of the stored one) against three layouts of the same
64 x 64 fp32 buffer:

* **plain**: no swizzle, no padding (what `__shared__ float t[64][64]` is in CUDA): the store
  goes down a column of the buffer, each lane 4 rows (4 x 64 words) below the last, and a
  stride that is a multiple of 32 words puts every such lane in the same bank;
* **padded**: one unused word after each line of 64 (`t[64][65]`): lanes spread over the
  banks, but the padding breaks 16-byte alignment, so the load moves 4 bytes per lane;
* **swizzled**: the compiler's choice (the XOR of row and column bits of
  `#ttg.swizzled_shared`): the store spreads over the banks and the load keeps its 16-byte
  vectors.

The figures are the workbench compiler's bank analysis, the one its code generation uses."""),
    ("code", """records = [r for r in rows if r["op"].startswith("ttg.convert_layout")][:2]
layouts = compare_layouts(records, (64, 64), "fp32")
print(table(layouts))
plain, padded, swizzled = layouts
assert plain.worst >= 8 and swizzled.wavefronts < padded.wavefronts < plain.wavefronts"""),
    ("markdown", """## Beside real Triton

Real Triton (3.6, which compiles for an H200 with no GPU) shows its shared layouts in ttgir
only where a buffer lives in the kernel's own code: a transpose's `ttg.convert_layout` gets
its scratch layout later, in the lowering to LLVM, so its ttgir lists none. A `tl.dot` in
exact fp32 runs on FMAs, and for the third exercise's kernel (`c = a @ b.T`) Triton stages both
operands in **plain** buffers (`vec = 1, perPhase = 1, maxPhase = 1`) in the order they were
loaded: b's rows are K-contiguous, so K is the buffer's fastest dimension, while the FMA's
lanes walk N, each 16 words after the last. The same bank analysis applied to Triton's
layouts counts that read's conflict; the workbench instead converts the operands through a
swizzled buffer. The two compilers differ here, and the check's figures are the
workbench's. (The Triton part needs `pip install "tile-workbench[triton]"`; without it, the
cell says so.)"""),
    ("code", """from workbench.course.lessons import l05_shared   # the course's own kernels
from workbench.course.shared_layouts import shared_layouts_in, shared_reads_in, triton_ttgir
sig = ("*fp32:16",) * 3 + ("i32:16",) * 3
ours = wb.compile(l05_shared.matmul_nt, *sig, target="cuda:90", BM=32, BN=32, BK=32)
for r in shared_accesses(ours):
    print(f"workbench {r['op']:42s} {r['wavefronts']:5d} wavefronts, {r['conflict_degree']:g}-way")
try:
    tt = triton_ttgir(transpose_tile, "*fp32:16", "*fp32:16", "i32:16", "i32:16", BM=64, BN=64)
    print("Triton, transpose: shared layouts in ttgir:", shared_layouts_in(tt) or "none")
    for r in shared_reads_in(triton_ttgir(l05_shared.matmul_nt, *sig, BM=32, BN=32, BK=32)):
        print(f"Triton    local_load {r['shape']} from {r['layout']}: {r['vector_bytes']} B/lane, "
              f"{r['wavefronts']} wavefronts, {r['conflict_degree']:g}-way")
except wb.errors.ToolMissingError as e:
    print(f"skipped: real Triton is not installed here ({str(e).splitlines()[0]})")"""),
    ("markdown", """## Two halves instead of one tile

Move the tile as two 64 x 32 halves (a `tl.static_range(2)` loop, unrolled at compile time):
each half's conversion finds a conflict-free swizzle, and the two passes together take fewer
wavefronts than the whole tile's one. The first exercise asks you to write it; the check
compares your kernel's shared-memory table with a good solution's."""),
]
