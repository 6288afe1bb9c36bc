"""A :class:`~workbench.runtime.compiled.CompiledKernel` as bytes and back, for the disk cache.

The runtime keeps what every kernel has: every stage text, the line maps (through a table of
source locations), the metadata, the original compile's timings, the JSON-able ``extra``
entries and the launch error. What relaunching needs is the backend's own part, made by
:meth:`~workbench.backends.base.Backend.pack` and read by
:meth:`~workbench.backends.base.Backend.load` (the runtime never looks inside it).
"""
from __future__ import annotations

import dataclasses

from ..backends.base import KernelMetadata
from ..backends.entry import LocationTable, locations_from_rows, pack_parts, unpack_parts
from ..backends.lazy import StageMap
from .compiled import CompiledKernel

#: extra entries never stored: the cubin is the backend's (inside its part), and whether the
#: kernel came from the cache is said anew by each load
_NOT_STORED = ("cubin", "disk_cache")
_DROP = object()


def _jsonable(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        items = [_jsonable(e) for e in v]
        return _DROP if any(e is _DROP for e in items) else items
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        fields = {k: _jsonable(e) for k, e in v.items()}
        return _DROP if any(e is _DROP for e in fields.values()) else fields
    return _DROP


def _made(asm) -> dict:
    """The stages of ``asm`` already made (all of a plain dict)."""
    return asm.resolved() if isinstance(asm, StageMap) else dict(asm)


def kernel_to_bytes(kernel: CompiledKernel, backend) -> bytes | None:
    """The entry of ``kernel`` (compiled by ``backend``), or None when the backend cannot
    reload it. ``extra`` entries that are not JSON-able (objects; dicts with other than text
    keys) are left out."""
    launch = backend.pack(kernel)
    if launch is None:
        return None
    table = LocationTable()
    asm = _made(kernel.asm)  # a stage never read is made again after loading
    maps = {stage: [table.index(loc) for loc in kernel.line_maps[stage]]
            for stage in kernel.line_maps if stage in asm}
    extra = {k: j for k, v in kernel.extra.items()
             if k not in _NOT_STORED and (j := _jsonable(v)) is not _DROP}
    meta = {"asm": asm, "locs": table.rows, "line_maps": maps,
            "metadata": dataclasses.asdict(kernel.metadata),
            "launch_error": kernel._launch_error,
            "timings": {k: v for k, v in kernel.timings.items() if isinstance(v, (int, float))},
            "extra": extra}
    return pack_parts(meta, {"launch": launch})


def kernel_from_bytes(jit_fn, spec, options, target, data: bytes, backend) -> tuple:
    """``(kernel, repacked)``: the :class:`CompiledKernel` of an entry made by
    :func:`kernel_to_bytes`, and new bytes for the entry when the backend's load improved
    its part (else None). Raises on a malformed entry (the caller then recompiles)."""
    meta, parts = unpack_parts(data)
    loaded = backend.load(parts["launch"])
    locs = locations_from_rows(meta["locs"])
    maps = {stage: [locs[i] if i is not None else None for i in idx]
            for stage, idx in meta["line_maps"].items()}
    extra = dict(meta["extra"])
    extra.update(loaded.extra)
    asm, line_maps = StageMap(meta["asm"]), StageMap(maps, 1)
    for name, lazy in backend.lazy_stages(parts["launch"]).items():
        if name not in asm:
            asm[name] = line_maps[name] = lazy
    kernel = CompiledKernel(fn=jit_fn.fn, params=jit_fn.params, src=jit_fn.src, spec=spec,
                            options=options, target=target, asm=asm, line_maps=line_maps,
                            metadata=KernelMetadata(**meta["metadata"]),
                            launcher=loaded.launcher,
                            launch_error=loaded.launch_error or meta["launch_error"],
                            snapshots={}, timings=dict(meta["timings"]), extra=extra)
    repacked = None
    if loaded.repacked is not None:
        repacked = pack_parts(meta, {"launch": loaded.repacked})
    return kernel, repacked
