"""A kernel calling a ``noinline`` helper twice, with loops in both (in a file of its own so
real Triton can read its source)."""
import workbench as wb
import workbench.language as tl


@wb.jit(noinline=True)
def scaled_sum(x_ptr, y, n):
    acc = tl.load(x_ptr)
    for i in range(n):
        acc = acc * y + i
    z = acc + 1.0
    return z


@wb.jit
def caller(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = scaled_sum(x_ptr, 2.0, n) + scaled_sum(out_ptr, 3.0, n)
    z = x + 1.0
    for j in range(n):
        z = z + j
    tl.store(out_ptr + offs, y + z)
