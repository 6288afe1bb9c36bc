"""Plain helpers usable on the host and, with compile-time arguments, inside kernels
(Triton's ``triton.cdiv`` and ``triton.next_power_of_2``, constexpr functions in 3.5+)."""
from __future__ import annotations


def cdiv(x: int, div: int) -> int:
    """ceil(x / div) for ints: ``(x + div - 1) // div``. Raises ZeroDivisionError for div 0."""
    return (x + div - 1) // div


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1), as Triton's bit-twiddling version."""
    n = int(n)
    if n <= 1:
        return 1
    return 1 << (n - 1).bit_length()


cdiv.__workbench_constexpr_function__ = True
next_power_of_2.__workbench_constexpr_function__ = True
