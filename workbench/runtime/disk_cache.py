"""The on-disk compile cache: compiled kernels survive the process (Triton's ``~/.triton/cache``,
reference §3.2). Folder: ``$WORKBENCH_CACHE_DIR`` or ``platformdirs.user_cache_dir(
"tile-workbench")``; ``WORKBENCH_DISK_CACHE=0`` turns it off, ``WORKBENCH_ALWAYS_COMPILE=1``
compiles anyway and rewrites the entry (as ``TRITON_ALWAYS_COMPILE``).

Key (SHA-256, :func:`cache_key`): the compiler's own source files (as Triton hashes its
compiler and ``libtriton.so``: a version number misses edits), the package version, the
backend's ``cache_key()`` (target, llvmlite version, host CPU and features, ptxas version),
the options, the specialisation (a ``@jit`` function passed as a constexpr counts by its
source), and the source, file and first line of the kernel and of every ``@jit`` helper it
reaches through globals and closures (transitively), with the plain globals they read.

An entry is one file ``<dir>/<key[:2]>/<key>.wbk``: a header ``WBCACHE <format> <sha256 of
body> <length>`` and a zlib-compressed JSON body: every stage text, line maps (a location
table), metadata, the original compile's timings, and what the backend needs to relaunch
without the frontend and passes: ``cpu``: the optimised LLVM IR, the machine code (added by
the first reload, through MCJIT's object cache) and the launcher's parameter table; ``cuda``:
the cubin bytes (or PTX); ``interpreter``: the ttir (parsed again). Entries are written to a
temporary file in the same folder and renamed with ``os.replace`` (atomic): processes
compiling the same kernel at once each get a valid result, a reader never sees half a file,
and a bad header, length or checksum (corruption, truncation) makes a miss that is rebuilt.
"""
from __future__ import annotations

import ast
import base64
import dataclasses
import functools
import hashlib
import json
import os
import tempfile
import time
import zlib
from pathlib import Path

from ..config import VERSION
from ..config import cache_dir  # noqa: F401  (re-exported: the one cache folder)
from ..ir.core import Location

FORMAT_VERSION = 1
_MAGIC = b"WBCACHE"
_SKIP_DIRS = ("notebook", "viz", "testing")
_DROP = object()  # "no value": a missing name, an extra entry that is not JSON-able


# ------------------------------------------------------------------------------ settings
def _env_flag(name: str, default: bool) -> bool:
    v = os.environ.get(name, "").strip().lower()
    return default if not v else v not in ("0", "false", "no", "off")


def enabled() -> bool:
    """Whether compiled kernels are read from and written to disk (``WORKBENCH_DISK_CACHE``)."""
    return _env_flag("WORKBENCH_DISK_CACHE", True)


# ------------------------------------------------------------------------------ the key
@functools.lru_cache(maxsize=1)
def compiler_hash() -> str:
    """SHA-256 of the compiler's source files (``workbench/**/*.py`` except notebook/, viz/
    and testing/, which do not change compiled code), read once per process."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in _SKIP_DIRS or "__pycache__" in rel.parts:
            continue
        h.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def backend_key(target_text: str) -> str:
    """The backend's ``cache_key()`` (tool versions, host CPU) as text, once per target."""
    from ..backends.registry import get_backend
    return repr(get_backend(target_text).cache_key())


def _is_jit(v) -> bool:
    return bool(getattr(v, "__workbench_jit__", False))


def _plain_value(v):
    """A stable text for a global the kernel reads, or None when it does not affect code."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return repr(v)
    if isinstance(v, tuple) and all(isinstance(e, (bool, int, float, str)) for e in v):
        return repr(v)
    mod = type(v).__module__ or ""
    if mod.startswith(("workbench.language", "numpy")):  # constexpr, dtypes
        return f"{type(v).__name__}:{v!r}"
    return None


def _used_names(tree) -> list[tuple[str, ...]]:
    """Dotted name chains the function body reads: ``x`` -> ("x",), ``m.f`` -> ("m", "f")."""
    chains = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts, cur = [], node
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name):
                chains.append((cur.id, *reversed(parts)))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            chains.append((node.id,))
    return chains


def source_fingerprint(jit_fn) -> list:
    """What of the program text a compile depends on: for the kernel and every ``@jit``
    helper reachable from it (through globals, closures and attribute chains such as
    ``helpers.f``), ``(name, file, first_line, col_offset, text)``; for plain globals read by
    them (constexpr globals), ``(path, value text)``. Sorted, without duplicates."""
    seen, out, todo = set(), set(), [jit_fn]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        src = f.src
        out.add(("fn", src.name, src.file, int(src.first_line), int(src.col_offset), src.text))
        scope = dict(src.globals or {})
        scope.update(src.closure or {})
        for chain in _used_names(src.tree()):
            value, i = scope.get(chain[0], _DROP), 1
            while i < len(chain) and type(value).__name__ == "module":
                value, i = getattr(value, chain[i], _DROP), i + 1
            if _is_jit(value):
                todo.append(value)
            elif (text := _plain_value(value)) is not None:
                out.add(("global", ".".join(chain[:i]), text))
    return sorted(out, key=repr)


def _spec_key(spec) -> list:
    out = []
    for a in spec.args:
        if a.kind == "constexpr" and _is_jit(a.value):
            out.append((a.name, "jit", repr(source_fingerprint(a.value))))
        else:
            out.append(repr(a.key()))
    return out


def cache_key(jit_fn, spec, options, target) -> str:
    """The hex SHA-256 naming the entry of ``jit_fn`` compiled for ``spec``/``options``/
    ``target`` (see the module docstring for what goes in)."""
    parts = {"format": FORMAT_VERSION, "version": VERSION, "compiler": compiler_hash(),
             "backend": backend_key(str(target)), "target": str(target),
             "options": repr(dataclasses.asdict(options)), "spec": _spec_key(spec),
             "source": source_fingerprint(jit_fn)}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()


def entry_path(key: str) -> Path:
    """Where the entry of ``key`` lives."""
    return cache_dir() / key[:2] / f"{key}.wbk"


# ------------------------------------------------------------------------------ entry files
def write_entry(path: Path, payload: dict) -> None:
    """Write ``payload`` (JSON-able) atomically: temporary file in the same folder, fsync'd,
    then ``os.replace``. Errors (read-only disk, full disk) are swallowed: the cache is an
    optimisation."""
    body = zlib.compress(json.dumps(payload, separators=(",", ":")).encode(), 6)
    header = b"%s %d %s %d\n" % (_MAGIC, FORMAT_VERSION,
                                 hashlib.sha256(body).hexdigest().encode(), len(body))
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(header + body)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def read_entry(path: Path) -> dict | None:
    """The payload of the entry at ``path``, or None when it is missing, truncated, corrupted
    or of another format (checked by length and SHA-256 before decoding)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head, sep, body = data.partition(b"\n")
    fields = head.split(b" ")
    if not sep or len(fields) != 4 or fields[0] != _MAGIC or \
            fields[1] != str(FORMAT_VERSION).encode():
        return None
    if not fields[3].isdigit() or int(fields[3]) != len(body) or \
            hashlib.sha256(body).hexdigest().encode() != fields[2]:
        return None
    try:
        payload = json.loads(zlib.decompress(body))
    except (zlib.error, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


# ------------------------------------------------------------------------------ locations
def _loc_to_json(loc: Location | None, table: dict, rows: list):
    if loc is None:
        return None
    idx = table.get(loc)
    if idx is None:
        caller = _loc_to_json(loc.caller, table, rows)
        idx = table[loc] = len(rows)
        rows.append([loc.file, loc.line, loc.col, loc.name, caller])
    return idx


def _locs_from_json(rows: list) -> list:
    out: list = []
    for file, line, col, name, caller in rows:  # callers always come first
        out.append(Location(file, line, col, name, out[caller] if caller is not None else None))
    return out


def _jsonable(v):
    if isinstance(v, bytes):
        return {"__bytes__": base64.b64encode(v).decode()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        items = [_jsonable(e) for e in v]
        return _DROP if any(e is _DROP for e in items) else items
    return _DROP


def _from_jsonable(v):
    if isinstance(v, dict) and "__bytes__" in v:
        return base64.b64decode(v["__bytes__"])
    return [_from_jsonable(e) for e in v] if isinstance(v, list) else v


# ------------------------------------------------------------------------------ kernels
def _launch_info(kernel) -> dict | None:
    """What the backend needs to relaunch ``kernel`` without recompiling, or None when this
    backend cannot be reloaded (then the kernel is not stored)."""
    backend, launcher = kernel.target.backend, kernel._launcher
    if backend == "cpu":
        if launcher is None or not hasattr(launcher, "mem_ops"):
            return None
        table, rows = {}, []
        ops = [[k, _loc_to_json(loc, table, rows), p] for k, loc, p in launcher.mem_ops]
        return {"kind": "cpu", "name": launcher.name, "param_names": launcher.param_names,
                "param_types": [str(t) for t in launcher.param_types],
                "arena_bytes": launcher.arena_bytes, "mem_ops": ops, "locs": rows}
    if backend == "cuda":
        from ..backends.cuda import param_kind
        from ..ir.core import functions
        from ..ir.parser import parse_module
        func = functions(parse_module(kernel.asm["ttir"]))[0]
        image = kernel.extra.get("cubin") or kernel.extra.get("ptx") or kernel.asm["ptx"]
        return {"kind": "cuda", "image": _jsonable(image),
                "kinds": [param_kind(a.type) for a in func.regions[0].block.args]}
    return {"kind": "interpreter"} if backend == "interpreter" else None


def _relaunch(info: dict, payload: dict, spec, options, target):
    """``(launcher, launch_error, extra)`` rebuilt from an entry. Raises on any mismatch
    (the caller then recompiles)."""
    kind, md = info["kind"], payload["metadata"]
    if kind == "cpu":
        import llvmlite.binding as llvm

        from ..backends.cpu.launcher import CpuLauncher
        from ..codegen.cpu.compile import target_machine
        from ..ir.parser import TypeParser
        tm = target_machine()
        mod = llvm.parse_assembly(payload["asm"]["llir"])
        mod.verify()
        engine = llvm.create_mcjit_compiler(mod, tm)
        # MCJIT's object cache: the first reload stores the machine code it generates in the
        # entry, later reloads skip code generation
        obj = _from_jsonable(info["object"]) if info.get("object") else None
        got = {}
        engine.set_object_cache(lambda _m, buf: got.setdefault("obj", bytes(buf)),
                                lambda _m: obj)
        engine.finalize_object()
        if obj is None and got.get("obj"):
            info["object"] = _jsonable(got["obj"])
            payload["_dirty"] = True
        address = engine.get_function_address(info["name"] + "_grid")
        if not address:
            raise ValueError("grid function missing")
        locs = _locs_from_json(info["locs"])
        ops = [(k, locs[i] if i is not None else None, p) for k, i, p in info["mem_ops"]]
        types = [TypeParser(t).type() for t in info["param_types"]]
        launcher = CpuLauncher(engine, address, info["name"], info["param_names"], types,
                               info["arena_bytes"], ops)
        return launcher, None, {}
    if kind == "cuda":
        from ..backends import cuda, cuda_driver
        reason = cuda_driver.driver_status()
        if reason is not None:
            return cuda._Unavailable(reason), reason, {}
        image = _from_jsonable(info["image"])
        return cuda_driver.CudaLauncher(image, md["name"], info["kinds"], md["num_warps"],
                                        md["shared"]), None, {}
    if kind == "interpreter":
        from ..backends.registry import get_backend
        from ..config import CompileContext
        from ..ir.parser import parse_module
        res = get_backend(target).compile(parse_module(payload["asm"]["ttir"]), spec, options,
                                          CompileContext())
        return res.launcher, res.launch_error, dict(res.extra)
    raise ValueError(f"unknown entry kind {kind!r}")


def kernel_payload(kernel) -> dict | None:
    """The JSON-able entry of a :class:`CompiledKernel`, or None if it cannot be reloaded."""
    info = _launch_info(kernel)
    if info is None:
        return None
    table, rows = {}, []
    maps = {stage: [_loc_to_json(loc, table, rows) for loc in locs]
            for stage, locs in kernel.line_maps.items()}
    extra = {k: j for k, v in kernel.extra.items()
             if k not in ("cubin", "disk_cache") and (j := _jsonable(v)) is not _DROP}
    return {"asm": dict(kernel.asm), "locs": rows, "line_maps": maps,
            "metadata": dataclasses.asdict(kernel.metadata), "launch_error": kernel._launch_error,
            "timings": {k: v for k, v in kernel.timings.items() if isinstance(v, (int, float))},
            "extra": extra, "launch": info}


def kernel_from_payload(jit_fn, spec, options, target, payload: dict):
    """Rebuild the :class:`CompiledKernel` of an entry (raises on a malformed entry)."""
    from ..backends.base import KernelMetadata
    from .compiled import CompiledKernel
    launcher, launch_error, fresh_extra = _relaunch(payload["launch"], payload, spec, options,
                                                    target)
    locs = _locs_from_json(payload["locs"])
    maps = {stage: [locs[i] if i is not None else None for i in idx]
            for stage, idx in payload["line_maps"].items()}
    extra = {k: _from_jsonable(v) for k, v in payload["extra"].items()}
    extra.update(fresh_extra)
    return CompiledKernel(fn=jit_fn.fn, params=jit_fn.params, src=jit_fn.src, spec=spec,
                          options=options, target=target, asm=payload["asm"], line_maps=maps,
                          metadata=KernelMetadata(**payload["metadata"]), launcher=launcher,
                          launch_error=launch_error or payload["launch_error"],
                          snapshots={}, timings=dict(payload["timings"]), extra=extra)


def cached_compile(jit_fn, spec, options, target, keep_snapshots: bool = False):
    """:func:`~workbench.runtime.compiler.compile_specialization` through the disk cache.

    A valid entry gives the kernel without running the frontend or passes (its ``timings``
    are the original compile's plus ``disk_load``, seconds; ``extra["disk_cache"]`` is
    ``"hit"``); otherwise the kernel is compiled and stored (``"miss"``). ``keep_snapshots``
    always compiles (snapshots are not stored). Compile errors propagate and store nothing."""
    from ..config import Target
    from .compiler import compile_specialization
    target = Target.parse(target)
    if not enabled():
        return compile_specialization(jit_fn, spec, options, target, keep_snapshots)
    t0 = time.perf_counter()
    try:
        path = entry_path(cache_key(jit_fn, spec, options, target))
    except Exception:  # an unreadable source or global: compile without the cache
        return compile_specialization(jit_fn, spec, options, target, keep_snapshots)
    if not keep_snapshots and not _env_flag("WORKBENCH_ALWAYS_COMPILE", False):
        payload = read_entry(path)
        if payload is not None:
            try:
                kernel = kernel_from_payload(jit_fn, spec, options, target, payload)
            except Exception:  # malformed despite the checksum: rebuild
                kernel = None
            if kernel is not None:
                if payload.pop("_dirty", False):
                    write_entry(path, payload)
                kernel.timings["disk_load"] = time.perf_counter() - t0
                kernel.extra["disk_cache"] = "hit"
                return kernel
    kernel = compile_specialization(jit_fn, spec, options, target, keep_snapshots)
    payload = kernel_payload(kernel)
    if payload is not None:
        write_entry(path, payload)
    kernel.extra["disk_cache"] = "miss"
    return kernel

