"""``workbench.set_allocator`` (Triton's name): the allocator is kept per context, the default
refuses with a clear message, non-callables are refused."""
import contextvars
import random

import numpy as np
import pytest

import workbench as wb
from workbench.errors import LaunchError
from workbench.runtime._allocation import NullAllocator, get_allocator


def test_default_allocator_refuses():
    with pytest.raises(LaunchError, match="set_allocator"):
        contextvars.Context().run(lambda: get_allocator()(128, 16, None))


def test_set_allocator_is_per_context():
    size = random.randint(1, 4096)

    def alloc(n, align, stream):
        return np.empty(n, dtype=np.int8)

    def inside():
        wb.set_allocator(alloc)
        return get_allocator()(size, 16, None)

    buf = contextvars.Context().run(inside)
    assert buf.nbytes == size
    assert isinstance(contextvars.Context().run(get_allocator), NullAllocator)


def test_set_allocator_needs_a_callable():
    with pytest.raises(TypeError):
        wb.set_allocator(42)
