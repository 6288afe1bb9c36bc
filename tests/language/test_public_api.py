"""The public surface a Triton 3.6 user reaches, compared with the installed Triton, name by
name: the modules (``triton``, ``triton.language`` and its submodules, ``extra.cuda``,
``extra.libdevice``, ``extra.hip``, ``testing``, ``runtime``, ``knobs``, ``compiler``...), the
attributes of ``tl.tensor`` (as kernels reach them), ``tl.constexpr`` and the dtypes, and the
parameter names and defaults of the language functions. What we leave out on purpose is in
:data:`EXCLUDED` with the reason, and each entry must still be missing (so the list cannot go
stale). The behaviour of the names added with this file is checked in
``test_public_api_behaviour.py``."""
from __future__ import annotations

import enum
import importlib
import inspect
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

triton = pytest.importorskip("triton", reason="real Triton is not installed: nothing to compare")

MODULES = ["", ".language", ".language.core", ".language.math", ".language.random",
           ".language.standard", ".language.extra", ".language.extra.cuda",
           ".language.extra.libdevice", ".language.extra.cuda.libdevice",
           ".language.extra.hip", ".language.extra.hip.libdevice", ".language.extra.hip.utils",
           ".language.target_info",
           ".testing", ".runtime", ".runtime.errors", ".runtime.autotuner", ".runtime.driver",
           ".knobs", ".tools", ".tools.tensor_descriptor", ".compiler", ".compiler.errors",
           ".errors"]


def _group(reason: str, module: str, names: str) -> dict:
    return {(module, n): reason for n in names.split()}


#: (module suffix, name) -> why the workbench does not offer it
EXCLUDED: dict = {
    **_group("a module Triton's file imports for its own use, not API", ".language.math",
             "core"),
    **_group("a module Triton's file imports for its own use, not API", ".language.random",
             "jit math tl"),
    **_group("a module or decorator Triton's file imports for its own use, not API",
             ".language.standard", "core jit math constexpr_function"),
    **_group("a module Triton's file imports for its own use, not API",
             ".language.extra.cuda.libdevice", "core"),
    **_group("a module Triton's file imports for its own use, not API",
             ".language.extra.hip.libdevice", "core"),
    **_group("a module Triton's file imports for its own use, not API",
             ".language.extra.hip.utils", "core"),
    **_group("a module Triton's file imports for its own use, not API", ".testing",
             "runtime tl"),
    **_group("Triton's typing helper and builtin marker, not language API", ".language.core",
             "T TRITON_BUILTIN"),
    **_group("Triton's typing helper", ".language.math", "T"),
    **_group("Triton internals: the C++ IR bindings, knobs and the JIT's base class",
             ".language.core", "ir knobs JITCallable get_primitive_bitwidth"),
    **_group("pkgutil loop variables of Triton's extra/__init__.py (backend discovery)",
             ".language.extra", "is_pkg module module_name modules"),
    **_group("Triton's remote (Redis) cache and C launcher builder: the workbench keeps one "
             "local cache and builds no C code", ".runtime",
             "RedisRemoteCacheBackend RemoteCacheBackend build cache"),
    **_group("Triton internals of the autotuner module (its imports)", ".runtime.autotuner",
             "JITFunction PTXASError driver get_cache_invalidating_env_vars "
             "get_cache_manager knobs triton_key"),
    **_group("Triton's driver plumbing (backend plug-ins); driver.active is provided",
             ".runtime.driver", "DriverBase DriverConfig backends"),
    **_group("the driver module Triton's target_info imports", ".language.target_info",
             "driver"),
    **_group("Triton's knob machinery (descriptor classes, environment helpers, hook "
             "types), not settings", ".knobs",
             "BuildImpl ClassType CompilationListener CompileTimes F GetType HookChain "
             "InitHandleHook JITHook JITHookCompileInfo LaunchHook PipelineStagesHook SetType "
             "TYPE_CHECKING amd_knobs build_knobs env_base env_bool env_class env_int "
             "env_nvidia_tool env_opt_bool env_opt_str env_str env_str_callable_default "
             "getenv getenv_bool knobs_type propagate_env proton_knobs redis_knobs setenv "
             "toenv"),
    **_group("knob sets of backends and tools the workbench lacks (AMD, proton, the C "
             "launcher build, Redis); reading one raises an AttributeError saying so",
             ".knobs", "amd proton build redis"),
    **_group("Triton's C++ LinearLayout class; the workbench's linear layouts, with their own "
             "Python API, are workbench.layouts", ".tools", "LinearLayout"),
    **_group("imported there by Triton for its own use", ".tools.tensor_descriptor",
             "validate_block_shape"),
    **_group("Triton's compiler internals (IR sources from files, backend factory, cache "
             "keys); workbench.compile takes an ASTSource or a kernel", ".compiler",
             "IRSource LazyDict compiler get_cache_key make_backend"),
}


def _imp(name: str):
    return importlib.import_module(name)


def _tritons_own(module) -> set:
    """Public names of a Triton module that are Triton's (not typing/stdlib imports)."""
    out = set()
    for n in dir(module):
        if n.startswith("_"):
            continue
        obj = getattr(module, n)
        home = obj.__name__ if isinstance(obj, types.ModuleType) else \
            getattr(obj, "__module__", None)
        if not isinstance(home, str) or home.startswith("triton"):
            out.add(n)
    return out


@pytest.fixture(scope="module")
def tritons_names() -> dict:
    """``{suffix: public names}`` of Triton's modules as a fresh process sees them, importing
    them in the order of :data:`MODULES`: in this process, tests that ran real Triton's
    compiler have imported submodules (``triton.experimental``,
    ``triton.compiler.code_generator``) that then show up in ``dir()``."""
    root = Path(__file__).resolve().parents[2]
    code = ("import json, sys\n"
            "from tests.language.test_public_api import MODULES, _imp, _tritons_own\n"
            "print(json.dumps({s: sorted(_tritons_own(_imp('triton' + s))) "
            "for s in MODULES}))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("suffix", MODULES, ids=lambda s: "triton" + s)
def test_every_public_name_is_provided(suffix, tritons_names):
    ours = _imp("workbench" + suffix)
    missing = {n for n in tritons_names[suffix] if not hasattr(ours, n)}
    excluded = {n for (m, n) in EXCLUDED if m == suffix}
    assert sorted(missing - excluded) == [], f"triton{suffix} names missing from workbench"
    assert sorted(excluded - missing) == [], "provided now: drop them from EXCLUDED"


def test_submodules_are_reachable_as_attributes_after_import():
    import workbench
    for name in ("language", "testing", "runtime", "knobs", "tools", "compiler", "errors"):
        assert isinstance(getattr(workbench, name), types.ModuleType), name
    import workbench.language as tl
    assert tl.core.float32 is tl.float32 and tl.core.dot is tl.dot
    assert tl.extra.hip.libdevice.exp is not None and tl.extra.cuda.libdevice is not None
    with pytest.raises(AttributeError):
        tl.core.no_such_name  # noqa: B018


# -- classes ---------------------------------------------------------------------------------
#: attributes of Triton's classes that are Triton's internals (IR plumbing)
_CLASS_INTERNALS = {"tensor_descriptor": {"block_shape", "dtype"}}


def _tensor_attrs_in_kernels() -> set:
    """What ``x.<name>`` reaches on a tile inside a kernel: the frontend's method tables and
    the class's own attributes."""
    import workbench.language as tl
    from workbench.frontend import expressions
    return (set(expressions._TENSOR_ATTRS) | set(expressions._TENSOR_BUILTIN_METHODS)
            | {"T"} | set(dir(tl.tensor)))


@pytest.mark.parametrize("name", ["tensor", "constexpr", "dtype", "pointer_type", "block_type",
                                  "tuple_type", "tuple", "slice"])
def test_every_attribute_of_the_language_classes(name):
    import triton.language as ttl

    import workbench.language as tl
    theirs = {n for n in dir(getattr(ttl, name)) if not n.startswith("_")}
    if name == "constexpr":  # the operators Python calls by name on a constexpr
        theirs |= {"__getitem__", "__iter__", "__not__", "__rgt__", "__rge__", "__rlt__",
                   "__rle__"}
    ours = _tensor_attrs_in_kernels() if name == "tensor" else set(dir(getattr(tl, name)))
    missing = theirs - ours - _CLASS_INTERNALS.get(name, set())
    assert sorted(missing) == []


def test_dtype_answers_as_tritons_for_every_dtype():
    """Each dtype's questions and figures against Triton's own objects (names differ on
    purpose: ours ``float32``, Triton's ``fp32``; str() agrees)."""
    import triton.language as ttl

    import workbench.language as tl
    names = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "bfloat16", "float32", "float64", "float8e4nv", "float8e5",
             "float8e4b15", "float8e5b16"]
    questions = [n for n in dir(ttl.dtype) if n.startswith("is_") and n not in
                 ("is_dtype", "is_void")]
    for n in names:
        a, b = getattr(ttl, n), getattr(tl, n)
        assert str(a) == str(b) and a.mangle() == b.mangle(), n
        assert a.primitive_bitwidth == b.primitive_bitwidth and a.itemsize == b.itemsize, n
        assert int(a.kind().value) == int(b.kind()), n
        for q in questions:
            assert getattr(a, q)() == getattr(b, q)(), (n, q)
        if a.is_int():
            assert a.get_int_max_value() == b.get_int_max_value(), n
            assert a.get_int_min_value() == b.get_int_min_value(), n
            assert a.int_signedness.value == b.int_signedness, n
    p, bt = tl.pointer_type(tl.float16), tl.block_type(tl.int8, [4, 8])
    assert p.mangle() == ttl.pointer_type(ttl.float16).mangle()
    assert bt.mangle() == ttl.block_type(ttl.int8, [4, 8]).mangle()
    assert tl.dtype.is_dtype("fp32") and not tl.dtype.is_dtype("float33")
    assert tl.float32.kind() == tl.dtype.KIND.FLOATING and tl.float32.cache_key_part == "fp32"


# -- signatures ------------------------------------------------------------------------------
#: language functions whose parameters differ from Triton's on purpose
SIGNATURE_DIFFERENCES = {
    "cumprod": "takes dtype= as cumsum does (Triton's cumprod has none)",
    "str_to_ty": "c (Triton's IR context) is optional: no context is needed here",
}


def _params(fn) -> list:
    fn = getattr(fn, "fn", fn)  # Triton's @jit functions
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name.startswith("_"):
            continue
        d = p.default
        d = getattr(d, "value", d) if type(d).__name__ == "constexpr" else d
        if isinstance(d, enum.Enum) or type(d).__name__ == "PROPAGATE_NAN":  # Triton's enums
            d = int(d.value)
        if type(d).__name__ == "dtype":  # each side's own dtype objects: compare spellings
            d = str(d)
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):  # the name of *args is no API
            out.append(("*" if p.kind == p.VAR_POSITIONAL else "**", None))
        else:
            out.append((p.name, "required" if d is inspect.Parameter.empty else d))
    return out


@pytest.mark.parametrize("suffix", [".language", ".language.math", ".language.extra.cuda",
                                    ".language.random", ".language.standard"])
def test_language_functions_take_tritons_parameters(suffix):
    theirs, ours = _imp("triton" + suffix), _imp("workbench" + suffix)
    wrong = {}
    for n in sorted(_tritons_own(theirs)):
        f = getattr(theirs, n)
        if inspect.isclass(f) or isinstance(f, types.ModuleType) or not callable(f) or \
                type(f).__name__ == "constexpr" or n in SIGNATURE_DIFFERENCES or \
                (suffix, n) in EXCLUDED:
            continue
        try:
            want = _params(f)
        except (TypeError, ValueError):
            continue
        got = _params(getattr(ours, n))
        if got != want:
            wrong[n] = f"Triton {want}, ours {got}"
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in wrong.items())


#: names of Triton's tl.extra.libdevice that only its AMD backend compiles (refused here at
#: the kernel's line, as on Triton's NVIDIA backend)
AMD_ONLY_LIBDEVICE = {"fast_tanhf": "ROCm's device library only"}


def test_libdevice_functions_take_tritons_number_of_arguments():
    """libdevice functions take positional arguments (``*args`` here, ``arg0, arg1...`` in
    Triton): each must accept as many as Triton's does, checked at compile time against its
    table of dtype tuples."""
    import triton.language.extra.libdevice as theirs

    from workbench.language.extra.libdevice import TABLE
    arity = {name: {len(args) for args, _symbol, _ret in entries}
             for name, entries in TABLE.items()}
    for n in sorted(_tritons_own(theirs)):
        f = getattr(theirs, n)
        if not callable(f) or isinstance(f, types.ModuleType) or n in AMD_ONLY_LIBDEVICE:
            continue
        want = len([p for p in inspect.signature(getattr(f, "fn", f)).parameters
                    if not p.startswith("_")])
        assert want in arity.get(n, set()), (n, want, arity.get(n))


#: host entry points whose parameters differ from Triton's on purpose
HOST_SIGNATURE_DIFFERENCES = {
    "CompilationError": "built from our source location, not from Triton's (src, node)",
    "InterpreterError": "our interpreter compiles first: it is CompilationError",
    "Autotuner": "built by @autotune, which passes the kernel's names (Triton: arg_names=)",
    "Heuristics": "built by @heuristics, likewise",
    "CompiledKernel": "built by the backends, not from Triton's cache files",
    "compile": "takes a kernel (or an ASTSource) and a target string or GPUTarget, and "
               "the options as keywords",
}


@pytest.mark.parametrize("suffix", ["", ".testing", ".runtime", ".knobs", ".compiler",
                                    ".tools.tensor_descriptor", ".language.extra.cuda"])
def test_host_entry_points_take_tritons_keywords(suffix):
    """Every keyword Triton's host function or class takes is taken here too (ours may take
    more)."""
    theirs_mod, ours_mod = _imp("triton" + suffix), _imp("workbench" + suffix)
    wrong = {}
    for n in sorted(_tritons_own(theirs_mod)):
        a, b = getattr(theirs_mod, n), getattr(ours_mod, n, None)
        if b is None or isinstance(a, types.ModuleType) or not callable(a) or \
                n in HOST_SIGNATURE_DIFFERENCES:
            continue
        try:
            want = _params(a.__init__ if inspect.isclass(a) else a)
            got = _params(b.__init__ if inspect.isclass(b) else b)
        except (TypeError, ValueError):
            continue
        if ("**", None) in got:
            continue
        missing = {p for p, _ in want if p not in ("*", "**")} - {p for p, _ in got}
        if missing:
            wrong[n] = sorted(missing)
    assert wrong == {}


@pytest.mark.parametrize("group", ["runtime", "compilation", "cache", "autotuning", "language",
                                   "nvidia"])
def test_every_knob_of_triton_is_a_knob_here_or_says_why_not(group):
    import triton.knobs as theirs_mod

    import workbench.knobs as ours_mod
    theirs, ours = getattr(theirs_mod, group), getattr(ours_mod, group)
    names = set(theirs.knob_descriptors)
    assert sorted(names - set(ours.knob_descriptors) - set(ours._absent)) == []
    for name in sorted(names & set(ours._absent)):
        with pytest.raises(AttributeError, match="has no meaning in the workbench"):
            getattr(ours, name)


#: attributes of Triton's JITFunction left out, with the reason
JIT_EXCLUDED = {
    "create_binder": "Triton's argument binder factory; binding is workbench.runtime.binding",
    "device_caches": None,  # provided
    "hash": "Triton's memo of cache_key (None until computed); read cache_key",
    "kernel": "Triton's unused slot (always None)",
    "type": "Triton's frontend type of a JIT function value",
    "used_global_vals": "filled by Triton's compile with the globals read; the workbench "
                        "keys compiles by the globals' values instead (kernel_hash)",
}


def test_jit_function_offers_tritons_attributes():
    import workbench

    @triton.jit
    def theirs(x_ptr, N: triton.language.constexpr):
        pass

    @workbench.jit
    def ours(x_ptr, N: triton.language.constexpr):
        pass

    names = {n for n in dir(theirs) if not n.startswith("_")}
    left_out = {n for n, why in JIT_EXCLUDED.items() if why}
    assert sorted(names - set(dir(ours)) - left_out) == []
    assert sorted(left_out - names) == []  # still Triton's
    for attr in ("arg_names", "constexprs", "starting_line_number", "raw_src", "module",
                 "is_gluon"):
        a, b = getattr(theirs, attr), getattr(ours, attr)
        a, b = (a(), b()) if callable(a) else (a, b)
        if attr == "starting_line_number":  # each its own decorator's line
            assert (a, b) == (inspect.getsourcelines(theirs.fn)[1],
                              inspect.getsourcelines(ours.fn)[1]) and b == a + 4
        elif attr == "raw_src":
            assert [line.replace("ours", "x") for line in b][1:] == \
                [line.replace("theirs", "x") for line in a][1:]
        else:
            assert a == b, attr
    assert ours.parse().body[0].name == "ours" and "EXCLUDED" in ours.get_capture_scope()
    assert len(ours.cache_key) == 64


def test_active_driver_offers_tritons_cuda_driver_methods():
    from triton.backends.driver import GPUDriver
    from triton.backends.nvidia.driver import CudaDriver

    import workbench
    active = workbench.runtime.driver.active
    wanted = {n for n in dir(CudaDriver) if not n.startswith("_")} | \
        {"get_current_device", "set_current_device", "get_current_stream", "utils"}
    left_out = {"assemble_tensormap_to_arg": "Triton's TMA plumbing, a no-op there too",
                "map_python_to_cpp_type": "Triton's C launcher generator"}
    assert sorted(wanted - set(dir(active)) - set(left_out)) == []
    assert sorted(set(left_out) - set(dir(CudaDriver)) - set(dir(GPUDriver))) == []


#: what Triton's CompiledKernel holds that ours does not, with the reason (its attributes are
#: set in __init__/_init_handles, so they are read from its source)
COMPILED_EXCLUDED = {
    "_run": "Triton's C launcher",
    "function": "the CUfunction handle: the workbench's CUDA launcher keeps it inside",
    "module": "the CUmodule handle: likewise",
    "kernel": "the binary: compiled.extra['cubin'] holds it on CUDA targets",
    "metadata_group": "Triton's cache files of the compile",
    "packed_metadata": "Triton's C launcher arguments",
    "n_max_threads": "not computed (the CUDA launcher checks the block size itself)",
    "launch_metadata": "the launch hooks get it from the JIT function's launch_metadata",
}


def test_compiled_kernel_offers_tritons_attributes(tmp_path):
    import re
    import sys

    from triton.compiler.compiler import CompiledKernel as Theirs

    import workbench
    src = inspect.getsource(Theirs)
    names = set(re.findall(r"self\.(\w+)\s*=", src)) | \
        {n for n in dir(Theirs) if not n.startswith("__")}
    (tmp_path / "ck_mod.py").write_text(
        "import workbench as wb\nimport workbench.language as tl\n\n\n@wb.jit\n"
        "def k(x_ptr, B: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, B), 1.0)\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import ck_mod
    finally:
        sys.path.remove(str(tmp_path))
    import numpy as np
    ours = ck_mod.k.warmup(np.zeros(16, np.float32), B=16, grid=(1,))
    assert isinstance(ours, workbench.CompiledKernel)
    missing = {n for n in names if not hasattr(ours, n)}
    assert sorted(missing - set(COMPILED_EXCLUDED)) == []
    assert sorted(set(COMPILED_EXCLUDED) - missing) == []  # still left out
