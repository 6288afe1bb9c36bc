"""The ``%%tilekernel`` option line: parsing into :class:`CellOptions`, and the usage text."""
from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field

DEFAULT_VIEW_TARGET = "cuda:90"

USAGE = """\
%%tilekernel [--target T] [--stages S1,S2,...] [--signature "SIG"] [-D NAME=VALUE ...]
             [--num-warps N] [--num-stages N] [--kernel NAME] [--launch "EXPR"]
             [--passes STAGE] [--bench "EXPR"] [--compare triton] [--help]

Defines the @jit kernels of the cell in your namespace and shows the kernel's source and its
compiled stages side by side, lines coloured by the source line they came from.

  --target T         which pipeline's stages to show: cuda:90 (default), cuda:80, cpu,
                     interpreter. Launches still run wherever their arrays live.
  --stages S,...     the IR panes to show (the source pane is always shown), e.g. ttir,ttgir,ptx.
                     cuda: ttir ttgir llir ptx [sass]; cpu: ttir llir asm.
  --signature SIG    one comma-separated string with an entry per non-constexpr parameter, as
                     workbench.compile takes them: "*fp32:16,*fp32:16,i32" (":16" = divisible
                     by 16); a tuple parameter in parentheses: "(*fp32, i32),*fp32".
  -D NAME=VALUE      a constexpr parameter (repeatable); VALUE is evaluated in your namespace.
  --num-warps N      warps per program (default 4).
  --num-stages N     software pipelining depth (default 3).
  --kernel NAME      which kernel to show when the cell defines several (default: the last).
  --launch EXPR      after defining the kernels, evaluate EXPR in your namespace, e.g.
                     "add[(4,)](x, y, out, n, BLOCK=256)", and show the stages of the
                     specialisation it compiled (recompiled for --target when it ran elsewhere).
  --passes STAGE     also show STAGE (e.g. ttir) pass by pass, each pass diffed with the last.
  --bench EXPR       time the launch EXPR ("add[(64,)](x, y, out, n, BLOCK=1024)") with do_bench
                     and plot it on the roofline of this machine's measured ceilings (the CPU's
                     without a GPU), FLOPs and bytes counted from the IR; the stages shown are
                     the launch's when neither --launch nor --signature is given.
  --compare triton   also compile the same specialisation with real Triton 3.6 (cuda targets;
                     pip install "tile-workbench[triton]") and show its stages beside ours
                     (--stages picks them; default ttgir,ptx), every difference in layouts,
                     convert_layout count, shared bytes, barriers and vector widths marked.
  -h, --help         this text.

Without --signature or --launch the cell only defines its kernels and shows their source."""


class OptionsError(ValueError):
    """The option line could not be parsed; the message says why."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # never sys.exit inside a notebook kernel
        raise OptionsError(message)


@dataclass
class CellOptions:
    """Parsed ``%%tilekernel`` options (see :data:`USAGE`). ``target`` is None when not given
    (the view then uses :data:`DEFAULT_VIEW_TARGET`)."""

    target: str | None = None
    stages: list[str] | None = None
    signature: list | None = None  # type strings; tuples for tuple-typed parameters
    defines: list[tuple[str, str]] = field(default_factory=list)
    num_warps: int | None = None
    num_stages: int | None = None
    kernel: str | None = None
    launch: str | None = None
    passes: str | None = None
    bench: str | None = None
    compare: str | None = None
    help: bool = False

    @property
    def view_target(self) -> str:
        """The target whose stages are shown."""
        return self.target or DEFAULT_VIEW_TARGET


def _parser() -> _Parser:
    p = _Parser(prog="%%tilekernel", add_help=False, allow_abbrev=False)
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("--target")
    p.add_argument("--stages")
    p.add_argument("--signature")
    p.add_argument("-D", "--define", action="append", default=[])
    p.add_argument("--num-warps", type=int)
    p.add_argument("--num-stages", type=int)
    p.add_argument("--kernel")
    p.add_argument("--launch")
    p.add_argument("--passes")
    p.add_argument("--bench")
    p.add_argument("--compare")
    return p


def split_list(text: str) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``."""
    return [s.strip() for s in text.split(",") if s.strip()]


def _signature_leaf(text: str):
    """One element of a signature: a type string, or inside a tuple a Python literal
    (``None``, ``4``) that becomes a constexpr element."""
    import ast
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, (int, float, bool, type(None))) else text


def split_signature(text: str) -> list:
    """``--signature``'s entries: ``"*fp32:16, (*fp32, i32), i32"`` ->
    ``["*fp32:16", ("*fp32", "i32"), "i32"]``. A parenthesised group is a tuple-typed
    parameter, as a Python tuple of entries in Triton's ``ASTSource(signature=...)``; groups
    nest, and a literal inside one (``None``, ``4``) is a constexpr element. Raises
    OptionsError for unbalanced parentheses or an empty element inside a group."""
    pos = 0

    def group(depth: int) -> list:
        nonlocal pos
        items: list = []
        word, closed = "", False  # closed: a ( ) group ended the current element
        while pos < len(text):
            c = text[pos]
            pos += 1
            if c == "(":
                if word.strip() or closed:
                    raise OptionsError(f"--signature: '(' after {word.strip() or ')'!r}")
                items.append(tuple(group(depth + 1)))
                closed = True
            elif c == ")" and depth == 0:
                raise OptionsError("--signature: ')' without its '('")
            elif c in ",)":
                if not closed and not (c == ")" and not word.strip()):  # "()", "(i32,)"
                    _element(items, word.strip(), depth)
                if c == ")":
                    return items
                word, closed = "", False
            elif closed and not c.isspace():
                raise OptionsError(f"--signature: {c!r} right after a ')'")
            else:
                word += c
        if depth:
            raise OptionsError("--signature: a '(' is not closed")
        if not closed and word.strip():
            items.append(word.strip())
        return items

    return group(0)


def _element(items: list, word: str, depth: int) -> None:
    if word:
        items.append(_signature_leaf(word) if depth else word)
    elif depth:
        raise OptionsError("--signature: an empty element inside ( )")


def parse_options(line: str) -> CellOptions:
    """Parse the magic's option line. Raises :class:`OptionsError` with a one-line reason for
    unknown options, missing values, stray words or a malformed ``-D``."""
    try:
        argv = shlex.split(line)
    except ValueError as e:
        raise OptionsError(f"cannot split the option line: {e}") from None
    ns = _parser().parse_args(argv)
    defines = []
    for d in ns.define:
        name, eq, value = d.partition("=")
        if not eq or not name.strip().isidentifier() or not value.strip():
            raise OptionsError(f"-D expects NAME=VALUE, got {d!r}")
        defines.append((name.strip(), value.strip()))
    for flag, v in (("--num-warps", ns.num_warps), ("--num-stages", ns.num_stages)):
        if v is not None and v < 1:
            raise OptionsError(f"{flag} must be a positive integer, got {v}")
    if ns.passes is not None and ns.passes not in ("ttir", "ttgir"):
        raise OptionsError(f"--passes takes ttir or ttgir (the stages built by passes), "
                           f"got {ns.passes!r}")
    if ns.compare is not None and ns.compare != "triton":
        raise OptionsError(f"--compare takes triton (the one compiler to compare with), "
                           f"got {ns.compare!r}")
    return CellOptions(
        target=ns.target, stages=split_list(ns.stages) if ns.stages else None,
        signature=split_signature(ns.signature) if ns.signature is not None else None,
        defines=defines, num_warps=ns.num_warps, num_stages=ns.num_stages, kernel=ns.kernel,
        launch=ns.launch, passes=ns.passes, help=ns.help, bench=ns.bench,
        compare=ns.compare)
