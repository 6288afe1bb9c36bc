"""Register-blocked micro-kernel for float ``tt.dot`` on the CPU (explicit SIMD LLVM IR).

``acc[M, N] += A[M, K] @ B[K, N]`` on contiguous row-major scratch buffers. The output is
cut into blocks of ``MR`` rows by ``NV`` SIMD vectors of ``W`` columns; for each block the
``MR x NV`` accumulator vectors stay in registers for the whole k loop:

    for k in range(K):
        b[v] = B[k, j0 + v W : j0 + (v + 1) W]          (NV vector loads)
        for r in range(MR):
            a = broadcast(A[i0 + r, k])                  (one broadcast load)
            acc[r][v] = fma(a, b[v], acc[r][v])          (MR x NV fused multiply-adds)

the scheme of the BLIS/GotoBLAS micro-kernels (K. Goto, R. van de Geijn, "Anatomy of
high-performance matrix multiplication", ACM TOMS 34(3), 2008; F. Van Zee, R. van de Geijn,
"BLIS", ACM TOMS 41(3), 2015), without packing (the tiles are small and already in the
per-worker scratch arena). Blocks at the bottom and right edges use smaller ``MR`` / ``NV``.
Each output element still adds its K products in k order with one fused multiply-add each.
"""
from __future__ import annotations

from llvmlite import ir

from .llvmtypes import DOUBLE, FLOAT, I32, I64, value_type

#: accumulator registers per block (x86-64 with AVX-512 has 32 vector registers)
MAX_ACC = 16
_MR = 4


def vector_width(vt: ir.Type, n: int) -> int:
    """SIMD width (elements) for accumulator type ``vt`` and ``n`` columns: 512-bit vectors
    when ``n`` allows, else 256 or 128 bits; 0 when ``n`` is not a multiple of 4 (or the
    type is not float/double)."""
    cands: tuple[int, ...]
    if vt == FLOAT:
        cands = (16, 8, 4)
    elif vt == DOUBLE:
        cands = (8, 4)
    else:
        return 0
    for w in cands:
        if n % w == 0:
            return w
    return 0


def _vector_fma(module, vec: ir.VectorType):
    """``llvm.fma.v<W>f32`` / ``.v<W>f64`` (declared by name: llvmlite cannot mangle vector
    overloads)."""
    name = f"llvm.fma.v{vec.count}{'f32' if vec.element == FLOAT else 'f64'}"
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(vec, [vec] * 3), name)
    return fn


def micro_kernel(lw, A, B, acc, width: int) -> None:
    """Emit ``acc += A @ B`` (Buffers, contiguous, same element type) with ``width``-element
    vectors (``acc`` and ``B`` columns a multiple of ``width``)."""
    M, K = A.shape
    N = B.shape[1]
    nvec = N // width
    nv = min(nvec, 4)
    mr = max(1, min(_MR, MAX_ACC // nv, M))
    row_blocks = [(0, M // mr, mr)] + ([(M // mr * mr, 1, M % mr)] if M % mr else [])
    col_blocks = [(0, nvec // nv, nv)] + ([(nvec // nv * nv, 1, nvec % nv)]
                                          if nvec % nv else [])
    for i_first, i_count, rows in row_blocks:
        for v_first, v_count, vecs in col_blocks:
            _blocks(lw, A, B, acc, width, i_first, i_count, rows, v_first, v_count, vecs)


def _counted(lw, n: int, body) -> None:
    """``for t in range(n): body(t)`` as an LLVM loop (no loop for n == 1)."""
    b = lw.b
    if n == 1:
        body(ir.Constant(I64, 0))
        return
    pre = b.block
    head = lw.fn.append_basic_block("mk.loop")
    done = lw.fn.append_basic_block("mk.end")
    b.branch(head)
    b.position_at_end(head)
    t = b.phi(I64)
    t.add_incoming(ir.Constant(I64, 0), pre)
    body(t)
    nxt = b.add(t, ir.Constant(I64, 1))
    t.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, ir.Constant(I64, n)), head, done)
    b.position_at_end(done)


def _blocks(lw, A, B, acc, w, i_first, i_count, rows, v_first, v_count, vecs) -> None:
    b = lw.b
    st = value_type(acc.elem)
    vec = ir.VectorType(st, w)
    M, K = A.shape
    N = B.shape[1]
    fma = _vector_fma(lw.m, vec)
    zeros = ir.Constant(ir.VectorType(I32, w), [0] * w)
    undef = ir.Constant(vec, ir.Undefined)

    def c64(v):
        return ir.Constant(I64, v)

    def elem_ptr(buf, off):
        return b.gep(buf.ptr, [off], source_etype=st)

    def block_at(ti, tj):
        i0 = b.add(c64(i_first), b.mul(ti, c64(rows)))
        j0 = b.add(c64(v_first * w), b.mul(tj, c64(vecs * w)))
        cptrs = [[elem_ptr(acc, b.add(b.mul(b.add(i0, c64(r)), c64(N)), b.add(j0, c64(v * w))))
                  for v in range(vecs)] for r in range(rows)]
        init = [[b.load(p, typ=vec, align=4) for p in row] for row in cptrs]
        pre = b.block
        head = lw.fn.append_basic_block("mk.k")
        done = lw.fn.append_basic_block("mk.k.end")
        b.branch(head)
        b.position_at_end(head)
        k = b.phi(I64)
        k.add_incoming(c64(0), pre)
        phis = []
        for row in init:
            prow = []
            for v0 in row:
                p = b.phi(vec)
                p.add_incoming(v0, pre)
                prow.append(p)
            phis.append(prow)
        brow = b.add(b.mul(k, c64(N)), j0)
        bv = [b.load(elem_ptr(B, b.add(brow, c64(v * w))), typ=vec, align=4)
              for v in range(vecs)]
        new = []
        for r in range(rows):
            a = b.load(elem_ptr(A, b.add(b.mul(b.add(i0, c64(r)), c64(K)), k)), typ=st)
            av = b.shuffle_vector(b.insert_element(undef, a, ir.Constant(I32, 0)), undef, zeros)
            new.append([b.call(fma, [av, bv[v], phis[r][v]]) for v in range(vecs)])
        nk = b.add(k, c64(1))
        end = b.block
        k.add_incoming(nk, end)
        for r in range(rows):
            for v in range(vecs):
                phis[r][v].add_incoming(new[r][v], end)
        b.cbranch(b.icmp_signed("<", nk, c64(K)), head, done)
        b.position_at_end(done)
        for r in range(rows):
            for v in range(vecs):
                b.store(new[r][v], cptrs[r][v], align=4)

    _counted(lw, i_count, lambda ti: _counted(lw, v_count, lambda tj: block_at(ti, tj)))
