"""Diffs inside the live stage view: a stage's IR before and after any pass of the pipeline
(:func:`pass_diff`), and our stages beside Triton 3.6's (:func:`triton_diff`).

Both build a :class:`~workbench.viz.stage_widget.StageView` whose data carries ``diff``: a
list of pairs ``{"label", "a", "b", "del", "add", "kind"}`` (``a``/``b``: indices into
``panes``; ``del``: 0-based line indices of pane ``a`` that are not in ``b``; ``add``: line
indices of pane ``b`` that are not in ``a``) and ``diff_chosen`` (the pair shown first). The
widget shows the source and the two panes of the chosen pair, marks the deleted lines red and
the added lines green, and offers every pair in a drop-down list.

Lines are compared as their code: the trailing ``loc(...)`` suffixes and the location tables
are left out (their numbering changes with every pass), as is leading and trailing white
space. The alignment is :class:`difflib.SequenceMatcher`'s (longest matching blocks, no
junk heuristic).
"""
from __future__ import annotations

import difflib
import re

from .ir_lines import split_debug
from .stage_data import stage_data

__all__ = ["diff_lines", "mlir_line_map", "pass_diff", "triton_diff"]

_LOC_DEF = re.compile(r'^\s*(#loc\d*)\s*=\s*loc\((.*)\)\s*$')
_LOC_USE = re.compile(r'loc\((#loc\d*)\)\s*$')
_FILE_LINE = re.compile(r'"[^"]*":(\d+):(\d+)')
_REF = re.compile(r'(#loc\d*)')


def _code(stage: str, lines: list[str]) -> list[str | None]:
    """Each line's code for comparison (None for debug lines, which never count as changed)."""
    return [None if s.debug else s.code.strip() for s in split_debug(stage, lines)]


def diff_lines(stage: str, a: str, b: str) -> tuple[list[int], list[int]]:
    """Which lines changed from text ``a`` to text ``b`` of one ``stage`` (its debug rules
    from :func:`workbench.viz.ir_lines.split_debug`). Returns ``(deleted, added)``: 0-based
    line indices of ``a`` with no partner in ``b`` and of ``b`` with none in ``a``, matched
    on the code of each line (``loc(...)`` suffixes, location tables and outer white space
    ignored). Debug lines are never listed."""
    ca, cb = _code(stage, a.splitlines()), _code(stage, b.splitlines())
    ia = [i for i, c in enumerate(ca) if c is not None]
    ib = [i for i, c in enumerate(cb) if c is not None]
    sm = difflib.SequenceMatcher(None, [ca[i] for i in ia], [cb[i] for i in ib],
                                 autojunk=False)
    kept_a: set[int] = set()
    kept_b: set[int] = set()
    for blk in sm.get_matching_blocks():
        kept_a.update(ia[blk.a + k] for k in range(blk.size))
        kept_b.update(ib[blk.b + k] for k in range(blk.size))
    return [i for i in ia if i not in kept_a], [i for i in ib if i not in kept_b]


def mlir_line_map(text: str, source_file: str | None) -> list:
    """Per line of printed MLIR with a location table (``#locN = loc(...)`` lines, as the pass
    snapshots and Triton print), a Location of ``source_file`` at the line and column its
    trailing ``loc(#locN)`` names (resolved through named and nested locations), or None.
    The file named in the table is replaced by ``source_file``: line numbers are the
    kernel file's either way."""
    from ..ir.core import Location
    raw = {}
    for line in text.splitlines():
        m = _LOC_DEF.match(line)
        if m:
            raw[m.group(1)] = m.group(2)

    def resolve(name: str, depth: int = 0):
        body = raw.get(name)
        if body is None or depth > 8:
            return None
        m = _FILE_LINE.search(body)
        if m:
            return Location(source_file or "", int(m.group(1)), int(m.group(2)))
        ref = _REF.search(body)
        return resolve(ref.group(1), depth + 1) if ref else None

    out = []
    for line in text.splitlines():
        m = _LOC_USE.search(line)
        out.append(resolve(m.group(1)) if m else None)
    return out


def _view(panes, pairs, chosen: int, src, title: str, notes: list, static: str):
    from .stage_widget import StageView
    text = getattr(src, "text", "") or ""
    data = stage_data(panes, text, getattr(src, "file", None),
                      getattr(src, "first_line", 1) or 1, title=title, notes=notes)
    data["diff"] = pairs
    data["diff_chosen"] = chosen
    data["visible"] = [panes[pairs[chosen]["a"]][0], panes[pairs[chosen]["b"]][0]]
    plain = f"{title}\n" + "\n".join(
        f"  {p['label']}: -{len(p['del'])} +{len(p['add'])}" for p in pairs)
    return StageView(data, static, plain)


def pass_diff(compiled, stage: str = "ttgir", pass_name: str | None = None):
    """The live stage view in diff mode over ``compiled.snapshots[stage]`` (compile with
    ``keep_snapshots=True``): one pair per pass, the IR before it beside the IR after it with
    the removed lines marked red and the added ones green; the source pane links both by
    source line. The view opens on ``pass_name`` (its name as in the snapshots, e.g.
    ``"tritongpu-coalesce"``), or on the first pass that changed something.

    Raises ValueError when the kernel has no snapshots of ``stage`` (the message says how to
    get them) or no pass named ``pass_name``."""
    snaps = list((getattr(compiled, "snapshots", None) or {}).get(stage) or [])
    if len(snaps) < 2:
        have = ", ".join(sorted(getattr(compiled, "snapshots", None) or {})) or "none"
        raise ValueError(f"pass_diff: no pass snapshots of stage {stage!r} (stages with "
                         f"snapshots: {have}); compile with keep_snapshots=True, e.g. "
                         "wb.compile(kernel, *signature, keep_snapshots=True)")
    src = getattr(compiled, "src", None)
    sfile = getattr(src, "file", None)
    panes = [(f"{i}. {name}", text, mlir_line_map(text, sfile), stage)
             for i, (name, text) in enumerate(snaps)]
    pairs = []
    for i in range(1, len(snaps)):
        dele, add = diff_lines(stage, snaps[i - 1][1], snaps[i][1])
        pairs.append({"label": f"{i}. {snaps[i][0]}", "a": i - 1, "b": i, "del": dele,
                      "add": add, "kind": "pass"})
    names = [n for n, _ in snaps[1:]]
    if pass_name is not None:
        if pass_name not in names:
            raise ValueError(f"pass_diff: no pass {pass_name!r} in the {stage} pipeline; its "
                             f"passes: {', '.join(names)}")
        chosen = names.index(pass_name)
    else:
        chosen = next((k for k, p in enumerate(pairs) if p["del"] or p["add"]), 0)
    from .snapshot_view import render_snapshots
    kname = getattr(src, "name", None) or "kernel"
    return _view(panes, pairs, chosen, src, f"{kname}: {stage} before and after each pass",
                 [f"{len(pairs)} passes; pick one in the list: the left pane is its input, "
                  "the right its output"], render_snapshots(compiled, stage))


def triton_diff(comparison, stages=("ttir", "ttgir", "llir", "ptx")):
    """The live stage view in diff mode over a :class:`workbench.runtime.compare.Comparison`
    (``workbench.compare(...)``, needs the ``triton`` extra): for each of ``stages`` that
    both compilers printed, our text beside Triton 3.6's, lines only in ours marked red and
    lines only in Triton's green (compared without locations; SSA value names count, so a
    renamed value shows as a change). MLIR panes link to the source through their location
    tables. Raises ValueError when none of ``stages`` is in both."""
    ck = comparison.compiled
    src = getattr(ck, "src", None)
    sfile = getattr(src, "file", None)
    maps = getattr(ck, "line_maps", None) or {}
    panes, pairs = [], []
    for st in stages:
        ours, theirs = comparison.ours.get(st), comparison.theirs.get(st)
        if not isinstance(ours, str) or not isinstance(theirs, str):
            continue
        their_map = mlir_line_map(theirs, sfile) if st in ("ttir", "ttgir") else []
        panes += [(f"{st} ours", ours, maps.get(st) or [], st),
                  (f"{st} Triton", theirs, their_map, st)]
        dele, add = diff_lines(st, ours, theirs)
        pairs.append({"label": st, "a": len(panes) - 2, "b": len(panes) - 1, "del": dele,
                      "add": add, "kind": "triton"})
    if not pairs:
        raise ValueError(f"triton_diff: none of {', '.join(stages)} was printed by both "
                         f"compilers; ours: {', '.join(comparison.ours)}, Triton's: "
                         f"{', '.join(comparison.theirs)}")
    chosen = next((k for k, p in enumerate(pairs) if p["label"] == "ttgir"), 0)
    title = (f"{comparison.kernel} \u2014 {comparison.target}, num_warps="
             f"{comparison.num_warps}: ours (left) beside Triton 3.6 (right)")
    from .compare_view import render_comparison
    return _view(panes, pairs, chosen, src, title,
                 ["red: only in ours; green: only in Triton's (locations ignored)"],
                 render_comparison(comparison))
