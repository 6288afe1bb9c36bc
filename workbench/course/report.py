"""The result of :func:`workbench.course.check`, shown in words (text and HTML)."""
from __future__ import annotations

import html
from dataclasses import dataclass, field


@dataclass
class CheckReport:
    """``exercise`` (name), ``correct`` (right on every target and size), ``failures``
    (:class:`~workbench.course.checking.Failure` list), ``advice`` (sentences: what would make
    a right answer faster; empty when it is as fast as the solution), ``advice_error`` (why
    the speed could not be judged, or ''), ``cases`` (the sizes checked, in words)."""

    exercise: str
    correct: bool
    failures: list = field(default_factory=list)
    advice: list = field(default_factory=list)
    advice_error: str = ""
    cases: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Right (the speed advice does not make an answer wrong)."""
        return self.correct

    def lines(self) -> list:
        """The report as lines of text."""
        if not self.correct:
            out = [f"{self.exercise}: not yet right."]
            for f in self.failures:
                head = ("- your kernel does not compile:" if f.compiling
                        else f"- on the {_named(f.target)}, case {f.case}:")
                out += [head] + [f"  {line}" for line in f.message.splitlines()]
                out.append(f"  Look at: {f.look_at}.")
            out.append(f"(hint('{self.exercise}') for a nudge; hint('{self.exercise}', 2) "
                       "and 3 say more)")
            return out
        out = [f"{self.exercise}: right on the interpreter and the CPU backend for "
               + "; ".join(self.cases) + "."]
        if self.advice:
            out.append("It is correct, but it would be slow on a GPU:")
            out += [f"- {a}." for a in self.advice]
        elif self.advice_error:
            out.append(f"(its speed was not judged: {self.advice_error})")
        else:
            out.append("Compiled for an H200, it is as good as the solution: well done.")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.correct and not self.advice else (
            "#9a6700" if self.correct else "#cf222e")
        # monospace and pre-wrap, so the caret under a source line stays under its column
        body = "\n".join(html.escape(line) for line in self.lines())
        return (f'<div class="tex2jax_ignore mathjax_ignore" data-wb-view="check" '
                f'data-correct="{int(self.correct)}" data-advice="{len(self.advice)}" '
                f'style="border-left:4px solid {colour};padding:4px 10px;'
                f'font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;'
                f'white-space:pre-wrap">{body}</div>')


def _named(targets: str) -> str:
    """Backend names for people: ``"interpreter and the cpu"`` -> ``"... CPU backend"``."""
    return targets.replace("cpu", "CPU backend")
