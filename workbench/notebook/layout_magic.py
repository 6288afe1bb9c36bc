"""The ``%tilelayout`` line magic: draw a layout given as Triton text, and its bank view.

For example (one line each in a cell; the layout text is pasted from a Triton dump)::

    %tilelayout #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8],
                warpsPerCTA = [4, 1], order = [1, 0]}> --shape 32x32
    %tilelayout #ttg.nvidia_mma<{...}> --shape 32x16 --warp 0
    %tilelayout #ttg.blocked<{...}> --shape 32x32 --banks row-major
                --compare #ttg.swizzled_shared<{...}>

Options: ``--shape RxC`` (default: the layout's CTA tile for a blocked layout, else 32x32),
``--warp W``, ``--thread T``, ``--per-thread``, ``--banks SHARED`` (a swizzled/nvmma shared
layout text, ``row-major`` or ``pad:N`` for N elements of padding per row), ``--compare SHARED``
(a second shared layout drawn beside it), ``--dtype`` (default fp32), ``--vector-bytes N``,
``--request K``, ``--help``. The line is split by :func:`shlex.split` like ``%%tilekernel``'s
options, so values may be quoted (``--banks "#ttg.swizzled_shared<{...}>"``); unquoted text
runs to the next option. Arguments are not ``{var}``-expanded (layout text has braces). A bad
option shows the usage, a bad layout an error box with the LayoutError text, and both fail the
cell (``CellFailed``, so "Run All" stops there); the kernel survives. The last figures drawn are
in ``LAST`` (a dict) for tests and curious users.
"""
from __future__ import annotations

import html
import io
import re
import shlex
from typing import Any

from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand

from .display import show, show_box

_OPTIONS = ("shape", "warp", "thread", "per-thread", "banks", "compare", "dtype", "vector-bytes",
            "request")
_FLAGS = ("per-thread",)
USAGE = """\
%tilelayout LAYOUT [--shape RxC] [--warp W] [--thread T] [--per-thread]
            [--banks SHARED] [--compare SHARED] [--dtype fp16] [--vector-bytes N]
            [--request K] [--help]

Draws a register layout given in Triton's text form (pasted from a ttgir dump) over a tile:
each element coloured by warp and labelled by lane and register; with --banks, how a warp's
accesses of that tile hit the 32 shared-memory banks.

  LAYOUT             e.g. #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8],
                     warpsPerCTA = [4, 1], order = [1, 0]}> (quotes optional)
  --shape RxC        the tile drawn (default: a blocked layout's CTA tile, else 32x32).
  --warp W           highlight warp W.           --thread T     highlight thread T.
  --per-thread       label every element with its owner's register index.
  --banks SHARED     the shared layout the tile is stored with: swizzled_shared or
                     nvmma_shared text, row-major, or pad:N (N elements of padding per row).
  --compare SHARED   a second shared layout drawn beside the first.
  --dtype D          element type (default fp32).   --vector-bytes N   bytes per access.
  --request K        which request of the warp to draw (default 0).
  -h, --help         this text.

The line is split as a shell would (shlex, the quoting rules of %%tilekernel's options): any
value may be quoted, "..." or '...', and an unquoted value runs to the next --option."""

#: The figures of the last successful ``%tilelayout``: {"layout": Figure, "banks": Figure|None}.
LAST: dict = {}


class UsageError(ValueError):
    """A malformed ``%tilelayout`` line."""


def _option_name(token: str) -> str | None:
    """``"--shape"`` -> ``"shape"``; ``"-h"``/``"--help"`` -> ``"help"``; None for a token
    that is not an option (layout text, a value)."""
    if token in ("-h", "--help"):
        return "help"
    return token[2:] if token.startswith("--") and len(token) > 2 else None


def parse_line(line: str) -> tuple[str, dict]:
    """Split a ``%tilelayout`` line into (layout text, {option: value}); flags map to True,
    ``--help`` to ``{"help": True}`` (the layout may then be empty).

    The line is tokenised by :func:`shlex.split`, as ``%%tilekernel``'s options are, so a
    quoted value is one token; the tokens before the first option (the layout) and those of
    each option's value up to the next option are joined by single spaces, so layout text
    with spaces needs no quotes. Raises UsageError for an unknown option, a missing layout,
    an option without a value, a repeated option or unbalanced quotes."""
    try:
        tokens = shlex.split(line)
    except ValueError as e:
        raise UsageError(f"cannot split the line: {e}") from None
    text: list[str] = []
    opts: dict = {}
    current, values = None, text
    for tok in tokens:
        name = _option_name(tok)
        if name is None:
            values.append(tok)
            continue
        if current is not None:
            _close(current, values, opts)
        if name != "help" and name not in _OPTIONS:
            raise UsageError(f"unknown option --{name} (options: "
                             + ", ".join(f"--{o}" for o in _OPTIONS) + ", --help)")
        if name in opts:
            raise UsageError(f"--{name} is given twice")
        current, values = name, []
    if current is not None:
        _close(current, values, opts)
    if opts.get("help"):
        return " ".join(text), opts
    if not text:
        raise UsageError("give a layout in Triton's text form, e.g. #ttg.blocked<{...}>")
    return " ".join(text), opts


def _close(name: str, values: list, opts: dict) -> None:
    value = " ".join(values)
    if name in _FLAGS or name == "help":
        if value:
            raise UsageError(f"--{name} takes no value, got {value!r}")
        opts[name] = True
    elif not value:
        raise UsageError(f"--{name} needs a value")
    else:
        opts[name] = value


def _int(opts, name):
    try:
        return int(opts[name]) if name in opts else None
    except ValueError:
        raise UsageError(f"--{name} must be an integer, got {opts[name]!r}") from None


def parse_shape(text: str) -> tuple[int, ...]:
    """``"64x64"`` -> (64, 64); ``"1024"`` -> (1024,). Raises UsageError otherwise."""
    try:
        shape = tuple(int(s) for s in text.lower().replace(",", "x").split("x"))
    except ValueError:
        raise UsageError(f"--shape must look like 64x64, got {text!r}") from None
    if not shape or any(s <= 0 for s in shape):
        raise UsageError(f"--shape must have positive extents, got {text!r}")
    return shape


def parse_shared(text: str):
    """A shared layout: Triton text, ``row-major`` (no padding) or ``pad:N`` (N elements of
    padding per row). Raises LayoutError / UsageError."""
    from workbench.layouts import PaddedRowMajor, parse
    t = text.strip()
    if t in ("row-major", "rowmajor", "plain"):
        return PaddedRowMajor(0)
    m = re.fullmatch(r"pad(?:ded)?[:=](\d+)", t)
    if m:
        return PaddedRowMajor(int(m.group(1)))
    enc = parse(t)
    if enc.distributed:
        raise UsageError(f"--banks/--compare need a shared layout (swizzled_shared, nvmma_shared, "
                         f"row-major, pad:N), got the register layout {enc}")
    return enc


def draw(line: str) -> dict:
    """Do what ``%tilelayout line`` draws and return ``{"layout": LayoutView (a Figure for
    --per-thread), "banks": BanksView or None, "encoding", "shape"}``. Raises UsageError or
    LayoutError (the magic shows them)."""
    from workbench.layouts import BlockedLayout, parse
    from workbench.viz.bank_view import banks_picture
    from workbench.viz.layout_svg import layout_picture
    from workbench.viz.layout_view import layout_figure
    text, opts = parse_line(line)
    enc = parse(text)
    if not enc.distributed:
        raise UsageError(f"{enc} is a shared-memory layout: draw a register layout and give this "
                         f"one with --banks")
    if "shape" in opts:
        shape = parse_shape(opts["shape"])
    elif isinstance(enc, BlockedLayout):
        shape = enc.cta_tile
    else:
        rank = enc.rank
        assert rank is not None  # a register layout (shared ones were refused above)
        shape = (32, 32)[:rank] if rank <= 2 else (32,) * rank
    fig: Any
    if opts.get("per-thread"):
        fig = layout_figure(enc, shape, warp=_int(opts, "warp"), thread=_int(opts, "thread"),
                            per_thread=True)
    else:
        fig = layout_picture(enc, shape, warp=_int(opts, "warp"), thread=_int(opts, "thread"))
    banks = None
    if "banks" in opts or "compare" in opts:
        shared = parse_shared(opts.get("banks", "row-major"))
        compare = parse_shared(opts["compare"]) if "compare" in opts else None
        banks = banks_picture(shared, enc, shape, opts.get("dtype", "fp32"), compare=compare,
                             request=_int(opts, "request") or 0,
                             vector_bytes=_int(opts, "vector-bytes"))
    return {"layout": fig, "banks": banks, "encoding": enc, "shape": shape}


def _show_figure(fig, title: str) -> None:
    import base64
    if hasattr(fig, "_repr_html_"):  # the SVG views
        show(f'<div data-wb-view="layout">{fig._repr_html_()}</div>', title)
        return
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    data = base64.b64encode(buf.getvalue()).decode()
    alt = html.escape(title, quote=True)
    show(f'<div data-wb-view="layout"><img alt="{alt}" src="data:image/png;base64,{data}"/>'
         f"</div>", title)


@magics_class
class TileLayoutMagics(Magics):
    """The ``%tilelayout`` line magic."""

    @no_var_expand
    @line_magic
    def tilelayout(self, line: str):
        """Draw a layout given as Triton text; see :mod:`workbench.notebook.layout_magic`.
        ``--help`` shows the usage; a bad line or layout shows a usage or error box and
        fails the cell (:class:`~workbench.notebook.magics.CellFailed`)."""
        from workbench.layouts import LayoutError

        from .magics import CellFailed
        try:
            text, opts = parse_line(line)
            if opts.get("help"):
                show_box("usage", "%tilelayout options", USAGE)
                return None
            out = draw(line)
        except UsageError as e:
            show_box("usage", f"%tilelayout: {e}", USAGE)
            raise CellFailed("bad options: the usage above says what it takes",
                             "%tilelayout") from None
        except (LayoutError, ValueError, IndexError) as e:
            show_box("error", "%tilelayout: bad layout", str(e))
            raise CellFailed("bad layout: the message above says why", "%tilelayout") from None
        LAST.clear()
        LAST.update(out)
        _show_figure(out["layout"], f"{out['encoding']} over {list(out['shape'])}")
        if out["banks"] is not None:
            rep = out["banks"].workbench_data["reports"]
            _show_figure(out["banks"], " | ".join(r.summary() for r in rep))
        return None


def register(ip) -> None:
    """Register ``%tilelayout`` on the IPython shell ``ip`` (called by the extension loader)."""
    ip.register_magics(TileLayoutMagics)


__all__ = ["register", "draw", "parse_line", "parse_shape", "parse_shared", "TileLayoutMagics",
           "UsageError", "LAST"]
