"""Shared-memory buffers: ``ttg.local_alloc`` and ``ttg.local_store`` (registers -> swizzled
shared memory) and ``ttg.local_load`` (shared memory -> registers, with ``ldmatrix`` when a
form fits).

Every ``local_alloc`` of the kernel gets its own region of ``global_smem`` (offsets assigned
up front by :func:`plan`, 128-byte aligned); the scratch area of reductions and conversions
starts after them. Elements are addressed by :func:`.smem_access.swizzle_offset` (the
``#ttg.swizzled_shared`` / ``#ttg.nvmma_shared`` formulas).

Stores are vectorised over the source layout's contiguous registers (up to 16 bytes,
``st.shared.v4.b32``), or on sm_90 use ``stmatrix`` when the register layout fits it, as
Triton's ``LocalAllocOpConversion`` (:mod:`.local_stmatrix`). Loads into a ``#ttg.dot_op``
of an MMA parent use ``ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16`` (PTX ISA 9.7.9.15
ldmatrix) when every
8x8 matrix row is 16 contiguous, 16-byte aligned bytes (:mod:`.ldmatrix`); loads into any
other layout try ``ldmatrix``'s plain and ``.trans`` forms as Triton's
``LocalLoadOpConversion`` does (:mod:`.local_ldmatrix`); otherwise one ``ld.shared`` per
contiguous run. Barriers between these and other shared-memory accesses
come from ``tritongpu-insert-barriers`` (:mod:`workbench.passes.insert_barriers`, also run by
the lowering on ttgir that did not go through it).

Each access is recorded with its bank-conflict degree (``kl.shared_accesses``, from
:func:`workbench.layouts.bank_conflicts`); ``ldmatrix``/``stmatrix`` accesses are recorded
with the rows their lanes address (:func:`.smem_access.matrix_rows_layout`).
"""
from __future__ import annotations

from ...errors import UnsupportedError
from ...layouts.encodings import DotOperandLayout, MmaLayout, NVMMASharedLayout
from ...passes.allocate_shared import buffer_bytes
from .async_copy import swizzle_strides
from .ldmatrix import ldmatrix_load
from .local_ldmatrix import load_matrix
from .local_stmatrix import store_matrix
from .smem_access import (
    buffer_pointer,
    contiguous_run,
    fence_proxy_async,
    record_access,
    shared_order,
    swizzle_offset,
    vector_limit,
    vector_load,
    vector_store,
)
from .types import I32, byte_size


def _ensure_allocated(func_op):
    """The module of ``func_op``, allocated by :func:`workbench.passes.allocate_shared.
    allocate_module` with this backend's scratch sizes unless it carries ``ttg.shared``
    already (ttgir that went through ``tritongpu-allocate-shared-memory``)."""
    from ...passes.allocate_shared import allocate_module
    from .scratch import scratch_bytes
    module = func_op.parent_op() if func_op.parent is not None else None
    if module is None:
        from ...passes.allocate_shared import allocate
        allocate(func_op, scratch_bytes)
        return None
    unplaced = any(op.name != "ttg.local_alloc" and "allocation.offset" not in op.attributes
                   and scratch_bytes(op) for op in func_op.walk())
    if "ttg.shared" not in module.attributes or unplaced:
        allocate_module(module, scratch_bytes)
    return module


def plan(func_op) -> tuple[dict, int]:
    """Byte offset of every ``ttg.local_alloc`` result (by id) and the kernel's shared bytes.

    Offsets and total are those of ``allocate-shared-memory`` (:mod:`workbench.passes.
    allocate_shared`: the ``allocation.offset`` attributes, the module's ``ttg.shared``);
    a module without them is allocated here first."""
    module = _ensure_allocated(func_op)
    offsets, total = {}, 0
    for op in func_op.walk():
        if op.name == "ttg.local_alloc":
            start = int(op.attributes["allocation.offset"])
            offsets[id(op.result)] = start
            total = max(total, start + buffer_bytes(op.result.type))
    if module is not None:
        total = max(total, int(module.attributes["ttg.shared"]))
    return offsets, total


def scratch_plan(func_op) -> dict:
    """``{id(op): (offset, bytes)}`` of the shared scratch of every op that has some (after
    :func:`plan`, which makes sure offsets exist)."""
    from .scratch import scratch_bytes
    out = {}
    for op in func_op.walk():
        if op.name != "ttg.local_alloc" and "allocation.offset" in op.attributes:
            n = scratch_bytes(op)
            if n:
                out[id(op)] = (int(op.attributes["allocation.offset"]), n)
    return out


def lower_local_alloc(kl, op) -> None:
    """``ttg.local_alloc %src``: store the registers into the buffer (skipping duplicates):
    with ``stmatrix`` on sm_90 when the layout fits it, as Triton's ``LocalAllocOpConversion``
    (:mod:`.local_stmatrix`), else vectorised ``st.shared``."""
    kl.set(op.result, [])
    if op.operands:
        _store_registers(kl, op, op.operands[0], op.result.type,
                         kl.smem_offsets[id(op.result)])


def lower_local_store(kl, op) -> None:
    """``ttg.local_store %src, %buf``: the registers of ``%src`` into the buffer ``%buf`` (a
    ``ttg.local_alloc`` result or a view of one), as :func:`lower_local_alloc` stores them.

    Raises UnsupportedError when the buffer was not made by ``ttg.local_alloc``."""
    src_v, dst_v = op.operands
    base = kl.smem_offsets.get(id(dst_v))
    if base is None:
        raise UnsupportedError("ttg.local_store into a buffer not made by ttg.local_alloc",
                               op.loc)
    _store_registers(kl, op, src_v, dst_v.type, base)


def _store_registers(kl, op, src_v, dst_t, base: int) -> None:
    """Store the registers of ``src_v`` into the shared buffer of memdesc type ``dst_t`` at
    byte ``base`` (``op``: the ``local_alloc`` or ``local_store``, for the access record)."""
    src_t = src_v.type
    enc = dst_t.encoding
    tl = kl.layout(src_t)
    elem_t = src_t.element
    limit = vector_limit(enc, byte_size(elem_t))
    v = contiguous_run(tl, shared_order(enc)[0], limit)
    regs = kl.get(src_v)
    if kl.arch >= 90 and store_matrix(kl, op, enc, base, tl, regs, elem_t,
                                      tuple(int(s) for s in dst_t.shape)):
        _fence_after(kl, op, enc)
        return
    coords = kl.coords(src_t)
    groups, seen = [], set()
    for g in range(0, tl.num_regs, v):
        if tl.regs[g] not in seen:
            seen.add(tl.regs[g])
            groups.append(g)
    plan = swizzle_strides(tl, tuple(groups), enc, tuple(dst_t.shape))
    offs: dict = {}
    for g in groups:
        off = _offset(kl, enc, dst_t.shape, coords, plan, offs, g)
        vector_store(kl, buffer_pointer(kl, base, off, elem_t), regs[g:g + v], elem_t)
    _fence_after(kl, op, enc)
    record_access(kl, op, f"{op.name} (st.shared, {v * byte_size(elem_t)} B/lane)", enc,
                  src_t.encoding, tuple(src_t.shape), elem_t, v * byte_size(elem_t))


def _offset(kl, enc, shape, coords, plan, offs: dict, g: int):
    """Element offset (i32) of register group ``g`` in the buffer: computed from the
    thread's coordinates for an anchor of ``plan`` (:func:`.async_copy.swizzle_strides`),
    else the anchor's offset plus the plan's constant (fewer instructions to emit, print and
    optimise; Triton's shared-memory lowering has the same form: one base per thread and
    constant register offsets). ``offs`` collects the offsets emitted so far."""
    anchor, delta = plan[g]
    if anchor == g:
        off = swizzle_offset(kl, enc, shape, coords[g])
    else:
        off = kl.b.add(offs[anchor], I32(delta))
    offs[g] = off
    return off


def _fence_after(kl, op, enc) -> None:
    """``fence.proxy.async`` after the stores into an ``#ttg.nvmma_shared`` buffer unless the
    ttgir has its own fence next: wgmma and TMA read shared memory through the async proxy,
    so these generic-proxy stores are ordered before them (PTX ISA 9.7.13.4 membar/fence); the
    barrier before the reader makes them visible to the other threads."""
    nxt = _next_op(op)
    if isinstance(enc, NVMMASharedLayout) and \
            (nxt is None or nxt.name != "ttng.fence_async_shared"):
        fence_proxy_async(kl)


def _next_op(op):
    """The op after ``op`` in its block (None at the end); a TMA store's own fence follows
    its ``local_alloc``."""
    block = op.parent
    if block is None:
        return None
    i = block.ops.index(op)
    return block.ops[i + 1] if i + 1 < len(block.ops) else None


def lower_local_load(kl, op) -> None:
    """``ttg.local_load %buf``: registers of the result layout (``ldmatrix`` when it fits).

    Raises UnsupportedError when the buffer was not made by ``ttg.local_alloc``."""
    src_v = op.operands[0]
    mem_t, dst_t = src_v.type, op.result.type
    enc = mem_t.encoding
    base = kl.smem_offsets.get(id(src_v))
    if base is None:
        raise UnsupportedError("ttg.local_load of a buffer not made by ttg.local_alloc", op.loc)
    elem_t = mem_t.element
    lay = dst_t.encoding
    if isinstance(lay, DotOperandLayout) and isinstance(lay.parent, MmaLayout):
        regs = ldmatrix_load(kl, op, enc, base, elem_t)
        if regs is not None:
            kl.set(op.result, regs)
            return
    tl = kl.layout(dst_t)
    regs = load_matrix(kl, op, enc, base, tl, elem_t, tuple(mem_t.shape))
    if regs is not None:
        kl.set(op.result, regs)
        return
    limit = vector_limit(enc, byte_size(elem_t))
    v = contiguous_run(tl, shared_order(enc)[0], limit)
    coords = kl.coords(dst_t)
    out: list = [None] * tl.num_regs
    first: dict = {}
    for g in range(0, tl.num_regs, v):
        first.setdefault(tl.regs[g], g)
    plan = swizzle_strides(tl, tuple(first.values()), enc, tuple(mem_t.shape))
    offs: dict = {}
    for g in range(0, tl.num_regs, v):
        src = first[tl.regs[g]]
        if src != g:  # a duplicate register: the same values
            out[g:g + v] = out[src:src + v]
            continue
        off = _offset(kl, enc, mem_t.shape, coords, plan, offs, g)
        out[g:g + v] = vector_load(kl, buffer_pointer(kl, base, off, elem_t), elem_t, v)
    record_access(kl, op, f"ttg.local_load (ld.shared, {v * byte_size(elem_t)} B/lane)", enc,
                  lay, tuple(mem_t.shape), elem_t, v * byte_size(elem_t))
    kl.set(op.result, out)


__all__ = ["plan", "lower_local_alloc", "lower_local_load", "lower_local_store"]
