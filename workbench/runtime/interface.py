"""What every launchable kernel offers, and the helpers Triton 3.6 exports beside it
(``triton.KernelInterface``, ``triton.MockTensor``, ``triton.AsyncCompileMode``,
``triton.FutureKernel``; Triton's ``runtime/jit.py`` and ``runtime/_async_compile.py``).

- :class:`KernelInterface`: the base of :class:`~workbench.runtime.jit.JITFunction` and of
  the ``@autotune``/``@heuristics`` wrappers: ``kernel[grid](*args)`` and
  ``kernel.warmup(*args, grid=...)`` both call ``run``.
- :class:`MockTensor`: a stand-in array for ``warmup`` (a dtype and a shape, no memory), so a
  kernel compiles for a dtype without allocating: ``k.warmup(MockTensor(torch.float16), ...,
  grid=(1,))``; a torch dtype given directly as an argument to ``warmup`` is wrapped in one.
- :class:`AsyncCompileMode`: ``with AsyncCompileMode(executor): k.warmup(...)`` hands each
  compile to ``executor`` (a :class:`concurrent.futures.Executor`) and ``warmup`` returns a
  :class:`FutureKernel` at once; leaving the block waits for every compile and fills the
  kernels' caches, so later launches find them.
"""
from __future__ import annotations

import contextvars
import functools
from concurrent.futures import Executor, Future, as_completed
from typing import Callable


class KernelInterface:
    """A launchable kernel: ``kernel[grid](*args, **kwargs)`` is ``run(*args, grid=grid,
    warmup=False, **kwargs)``; ``warmup(*args, grid=..., **kwargs)`` compiles only. Torch
    dtypes given to ``warmup`` in place of arrays become :class:`MockTensor` s. Subclasses
    define ``run``."""

    def run(self, *args, grid, warmup, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define run()")

    def __getitem__(self, grid):
        """``kernel[grid]``: a callable launching over ``grid``."""
        return functools.partial(self.run, grid=grid, warmup=False)

    def warmup(self, *args, grid=None, **kwargs):
        """Compile for these arguments without launching; returns the compiled kernel (a
        :class:`FutureKernel` inside :class:`AsyncCompileMode`)."""
        return self.run(*map(MockTensor.wrap_dtype, args), grid=grid, warmup=True, **kwargs)


class MockTensor:
    """An array that has only a dtype and a shape (default ``[1]``): ``data_ptr()`` is 0 (so
    it counts as 16-byte aligned, as in Triton), ``stride()`` is row-major. For
    ``warmup`` only; launching with one raises, as it has no memory."""

    @staticmethod
    def wrap_dtype(arg):
        """``MockTensor(arg)`` when ``arg`` is a torch dtype, else ``arg``."""
        if type(arg).__name__ == "dtype" and type(arg).__module__ == "torch":
            return MockTensor(arg)
        return arg

    def __init__(self, dtype, shape=None):
        self.dtype = dtype
        self.shape = list(shape) if shape is not None else [1]

    def stride(self) -> tuple:
        """Row-major strides in elements."""
        strides = [1]
        for size in reversed(self.shape[1:]):
            strides.append(strides[-1] * size)
        return tuple(reversed(strides))

    @staticmethod
    def data_ptr() -> int:
        return 0

    @staticmethod
    def ptr_range() -> int:
        return 0

    def __repr__(self) -> str:
        return f"MockTensor({self.dtype}, shape={self.shape})"


#: the AsyncCompileMode in force in this context (None outside one)
active_mode: contextvars.ContextVar = contextvars.ContextVar("workbench_async_compile",
                                                            default=None)


class FutureKernel:
    """A compile handed to an executor by :class:`AsyncCompileMode`: ``result()`` waits for
    it and returns the compiled kernel (``ignore_errors=True``: None when the compile
    raised, instead of raising)."""

    def __init__(self, finalize_compile: Callable, future: Future):
        self.finalize_compile = finalize_compile
        self.future = future
        self.kernel = None

    def result(self, ignore_errors: bool = False):
        if self.kernel is None:
            try:
                kernel = self.future.result()
            except Exception:
                if ignore_errors:
                    return None
                raise
            self.finalize_compile(kernel)
            self.kernel = kernel
        return self.kernel


class AsyncCompileMode:
    """``with AsyncCompileMode(executor, ignore_errors=False):``: compiles started by
    ``warmup`` inside the block run on ``executor``; the same compile asked twice is one
    job. On exit every job is waited for (a failed one raises, unless ``ignore_errors``).
    Raises RuntimeError when another one is already active."""

    def __init__(self, executor: Executor, *, ignore_errors: bool = False):
        self.executor = executor
        self.ignore_errors = ignore_errors
        self.future_kernels: dict = {}

    def submit(self, key, compile_fn: Callable, finalize_fn: Callable) -> FutureKernel:
        """Start ``compile_fn()`` on the executor unless ``key`` was started already;
        ``finalize_fn(kernel)`` runs in the caller's thread when the result is taken."""
        if key not in self.future_kernels:
            self.future_kernels[key] = FutureKernel(finalize_fn,
                                                    self.executor.submit(compile_fn))
        return self.future_kernels[key]

    def __enter__(self):
        if active_mode.get() is not None:
            raise RuntimeError("Another AsyncCompileMode is already active")
        self._token = active_mode.set(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            by_future = {fk.future: fk for fk in self.future_kernels.values()}
            for future in as_completed(by_future):
                by_future[future].result(self.ignore_errors)
        finally:
            active_mode.reset(self._token)
