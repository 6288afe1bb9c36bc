"""The on-disk compile cache: compiled kernels survive the process (as Triton's
``~/.triton/cache``). Folder: :func:`workbench.config.cache_dir`; ``WORKBENCH_DISK_CACHE=0``
turns it off, ``WORKBENCH_ALWAYS_COMPILE=1`` compiles anyway and rewrites the entry (as
``TRITON_ALWAYS_COMPILE``).

Key (SHA-256, :func:`cache_key`): the compiler's own source files (as Triton hashes its
compiler and ``libtriton.so``: a version number misses edits), the package version, the
backend's ``cache_key()`` (target, llvmlite version, host CPU and features, ptxas version),
the options, the specialisation (a ``@jit`` function passed as a constexpr counts by its
source), and the source, file and first line of the kernel and of every ``@jit`` helper it
reaches through globals and closures (transitively), with the plain globals they read.

This module only stores bytes under keys: an entry is one file ``<dir>/<key[:2]>/<key>.wbk``,
a header ``WBCACHE <format> <sha256 of body> <length>`` and the zlib-compressed bytes. What
the bytes of a kernel hold is :mod:`workbench.runtime.kernel_entry`'s business (and inside
it, the backend's: :meth:`~workbench.backends.base.Backend.pack`). Entries are written to a
temporary file in the same folder and renamed with ``os.replace`` (atomic): processes
compiling the same kernel at once each get a valid result, a reader never sees half a file,
and a bad header, length or checksum (corruption, truncation) makes a miss that is rebuilt.
A writer killed mid-write leaves only its temporary file (``<entry>.<random>.tmp``), never a
partial entry; the next write of that entry removes such files once they are older than
:data:`STALE_TMP_SECONDS` (a younger one may belong to a live writer).
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import json
import os
import tempfile
import time
import zlib
from pathlib import Path

from ..backends.registry import get_backend
from ..config import VERSION, Target, cache_dir, env_flag
from .compiler import compile_specialization
from .kernel_entry import kernel_from_bytes, kernel_to_bytes

FORMAT_VERSION = 2
#: a temporary entry file older than this (seconds) belongs to a writer that died
STALE_TMP_SECONDS = 600.0
_MAGIC = b"WBCACHE"
_SKIP_DIRS = ("notebook", "viz", "testing")
_DROP = object()  # "no value": a name the kernel reads that is missing


# ------------------------------------------------------------------------------ settings
def enabled() -> bool:
    """Whether compiled kernels are read from and written to disk (``WORKBENCH_DISK_CACHE``)."""
    return env_flag("WORKBENCH_DISK_CACHE")


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
def _backend(target_text: str):
    """The backend of a target, made once per process (it packs and loads the entries)."""
    return get_backend(target_text)


@functools.lru_cache(maxsize=None)
def backend_key(target_text: str) -> str:
    """The backend's ``cache_key()`` (tool versions, host CPU) as text, once per target."""
    return repr(_backend(target_text).cache_key())


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
    chains: list[tuple[str, ...]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts: list[str] = []
            cur: ast.expr = node
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
    seen: set = set()
    out: set[tuple] = set()
    todo = [jit_fn]
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
            elif isinstance(value, type) and getattr(value, "__workbench_aggregate__", False):
                jits, texts = _aggregate_parts(value)  # its methods are program text too
                todo.extend(jits)
                out.update(("aggregate", value.__qualname__, t) for t in texts)
            elif (text := _plain_value(value)) is not None:
                out.add(("global", ".".join(chain[:i]), text))
    return sorted(out, key=repr)


def _aggregate_parts(cls) -> tuple[list, list]:
    """An aggregate class's ``@jit`` methods and the text of its Python ones (``__init__``,
    builtin-style methods, static functions), for :func:`source_fingerprint`."""
    import inspect

    from ..language.aggregates import JitMember
    jits, texts = [], []
    members = dict(vars(cls))
    members["__init__"] = members.get("__workbench_user_init__")
    for name, raw in sorted(members.items(), key=lambda kv: kv[0]):
        fn = raw.fn if isinstance(raw, JitMember) else raw
        fn = fn.__func__ if isinstance(fn, (staticmethod, classmethod)) else fn
        if _is_jit(fn):
            jits.append(fn)
        elif inspect.isfunction(fn):
            try:
                texts.append(f"{name}: {inspect.getsource(fn)}")
            except (OSError, TypeError):
                texts.append(f"{name}: {fn.__code__.co_code.hex()} {fn.__code__.co_consts!r}")
    return jits, texts


def _spec_key(spec) -> list:
    out: list = []
    for a in spec.args:
        if a.kind == "constexpr" and _is_jit(a.value):
            out.append((a.name, "jit", repr(source_fingerprint(a.value))))
        elif a.kind == "tuple":  # its @jit elements by their source, the rest by key
            out.append((repr(a.key()), _spec_key(type(spec)(a.elements))))
        else:
            out.append(repr(a.key()))
    return out


def cache_key(jit_fn, spec, options, target) -> str:
    """The hex SHA-256 naming the entry of ``jit_fn`` compiled for ``spec``/``options``/
    ``target`` (see the module docstring for what goes in)."""
    parts = {"format": FORMAT_VERSION, "version": VERSION, "compiler": compiler_hash(),
             "backend": backend_key(str(target)), "target": str(target),
             "options": repr(dataclasses.asdict(options)), "spec": _spec_key(spec),
             "source": source_fingerprint(jit_fn),
             "name": jit_fn.kernel_name(spec) if hasattr(jit_fn, "kernel_name") else None}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()


def entry_path(key: str) -> Path:
    """Where the entry of ``key`` lives."""
    return cache_dir() / key[:2] / f"{key}.wbk"


# ------------------------------------------------------------------------------ entry files
def write_bytes(path: Path, data: bytes) -> None:
    """Store ``data`` at ``path`` atomically (compressed, with a checked header): temporary
    file in the same folder, fsync'd, then ``os.replace``. Errors (read-only disk, full disk)
    are swallowed: the cache is an optimisation."""
    body = zlib.compress(data, 6)
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
        tmp = None
        _remove_stale_temps(path)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def _remove_stale_temps(path: Path) -> None:
    """Remove temporary files of ``path``'s entry left by writers that died (older than
    :data:`STALE_TMP_SECONDS`)."""
    now = time.time()
    for old in path.parent.glob(path.name + ".*.tmp"):
        try:
            if now - old.stat().st_mtime > STALE_TMP_SECONDS:
                old.unlink()
        except OSError:  # removed by another process meanwhile
            pass


def read_bytes(path: Path) -> bytes | None:
    """The bytes stored at ``path``, or None when the entry is missing, truncated, corrupted
    or of another format (checked by length and SHA-256 before decompressing)."""
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
        return zlib.decompress(body)
    except zlib.error:
        return None


def write_entry(path: Path, payload: dict) -> None:
    """Store ``payload`` (JSON-able) at ``path`` (:func:`write_bytes`)."""
    write_bytes(path, json.dumps(payload, separators=(",", ":")).encode())


def read_entry(path: Path) -> dict | None:
    """The JSON object stored at ``path`` by :func:`write_entry`, or None (see
    :func:`read_bytes`; also None when the bytes are not a JSON object)."""
    data = read_bytes(path)
    if data is None:
        return None
    try:
        payload = json.loads(data)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


# ------------------------------------------------------------------------------ kernels
def _load(jit_fn, spec, options, target, path: Path, backend):
    """The kernel stored at ``path``, or None (missing or malformed entry); an entry the
    backend's load improved is written back."""
    data = read_bytes(path)
    if data is None:
        return None
    try:
        kernel, repacked = kernel_from_bytes(jit_fn, spec, options, target, data, backend)
    except Exception:  # malformed despite the checksum, or the backend refused it: rebuild
        return None
    if repacked is not None:
        write_bytes(path, repacked)
    return kernel


def cached_compile(jit_fn, spec, options, target, keep_snapshots: bool = False):
    """:func:`~workbench.runtime.compiler.compile_specialization` through the disk cache.

    A valid entry gives the kernel without running the frontend or passes (its ``timings``
    are the original compile's plus ``disk_load``, seconds; ``extra["disk_cache"]`` is
    ``"hit"``); otherwise the kernel is compiled and stored (``"miss"``). ``keep_snapshots``
    always compiles (snapshots are not stored). Compile errors propagate and store nothing."""
    target = Target.parse(target)
    if not enabled():
        return compile_specialization(jit_fn, spec, options, target, keep_snapshots)
    t0 = time.perf_counter()
    try:
        path = entry_path(cache_key(jit_fn, spec, options, target))
    except Exception:  # an unreadable source or global: compile without the cache
        return compile_specialization(jit_fn, spec, options, target, keep_snapshots)
    backend = _backend(str(target))
    if not keep_snapshots and not env_flag("WORKBENCH_ALWAYS_COMPILE"):
        kernel = _load(jit_fn, spec, options, target, path, backend)
        if kernel is not None:
            kernel.timings["disk_load"] = time.perf_counter() - t0
            kernel.extra["disk_cache"] = "hit"
            return kernel
    kernel = compile_specialization(jit_fn, spec, options, target, keep_snapshots)
    data = kernel_to_bytes(kernel, backend)
    if data is not None:
        write_bytes(path, data)
    kernel.extra["disk_cache"] = "miss"
    return kernel
