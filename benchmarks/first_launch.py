"""First launch on the GPU: seconds from a fresh Python process's first call of a kernel to its
result, ours against Triton 3.6, with empty caches (cold) and again with the disk cache each
left behind (warm).

Usage (a GPU machine with torch and triton): ``python benchmarks/first_launch.py [--size 128]``

The kernel is :func:`~workbench.testing.examples.matmul_fp16_kernel` on a 128x128x128 fp16
problem with one 128x128x64 tile configuration (4 warps, 3 stages); Triton runs the same source
(:func:`benchmarks.common.triton_twins`). Each measurement is its own process (so nothing is
warm in memory) and times only ``kernel[grid](...)`` followed by ``torch.cuda.synchronize()``:
imports, torch's CUDA start-up and the input tensors are made before the clock starts, for both
sides alike. Cold: a new empty cache folder (``WORKBENCH_CACHE_DIR`` / ``TRITON_CACHE_DIR``);
warm: a new process on the cache the cold run filled. Also printed: the cold compile's steps
as the workbench records them (``CompiledKernel.timings``, seconds). The result is checked
against torch in every run. Prints one table.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: the child process: builds inputs, then times the first launch (``WHO`` and ``SIZE`` come in
#: through the environment)
CHILD = r"""
import json, os, sys, time
sys.path.insert(0, os.environ["WB_ROOT"])
import torch
from workbench.testing import examples
who, n = os.environ["WHO"], int(os.environ["SIZE"])
if who == "triton":
    from benchmarks.common import triton_twins
    kernel = triton_twins(examples.matmul_fp16_kernel).matmul_fp16_kernel
else:
    kernel = examples.matmul_fp16_kernel
a = torch.randn(n, n, device="cuda", dtype=torch.float16)
b = torch.randn(n, n, device="cuda", dtype=torch.float16)
c = torch.empty(n, n, device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
t0 = time.perf_counter()
k = kernel[((n // 128) * (n // 128),)](a, b, c, n, n, n, BM=128, BN=128, BK=64, GROUP_M=8,
                                       num_warps=4, num_stages=3)
torch.cuda.synchronize()
seconds = time.perf_counter() - t0
err = float((c.float() - (a.float() @ b.float())).abs().max())
steps = dict(getattr(k, "timings", {}) or {}) if who == "ours" else {}
print(json.dumps({"seconds": seconds, "err": err, "steps": steps}))
"""


def one_run(who: str, cache: str, size: int) -> dict:
    """Run the child for ``who`` ("ours" or "triton") on cache folder ``cache``; returns its
    JSON record. Raises RuntimeError with the child's output when it fails."""
    env = dict(os.environ, WHO=who, SIZE=str(size), WB_ROOT=ROOT, WORKBENCH_CACHE_DIR=cache,
               TRITON_CACHE_DIR=cache)
    p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{who} first launch failed:\n{p.stdout}\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    size = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 128
    rows = {}
    for who in ("ours", "triton"):
        with tempfile.TemporaryDirectory() as cache:
            cold = one_run(who, cache, size)
            warm = one_run(who, cache, size)
        rows[who] = (cold, warm)
    print(f"first launch of a {size}x{size}x{size} fp16 matmul (128x128x64 tile, 4 warps, "
          "3 stages), seconds in a fresh process")
    print(f"{'':8s} {'cold':>8s} {'warm':>8s} {'max err':>9s}")
    for who, (cold, warm) in rows.items():
        print(f"{who:8s} {cold['seconds']:8.3f} {warm['seconds']:8.3f} {cold['err']:9.2e}")
    ratio = rows["ours"][0]["seconds"] / rows["triton"][0]["seconds"]
    print(f"ours/triton cold: {ratio:.2f}   warm: "
          f"{rows['ours'][1]['seconds'] / rows['triton'][1]['seconds']:.2f}")
    steps = rows["ours"][0]["steps"]
    if steps:
        print("ours, cold compile steps (s): " +
              ", ".join(f"{k} {v:.3f}" for k, v in steps.items()))


if __name__ == "__main__":
    main()
