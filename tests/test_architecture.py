"""The import rules of DESIGN.md section 4, checked on the package's source.

Every module of ``workbench`` is parsed with :mod:`ast`; every ``import`` and ``from ...
import`` of a workbench module (at module level and inside functions, relative or absolute)
is an edge from the importing file to the imported file (a package counts as its
``__init__.py``; ``from pkg import name`` is an edge to ``pkg.name`` when that is a module,
else to ``pkg``). The test fails, naming ``file:line`` and the rule, on

- an edge between parts that the rules do not allow (:data:`ALLOWED`);
- an import cycle between files;
- a module over :data:`MAX_LINES` lines;
- the compiler (every part but Face) importing a notebook or plotting library
  (:data:`FACE_ONLY_LIBRARIES`).

The one exception (:data:`EXCEPTION`): ``load_ipython_extension`` in ``workbench/__init__.py``
imports the notebook package when IPython loads the extension. That import runs only after
``workbench`` is fully imported, so it is left out of the cycle check as well.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "workbench"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE
MAX_LINES = 500
FACE_ONLY_LIBRARIES = ("IPython", "ipywidgets", "matplotlib")

#: the part of each top-level name under ``workbench`` (the package itself is Runtime)
PARTS = {"notebook": "Face", "viz": "Face", "__main__": "Face", "course": "Face",
         "runtime": "Runtime", "cuda": "Runtime", "compiler": "Runtime", "tools": "Runtime",
         "knobs": "Runtime", "profiler": "Runtime",
         "testing": "Testing",
         "frontend": "Frontend", "language": "Frontend",
         "backends": "Backends", "passes": "Passes", "codegen": "Codegen", "ir": "IR",
         "layouts": "Layouts", "config": "Core", "errors": "Core"}

#: which parts each part may import (its own part always; Face anything)
ALLOWED = {
    "Face": None,
    "Testing": {"Runtime", "Frontend", "Backends", "IR", "Layouts", "Core"},
    "Runtime": {"Frontend", "Backends", "Passes", "IR", "Core"},
    "Backends": {"Codegen", "Passes", "IR", "Core"},
    "Frontend": {"IR", "Core"},
    "Passes": {"IR", "Layouts", "Core"},
    "Codegen": {"IR", "Layouts", "Passes", "Core"},
    "IR": {"Layouts", "Core"},
    "Layouts": {"Core"},
    "Core": set(),
}

#: (importing module, enclosing function, imported part): the one allowed exception
EXCEPTION = (PACKAGE, "load_ipython_extension", "Face")


@dataclass(frozen=True)
class Edge:
    """One import: ``target`` (a module name, or a third-party top-level name), the line,
    and the function it sits in (None at module level)."""

    target: str
    line: int
    function: str | None = None


# ------------------------------------------------------------------------------ parsing
def module_name(path: Path, root: Path = ROOT) -> str:
    """``workbench/runtime/jit.py`` -> ``workbench.runtime.jit``; a package's ``__init__.py``
    is the package."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def part_of(module: str) -> str:
    """The part (Face, Runtime, ...) a workbench module belongs to."""
    names = module.split(".")
    if len(names) == 1:
        return "Runtime"
    try:
        return PARTS[names[1]]
    except KeyError:
        raise AssertionError(f"{module}: not in any part; add it to PARTS") from None


def _function_of(tree: ast.AST) -> dict:
    """id(import node) -> name of the innermost function around it (None at module level)."""
    out: dict = {}

    def visit(node: ast.AST, func: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = func
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = child.name
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out[id(child)] = inner
            visit(child, inner)

    visit(tree, None)
    return out


def _resolve(name: str, modules: set) -> str | None:
    """The longest prefix of the dotted ``name`` that is one of ``modules``."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _from_base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(source: str, module: str, is_package: bool, modules: set) -> list[Edge]:
    """Every import in ``source`` (the text of ``module``): edges to workbench modules (in
    ``modules``) and to third-party top-level names."""
    tree = ast.parse(source)
    func_of = _function_of(tree)
    edges: dict = {}  # an ordered set: one edge per import line and target
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(module, is_package, node)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            if t == PACKAGE or t.startswith(PACKAGE + "."):
                resolved = _resolve(t, modules)
                if resolved is not None:
                    edges[Edge(resolved, node.lineno, func_of[id(node)])] = None
            else:
                edges[Edge(t.split(".")[0], node.lineno, func_of[id(node)])] = None
    return list(edges)


def scan(root: Path = ROOT) -> tuple[dict, dict, dict]:
    """``(edges, files, lines)`` of the package at ``root``: module -> list of Edge,
    module -> path relative to the repository, module -> line count."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))
             if "__pycache__" not in p.parts}
    modules = set(paths)
    edges, files, lines = {}, {}, {}
    for mod, path in paths.items():
        text = path.read_text(encoding="utf-8")
        edges[mod] = imports_of(text, mod, path.name == "__init__.py", modules)
        files[mod] = str(path.relative_to(root.parent))
        lines[mod] = len(text.splitlines())
    return edges, files, lines


# ------------------------------------------------------------------------------ the rules
def _is_exception(module: str, edge: Edge) -> bool:
    return (module, edge.function, part_of(edge.target)) == EXCEPTION


def direction_violations(edges: dict, files: dict) -> list[str]:
    """``file:line: A (part) -> B (part)`` for each import between parts the rules forbid."""
    out = []
    for mod, es in edges.items():
        src = part_of(mod)
        allowed = ALLOWED[src]
        for e in es:
            if e.target not in edges:
                continue
            dst = part_of(e.target)
            if allowed is None or dst == src or dst in allowed or _is_exception(mod, e):
                continue
            where = f" (in {e.function})" if e.function else ""
            out.append(f"{files[mod]}:{e.line}: {mod} ({src}) imports {e.target} ({dst})"
                       f"{where}; {src} may import only "
                       f"{', '.join(sorted(allowed)) or 'nothing of ours'}")
    return sorted(out)


def library_violations(edges: dict, files: dict) -> list[str]:
    """``file:line`` of each import of IPython, ipywidgets or matplotlib outside Face."""
    return sorted(f"{files[mod]}:{e.line}: {mod} ({part_of(mod)}) imports {e.target}; only "
                  f"Face (notebook/, viz/) may"
                  for mod, es in edges.items() if part_of(mod) != "Face"
                  for e in es if e.target in FACE_ONLY_LIBRARIES)


def _strongly_connected(graph: dict) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of ``graph`` (node -> successors)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    comps = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, succ = work[-1]
            nxt = next(succ, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                comps.append(sorted(comp))
    return comps


def cycles(edges: dict, files: dict) -> list[str]:
    """One line per import cycle between files: the files in it and each import that closes
    it (``file:line -> module``)."""
    graph = {m: {e.target for e in es if e.target in edges and e.target != m
                 and not _is_exception(m, e)} for m, es in edges.items()}
    out = []
    for comp in _strongly_connected(graph):
        if len(comp) < 2:
            continue
        members = set(comp)
        links = sorted(f"{files[m]}:{e.line} -> {e.target}" for m in comp for e in edges[m]
                       if e.target in members and e.target != m and not _is_exception(m, e))
        out.append(f"import cycle between {', '.join(comp)}: " + "; ".join(links))
    return out


def big_modules(lines: dict, files: dict) -> list[str]:
    """Modules over :data:`MAX_LINES` lines."""
    return sorted(f"{files[m]}: {n} lines (at most {MAX_LINES})" for m, n in lines.items()
                  if n > MAX_LINES)


def check(edges: dict, files: dict, lines: dict) -> list[str]:
    """Every broken rule, one line each (empty when the package follows the rules)."""
    return (direction_violations(edges, files) + library_violations(edges, files)
            + cycles(edges, files) + big_modules(lines, files))


# ------------------------------------------------------------------------------ the tests
@pytest.fixture(scope="module")
def package():
    return scan()


def test_every_module_is_in_a_part(package):
    edges, _, _ = package
    assert len(edges) > 50
    for mod in edges:
        assert part_of(mod) in ALLOWED


def test_imports_point_the_allowed_way(package):
    problems = direction_violations(package[0], package[1])
    assert not problems, "imports against DESIGN.md section 4:\n" + "\n".join(problems)


def test_the_compiler_never_imports_notebook_or_plotting_libraries(package):
    problems = library_violations(package[0], package[1])
    assert not problems, "\n".join(problems)


def test_no_import_cycles(package):
    problems = cycles(package[0], package[1])
    assert not problems, "\n".join(problems)


def test_no_module_over_the_size_limit(package):
    problems = big_modules(package[2], package[1])
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------ self-tests
def _synthetic(tmp_path: Path, files: dict) -> Path:
    root = tmp_path / PACKAGE
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_checker_finds_a_wrong_direction_a_cycle_a_library_and_a_big_file(tmp_path):
    root = _synthetic(tmp_path, {
        "__init__.py": "def load_ipython_extension(ip):\n    from .notebook import x\n",
        "notebook/__init__.py": "import workbench\nx = 1\n",
        "codegen/__init__.py": "",
        "codegen/cpu.py": "def f():\n    from ..backends.cpu import run\n",
        "backends/__init__.py": "",
        "backends/cpu.py": "from workbench.codegen import cpu\nrun = 1\n",
        "ir/__init__.py": "from . import a\n",
        "ir/a.py": "from .b import y\nimport matplotlib.pyplot\n",
        "ir/b.py": "from workbench.ir.a import z\n" + "y = 1\n" * MAX_LINES,
    })
    edges, files, lines = scan(root)
    assert Edge("workbench.codegen.cpu", 1) in edges["workbench.backends.cpu"]
    assert Edge("workbench.backends.cpu", 2, "f") in edges["workbench.codegen.cpu"]
    problems = check(edges, files, lines)
    text = "\n".join(problems)
    assert ("workbench/codegen/cpu.py:2: workbench.codegen.cpu (Codegen) imports "
            "workbench.backends.cpu (Backends) (in f)") in text
    assert "workbench/ir/a.py:2: workbench.ir.a (IR) imports matplotlib" in text
    assert any(p.startswith("import cycle between workbench.ir.a, workbench.ir.b:")
               for p in problems)
    assert any(p.startswith("import cycle between workbench.backends.cpu, "
                            "workbench.codegen.cpu:") for p in problems)
    assert f"workbench/ir/b.py: {MAX_LINES + 1} lines" in text
    # the load_ipython_extension exception: neither a wrong direction nor a cycle
    assert not any("workbench/__init__.py" in p for p in problems)
    assert len(problems) == 5, text


def test_checker_accepts_a_package_that_follows_the_rules(tmp_path):
    root = _synthetic(tmp_path, {
        "__init__.py": "from .runtime import jit\n",
        "runtime/__init__.py": "from .jit import jit\n",
        "runtime/jit.py": "from ..config import X\n\ndef jit():\n"
                          "    from workbench.backends import get\n",
        "backends/__init__.py": "def get():\n    from ..codegen import emit\n",
        "codegen/__init__.py": "from ..ir import core\nemit = 1\n",
        "ir/__init__.py": "",
        "ir/core.py": "import numpy\n",
        "config.py": "import os\nX = 1\n",
        "viz/__init__.py": "import matplotlib\nfrom workbench import runtime\n",
    })
    assert check(*scan(root)) == []


def test_a_function_named_like_the_exception_elsewhere_is_not_exempt(tmp_path):
    root = _synthetic(tmp_path, {
        "__init__.py": "",
        "runtime/__init__.py": "def load_ipython_extension(ip):\n    from ..notebook import x\n",
        "notebook/__init__.py": "x = 1\n",
    })
    problems = check(*scan(root))
    assert len(problems) == 1 and "workbench/runtime/__init__.py:2:" in problems[0]
