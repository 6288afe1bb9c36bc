"""Helpers shared by the benchmark scripts: a median timer and the Triton twins of the
example kernels (the kernels themselves live in :mod:`workbench.testing.examples`).

Import as ``from benchmarks.common import ...`` (the scripts run with ``PYTHONPATH=.``).
"""
from __future__ import annotations

import importlib.util
import inspect
import itertools
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

_TRITON_HEADER = "import triton.language as tl\nfrom triton import jit\n\n\n"
_twin_ids = itertools.count()


def median_seconds(fn, reps: int) -> float:
    """Median wall time (seconds, ``time.perf_counter``) of ``reps`` calls of ``fn()``."""
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def kernel_source(kernel) -> str:
    """The Python source of a ``@jit`` kernel (or of a plain function), decorator included."""
    return textwrap.dedent(inspect.getsource(getattr(kernel, "fn", kernel)))


def triton_twins(*kernels, tmp_dir: str | None = None):
    """A module holding ``triton.jit`` versions of ``kernels`` (workbench ``@jit`` kernels
    written in Triton's language), under the same names.

    The sources go to a file, as ``triton.jit`` reads a kernel's source back from its file.
    Raises ImportError when ``triton`` is not importable."""
    import triton  # noqa: F401 - fail early, before writing anything
    body = "\n\n".join(kernel_source(k) for k in kernels)
    path = Path(tmp_dir or tempfile.mkdtemp()) / f"triton_twins_{next(_twin_ids)}.py"
    path.write_text(_TRITON_HEADER + body)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod


def torch_args(args) -> list:
    """``args`` with numpy arrays wrapped as torch CPU tensors (shared memory), others kept."""
    import numpy as np
    import torch
    return [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]


def require_gpu(script: str, doc: str):
    """``torch`` when it is installed and sees a CUDA GPU; otherwise print why ``script`` cannot
    run here (and ``doc``, the script's usage, for ``--help``) and exit with status 1."""
    if "--help" in sys.argv or "-h" in sys.argv:
        print(doc)
        raise SystemExit(0)
    try:
        import torch
    except ImportError:
        raise SystemExit(f"{script} runs on a machine with an NVIDIA GPU and needs torch, triton "
                         "and the cuda extra (pip install 'tile-workbench[cuda]'); torch is not "
                         "installed here") from None
    if not torch.cuda.is_available():
        raise SystemExit(f"{script} needs an NVIDIA GPU: torch sees none here")
    return torch

