"""Syntax highlighting of every stage, one HTML fragment per line.

Pygments (2.20) has lexers for Python, LLVM IR, PTX and GNU assembly but none for MLIR or SASS,
so this module defines two small ones: :class:`MlirLexer` (Triton's ``ttir``/``ttgir`` text:
op names, SSA values, types, layout aliases, ``loc(...)``) and :class:`SassLexer` (``nvdisasm``
output: address comments, predicates, opcodes, registers, constant banks).
"""
from __future__ import annotations

import html

from pygments import lex
from pygments.filter import simplefilter
from pygments.lexer import Lexer, RegexLexer, bygroups
from pygments.lexers import GasLexer, LlvmLexer, PtxLexer, PythonLexer
from pygments.token import (
    STANDARD_TYPES,
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Token,
    Whitespace,
)


class MlirLexer(RegexLexer):
    """MLIR generic and custom assembly as Triton prints it (``tt.``, ``ttg.``, ``arith.``,
    ``scf.``, ``math.`` dialects, ``#ttg.blocked<...>`` encodings, ``loc(...)``)."""

    name = "MLIR (Triton)"
    aliases = ["tt-mlir"]
    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r'"(\\\\|\\"|[^"])*"', String),
            (r"#loc\d*", Comment.Preproc),
            (r"#[A-Za-z_][\w.$]*", Name.Decorator),
            (r"%[\w.$-]+(?:#\d+)?(?::\d+)?", Name.Variable),
            (r"@[\w.$]+", Name.Function),
            (r"\^[\w.$]+", Name.Label),
            (r"!tt\.ptr|![\w.]+", Keyword.Type),
            (r"\b(tensor|memref|vector|index|none|i\d+|f16|bf16|f32|f64|f8E\w+)\b",
             Keyword.Type),
            (r"\b(loc|to|step|iter_args|attributes|dense|true|false|unknown|module|"
             r"private|public|noinline)\b", Keyword.Reserved),
            (r"[a-z_][\w]*(\.[a-z_][\w]*)+", Keyword),
            (r"-?0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d*(e[+-]?\d+)?|-?\d+e[+-]?\d+|inf|nan", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"->|[=:<>x*]", Operator),
            (r"[(){}\[\],?]", Punctuation),
            (r"[A-Za-z_][\w]*", Name),
            (r".", Text),
        ],
    }


class SassLexer(RegexLexer):
    """NVIDIA SASS as ``nvdisasm``/``cuobjdump -sass`` print it."""

    name = "SASS"
    aliases = ["sass"]
    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"/\*[0-9a-fA-F]{4,}\*/", Comment.Special),
            (r"/\*.*?\*/", Comment.Multiline),
            (r"//.*?$", Comment.Single),
            (r"(\.[A-Za-z_][\w$.]*)(:)", bygroups(Name.Label, Punctuation)),
            (r"\.[A-Za-z_][\w$.]*", Keyword.Pseudo),
            (r"@!?U?P[0-6T]\b", Keyword.Pseudo),
            (r"\b(R\d+|RZ|UR\d+|URZ|U?P[0-6]|U?PT|SR_[A-Z_.0-9]+|SRZ|B\d+)\b", Name.Variable),
            (r"\b[cC]\[0x[0-9a-fA-F]+\]\[0x[0-9a-fA-F]+\]", Name.Constant),
            (r"(?<![\w.])[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*\b", Keyword),
            (r"-?0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d*(e[+-]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"[\[\](){},;|~!+\-]", Punctuation),
            (r"[A-Za-z_$][\w$]*", Name),
            (r".", Text),
        ],
    }


_LEXERS = {
    "source": PythonLexer, "python": PythonLexer,
    "ttir": MlirLexer, "ttgir": MlirLexer, "mlir": MlirLexer,
    "llir": LlvmLexer, "ptx": PtxLexer, "asm": GasLexer, "sass": SassLexer,
}


@simplefilter
def _errors_as_text(self, lexer, stream, options):
    """Pygments' lexers lag behind LLVM and PTX syntax (``range(...)`` attributes, ``or
    disjoint``): what they cannot lex is shown as plain text, never as an error box."""
    for ttype, value in stream:
        yield (Token.Text if ttype in Token.Error else ttype), value


def lexer_for(stage: str) -> Lexer:
    """The pygments lexer used for a stage name (``source``, ``ttir``, ``ttgir``, ``llir``,
    ``ptx``, ``asm``, ``sass``); unknown stages get a plain-text lexer (no colours). Tokens a
    lexer does not know are shown as plain text."""
    cls = _LEXERS.get(stage)
    if cls is None:
        from pygments.lexers.special import TextLexer
        return TextLexer(stripnl=False, ensurenl=False)
    lexer = cls(stripnl=False, ensurenl=False, stripall=False)
    lexer.add_filter(_errors_as_text())
    return lexer


def _css_class(ttype) -> str:
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def _styled_classes(style: str = "default") -> frozenset:
    """Token classes the pygments ``style`` gives any colour or font to; the others are
    emitted as bare text, which keeps big stages (thousands of LLVM lines) small."""
    from pygments.styles import get_style_by_name
    st = get_style_by_name(style)
    out = set()
    for ttype, d in st:
        if d["color"] or d["bold"] or d["italic"] or d["underline"] or d["bgcolor"] \
                or d["border"]:
            out.add(_css_class(ttype))
    out.discard("w")  # whitespace: nothing to see
    return frozenset(out)


_STYLED = _styled_classes()


def highlight_lines(lines: list[str], stage: str) -> list[str]:
    """Highlight ``lines`` (one string per line, no newlines) as one text, so the lexer keeps
    its state across lines, and return one HTML fragment per input line: escaped text in
    ``<span class="...">`` with pygments' short token classes (``k``, ``nv``, ``c1``...);
    tokens the default style leaves uncoloured stay bare, and neighbours of one class share
    a span. The result has exactly ``len(lines)`` entries."""
    out: list[list[list]] = [[]]  # per line: [class, text] runs
    text = "\n".join(lines)
    for ttype, value in lex(text, lexer_for(stage)):
        cls = _css_class(ttype)
        cls = cls if cls in _STYLED else ""
        for i, part in enumerate(value.split("\n")):
            if i > 0:
                out.append([])
            if not part:
                continue
            runs = out[-1]
            if runs and runs[-1][0] == cls:
                runs[-1][1] += part
            else:
                runs.append([cls, part])
    out = out[:len(lines)] + [[] for _ in range(len(lines) - len(out))]
    result = []
    for runs in out:
        result.append("".join(
            f'<span class="{c}">{html.escape(t, quote=False)}</span>' if c
            else html.escape(t, quote=False) for c, t in runs))
    return result


def style_css(scope: str, style: str = "default") -> str:
    """The pygments colour rules for token classes under the CSS selector ``scope``."""
    from pygments.formatters import HtmlFormatter
    rules = HtmlFormatter(style=style).get_style_defs(scope)
    # keep token colours only: drop the formatter's own background and line-number rules
    keep = [r for r in rules.splitlines()
            if not any(k in r for k in ("linenos", ".hll", "background:", "pre {"))]
    return "\n".join(keep)
