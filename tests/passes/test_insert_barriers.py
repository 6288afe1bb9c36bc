"""``tritongpu-insert-barriers``: read-after-write and write-after-read between threads get a
``gpu.barrier``, only where the bytes meet (also across a loop's back edge); the pipelined K
loop gets one after ``async_wait`` and one before its copies refill the slot just read."""
from __future__ import annotations

import workbench as wb
import workbench.language as tl
from workbench.ir.core import functions
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.passes.insert_barriers import insert_barriers

SH = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
BL = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"  # noqa: E501
MD = f"!ttg.memdesc<64x64xf16, {SH}, #smem>"


def barrier_ops(body: str, extra_params: str = "") -> list:
    """The ``ttg.``/``ttng.``/``gpu.`` op names of a 4-warp function (parameters ``%x``, a
    64x64 fp16 blocked tensor, then ``extra_params``) holding ``body``, after
    ``insert_barriers``, in order."""
    text = ('module attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func public @k(%x: '
            f'tensor<64x64xf16, {BL}>{extra_params}) attributes {{noinline = false}} {{\n' +
            body + "    tt.return\n  }\n}\n")
    m = parse_module(text)
    for f in functions(m):
        insert_barriers(f)
    out = []
    for ln in print_module(m, locations=False).splitlines():
        ln = ln.strip()
        if ln.startswith("#"):
            continue
        word = ln.split(" = ", 1)[1].split()[0] if " = " in ln else ln.split(" ")[0]
        if word.startswith(("ttg.", "gpu.", '"ttng.', "ttng.")):
            out.append(word.split("(")[0].strip('"'))
    return out


def test_raw_and_war():
    ops = barrier_ops(f"""    %a = ttg.local_alloc %x : (tensor<64x64xf16, {BL}>) -> {MD}
    %b = ttg.local_load %a : {MD} -> tensor<64x64xf16, {BL}>
    %c = ttg.local_alloc %b : (tensor<64x64xf16, {BL}>) -> {MD}
    %d = ttg.local_load %c : {MD} -> tensor<64x64xf16, {BL}>
""")
    assert ops == ["ttg.local_alloc", "gpu.barrier", "ttg.local_load", "gpu.barrier",
                   "ttg.local_alloc", "gpu.barrier", "ttg.local_load"]


def test_two_reads_need_no_barrier_between():
    ops = barrier_ops(f"""    %a = ttg.local_alloc %x : (tensor<64x64xf16, {BL}>) -> {MD}
    %b = ttg.local_load %a : {MD} -> tensor<64x64xf16, {BL}>
    %c = ttg.local_load %a : {MD} -> tensor<64x64xf16, {BL}>
""")
    assert ops.count("gpu.barrier") == 1


@wb.jit
def mm(a_ptr, b_ptr, c_ptr, K, BK: tl.constexpr):
    r = tl.arange(0, 64)
    rk = tl.arange(0, BK)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + r[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * 64 + r[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + r[:, None] * 64 + r[None, :], acc)


def test_pipelined_loop_has_two_barriers_per_iteration():
    c = wb.compile(mm, "*fp16:16", "*fp16:16", "*fp32:16", "i32:16", target="cuda:80",
                   num_stages=3, BK=32)
    text = c.asm["ttgir"]
    body = text[text.index("scf.for"):text.index("scf.yield")]
    # two slots for three stages (as Triton on sm_80): the copies landed before the reads
    # (read-after-write), the reads of the slot done before it is refilled (write-after-read)
    assert body.count("gpu.barrier") == 2
    first = body.index("gpu.barrier")
    second = body.index("gpu.barrier", first + 1)
    assert body.index("ttg.async_wait") < first < body.index("ttg.local_load") < \
        body.index("tt.dot") < second < body.index("ttg.async_copy_global_to_local")


def _with_offsets(body: str, offsets: dict) -> list:
    """``barrier_ops`` of ``body`` after giving each op whose result is named in ``offsets``
    that ``allocation.offset`` (as tritongpu-allocate-shared-memory would)."""
    for name, off in offsets.items():
        body = body.replace(f"%{name} = ttg.local_alloc %x :",
                            f"%{name} = ttg.local_alloc %x {{allocation.offset = {off} : i32}} :")
    return barrier_ops(body)


def test_disjoint_buffers_need_no_barrier_between_them():
    ops = _with_offsets(f"""    %a = ttg.local_alloc %x : (tensor<64x64xf16, {BL}>) -> {MD}
    %b = ttg.local_alloc %x : (tensor<64x64xf16, {BL}>) -> {MD}
    %c = ttg.local_load %a : {MD} -> tensor<64x64xf16, {BL}>
    %d = ttg.local_load %b : {MD} -> tensor<64x64xf16, {BL}>
""", {"a": 0, "b": 8192})
    # one barrier for both writes before both reads; none between the two buffers
    assert ops == ["ttg.local_alloc", "ttg.local_alloc", "gpu.barrier", "ttg.local_load",
                   "ttg.local_load"]


def test_write_after_read_across_the_loop_back_edge():
    ops = _with_offsets(f"""    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %c1 step %c1 : i32 {{
      %a = ttg.local_alloc %x : (tensor<64x64xf16, {BL}>) -> {MD}
      %b = ttg.local_load %a : {MD} -> tensor<64x64xf16, {BL}>
      scf.yield
    }}
""", {"a": 0})
    # the next iteration's store waits for this one's loads: a barrier before the alloc too
    assert ops == ["gpu.barrier", "ttg.local_alloc", "gpu.barrier", "ttg.local_load"]


def test_scratch_ops_synchronise_only_when_their_bytes_meet():
    blk = "#ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>"  # noqa: E501
    text = ('module attributes {"ttg.num-warps" = 4 : i32} {\n  tt.func public @k(%x: '
            f'tensor<64x64xf16, {BL}>) attributes {{noinline = false}} {{\n'
            f"    %y = ttg.convert_layout %x {{allocation.offset = 0 : i32}} : "
            f"tensor<64x64xf16, {BL}> -> tensor<64x64xf16, {blk}>\n"
            f"    %z = ttg.convert_layout %x {{allocation.offset = 8192 : i32}} : "
            f"tensor<64x64xf16, {BL}> -> tensor<64x64xf16, {blk}>\n"
            f"    %w = ttg.convert_layout %x {{allocation.offset = 4096 : i32}} : "
            f"tensor<64x64xf16, {BL}> -> tensor<64x64xf16, {blk}>\n"
            "    tt.return\n  }\n}\n")
    m = parse_module(text)
    (f,) = functions(m)
    added = insert_barriers(f, lambda op: 8192 if op.name == "ttg.convert_layout" else 0)
    names = [op.name for op in f.walk() if op.name in ("ttg.convert_layout", "gpu.barrier")]
    # the first needs none (nothing pending), the second's bytes [8192, 16384) meet nothing,
    # the third's [4096, 12288) meet both earlier ones
    assert names == ["ttg.convert_layout", "ttg.convert_layout", "gpu.barrier",
                     "ttg.convert_layout"]
    assert added == 1
    assert insert_barriers(f, lambda op: 8192) == 0  # running it again adds nothing
