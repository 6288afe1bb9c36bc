"""Parser of Triton's textual layout attributes (TTGIR), e.g. copied from real Triton output.

Accepts ``#ttg.blocked``, ``#ttg.slice``, ``#ttg.nvidia_mma``, ``#ttg.dot_op``,
``#ttg.swizzled_shared``, ``#ttg.nvmma_shared`` and ``#ttg.linear``; the pre-3.2 prefix
``#triton_gpu.`` (with the old names ``mma`` and ``shared``); an ignored CTA tail
(``CTAsPerCGA``, ``CTASplitNum``, ``CTAOrder``); an optional leading ``#name =`` (an alias
definition line); and alias references such as ``parent = #blocked`` resolved through
``aliases``. Grammar from Triton's attribute printers/parsers (``lib/Dialect/TritonGPU/IR/
Dialect.cpp``).
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from .encodings import (
    BlockedLayout,
    DotOperandLayout,
    Encoding,
    LinearEncoding,
    MmaLayout,
    NVMMASharedLayout,
    SliceLayout,
    SwizzledSharedLayout,
)
from .errors import LayoutError
from .linear import LinearLayout

_TOKEN = re.compile(r"\s*(?:(?P<hash>#[A-Za-z_][\w.]*)|(?P<int>-?\d+)|(?P<ident>[A-Za-z_]\w*)"
                    r"|(?P<punct><\{|\}>|[\[\]=,<>{}]))")
_CTA_KEYS = {"CTAsPerCGA", "CTASplitNum", "CTAOrder"}
_PREFIXES = ("ttg", "triton_gpu")


class _Parser:
    def __init__(self, text: str, aliases: Mapping[str, Encoding] | None):
        self.text = text
        self.aliases = {(k if k.startswith("#") else "#" + k): v
                        for k, v in (aliases or {}).items()}
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise LayoutError(f"unexpected character {text[pos:].lstrip()[:1]!r} at column "
                                  f"{pos + 1} of layout text {text!r}")
            kind = m.lastgroup
            assert kind is not None  # every alternative of _TOKEN is a named group
            self.toks.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0

    # -- token helpers ---------------------------------------------------
    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else ("eof", "end of text", len(self.text))

    def next(self):
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, value: str, context: str):
        kind, val, pos = self.next()
        if val != value:
            raise LayoutError(f"expected {value!r} {context}, found {val!r} at column {pos + 1} "
                              f"of {self.text!r}")

    # -- grammar ---------------------------------------------------------
    def top(self) -> Encoding:
        # optional "#alias =" definition prefix
        if self.peek()[0] == "hash" and self.peek(1)[1] == "=":
            self.i += 2
        enc = self.encoding()
        kind, val, pos = self.peek()
        if kind != "eof":
            raise LayoutError(
                f"unexpected {val!r} at column {pos + 1} after the layout in {self.text!r}")
        return enc

    def encoding(self) -> Encoding:
        kind, val, pos = self.next()
        if kind != "hash":
            raise LayoutError(f"expected a layout starting with '#ttg.', found {val!r} at column "
                              f"{pos + 1} of {self.text!r}")
        if "." not in val:
            if val in self.aliases:
                return self.aliases[val]
            raise LayoutError(f"unknown layout alias {val!r}: pass aliases={{'{val}': ...}} "
                              f"(known: {sorted(self.aliases) or 'none'})")
        prefix, _, name = val[1:].partition(".")
        if prefix not in _PREFIXES:
            raise LayoutError(f"unknown dialect prefix '#{prefix}.' in {val!r}: expected '#ttg.'")
        if name == "shared_memory":
            raise LayoutError("#ttg.shared_memory is a memory space, not a layout")
        self.expect("<{", f"after {val}")
        params = self.params(val)
        return _build(name, params, val)

    def params(self, head: str) -> dict:
        out: dict = {}
        if self.peek()[1] == "}>":
            self.next()
            return out
        while True:
            kind, key, pos = self.next()
            if kind != "ident":
                raise LayoutError(f"expected a parameter name in {head}, found {key!r} at column "
                                  f"{pos + 1} of {self.text!r}")
            self.expect("=", f"after parameter {key!r} of {head}")
            if key in out:
                raise LayoutError(f"parameter {key!r} given twice in {head}")
            out[key] = self.value(key)
            kind, val, pos = self.next()
            if val == "}>":
                return out
            if val != ",":
                raise LayoutError(f"expected ',' or '}}>' after parameter {key!r} of {head}, found "
                                  f"{val!r} at column {pos + 1} of {self.text!r}")

    def value(self, key: str):
        kind, val, pos = self.peek()
        if val == "[":
            return self.list_(key)
        if kind == "int":
            self.next()
            return int(val)
        if kind == "ident" and val in ("true", "false"):
            self.next()
            return val == "true"
        if kind == "hash":
            return self.encoding()
        raise LayoutError(f"bad value {val!r} for parameter {key!r} at column {pos + 1} of "
                          f"{self.text!r}")

    def list_(self, key: str) -> list:
        self.expect("[", f"for {key}")
        items: list = []
        if self.peek()[1] == "]":
            self.next()
            return items
        while True:
            kind, val, pos = self.peek()
            if val == "[":
                items.append(self.list_(key))
            elif kind == "int":
                self.next()
                items.append(int(val))
            else:
                raise LayoutError(f"bad list element {val!r} in parameter {key!r} at column "
                                  f"{pos + 1} of {self.text!r}")
            kind, val, pos = self.next()
            if val == "]":
                return items
            if val != ",":
                raise LayoutError(f"expected ',' or ']' in parameter {key!r}, found {val!r} at "
                                  f"column {pos + 1} of {self.text!r}")


_SPECS = {
    # name: (required keys, optional keys)
    "blocked": (("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"), ()),
    "slice": (("dim", "parent"), ()),
    "nvidia_mma": (("versionMajor", "warpsPerCTA", "instrShape"), ("versionMinor",)),
    "dot_op": (("opIdx", "parent"), ("kWidth",)),
    "swizzled_shared": (("vec", "perPhase", "maxPhase", "order"), ("hasLeadingOffset",)),
    "nvmma_shared": (("swizzlingByteWidth", "transposed", "elementBitWidth"), ("fp4Padded",)),
    "linear": ((), ("register", "lane", "warp", "block")),
}
_OLD_NAMES = {"mma": "nvidia_mma", "shared": "swizzled_shared"}

_LISTS = {"sizePerThread", "threadsPerWarp", "warpsPerCTA", "order", "instrShape"}
_BOOLS = {"transposed", "fp4Padded", "hasLeadingOffset"}


_INTS = ("dim", "opIdx", "kWidth", "vec", "perPhase", "maxPhase", "versionMajor", "versionMinor",
         "swizzlingByteWidth", "elementBitWidth")


def _build(name: str, p: dict, head: str) -> Encoding:
    name = _OLD_NAMES.get(name, name)
    if name not in _SPECS:
        raise LayoutError(f"unsupported layout {head!r}: expected one of "
                          f"{', '.join('#ttg.' + n for n in _SPECS)}")
    _check_keys(name, p, head)
    _check_values(p, head)
    try:
        return _construct(name, p, head)
    except LayoutError as e:
        raise LayoutError(f"{e} (in {head})") from None


def _check_keys(name: str, p: dict, head: str) -> None:
    """Drop the CTA-level keys (one CTA only); raise for unknown or missing parameters."""
    required, optional = _SPECS[name]
    for key in list(p):
        if key in _CTA_KEYS:
            del p[key]
        elif key not in required and key not in optional:
            raise LayoutError(f"unknown parameter {key!r} in {head} (expected "
                              f"{', '.join(required + optional)})")
    for key in required:
        if key not in p:
            raise LayoutError(f"missing parameter {key!r} in {head}")


def _check_values(p: dict, head: str) -> None:
    """Raise LayoutError for a parameter value of the wrong kind (list, bool, int, layout)."""
    for key, v in p.items():
        if key in _LISTS and not (isinstance(v, list) and all(isinstance(x, int) for x in v)):
            raise LayoutError(f"{key} must be a list of integers like [1, 4], got {v!r} in {head}")
        if key in _BOOLS and not isinstance(v, bool):
            raise LayoutError(f"{key} must be true or false, got {v!r} in {head}")
        if key in _INTS and (isinstance(v, bool) or not isinstance(v, int)):
            raise LayoutError(f"{key} must be an integer, got {v!r} in {head}")
        if key == "parent" and not isinstance(v, Encoding):
            raise LayoutError(
                f"parent must be a layout (#ttg.... or an alias), got {v!r} in {head}")


def _construct(name: str, p: dict, head: str) -> Encoding:
    """The encoding ``#ttg.<name><{p}>`` (parameters already checked)."""
    if name == "blocked":
        return BlockedLayout(p["sizePerThread"], p["threadsPerWarp"], p["warpsPerCTA"],
                             p["order"])
    if name == "slice":
        return SliceLayout(p["dim"], p["parent"])
    if name == "nvidia_mma":
        return MmaLayout(p["versionMajor"], p["warpsPerCTA"], p["instrShape"],
                         p.get("versionMinor", 0))
    if name == "dot_op":
        return DotOperandLayout(p["opIdx"], p["parent"], p.get("kWidth", 0))
    if name == "swizzled_shared":
        return SwizzledSharedLayout(p["vec"], p["perPhase"], p["maxPhase"], p["order"])
    if name == "nvmma_shared":
        return NVMMASharedLayout(p["swizzlingByteWidth"], p["transposed"],
                                 p["elementBitWidth"], p.get("fp4Padded", False))
    return _build_linear(p, head)


def _build_linear(p: dict, head: str) -> LinearEncoding:
    bases = {}
    rank = None
    for dim in ("register", "lane", "warp", "block"):
        vecs = p.get(dim, [])
        if not isinstance(vecs, list) or not all(
                isinstance(v, list) and all(isinstance(x, int) for x in v) for v in vecs):
            raise LayoutError(f"{dim} must be a list of bases like [[0, 1], [1, 0]], got {vecs!r}")
        for v in vecs:
            if rank is None:
                rank = len(v)
            elif len(v) != rank:
                raise LayoutError(f"{dim} basis {v} has {len(v)} coordinates, others have {rank}")
        bases[dim] = vecs
    if rank is None:
        raise LayoutError("#ttg.linear needs at least one basis to know the tensor rank")
    ll = LinearLayout(bases, [f"dim{i}" for i in range(rank)])
    return LinearEncoding(ll)


def parse(text: str, aliases: Mapping[str, Encoding] | None = None) -> Encoding:
    """Parse one layout attribute in Triton's textual form.

    Args:
        text: e.g. ``"#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA =
            [4], order = [0]}>"``; may start with ``#alias =``.
        aliases: optional mapping alias name (``"blocked"`` or ``"#blocked"``) -> encoding, used
            for references like ``parent = #blocked``.
    Returns: the encoding; ``parse(str(enc)) == enc`` for every encoding.
    Raises: LayoutError (a ValueError) whose message names the bad parameter or token.
    """
    if not isinstance(text, str):
        raise LayoutError(f"layout text must be a string, got {type(text).__name__}")
    return _Parser(text, aliases).top()


def parse_aliases(text: str) -> dict[str, Encoding]:
    """Parse every ``#name = #ttg....`` alias definition line of a TTGIR module, in order.

    Returns a mapping ``"#name" -> encoding`` (later aliases may refer to earlier ones); lines
    that are not layout aliases (``#loc...``, ``#smem = #ttg.shared_memory``) are skipped.
    """
    out: dict[str, Encoding] = {}
    for line in text.splitlines():
        m = re.match(r"\s*(#[A-Za-z_]\w*)\s*=\s*(#(?:ttg|triton_gpu)\.\w+<.*)$", line)
        if not m or m.group(2).startswith(("#ttg.shared_memory", "#triton_gpu.shared_memory")):
            continue
        out[m.group(1)] = parse(m.group(2), out)
    return out
