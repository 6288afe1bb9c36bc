# ruff: noqa: E501 - notebook cell text, kept as the cell shows it
"""Lesson 7's text (tools/course_notebook.py writes the notebook)."""
LESSON = 7
RUN_SECONDS = 45  # tools/course_timings.py, 2 CPUs, load average 7-11
NAME = "07_autotuning_roofline.ipynb"

CELLS = [
    ("markdown", """# Lesson 7: autotuning and the roofline

**The roofline** (Williams, Waterman and Patterson, CACM 2009) bounds a kernel's time by two
roofs: a kernel doing `F` FLOPs while moving `B` bytes needs at least `F / compute` seconds and
at least `B / bandwidth` seconds. Its **arithmetic intensity** `I = F / B` (FLOP/byte) says
which roof binds: below the **ridge point** (`compute / bandwidth`) memory does, above it the
arithmetic does. On an H200 (datasheet: 4.8 TB/s, 67 TFLOP/s fp32 on the FMA units, about
990 TFLOP/s fp16 on the tensor cores) the fp32 ridge is about 14 FLOP/byte. The workbench
counts `F` and `B` from a kernel's IR (`workbench.testing.count_work`), so every kernel gets
its point without a GPU.

**Autotuning** (`@wb.autotune(configs, key)`, Triton's `triton.autotune`) times every
configuration (block sizes, `num_warps`, `num_stages`) the first time it sees a new key and
keeps the fastest. Two consequences for the kernel writer: the kernel must be right for *every*
configuration (a tile larger than the data, a row longer than a tile), and the list is worth
**pruning** before timing (`prune_configs_by={"early_config_prune": f}` drops configurations
that cannot win, such as tiles far larger than the problem)."""),
    ("code", """%load_ext workbench
import numpy as np
import workbench as wb
import workbench.language as tl
from workbench.course import check, hint, solution
from workbench.course.advice import roofline
from workbench.testing import count_work, do_bench
from workbench.viz import autotune_view"""),
    ("markdown", """## A point on the roofline, counted from the IR

`scale_add` reads two fp32 arrays and writes one: 12 bytes and 2 FLOPs per element. The cell
below compiles it (the stage view) and the next counts its work and places it on the H200's
roofline with `roofline(flops, bytes, dtype)`, which returns the time bound, the roof that
binds and the ridge."""),
    ("code", """%%tilekernel --target cuda:90 --stages ptx --signature "*fp32:16,*fp32:16,*fp32:16,fp32,i32:16" -D BLOCK=1024
@jit
def scale_add(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)"""),
    ("code", """n = 1 << 20
x, y, out = (np.ones(n, np.float32) for _ in range(3))
work = count_work(scale_add, (n // 1024,), x, y, out, 2.0, n, BLOCK=1024)
seconds, roof, ridge = roofline(work.flops, work.bytes, work.dtype)
print(f"{work.flops:.0f} FLOP, {work.bytes:.0f} bytes: {work.flops / work.bytes:.3g} FLOP/byte, "
      f"ridge {ridge:.3g}: {roof}-bound, at least {seconds * 1e6:.3g} us on an H200")
assert work.flops == 2 * n and work.bytes == 12 * n and roof == "memory\""""),
    ("markdown", """## The H200's roofline, with estimates

The same reasoning for two kernels at once, drawn: the H200's roofs from its datasheet, and
each kernel placed at the time its roofline bound allows (so each point sits *on* its roof:
the question here is which roof, not how close a real run gets). `scale_add` sits far left
of the ridge under the memory roof; a 1024^3 matmul with `tl.dot` sits far right of it,
under the tensor cores' roof (`fp32:dot`: fp32 inputs run as tf32)."""),
    ("code", """from workbench.testing.ceilings import Ceilings
from workbench.testing.datasheets import datasheet_for
from workbench.testing.examples import matmul_kernel
from workbench.testing.work_model import Run
from workbench.viz import roofline as roofline_view

sheet = datasheet_for("NVIDIA H200")
h200 = Ceilings(target="cuda", machine="NVIDIA H200 (datasheet figures)",
                bandwidth=sheet["bandwidth"], compute=sheet["compute"], datasheet=sheet)
size = 1024
A = np.zeros((size, size), np.float32)
mm = count_work(matmul_kernel, ((size // 64) ** 2,), A, A, A, size, size, size,
                BM=64, BN=64, BK=32, GROUP_M=8)
runs = [Run(name, roofline(w.flops, w.bytes, w.dtype)[0], w.flops, w.bytes, w.dtype,
            target="cuda") for name, w in (("scale_add", work), ("matmul 1024^3", mm))]
view = roofline_view(runs, h200, remeasure=False, title="H200 (datasheet): roofline bounds")
limiters = {p["name"]: p["limiter"] for p in view.workbench_data["points"]}
assert limiters == {"scale_add": "memory", "matmul 1024^3": "compute"}
view"""),
    ("markdown", """## Autotuning with pruning

Five configurations of the same kernel, one of them with a tile larger than the whole
problem. `early_config_prune` receives the configurations and the launch's arguments and
returns the ones worth timing; the explorer then shows every timed configuration and the
winner (timed here on the CPU backend)."""),
    ("code", """configs = [wb.Config({"BLOCK": b}) for b in (256, 1024, 4096, 16384)] + \\
    [wb.Config({"BLOCK": 1 << 20})]

def fits(configs, named_args, **kwargs):
    \"\"\"Drop tiles more than twice the problem's size: they mask most of their lanes.\"\"\"
    return [c for c in configs if c.kwargs["BLOCK"] <= 2 * named_args["n"]]

def quick_bench(fn, quantiles=None):
    return do_bench(fn, quantiles=quantiles, warmup=2, rep=10)

@wb.autotune(configs=configs, key=["n"], prune_configs_by={"early_config_prune": fits},
             do_bench=quick_bench)
@wb.jit
def scale_add_tuned(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)

m = 100_000
xs, ys, outs = np.random.default_rng(0).standard_normal((3, m), dtype=np.float32)
scale_add_tuned[lambda meta: (wb.cdiv(m, meta["BLOCK"]),)](xs, ys, outs, 2.0, m)
np.testing.assert_allclose(outs, 2.0 * xs + ys, rtol=1e-6)
view = autotune_view(scale_add_tuned)
timed = [r.config.kwargs["BLOCK"] for r in view.table()]
assert 1 << 20 not in timed and len(timed) == 4     # pruned before timing
view"""),
    ("markdown", """The exercises: a row statistic that must be right for every configuration (and, being
memory-bound, read its data once); a matmul for an autotuner's configurations (compute-bound:
only `tl.dot` reaches its roof); a polynomial that stays below the ridge."""),
]
